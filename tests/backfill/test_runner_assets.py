"""The backfill runner when a producer is scheduled on a coverage asset.

Such a producer (here ``rollup``, scheduled on ``CoverageAsset("events", "DAILY")``) cannot be
backfilled by Airflow: the runner announces its planned windows through the catalog's emission
markers, the ones the follower and the writing tasks claim, so a window is announced at most
once whoever gets there first; then it watches the runs with those partition keys. The
stand-in extends test_runner's: a posted event makes the "scheduler" create a consumer run,
which finishes on a later look and registers the day (as the example rollup does).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest

from airflow_partitions.backfill.announce import CoverageAirflow, PartitionRun, coverage_uris
from airflow_partitions.backfill.runner import BackfillOptions, BackfillRunner
from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import (
    CoverageAssetSpec,
    CoverageEmitter,
    Emission,
    EmissionExtraJson,
    EmissionMarkers,
)
from tests.backfill.test_runner import DAY, FakeAirflow, run

SPEC = CoverageAssetSpec.of("events", "DAILY")
KEY = "2015-01-02T00:00:00"


@dataclass
class AssetAirflow(FakeAirflow):
    """``rollup`` is scheduled on :data:`SPEC`: Airflow refuses to backfill it; each posted
    event queues a run with its key, running on the next look and finished on the one after
    (failed when its key is in ``fail_keys``)."""

    on_asset: dict[str, list[str]] = field(default_factory=lambda: {"rollup": [SPEC.uri]})
    posted: list[tuple[str, str, EmissionExtraJson]] = field(default_factory=list)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    fail_keys: set[str] = field(default_factory=set)
    triggered: list[tuple[str, str]] = field(default_factory=list)

    def schedule(self, dag_id: str, first: dt.datetime, last: dt.datetime,
                 conf: Any = None) -> list[dt.datetime]:
        assert dag_id not in self.on_asset, "Airflow cannot backfill an asset-triggered DAG"
        return super().schedule(dag_id, first, last, conf)

    def coverage_assets(self, dag_id: str) -> list[str]:
        return self.on_asset.get(dag_id, [])

    def post_event(self, uri: str, key: str, extra: EmissionExtraJson) -> None:
        self.posted.append((uri, key, extra))
        run_id = f"asset_triggered__{len(self.runs)}"
        self.runs[run_id] = {"key": key, "state": "queued", "queued": dt.datetime.now(dt.UTC)}

    def trigger_partition_run(self, dag_id: str, key: str) -> None:
        self.triggered.append((dag_id, key))
        self.runs[f"manual__{len(self.runs)}"] = {"key": key, "state": "queued",
                                                  "queued": dt.datetime.now(dt.UTC)}

    def partition_runs(self, dag_id: str, keys: Any) -> list[PartitionRun]:
        for record in self.runs.values():
            if record["state"] == "running":
                record["state"] = "failed" if record["key"] in self.fail_keys else "success"
                if record["state"] == "success":
                    inputs = [p.to_json() for p in self.catalog.list_partitions("raw")]
                    self.catalog.register("rollup", "DAILY", [{"dt": record["key"][:10]}],
                                          inputs=inputs)
            elif record["state"] == "queued":
                record["state"] = "running"
        return [PartitionRun(run_id, r["key"], r["state"], r["queued"])
                for run_id, r in self.runs.items() if r["key"] in keys]

    def run_failed_tasks(self, dag_id: str, run_ids: Any) -> list[str]:
        return ["rollup_day"]


def complete_hours(catalog: Catalog) -> None:
    catalog.register("raw", "HOURLY", [{"dt": f"2015-01-02-{h:02d}", "region": "eu"}
                                       for h in range(20, 24)])


def follower_emits(catalog: Catalog, airflow: AssetAirflow) -> list[Emission]:
    """What the follower (or a writing task) does: announce the due windows through the
    markers, posting to the same Airflow."""
    def post(emission: Emission) -> None:
        airflow.post_event(SPEC.uri, emission.key, emission.extra())

    return CoverageEmitter(catalog).emit(SPEC, post)


def test_the_stand_in_speaks_the_runners_protocol(produced: Catalog) -> None:
    assert isinstance(AssetAirflow(produced), CoverageAirflow)
    assert not isinstance(FakeAirflow(produced), CoverageAirflow)


def test_a_consumer_is_announced_not_backfilled_and_its_run_watched(produced: Catalog) -> None:
    airflow = AssetAirflow(produced)
    report, lines = run(produced, airflow)
    assert report.ok, lines
    assert [c[0] for c in airflow.created] == ["ingest"]  # no backfill of the rollup
    assert [(uri, key) for uri, key, _ in airflow.posted] == [(SPEC.uri, KEY)]
    extra = airflow.posted[0][2]
    assert not extra["restated"] and extra["airflow_partitions"]["version"] == 1
    marker = EmissionMarkers(produced.rows.kv).get(SPEC.uri, KEY)
    assert marker is not None and marker.doc["status"] == "emitted"
    assert f"rollup 2015-01-02T00:00Z (1 run) on {SPEC.uri}: 1 announced" in lines
    assert "rollup announced: 1/1 runs finished (success 1)" in lines
    doc = report.to_json()
    assert doc["announced"] == [{"dag_id": "rollup", "asset": SPEC.uri, "key": KEY,
                                 "announced": "announced"}]
    assert doc["stages"][1]["backfills"] == [{
        "dag_id": "rollup", "from": DAY.isoformat(), "to": DAY.isoformat(), "runs": 1,
        "asset": SPEC.uri, "windows": [KEY]}]
    assert [p.storage for p in produced.cover("events", DAY, DAY + dt.timedelta(days=1))
            .partitions] == ["rollup"]


def test_a_time_scheduled_plan_keeps_its_report_fields(produced: Catalog) -> None:
    airflow = AssetAirflow(produced, on_asset={})
    report, _ = run(produced, airflow)
    assert report.ok and "announced" not in report.to_json()
    assert [c[0] for c in airflow.created] == ["ingest", "rollup"]


def test_a_window_the_follower_announced_is_watched_not_announced_again(
        produced: Catalog) -> None:
    assert CoverageEmitter(produced).follow(SPEC)  # followed while the day is incomplete
    complete_hours(produced)
    airflow = AssetAirflow(produced)
    assert [e.key for e in follower_emits(produced, airflow)] == [KEY]
    report, lines = run(produced, airflow)
    assert report.ok, lines
    assert len(airflow.posted) == 1 and len(airflow.runs) == 1  # exactly once
    assert [a.outcome for _, a in report.announced] == ["announced before"]
    assert follower_emits(produced, airflow) == []  # and the follower does not either


def test_a_window_announced_while_its_consumer_was_paused_is_run_by_hand_once(
        produced: Catalog) -> None:
    """Airflow queues no run for a consumer paused when the event comes: announced long ago
    with no run of the DAG at all, the window's run is started by hand, once, and nothing is
    announced again (other consumers of the asset ran it)."""
    assert CoverageEmitter(produced).follow(SPEC)
    complete_hours(produced)
    airflow = AssetAirflow(produced)
    follower_emits(produced, airflow)
    airflow.runs.clear()  # the paused consumer took no run from the event
    announced_at(produced, dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5))
    report, lines = run(produced, airflow)
    assert report.ok, lines
    assert airflow.triggered == [("rollup", KEY)] and len(airflow.posted) == 1


def test_a_fresh_announcement_without_a_run_yet_is_left_to_the_scheduler(
        produced: Catalog) -> None:
    assert CoverageEmitter(produced).follow(SPEC)
    complete_hours(produced)
    airflow = AssetAirflow(produced)
    follower_emits(produced, airflow)
    report, lines = run(produced, airflow)
    assert report.ok, lines
    assert airflow.triggered == []


def test_a_backfill_announcement_is_not_repeated_by_the_follower(produced: Catalog) -> None:
    """The backfill follows the asset before announcing (nobody did), so the follower
    starting later neither re-announces the day nor announces the past."""
    airflow = AssetAirflow(produced)
    assert run(produced, airflow)[0].ok
    assert EmissionMarkers(produced.rows.kv).seen(SPEC.uri) is not None
    produced.drop("rollup", "DAILY", {"dt": "2015-01-02"})
    assert follower_emits(produced, airflow) == []
    assert len(airflow.posted) == 1


def test_a_window_known_before_the_asset_was_followed_is_announced(produced: Catalog) -> None:
    complete_hours(produced)
    emitter = CoverageEmitter(produced)
    assert emitter.follow(SPEC)
    markers = EmissionMarkers(produced.rows.kv)
    assert markers.get(SPEC.uri, KEY).doc["status"] == "known"  # type: ignore[union-attr]
    airflow = AssetAirflow(produced)
    report, lines = run(produced, airflow)
    assert report.ok, lines
    assert [key for _, key, _ in airflow.posted] == [KEY]
    assert markers.get(SPEC.uri, KEY).doc["status"] == "emitted"  # type: ignore[union-attr]


def test_a_window_another_process_is_announcing_is_left_to_it(produced: Catalog) -> None:
    assert CoverageEmitter(produced).follow(SPEC)  # the other process follows the asset
    complete_hours(produced)
    markers = EmissionMarkers(produced.rows.kv)
    now = dt.datetime.now(dt.UTC).isoformat()
    markers.swap(SPEC.uri, KEY, None, {"status": "claimed", "version": 1, "restated": False,
                                       "inputs": [], "at": now})
    airflow = AssetAirflow(produced)
    airflow.post_event(SPEC.uri, KEY, {})  # type: ignore[typeddict-item]  # the claimer's
    report, lines = run(produced, airflow)
    assert report.ok, lines
    assert len(airflow.posted) == 1
    assert [a.outcome for _, a in report.announced] == ["being announced"]


def announced_at(catalog: Catalog, at: dt.datetime) -> None:
    """Move the window's marker back to ``at``, as if it had been announced then."""
    markers = EmissionMarkers(catalog.rows.kv)
    marker = markers.get(SPEC.uri, KEY)
    assert marker is not None
    markers.swap(SPEC.uri, KEY, marker, {**marker.doc, "at": at.isoformat()})


