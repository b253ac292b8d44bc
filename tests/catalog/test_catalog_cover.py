"""Covers from the catalog: verified against partition rows before anyone acts on them."""

from __future__ import annotations

import pendulum
import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.cover import CoverRequest
from airflow_partitions.periods import TimePartitionRange

START = pendulum.datetime(2015, 1, 29, 6)
END = pendulum.datetime(2015, 3, 1, 6)


@pytest.fixture
def lens(events: Catalog) -> Catalog:
    """The Lens note's best case: hourly edges (two regions), daily and monthly rollups."""
    hours = TimePartitionRange.parse("[2015-01-29-06, 2015-03-01-06)", "HOURLY")
    events.register("raw", "HOURLY", [{"dt": p.value, "region": r} for p in hours
                                      for r in ("us", "eu")])
    days = TimePartitionRange.parse("[2015-01-30, 2015-03-01)", "DAILY")
    events.register("rollup", "DAILY", [{"dt": p.value} for p in days])
    events.register("rollup", "MONTHLY", {"dt": "2015-02"})
    return events


def _summary(cover: object) -> list[tuple[str, str, str]]:
    return [(p.storage, p.period.name, p.value) for p in cover.partitions]  # type: ignore[attr-defined]


def test_cover_uses_the_largest_partitions_and_carries_every_row(lens: Catalog) -> None:
    verified = lens.cover_with_partitions(CoverRequest.of("events", START, END))
    cover = verified.cover
    assert cover.coverable and cover.fact == "events"
    assert len(cover.partitions) == 18 + 2 + 1 + 6
    assert ("rollup", "MONTHLY", "2015-02") in _summary(cover)
    # Both regions of every hourly value are behind the cover; one row per daily/monthly value.
    assert len(verified.partitions) == 2 * (18 + 6) + 2 + 1
    hourly = [p for p in cover.partitions if p.period.name == "HOURLY"]
    assert hourly[0].location.endswith("/raw/HOURLY/dt=2015-01-29-06")  # the regions' parent
    monthly = next(p for p in cover.partitions if p.period.name == "MONTHLY")
    assert monthly.location.endswith("/rollup/MONTHLY/dt=2015-02")


def test_a_dropped_rollup_falls_back_to_finer_partitions(lens: Catalog) -> None:
    lens.drop("rollup", "DAILY", {"dt": "2015-01-30"})
    cover = lens.cover("events", START, END)
    assert cover.coverable
    assert ("raw", "HOURLY", "2015-01-30-05") in _summary(cover)
    lens.drop("raw", "HOURLY", [{"dt": "2015-01-30-05", "region": r} for r in ("us", "eu")])
    cover = lens.cover("events", START, END)
    assert not cover.coverable
    [missing] = cover.missing
    assert "no HOURLY 2015-01-30-05, no DAILY 2015-01-30" in missing.describe()


def test_rows_deleted_behind_the_catalogs_back_are_never_advertised(lens: Catalog) -> None:
    lens.cover("events", START, END)  # warm the cache
    # Delete the MONTHLY row without telling the timeline: the stored timeline over-reports.
    sdef = lens.get_storage("rollup")
    key = lens.rows.partition_key(sdef, sdef.periods[-1], ("2015-02",))
    lens.rows.partitions.delete(key)
    cover = lens.cover("events", START, END)
    assert cover.coverable
    assert ("rollup", "MONTHLY", "2015-02") not in _summary(cover)
    assert ("rollup", "DAILY", "2015-02-10") in _summary(cover)
    # The reader repaired the timeline: a fresh process no longer sees the monthly partition.
    fresh = Catalog(lens.kv, data_root=lens.data_root, cache=TimelineCache())
    assert [p.value for p in fresh.timeline("rollup", "MONTHLY")] == []


def test_warm_cover_costs_the_cache_check_plus_the_verification(lens: Catalog) -> None:
    lens.cover("events", START, END)
    lens.stats.reset()
    lens.cover("events", START, END, verify=False)
    assert lens.stats.round_trips == 1  # just the generation check
    lens.stats.reset()
    lens.cover("events", START, END)
    if lens.kv.change_stamp() is not None:  # SQLite: proven unchanged, the answer given
        assert dict(lens.stats.ops) == {"change_stamp": 2}, lens.stats.ops
        lens.create_fact("other")  # a write elsewhere: the change feeds prove it still true
        lens.stats.reset()
        lens.cover("events", START, END)
        assert dict(lens.stats.ops) == {"change_stamp": 1, "changed_rows": 1}, lens.stats.ops
        lens.drop("raw", "HOURLY", {"dt": "2015-02-10-00", "region": "eu"})  # in the range
        lens.stats.reset()
        lens.cover("events", START, END)  # worked out and verified again
    ops = lens.stats.ops
    if lens.kv.change_stamp() is None:
        # HBase: the fact's and its storages' catalog rows in one read, which prove the last
        # answer's basis; the daily and the monthly partition rows each read by key in one
        # call instead of a scanner's three.
        assert "get" not in ops and ops["get_many"] == 1 + 2, ops
    else:  # the fact row (its generation moved), then the storage rows written, batched
        assert ops["get"] == 1 and ops.get("get_many", 0) <= 1, ops
    assert ops.get("scan_page", 0) <= 2, ops  # the month of hours, at each edge


def test_periods_and_storages_restrict_the_cover(lens: Catalog) -> None:
    only_raw = lens.cover("events", START, END, storages=["raw"])
    assert {p.storage for p in only_raw.partitions} == {"raw"}
    assert len(only_raw.partitions) == 744
    no_monthly = lens.cover("events", START, END, periods=["HOURLY", "DAILY"])
    assert {p.period.name for p in no_monthly.partitions} == {"HOURLY", "DAILY"}
