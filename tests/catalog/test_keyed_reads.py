"""A short group of runs read by key answers exactly what a scan of its range answers.

Where a scan costs more round trips than a read by key (HBase: a scanner's open, page and
close against one ``getRowsWithColumns``), a cover reads the rows of a short group of runs of
a storage keyed by its time column alone by their keys (``catalog/rows/runs.py``). The rows of
the range at other keys (a hole's stray row) are then not read, and back nothing either way.
The oracle is the truth the test wrote: the hours with a whole row that the timeline
advertises; every backend, with reads by key forced on SQLite too, and against a scan forced
on HBase.
"""

from __future__ import annotations

import datetime as dt
import itertools
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.rows import runs
from airflow_partitions.cover import CoverRequest
from airflow_partitions.kv import KVTable, forget_all
from tests.hypothesis_budget import examples

T0 = dt.datetime(2015, 3, 1, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
_names = itertools.count()


def hour(h: int) -> str:
    return (T0 + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H")


def new_fact(catalog: Catalog, hours: list[int]) -> str:
    fact = f"keyed{next(_names)}"
    catalog.create_fact(fact)
    catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"], columns=["dt"])
    if hours:
        catalog.register(f"{fact}_raw", "HOURLY", [{"dt": hour(h)} for h in hours])
    return fact


def put_row(catalog: Catalog, fact: str, h: int, cells: dict[bytes, bytes]) -> None:
    """Write the partition row of hour ``h`` behind the catalog's back."""
    sdef = catalog.get_storage(f"{fact}_raw")
    key = catalog.rows.partition_key(sdef, sdef.periods[0], (hour(h),))
    catalog.rows.partitions.put(key, cells)


def missing_hours(catalog: Catalog, fact: str) -> list[int]:
    forget_all()  # every memo emptied: the rows are read again
    cover = catalog.cover_with_partitions(CoverRequest.of(fact, T0, T0 + DAY)).cover
    return [int((m.start - T0).total_seconds()) // 3600 + i
            for m in cover.missing for i in range(int((m.end - m.start).total_seconds()) // 3600)]


@pytest.mark.parametrize("mode", ["as the store reads", "by key", "by scan"])
@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(registered=st.sets(st.integers(0, 23)), stray=st.sets(st.integers(0, 23)),
       damaged=st.sets(st.integers(0, 23)))
def test_reads_by_key_back_exactly_the_whole_advertised_rows(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch, mode: str, registered: set[int],
        stray: set[int], damaged: set[int]) -> None:
    """Registered hours, stray rows in the day's holes (written without their timeline step,
    as by a register that crashed before it) and damaged rows (a value cell naming another
    hour) in any mix: the hours reported missing are those without a whole advertised row."""
    if mode == "by key":
        monkeypatch.setattr(KVTable, "keyed_reads_save_round_trips", True)
    elif mode == "by scan":
        monkeypatch.setattr(runs, "KEYED_READ_MAX", 0)
    fact = new_fact(catalog, sorted(registered))
    for h in stray - registered:
        put_row(catalog, fact, h, {b"p:loc": b"/data/stray", b"p:v.dt": hour(h).encode()})
    broken = damaged & registered
    for h in broken:
        put_row(catalog, fact, h, {b"p:v.dt": hour((h + 1) % 24).encode()})
    expected = sorted(set(range(24)) - (registered - broken))
    assert missing_hours(catalog, fact) == expected
    assert missing_hours(catalog, fact) == expected  # again: the damaged hours now unadvertised


def test_a_sensor_check_reads_its_day_by_key_where_that_saves_round_trips(
        catalog: Catalog) -> None:
    """A day of hours asked after another process's registration elsewhere in the fact, and
    asked again with nothing changed: each time one read of its rows, by key on HBase."""
    fact = new_fact(catalog, [h for h in range(24) if h != 7])
    other = Catalog(catalog.kv, data_root=catalog.data_root, cache=TimelineCache())
    request = CoverRequest.of(fact, T0, T0 + DAY)
    catalog.cover_with_partitions(request)
    other.register(f"{fact}_raw", "HOURLY", {"dt": hour(30)})  # the next day, not asked
    for _check in ("after the write", "idle"):
        catalog.stats.reset()
        cover = catalog.cover_with_partitions(request).cover
        assert [m.start.hour for m in cover.missing] == [7]
        ops = dict(catalog.stats.ops)
        if catalog.rows.partitions.keyed_reads_save_round_trips:
            # The fact's and its storage's catalog rows, then the day's rows by key.
            assert ops == {"get_many": 2}, ops
        else:
            assert ops.get("scan_open", 0) == 0, ops


def test_a_long_group_is_scanned(catalog: Catalog) -> None:
    """More ordinals than ``KEYED_READ_MAX`` (a month of hours): one scan, not a huge get."""
    fact = new_fact(catalog, list(range(24)))
    catalog.register(f"{fact}_raw", "HOURLY", [{"dt": hour(h)} for h in range(24, 30 * 24)])
    forget_all()
    catalog.stats.reset()
    request = CoverRequest.of(fact, T0, T0 + 30 * DAY)
    assert not catalog.cover_with_partitions(request).cover.missing
    assert catalog.stats.ops["scan_page"] == 1
    assert catalog.stats.ops.get("get_many", 0) <= 1  # the storage row, if reloaded


def test_a_row_whose_cells_do_not_decode_is_read_past_by_the_scan(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read by key that meets a row whose stored bytes do not decode (SQLite's cell blob,
    truncated) falls back to the scan, which leaves that row out and reads on: that hour
    alone is missing."""
    if not catalog.kv.url.startswith("sqlite:"):
        pytest.skip("a cell blob is SQLite's layout; HBase stores cells natively")
    monkeypatch.setattr(KVTable, "keyed_reads_save_round_trips", True)
    fact = new_fact(catalog, list(range(24)))
    sdef = catalog.get_storage(f"{fact}_raw")
    key = catalog.rows.partition_key(sdef, sdef.periods[0], (hour(3),))
    with sqlite3.connect(Path(catalog.kv.url.removeprefix("sqlite:///"))) as conn:
        [(blob,)] = conn.execute("SELECT cells FROM kv_partitions WHERE row = ?", (key,))
        conn.execute("UPDATE kv_partitions SET cells = ? WHERE row = ?", (blob[:-3], key))
    conn.close()
    catalog.stats.reset()
    assert missing_hours(catalog, fact) == [3]
    assert catalog.stats.ops["scan_page"] >= 1  # the scan that read on past it
