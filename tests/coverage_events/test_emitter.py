"""Announcing windows: once when coverable, again only when restated, never on a drop, once
across processes, and nothing lost when a post fails or a process dies after its claim.

The oracle of the property test keeps its own set of registered (hour, region) pairs and daily
partitions and decides a day's completeness with plain loops: it shares no code with the
cover, the timelines or the emitter.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import (
    CLAIM_TIMEOUT,
    CoverageAssetSpec,
    CoverageEmitter,
    Emission,
    EmissionMarkers,
)

REGIONS = ("eu", "us")
DAY = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def make_catalog(path: Path, tz: str = "UTC") -> Catalog:
    catalog = Catalog(f"sqlite:///{path}/c.db")
    catalog.create_fact("ev", time_columns=["dt"], tz=tz)
    catalog.create_storage("ev", "raw", ["HOURLY"], columns=["region"],
                           location=f"{path}/raw/{{dt}}/{{region}}", dimensions=["region=eu,us"])
    catalog.create_storage("ev", "day", ["DAILY"], location=f"{path}/day/{{dt}}")
    return catalog


def hours(day: int, first: int = 0, last: int = 23, regions: tuple[str, ...] = REGIONS,
          skip: tuple[tuple[int, str], ...] = ()) -> list[dict[str, str]]:
    return [{"dt": f"2024-01-{day:02d}-{h:02d}", "region": r} for h in range(first, last + 1)
            for r in regions if (h, r) not in skip]


class Recorder:
    def __init__(self) -> None:
        self.seen: list[Emission] = []

    def __call__(self, emission: Emission) -> None:
        self.seen.append(emission)

    @property
    def keys(self) -> list[tuple[str, bool, int]]:
        return [(e.key, e.restated, e.version) for e in self.seen]


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return make_catalog(tmp_path)


DAILY = CoverageAssetSpec.of("ev", "DAILY")


def started(catalog: Catalog, *specs: CoverageAssetSpec) -> CoverageEmitter:
    emitter = CoverageEmitter(catalog)
    for spec in specs:
        assert emitter.follow(spec)
    return emitter


def test_a_day_is_announced_once_when_its_last_hour_of_the_last_region_arrives(
        catalog: Catalog) -> None:
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1, skip=((5, "eu"),)))
    assert emitter.emit(DAILY, post) == [] and post.keys == []
    catalog.register("raw", "HOURLY", [{"dt": "2024-01-01-05", "region": "eu"}])
    emitter.emit(DAILY, post)
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-01T00:00:00", False, 1)]
    extra = post.seen[0].extra()
    assert extra["restated"] is False
    assert extra["airflow_partitions"]["partitions"] == 48
    assert extra["airflow_partitions"]["start"] == "2024-01-01T00:00:00+00:00"


def test_a_dropped_hour_holds_the_day_and_a_drop_announces_nothing(catalog: Catalog) -> None:
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", [{"dt": "2024-01-01-03", "region": "eu"}])
    catalog.drop("raw", "HOURLY", [{"dt": "2024-01-01-03", "region": "eu"}])
    catalog.register("raw", "HOURLY", hours(1, skip=((3, "eu"),)))
    assert emitter.emit(DAILY, post) == []
    catalog.register("raw", "HOURLY", [{"dt": "2024-01-01-03", "region": "eu"}])
    emitter.emit(DAILY, post)
    catalog.drop("raw", "HOURLY", [{"dt": "2024-01-01-07", "region": "us"}])
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-01T00:00:00", False, 1)]


def test_a_daily_partition_alone_makes_the_day(catalog: Catalog) -> None:
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("day", "DAILY", [{"dt": "2024-01-02"}])
    emitter.emit(DAILY, post)
    catalog.register("raw", "HOURLY", hours(2))  # more inputs, same window: nothing new
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-02T00:00:00", False, 1)]


def test_a_restated_hour_announces_its_day_again_and_only_its_day(catalog: Catalog) -> None:
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1) + hours(2))
    emitter.emit(DAILY, post)
    catalog.register("raw", "HOURLY", [{"dt": "2024-01-02-07", "region": "eu"}], restate=True)
    emitter.emit(DAILY, post)
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-01T00:00:00", False, 1), ("2024-01-02T00:00:00", False, 1),
                         ("2024-01-02T00:00:00", True, 2)]
    assert post.seen[-1].extra()["restated"] is True


def test_a_rollup_written_from_the_day_does_not_announce_it_again(catalog: Catalog) -> None:
    """The consumer's own output (a DAILY partition recording its hours as inputs) changes
    the day's best cover, not its data: no second run. A restated hour makes that rollup
    stale, so the day is announced again from its hours."""
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1))
    emitter.emit(DAILY, post)
    inputs = [{"storage": "raw", "period": "HOURLY", "values": v, "version": 1}
              for v in hours(1)]
    catalog.register("day", "DAILY", [{"dt": "2024-01-01"}], inputs=inputs)
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-01T00:00:00", False, 1)]
    catalog.register("raw", "HOURLY", [{"dt": "2024-01-01-00", "region": "us"}], restate=True)
    emitter.emit(DAILY, post)
    assert post.keys[-1] == ("2024-01-01T00:00:00", True, 2)


def test_windows_coverable_before_the_asset_was_followed_are_known_not_announced(
        catalog: Catalog) -> None:
    catalog.register("raw", "HOURLY", hours(1))
    post = Recorder()
    emitter = CoverageEmitter(catalog)
    emitter.emit(DAILY, post)  # follows first
    catalog.register("raw", "HOURLY", hours(2))
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-02T00:00:00", False, 1)]
    states = {k: m.doc["status"] for k, m in EmissionMarkers(catalog.rows.kv).markers(DAILY.uri)}
    assert states == {"2024-01-01T00:00:00": "known", "2024-01-02T00:00:00": "emitted"}


def test_per_slice_windows_each_come_when_their_slice_is_whole(catalog: Catalog) -> None:
    spec = CoverageAssetSpec.of("ev", "DAILY", per_slice=True)
    emitter, post = started(catalog, spec), Recorder()
    catalog.register("raw", "HOURLY", hours(1, regions=("us",)))
    emitter.emit(spec, post)
    catalog.register("raw", "HOURLY", hours(1, regions=("eu",)))
    emitter.emit(spec, post)
    assert post.keys == [("us|2024-01-01T00:00:00", False, 1), ("eu|2024-01-01T00:00:00", False, 1)]
    assert post.seen[0].extra()["airflow_partitions"]["slice"] == {"region": "us"}


def test_a_value_required_from_noon_holds_the_day_until_its_hours(catalog: Catalog) -> None:
    catalog.set_dimension("raw", "region=apac@2024-01-01T12:00:00Z..")
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1))
    assert emitter.emit(DAILY, post) == []
    catalog.register("raw", "HOURLY", hours(1, 12, 23, regions=("apac",)))
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-01T00:00:00", False, 1)]


def test_a_23_hour_day_is_one_window(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path, tz="Europe/Berlin")
    emitter, post = started(catalog, DAILY), Recorder()
    values = [{"dt": f"2024-03-31-{h:02d}", "region": r} for h in range(24) if h != 2
              for r in REGIONS]
    catalog.register("raw", "HOURLY", values)
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-03-31T00:00:00", False, 1)]
    assert post.seen[0].extra()["airflow_partitions"]["partitions"] == 46


def test_a_failed_post_is_tried_again_and_announced_once(catalog: Catalog) -> None:
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1))

    def down(emission: Emission) -> None:
        raise OSError("api-server unreachable")

    with pytest.raises(OSError):
        emitter.emit(DAILY, down)
    emitter.emit(DAILY, post)
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-01T00:00:00", False, 1)]


def test_a_claim_whose_process_died_is_taken_over(catalog: Catalog) -> None:
    """What a process killed between its claim and its post leaves: a claim that never
    completes. After the claim timeout the next emitter posts the window, once."""
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1))
    markers = EmissionMarkers(catalog.rows.kv)
    long_ago = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=CLAIM_TIMEOUT + 1)).isoformat()
    assert markers.swap(DAILY.uri, "2024-01-01T00:00:00", None, {
        "status": "claimed", "version": 1, "restated": False, "inputs": [], "at": long_ago})
    emitter.emit(DAILY, post)
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-01T00:00:00", False, 1)]


def test_a_fresh_claim_of_another_process_is_left_to_it(catalog: Catalog) -> None:
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1))
    markers = EmissionMarkers(catalog.rows.kv)
    now = dt.datetime.now(dt.UTC).isoformat()
    assert markers.swap(DAILY.uri, "2024-01-01T00:00:00", None, {
        "status": "claimed", "version": 1, "restated": False, "inputs": [], "at": now})
    assert emitter.emit(DAILY, post) == []


def test_a_damaged_marker_is_announced_again_once(catalog: Catalog) -> None:
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1))
    emitter.emit(DAILY, post)
    table = catalog.rows.kv.table("partition_emissions")
    table.put(DAILY.uri.encode() + b"\x002024-01-01T00:00:00", {b"e:m": b"\xff{not json"})
    emitter.emit(DAILY, post)
    emitter.emit(DAILY, post)
    assert [k for k, _, _ in post.keys] == ["2024-01-01T00:00:00"] * 2


def _emit_in_process(store: str, out: str, barrier: multiprocessing.synchronize.Barrier) -> None:
    catalog = Catalog(store)
    seen: list[str] = []
    barrier.wait()
    CoverageEmitter(catalog).emit(DAILY, lambda e: seen.append(e.key))
    Path(out).write_text(json.dumps(seen))


def test_processes_completing_days_together_announce_each_day_once(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path)
    CoverageEmitter(catalog).follow(DAILY)
    catalog.register("raw", "HOURLY", [v for d in (1, 2, 3) for v in hours(d)])
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_emit_in_process,
                         args=(f"sqlite:///{tmp_path}/c.db", str(tmp_path / f"{i}.json"), barrier))
             for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    announced = [k for i in range(4) for k in json.loads((tmp_path / f"{i}.json").read_text())]
    assert sorted(announced) == [f"2024-01-0{d}T00:00:00" for d in (1, 2, 3)]


# -- property: announcements follow the oracle's completeness ---------------------------------

steps = st.lists(st.tuples(
    st.sampled_from(["add", "drop", "restate", "daily"]),
    st.integers(1, 2),  # day
    st.integers(0, 3),  # hour (days are 4 hours long in this model: see below)
    st.sampled_from(REGIONS),
), min_size=1, max_size=25)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps)
def test_announcements_follow_completeness(tmp_path_factory: pytest.TempPathFactory,
                                           script: list[tuple[str, int, int, str]]) -> None:
    """Days need hours 0..23 of both regions; the script only touches hours 0..3, and every
    other hour is registered up front, so a few steps decide completeness."""
    path = tmp_path_factory.mktemp("prop")
    catalog = make_catalog(path)
    emitter, post = started(catalog, DAILY), Recorder()
    present: set[tuple[int, int, str]] = {(d, h, r) for d in (1, 2) for h in range(4, 24)
                                          for r in REGIONS}
    daily: set[int] = set()
    catalog.register("raw", "HOURLY", [{"dt": f"2024-01-{d:02d}-{h:02d}", "region": r}
                                       for d, h, r in sorted(present)])
    announced_once: set[int] = set()
    was_complete: set[int] = set()
    for action, day, hour, region in script:
        value = {"dt": f"2024-01-{day:02d}-{hour:02d}", "region": region}
        if action == "add":
            catalog.register("raw", "HOURLY", [value])
            present.add((day, hour, region))
        elif action == "drop":
            catalog.drop("raw", "HOURLY", [value])
            present.discard((day, hour, region))
        elif action == "restate" and (day, hour, region) in present:
            catalog.register("raw", "HOURLY", [value], restate=True)
        elif action == "daily":
            catalog.register("day", "DAILY", [{"dt": f"2024-01-{day:02d}"}])
            daily.add(day)
        before = len(post.seen)
        emitter.emit(DAILY, post)
        new = post.seen[before:]
        for d in (1, 2):
            complete = d in daily or all((d, h, r) in present for h in range(24) for r in REGIONS)
            key = f"2024-01-{d:02d}T00:00:00"
            firsts = [e for e in new if e.key == key and not e.restated]
            if complete and d not in was_complete and d not in announced_once:
                assert len(firsts) == 1, (d, action)
                announced_once.add(d)
            else:
                assert firsts == [], (d, action)
            if not complete:
                assert [e for e in new if e.key == key] == []  # never a window that is not whole
            if complete:
                was_complete.add(d)


def test_a_damaged_row_costs_its_window_only(catalog: Catalog,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """A partition row that is not whole is never used: its day is not announced (the cover
    that leaves the row out logs it by name), and the other day is."""
    emitter, post = started(catalog, DAILY), Recorder()
    catalog.register("raw", "HOURLY", hours(1) + hours(2))
    [(_, key)] = catalog.keyed_specs(catalog.get_storage("raw"), "HOURLY",
                                     {"dt": "2024-01-01-05", "region": "eu"})
    catalog.rows.partitions.delete(key, [b"p:state"])
    emitter.emit(DAILY, post)
    assert post.keys == [("2024-01-02T00:00:00", False, 1)]
    assert "2024-01-01-05" in caplog.text
