"""Coverage assets as Airflow's REST API lists them, and their events posted through it.

Why the REST API: the announcements of writes Airflow never sees (the CLI, a Spark job, a Lens
import, ``reconcile``) come from a process outside any task, and a task may not open the
metadata DB either. ``POST /api/v2/assets/events`` takes a ``partition_key`` (Airflow 3.3).
"""

from __future__ import annotations

from typing import Any

from airflow_partitions.backfill.rest_api import AirflowRest
from airflow_partitions.coverage_events import SCHEME, CoverageAssetSpec, Emission

PAGE = 100


class CoverageEventsApi(AirflowRest):
    """The coverage assets Airflow knows, and posting their events."""

    def coverage_assets(self) -> dict[CoverageAssetSpec, int]:
        """Every asset with a coverage asset's URI, by spec, with Airflow's asset id (one call
        per hundred assets)."""
        out: dict[CoverageAssetSpec, int] = {}
        offset = 0
        while True:
            page: Any = self.call("GET", "/api/v2/assets", query={
                "uri_pattern": SCHEME, "limit": PAGE, "offset": offset})
            assets = page.get("assets", [])
            for asset in assets:
                spec = CoverageAssetSpec.from_uri(str(asset.get("uri", "")))
                if spec is not None:
                    out[spec] = int(asset["id"])
            offset += len(assets)
            if not assets or offset >= int(page.get("total_entries", 0)):
                return out

    def post(self, asset_id: int, emission: Emission) -> None:
        """One partitioned asset event for the window ``emission`` announces."""
        self.call("POST", "/api/v2/assets/events", {
            "asset_id": asset_id, "partition_key": emission.key, "extra": emission.extra()})
