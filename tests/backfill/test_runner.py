"""The backfill runner against a stand-in for Airflow's backfill tables.

Airflow itself is exercised under the real scheduler in tests/e2e/test_scheduler.py; here the
stand-in plays the DAGs (a finished run registers its partition, as the example DAGs do), so
the runner's own promises are checked fast: refusals before anything is created, stages in
dependency order, one backfill per DAG at a time, failures stop later stages, the catalog has
the last word.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest

from airflow_partitions.backfill.airflow_db import BackfillRefused, Progress
from airflow_partitions.backfill.runner import BackfillOptions, BackfillRunner
from airflow_partitions.catalog import Catalog
from airflow_partitions.periods import UpdatePeriod

DAY = dt.datetime(2015, 1, 2, tzinfo=dt.UTC)
PRODUCES = {"ingest": ("raw", "HOURLY"), "rollup": ("rollup", "DAILY")}


@dataclass
class FakeAirflow:
    """Backfills that finish on the second progress check; a finished run registers what its
    DAG produces (an ingest the regions its conf names, else eu), unless its logical date is
    in ``fail``."""

    catalog: Catalog
    paused: set[str] = field(default_factory=set)
    running: dict[str, int] = field(default_factory=dict)
    fail: set[dt.datetime] = field(default_factory=set)
    created: list[tuple[str, dt.datetime, dt.datetime]] = field(default_factory=list)
    checks: dict[int, int] = field(default_factory=dict)
    unpaused: list[str] = field(default_factory=list)
    settling: dict[int, int] = field(default_factory=dict)
    confs: list[Any] = field(default_factory=list)  # per backfill created, its dag_run_conf
    scheduled: list[tuple[str, Any]] = field(default_factory=list)  # dry runs: (DAG, conf)

    def check_dag(self, dag_id: str) -> bool:
        return dag_id in self.paused

    def unpause(self, dag_id: str) -> None:
        self.paused.discard(dag_id)
        self.unpaused.append(dag_id)

    def running_backfill(self, dag_id: str) -> int | None:
        backfill_id = self.running.get(dag_id)
        if backfill_id in self.settling:  # Airflow's sweep marks it complete after a while
            self.settling[backfill_id] -= 1
            if self.settling[backfill_id] < 0:
                del self.running[dag_id]
                return None
        return backfill_id

    def schedule(self, dag_id: str, first: dt.datetime, last: dt.datetime,
                 conf: Any = None) -> list[dt.datetime]:
        self.scheduled.append((dag_id, conf))
        step = dt.timedelta(hours=1) if dag_id == "ingest" else dt.timedelta(days=1)
        out, at = [], first
        while at <= last:
            out.append(at)
            at += step
        return out

    def create(self, dag_id: str, first: dt.datetime, last: dt.datetime,
               max_active_runs: int, conf: Any = None) -> int:
        assert dag_id not in self.running, "Airflow refuses a second backfill of one DAG"
        self.created.append((dag_id, first, last))
        self.confs.append(conf)
        backfill_id = len(self.created)
        self.running[dag_id] = backfill_id
        return backfill_id

    def progress(self, backfill_id: int) -> Progress:
        if backfill_id in self.settling:  # finished runs, not yet marked complete by Airflow
            return Progress(backfill_id, {"success": 2}, False, ())
        if backfill_id > len(self.created):  # a backfill someone else started
            return Progress(backfill_id, {"running": 1, "queued": 1}, False, ())
        dag_id, first, last = self.created[backfill_id - 1]
        dates = self.schedule(dag_id, first, last)
        self.checks[backfill_id] = self.checks.get(backfill_id, 0) + 1
        if self.checks[backfill_id] < 2:
            return Progress(backfill_id, {"queued": len(dates)}, False, ())
        storage, period = PRODUCES[dag_id]
        good = [d for d in dates if d not in self.fail]
        if self.checks[backfill_id] == 2:
            values = [{"dt": UpdatePeriod.of(period).format(d)} for d in good]
            if storage == "raw":
                values = [{**v, "region": region} for v in values
                          for region in regions_of(self.confs[backfill_id - 1])]
            if values and storage == "rollup":  # a rollup records the hours it read
                inputs = [p.to_json() for p in self.catalog.list_partitions("raw")]
                self.catalog.register(storage, period, values, inputs=inputs)
            elif values:
                self.catalog.register(storage, period, values)
        self.running.pop(dag_id, None)
        failed = tuple(d for d in dates if d in self.fail)
        states = {"success": len(good), **({"failed": len(failed)} if failed else {})}
        return Progress(backfill_id, states, True, failed)

    def failed_tasks(self, dag_id: str, logical_dates: Any) -> list[str]:
        return ["register"]


def regions_of(conf: Any) -> list[str]:
    """The regions an ingest run writes: its conf's (either form), else eu."""
    if conf is None:
        return ["eu"]
    if "partition_slice" in conf:
        return [conf["partition_slice"]["region"]]
    return list(conf["regions"])


