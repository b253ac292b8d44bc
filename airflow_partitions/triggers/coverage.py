"""``PartitionCoverageTrigger``: the deferrable half of ``PartitionCoverageSensor``.

It polls the catalog from the triggerer, so no worker slot is held while waiting. The catalog
calls block, so they run in a thread (``asyncio.to_thread``); the process-wide catalog of the
hook is shared by every trigger of the triggerer, and so is its timeline cache.

Events (a dict): ``{"status": "success", "covered_fraction", "partitions", "deadline"}``,
``{"status": "timeout", "missing": [...], "deadline"}`` or ``{"status": "error", "message"}``.
The sensor re-verifies the cover on ``success`` before it succeeds (DESIGN.md invariant 1).
When the picture changes, the trigger logs it and publishes the coverage metrics (a no-op unless
Airflow's metrics are on; docs/observability.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pendulum
from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_partitions.catalog.coverage_watch import CoverageWatch
from airflow_partitions.cover import CoverRequest, missing_list, status_line, to_instant
from airflow_partitions.errors import InvalidInput
from airflow_partitions.hooks.catalog import PartitionCatalogHook, shared_catalog
from airflow_partitions.hooks.metrics import publish_coverage
from airflow_partitions.kv import StoreUnavailable


def _event(payload: dict[str, Any]) -> TriggerEvent:
    return TriggerEvent(payload)  # type: ignore[no-untyped-call]


class PartitionCoverageTrigger(BaseTrigger):
    """Fire once the catalog covers the request, or at the deadline.

    :param request: a :class:`~airflow_partitions.cover.CoverRequest` as JSON.
    :param catalog_conn_id: the ``partition_catalog`` connection.
    :param poke_interval: seconds between checks.
    :param deadline: ISO instant after which a ``timeout`` event fires (None: never).
    """

    def __init__(
        self,
        request: dict[str, Any],
        catalog_conn_id: str | None = PartitionCatalogHook.default_conn_name,
        poke_interval: float = 60.0,
        deadline: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        self.request = dict(request)
        self.catalog_conn_id = catalog_conn_id
        self.poke_interval = float(poke_interval)
        self.deadline = deadline

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            "airflow_partitions.triggers.coverage.PartitionCoverageTrigger",
            {
                "request": self.request,
                "catalog_conn_id": self.catalog_conn_id,
                "poke_interval": self.poke_interval,
                "deadline": self.deadline,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        try:
            request = CoverRequest.from_json(self.request)
            deadline = to_instant(self.deadline, "deadline") if self.deadline else None
            url, data_root = await PartitionCatalogHook(self.catalog_conn_id).aresolve()
        except Exception as exc:
            yield _event({"status": "error", "message": f"{type(exc).__name__}: {exc}"})
            return
        watch = CoverageWatch(request)
        last_line = ""
        while True:
            try:
                catalog = await asyncio.to_thread(shared_catalog, url, data_root)
                cover = await asyncio.to_thread(watch.check, catalog)
            except StoreUnavailable as exc:
                self.log.warning("partition catalog unreachable, will retry: %s", exc)
            except InvalidInput as exc:
                yield _event({"status": "error", "message": str(exc)})
                return
            else:
                line = status_line(cover)
                if line != last_line:  # one line per change, not one per poll
                    self.log.info("%s", line)
                    last_line = line
                    await asyncio.to_thread(publish_coverage, catalog, request, cover)
                if cover.coverable:
                    yield _event({
                        "status": "success",
                        "covered_fraction": cover.covered_fraction,
                        "partitions": len(cover),
                        "deadline": self.deadline,
                    })
                    return
            if deadline is not None and pendulum.now("UTC") >= deadline:
                yield _event({
                    "status": "timeout",
                    "missing": missing_list(watch.cover) or ["the catalog was never reached"],
                    "deadline": self.deadline,
                })
                return
            await asyncio.sleep(self.poke_interval)