def ran_an_hour_ago(catalog: Catalog, state: str) -> AssetAirflow:
    """The follower announced the day an hour ago, and its run ended ``state`` then."""
    assert CoverageEmitter(catalog).follow(SPEC)
    complete_hours(catalog)
    airflow = AssetAirflow(catalog)
    follower_emits(catalog, airflow)
    [record] = airflow.runs.values()
    record["state"], record["queued"] = state, dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    announced_at(catalog, record["queued"])
    return airflow


def test_a_failed_consumer_run_fails_the_stage_by_name(produced: Catalog) -> None:
    airflow = AssetAirflow(produced, fail_keys={KEY})
    report, _ = run(produced, airflow)
    assert not report.ok
    assert report.failures == [f"rollup: 1 run(s) failed ({KEY}); failed tasks: rollup_day"]


def test_a_window_whose_announced_run_ended_before_the_backfill_is_named(
        produced: Catalog) -> None:
    """Announced once, its run failed before the backfill began: not announced twice; the
    report says which run to clear."""
    airflow = ran_an_hour_ago(produced, "failed")
    report, _ = run(produced, airflow)
    assert not report.ok and len(airflow.posted) == 1
    [failure] = report.failures
    assert f"window {KEY} was announced before this backfill" in failure
    assert "asset_triggered__0 ended failed" in failure and "clear that run" in failure