def run(catalog: Catalog, airflow: FakeAirflow, **options: Any) -> tuple[Any, list[str]]:
    lines: list[str] = []
    runner = BackfillRunner(catalog, airflow, lines.append, sleep=lambda s: None)
    report = runner.run("events", DAY, DAY + dt.timedelta(days=1), BackfillOptions(**options))
    return report, lines


def test_stages_run_in_dependency_order_until_the_range_is_coverable(
        produced: Catalog) -> None:
    airflow = FakeAirflow(produced)
    report, lines = run(produced, airflow)
    assert report.ok, lines
    assert airflow.created == [("ingest", DAY + dt.timedelta(hours=20),
                                DAY + dt.timedelta(hours=23)), ("rollup", DAY, DAY)]
    cover = produced.cover("events", DAY, DAY + dt.timedelta(days=1))
    assert [p.storage for p in cover.partitions] == ["rollup"]
    assert any(line.startswith("done: events") for line in lines)


def test_a_paused_dag_is_refused_before_anything_is_created(produced: Catalog) -> None:
    airflow = FakeAirflow(produced, paused={"rollup"})
    with pytest.raises(BackfillRefused, match=r"rollup is paused.*--unpause"):
        run(produced, airflow)
    assert airflow.created == [] and airflow.unpaused == []
    report, lines = run(produced, airflow, unpause=True)
    assert report.ok and airflow.unpaused == ["rollup"]
    assert "unpaused rollup (--unpause)" in "\n".join(lines)


def test_a_running_backfill_is_refused(produced: Catalog) -> None:
    airflow = FakeAirflow(produced, running={"ingest": 7})
    with pytest.raises(BackfillRefused, match="backfill 7 of ingest is still running"):
        run(produced, airflow)
    assert airflow.created == []


def test_a_failed_run_stops_the_later_stages_and_is_named(produced: Catalog) -> None:
    airflow = FakeAirflow(produced, fail={DAY + dt.timedelta(hours=22)})
    report, _ = run(produced, airflow)
    assert not report.ok and [c[0] for c in airflow.created] == ["ingest"]
    assert report.failures == ["ingest: 1 run(s) failed (2015-01-02T22:00:00+00:00); "
                               "failed tasks: register"]


def test_dry_run_creates_nothing_and_lists_the_backfills(produced: Catalog) -> None:
    airflow = FakeAirflow(produced)
    report, lines = run(produced, airflow, dry_run=True)
    assert airflow.created == [] and report.dry_run
    assert [s["backfills"][0]["dag_id"] for s in report.to_json()["stages"]] == ["ingest",
                                                                                 "rollup"]
    assert "  stage 1 backfill: ingest 2015-01-02T20:00Z..2015-01-02T23:00Z (4 runs)" in lines


def test_nothing_to_do_is_said_and_ok(produced: Catalog) -> None:
    produced.register("rollup", "DAILY", [{"dt": "2015-01-02"}])
    airflow = FakeAirflow(produced)
    report, _ = run(produced, airflow)
    assert report.ok and airflow.created == [] and report.plan.runs == ()


def test_restate_reruns_exactly_the_stale_rollup_and_leaves_it_fresh(produced: Catalog) -> None:
    airflow = FakeAirflow(produced)
    assert run(produced, airflow)[0].ok
    produced.register("raw", "HOURLY", {"dt": "2015-01-02-05", "region": "eu"}, restate=True)
    assert [s.partition.values for s in produced.stale("events")] == [{"dt": "2015-01-02"}]
    report, lines = run(produced, airflow)  # without --restate: coverable, nothing to run
    assert report.ok and report.plan.runs == ()
    report, lines = run(produced, airflow, restate=True)
    assert report.ok, lines
    assert airflow.created[-1] == ("rollup", DAY, DAY)
    assert [r.kind for r in report.plan.runs] == ["restate"]
    assert produced.stale("events") == []
    assert any("stale: rollup DAILY 2015-01-02" in line for line in lines)


def test_after_a_failure_no_new_backfill_starts(produced: Catalog) -> None:
    """Two hourly stretches of one DAG: the first fails, so the second is never created."""
    produced.drop("raw", "HOURLY", {"dt": "2015-01-02-02", "region": "eu"})
    airflow = FakeAirflow(produced, fail={DAY + dt.timedelta(hours=2)})
    report, _ = run(produced, airflow)
    assert not report.ok and airflow.created == [("ingest", DAY + dt.timedelta(hours=2),
                                                  DAY + dt.timedelta(hours=2))]


def test_a_backfill_with_only_finished_runs_is_waited_for_not_refused(
        produced: Catalog) -> None:
    """Airflow marks a finished backfill complete on a 30 s sweep; until then it is open."""
    airflow = FakeAirflow(produced, running={"ingest": 99}, settling={99: 2})
    report, lines = run(produced, airflow)
    assert report.ok and airflow.created[0][0] == "ingest"
    assert "backfill 99 of ingest has finished its runs; Airflow marks it complete within " \
        "30 s: waiting" in lines
