"""The view's actions refuse a plan whose producer is scheduled on a coverage asset.

Airflow cannot backfill such a producer; the backfill command announces its windows once each
and watches their runs, in one process. The view drives backfills one request at a time, so
it refuses the plan with 409, naming the DAG and the command to run, and creates nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_partitions.backfill.announce import PartitionRun
from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import CoverageAssetSpec, EmissionExtraJson
from airflow_partitions.ui.app import create_app
from airflow_partitions.ui.auth import require_viewer
from tests.ui.fakes import Gate, User, View, ViewFake

DAY = {"start": "2015-01-02T00:00:00+00:00", "end": "2015-01-03T00:00:00+00:00"}
URI = CoverageAssetSpec.of("events", "DAILY").uri


@dataclass
class AssetViewFake(ViewFake):
    """``rollup`` is scheduled on the events DAILY coverage asset."""

    def coverage_assets(self, dag_id: str) -> list[str]:
        return [URI] if dag_id == "rollup" else []

    def post_event(self, uri: str, key: str, extra: EmissionExtraJson) -> None:
        raise AssertionError("the view announces nothing")

    def partition_runs(self, dag_id: str, keys: Sequence[str]) -> list[PartitionRun]:
        return []

    def run_failed_tasks(self, dag_id: str, run_ids: Sequence[str]) -> list[str]:
        return []

    def trigger_partition_run(self, dag_id: str, key: str) -> None:
        raise AssertionError("the view starts no run")


@pytest.fixture
def asset_view(produced: Catalog) -> Iterator[View]:
    airflow, gate, user = AssetViewFake(produced), Gate(), [User("ada")]
    app = create_app(lambda: produced)
    app.dependency_overrides[require_viewer] = lambda: user[0]
    app.state.airflow_for = lambda request: airflow
    app.state.may_trigger = gate.may_trigger
    app.state.audit = gate.log
    with TestClient(app) as client:
        yield View(client, airflow, gate, user)


def test_a_coverage_asset_consumer_is_refused_with_the_command_that_runs_it(
        asset_view: View) -> None:
    answer = asset_view.post("/api/facts/events/actions", DAY)
    assert answer.status_code == 409, answer.text
    detail: Any = answer.json()["detail"]
    assert "rollup is scheduled on a coverage asset" in detail
    assert f"airflow-partitions backfill events --start {DAY['start']} --end {DAY['end']}" \
        in detail
    assert asset_view.airflow.created == [] and asset_view.gate.audit == []


def test_a_restate_names_the_restating_command(asset_view: View, produced: Catalog) -> None:
    produced.register("raw", "HOURLY", [{"dt": f"2015-01-02-{h:02d}", "region": "eu"}
                                        for h in range(20, 24)])
    produced.register("rollup", "DAILY", {"dt": "2015-01-02"},
                      inputs=[p.to_json() for p in produced.list_partitions("raw")])
    produced.register("raw", "HOURLY", {"dt": "2015-01-02-05", "region": "eu"}, restate=True)
    answer = asset_view.post("/api/facts/events/actions", {**DAY, "kind": "restate"})
    assert answer.status_code == 409, answer.text
    assert "--restate" in answer.json()["detail"]


def test_a_plan_without_such_producers_is_prepared_as_before(asset_view: View) -> None:
    """Part of a day plans hours only: the ingest's backfill, as without coverage assets."""
    body = {"start": "2015-01-02T00:00:00+00:00", "end": "2015-01-02T23:00:00+00:00"}
    answer = asset_view.post("/api/facts/events/actions", body)
    assert answer.status_code == 200, answer.text
    assert [[b["dag_id"] for b in s["backfills"]] for s in answer.json()["stages"]] == [
        ["ingest"]]