def test_a_window_whose_announced_run_succeeded_before_the_backfill_is_done(
        produced: Catalog) -> None:
    """Announced once, its run succeeded before the backfill's stage came: nothing to announce
    and nothing failed (the final cover check says whether its output is there)."""
    airflow = ran_an_hour_ago(produced, "success")
    report, _ = run(produced, airflow)
    assert report.failures == [] and len(airflow.posted) == 1


def test_restate_announces_the_restated_window_once(produced: Catalog) -> None:
    airflow = AssetAirflow(produced)
    assert run(produced, airflow)[0].ok
    produced.register("raw", "HOURLY", {"dt": "2015-01-02-05", "region": "eu"}, restate=True)
    report, lines = run(produced, airflow, restate=True)
    assert report.ok, lines
    assert [(key, extra["restated"], extra["airflow_partitions"]["version"])
            for _, key, extra in airflow.posted] == [(KEY, False, 1), (KEY, True, 2)]
    assert produced.stale("events") == []
    # a restatement the follower announced first is not announced again
    produced.register("raw", "HOURLY", {"dt": "2015-01-02-06", "region": "eu"}, restate=True)
    assert [e.restated for e in follower_emits(produced, airflow)] == [True]
    report, lines = run(produced, airflow, restate=True)
    assert report.ok, lines
    assert len(airflow.posted) == 3
    assert [a.outcome for _, a in report.announced] == ["announced before"]


def test_dry_run_lists_the_announcements_and_posts_nothing(produced: Catalog) -> None:
    airflow = AssetAirflow(produced)
    _, lines = run(produced, airflow, dry_run=True)
    assert airflow.posted == [] and airflow.created == []
    assert f"  stage 2 announce: rollup 2015-01-02T00:00Z (1 run) on {SPEC.uri}" in lines
    assert EmissionMarkers(produced.rows.kv).get(SPEC.uri, KEY) is None


def test_a_producer_on_an_asset_of_another_period_is_refused(produced: Catalog) -> None:
    airflow = AssetAirflow(produced, on_asset={
        "rollup": [CoverageAssetSpec.of("events", "MONTHLY").uri]})
    with pytest.raises(Exception, match="announces the windows of exactly one coverage asset"):
        run(produced, airflow)
    assert airflow.created == [] and airflow.posted == []


def test_coverage_uris_reads_airflows_description_of_a_dag() -> None:
    expression = {"all": [{"asset": {"uri": SPEC.uri, "name": SPEC.name}},
                          {"asset": {"uri": "s3://bucket/other", "name": "other"}}]}
    assert coverage_uris(True, False, expression) == [SPEC.uri]
    assert coverage_uris(True, True, expression) == []  # a partitioned cron schedule
    assert coverage_uris(False, False, expression) == []  # a plain asset schedule
    assert coverage_uris(True, False, None) == []


def test_the_runner_takes_either_adapter(produced: Catalog) -> None:
    """The runner only asks an adapter that speaks the protocol (the Partitions view's older
    stand-ins do not), so a plan without such producers is unchanged."""
    lines: list[str] = []
    BackfillRunner(produced, FakeAirflow(produced), lines.append, sleep=lambda s: None).run(
        "events", DAY, DAY + dt.timedelta(days=1), BackfillOptions(dry_run=True))
    assert "  stage 2 backfill: rollup 2015-01-02T00:00Z (1 run)" in lines
