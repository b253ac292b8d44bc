"""CoverageAsset in a DAG file, the follower's rounds and their cost, the covered operator's
window from a partition key.

The follower meets the real api-server in tests/e2e/test_coverage_assets.py; here Airflow's
REST API is the one boundary replaced (a recording stand-in for its two calls), so a round's
store round trips can be counted exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from airflow.sdk import DAG, PartitionedAssetTimetable

from airflow_partitions.assets import CoverageAsset
from airflow_partitions.assets.follower import Follower
from airflow_partitions.assets.rest import CoverageEventsApi
from airflow_partitions.assets.run_window import coverage_specs, run_window
from airflow_partitions.catalog import Catalog, NotADimension
from airflow_partitions.coverage_events import CoverageAssetSpec, Emission, InvalidCoverageAsset
from tests.helpers import register_hours


def test_the_asset_names_its_window_and_fact(events: Catalog) -> None:
    asset = CoverageAsset(fact="events", period="DAILY")
    assert asset.uri == "x-airflow-partitions://coverage/events/DAILY"
    assert asset.name == "events daily coverage"
    assert asset.extra == {"fact": "events", "period": "DAILY"}
    per_slice = CoverageAsset("events", "monthly", per_slice=True)
    assert CoverageAssetSpec.from_uri(per_slice.uri) == CoverageAssetSpec.of(
        "events", "MONTHLY", per_slice=True)
    with pytest.raises(NotADimension, match="region is not a declared dimension"):
        CoverageAsset("events", "DAILY", where="region = 'eu'")


def test_a_typo_is_refused_when_the_dag_is_parsed(events: Catalog) -> None:
    with pytest.raises(InvalidCoverageAsset, match=r"no fact 'evnets' \(facts: events\)"):
        CoverageAsset(fact="evnets")
    with pytest.raises(InvalidCoverageAsset, match=r"from its periods \(HOURLY, DAILY\)"):
        CoverageAsset(fact="events", period="MINUTELY")


def test_an_unreachable_catalog_does_not_stop_the_parse(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", "hbase://127.0.0.1:1")
    monkeypatch.delenv("AIRFLOW_CONN_PARTITIONS_DEFAULT", raising=False)
    from airflow_partitions.hooks.catalog import forget_catalogs
    forget_catalogs()
    try:
        assert CoverageAsset(fact="events").uri.endswith("/events/DAILY")
    finally:
        forget_catalogs()


class StandInApi(CoverageEventsApi):
    """Airflow's REST API for the follower: the assets it lists, the events posted."""

    def __init__(self, assets: dict[CoverageAssetSpec, int]) -> None:
        super().__init__("http://127.0.0.1:1", "admin", "")
        self.listed = assets
        self.posted: list[tuple[int, str, bool]] = []

    def coverage_assets(self) -> dict[CoverageAssetSpec, int]:
        return dict(self.listed)

    def post(self, asset_id: int, emission: Emission) -> None:
        self.posted.append((asset_id, emission.key, emission.restated))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_idle_round_is_one_round_trip_and_a_write_is_announced_at_the_next(
        events: Catalog, store_url: str) -> None:
    spec = CoverageAssetSpec.of("events", "DAILY")
    api, clock = StandInApi({spec: 7}), Clock()
    follower = Follower(events, api, clock=clock)
    follower.poll_once()
    stats = events.stats
    for _ in range(5):
        clock.now += 0.5
        before = stats.round_trips
        assert follower.poll_once() == []
        assert stats.round_trips - before == 1  # the fact's generation
    writer = Catalog(store_url)  # another process's write
    register_hours(writer, 0, 23, regions=("eu",))
    clock.now += 0.5
    assert [e.key for e in follower.poll_once()] == ["2024-01-01T00:00:00"]
    assert api.posted == [(7, "2024-01-01T00:00:00", False)]
    clock.now += 0.5
    assert follower.poll_once() == []


def test_an_asset_that_appears_is_followed_from_then_on(events: Catalog) -> None:
    register_hours(events, 0, 23, regions=("eu",))
    api, clock = StandInApi({}), Clock()
    follower = Follower(events, api, clock=clock, refresh=10)
    follower.poll_once()
    spec = CoverageAssetSpec.of("events", "DAILY")
    api.listed = {spec: 3}
    clock.now += 5
    follower.poll_once()
    assert follower.assets == {}  # not listed again before the refresh
    clock.now += 5
    follower.poll_once()
    assert follower.assets == {spec: 3}
    assert api.posted == []  # the day was whole before: known, not announced
    register_hours(events, 0, 23, regions=("eu",), day="2024-01-02")
    clock.now += 0.5
    follower.poll_once()
    assert api.posted == [(3, "2024-01-02T00:00:00", False)]


def test_a_consumer_run_covers_its_keys_window(events: Catalog) -> None:
    with DAG("consumer", schedule=PartitionedAssetTimetable(
            assets=CoverageAsset(fact="events", period="DAILY"))) as dag:
        pass
    assert coverage_specs(dag) == [CoverageAssetSpec.of("events", "DAILY")]

    class Run:
        partition_key = "2024-01-02T00:00:00"
        conf: dict[str, Any] = {}

    window = run_window({"dag_run": Run(), "dag": dag}, events)
    assert window is not None
    assert (window.start.isoformat(), window.end.isoformat(), window.where) == (
        "2024-01-02T00:00:00+00:00", "2024-01-03T00:00:00+00:00", None)

    class HandRun:
        partition_key = None
        conf = {"partition_key": "2024-01-05T00:00:00"}

    by_hand = run_window({"dag_run": HandRun(), "dag": dag}, events)
    assert by_hand is not None and by_hand.start.day == 5
    with DAG("plain", schedule=None) as plain:
        pass
    assert run_window({"dag_run": Run(), "dag": plain}, events) is None


def test_the_follower_rides_out_a_catalog_that_drops(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """The Thrift server goes away and comes back (a restart keeps its tables): the follower's
    rounds log once and keep going, and the day completed meanwhile is announced after."""
    import threading

    from airflow_partitions.testing.hbase.server import HBaseTestServer

    server = HBaseTestServer()
    server.start()
    try:
        url = f"hbase://127.0.0.1:{server.port}?table_prefix=follow"
        catalog = Catalog(url)
        catalog.create_fact("events")
        catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
        spec = CoverageAssetSpec.of("events", "DAILY")
        api, clock = StandInApi({spec: 1}), Clock()
        follower = Follower(catalog, api, clock=clock, poll=0.05)
        follower.poll_once()
        server.stop()
        stop = threading.Event()
        rounds = threading.Thread(target=follower.run, args=(stop,))
        rounds.start()
        try:
            poll = 0
            while "will retry" not in caplog.text and poll < 400:
                stop.wait(0.05)
                poll += 1
            assert "will retry" in caplog.text
            server.start()
            with Catalog(url) as writer:
                register_hours(writer, 0, 23, regions=("eu",))
            poll = 0
            while not api.posted and poll < 600:
                clock.now += 1
                stop.wait(0.05)
                poll += 1
        finally:
            stop.set()
            rounds.join(30)
        assert api.posted == [(1, "2024-01-01T00:00:00", False)]
        assert caplog.text.count("will retry") == 1
    finally:
        server.stop()
