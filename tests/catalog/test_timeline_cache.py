"""The timeline cache's costs: one small read when warm, no partition scan when cold."""

from __future__ import annotations

import pendulum

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.periods import UpdatePeriod
from tests.kv.raw_sqlite import SQLiteStore

HOURLY = UpdatePeriod.HOURLY


def _fresh(catalog: Catalog) -> Catalog:
    """A second process's view: same store, empty cache."""
    return Catalog(catalog.kv, data_root=catalog.data_root, cache=TimelineCache())


def test_warm_check_is_exactly_one_round_trip(events: Catalog) -> None:
    events.register("raw", "HOURLY", [{"dt": f"2015-01-01-{h:02d}", "region": "us"}
                                      for h in range(24)])
    events.fact_state("events")
    events.stats.reset()
    state = events.fact_state("events")
    assert events.stats.round_trips == 1
    assert len(state.storages["raw"].timelines[(HOURLY, "dt")]) == 24


def test_a_write_elsewhere_is_seen_by_the_next_check(events: Catalog) -> None:
    events.fact_state("events")
    other = _fresh(events)
    other.register("raw", "HOURLY", {"dt": "2015-01-01-05", "region": "us"})
    state = events.fact_state("events")
    assert [p.value for p in state.storages["raw"].timelines[(HOURLY, "dt")]] == ["2015-01-01-05"]


def test_cold_load_reads_one_row_per_storage_and_never_scans(events: Catalog) -> None:
    events.register("raw", "HOURLY", [{"dt": f"2015-01-01-{h:02d}", "region": r}
                                      for h in range(24) for r in ("us", "eu", "ap")])
    cold = _fresh(events)
    cold.stats.reset()
    state = cold.fact_state("events")
    # the fact row, on SQLite the catalog feed's position (so the next load reads only the
    # storage rows written since), then both storage rows in one get_many
    assert cold.stats.round_trips == (3 if isinstance(cold.kv, SQLiteStore) else 2)
    assert cold.stats.ops.get("scan_page", 0) == 0
    assert len(state.storages["raw"].timelines[(HOURLY, "dt")]) == 24


def test_cold_store_all_reader_reads_only_the_queried_slice(catalog: Catalog) -> None:
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], timeline_classes={"HOURLY": "StoreAll"})
    catalog.register("raw", "HOURLY", [{"dt": f"2015-01-{d:02d}-{h:02d}"}
                                       for d in range(1, 31) for h in range(24)])
    cold = _fresh(catalog)
    timeline = cold.fact_state("events").storages["raw"].timelines[(HOURLY, "dt")]
    lo = HOURLY.ordinal(pendulum.datetime(2015, 1, 10, 3))
    hi = HOURLY.ordinal(pendulum.datetime(2015, 1, 10, 9))
    cold.stats.reset()
    assert timeline.ordinal_ranges(lo, hi) == [(lo, hi)]
    # One single-row scan with a column-range filter (HBase adds the scanner open and close).
    assert cold.stats.ops["scan_page"] == 1
    assert set(cold.stats.ops) <= {"scan_open", "scan_page", "scan_close"}
    spent = cold.stats.round_trips
    # Only six values were read into memory, not the month's 720.
    assert len(timeline._values) == 6
    assert timeline.ordinal_ranges(lo + 1, hi - 1) == [(lo + 1, hi - 1)]
    assert cold.stats.round_trips == spent  # served from the loaded window


def test_an_identical_recreate_keeps_caches_warm(events: Catalog) -> None:
    events.fact_state("events")
    before = events.fact_state("events").generation
    events.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"], exist_ok=True)
    events.stats.reset()
    assert events.fact_state("events").generation == before
    assert events.stats.round_trips == 1
