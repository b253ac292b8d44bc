"""A verified cover asked again reads what changed, never less (docs/design.md, invariant 2).

On SQLite the partition rows a cover checked are kept with the change feed's position taken
before they were read (``catalog/rows/runs.py``, ``catalog/slices/sliced_runs.py``); the next
cover reads only the rows the feed names, and what a new cover adds. Property: after any
sequence of writes by this catalog, by another connection and by raw SQL (a drop, a row
marked dropping, a rewrite with a new version, a raw damaged blob, a repair), the answer is
the answer with every memo emptied. On HBase there is no feed: the same answers, read whole.
"""

from __future__ import annotations

import datetime as dt
import gc
import itertools
import multiprocessing
import os
import random
import sqlite3
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import CRASH_ENV, Catalog, forget_kept
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.covers.verified import CoverVerificationError, VerifiedCover
from airflow_partitions.catalog.rows.layout import STATE
from airflow_partitions.catalog.writer import DROP_STEPS, REGISTER_STEPS
from airflow_partitions.cover import CoverRequest
from airflow_partitions.errors import CorruptPartitionRow
from airflow_partitions.kv import CorruptCell, forget_all
from tests.catalog.workers import crash_op
from tests.hypothesis_budget import examples
from tests.kv.raw_sqlite import SQLiteStore, delete_elsewhere, sql_table

T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
HOURS = 12
REGIONS = ("eu", "us", "ap")
_names = itertools.count()
CRASH_CASES = [("register", s) for s in REGISTER_STEPS] + [("drop", s) for s in DROP_STEPS]


def hour(h: int) -> str:
    return (T0 + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H")


def answer(verified: VerifiedCover) -> tuple[object, ...]:
    cover = verified.cover
    return (cover.coverable, tuple(cover.runs), tuple(m.describe() for m in cover.missing),
            tuple((p.storage, p.period, tuple(sorted(p.values.items())), p.location, p.version)
                  for p in verified.partitions),
            tuple((p.value, p.location, p.dimensions) for p in cover.partitions))


def damage_elsewhere(catalog: Catalog, key: bytes) -> None:
    """A blob that does not decode, written by another connection (SQLite), or a state
    nobody writes (HBase)."""
    if isinstance(catalog.kv, SQLiteStore):
        with sqlite3.connect(catalog.kv.path) as other:
            other.execute(f"UPDATE {sql_table(catalog.rows.partitions.name)} SET cells = ? "
                          "WHERE row = ?", (b"\x03\x00\x01", key))
    elif catalog.rows.partitions.get(key):
        catalog.rows.partitions.put(key, {STATE: b"weird"})


def write(op: str, catalog: Catalog, other: Catalog, raw: str, values: dict[str, str],
          key: bytes) -> None:
    """One write of the property test's sequence (the other ops write nothing)."""
    if op == "add":
        catalog.register(raw, "HOURLY", [values], overwrite=True)
    elif op == "rewrite":  # a new version, at a new location
        catalog.register(raw, "HOURLY", [values], overwrite=True, restate=True,
                         location=f"/data/v/{'/'.join(values.values())}")
    elif op == "add_other":
        other.register(raw, "HOURLY", [values], overwrite=True)
    elif op == "drop":
        catalog.drop(raw, "HOURLY", [values])
    elif op == "drop_other":
        other.drop(raw, "HOURLY", [values])
    elif op == "dropping" and catalog.rows.partitions.get(key):
        catalog.rows.partitions.put(key, {STATE: b"dropping"})
    elif op == "behind" and not delete_elsewhere(catalog.kv, catalog.rows.partitions.name, key):
        catalog.rows.partitions.delete(key)  # HBase: through the table
    elif op == "damage":
        damage_elsewhere(catalog, key)
    elif op == "repair":
        catalog.reconcile(raw, drop_corrupt=True)


operations = st.lists(st.tuples(
    st.sampled_from(["add", "add_other", "drop", "drop_other", "rewrite", "dropping",
                     "behind", "damage", "repair", "ask", "check"]),
    st.integers(0, HOURS - 1), st.sampled_from(REGIONS)), max_size=16)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations, shape=st.sampled_from(["dt", "dt,region", "dt,region=dimension"]))
def test_a_cover_after_any_writes_is_the_cover_read_whole(
        catalog: Catalog, ops: list[tuple[str, int, str]], shape: str) -> None:
    fact = f"f{next(_names)}"
    raw = f"{fact}_raw"
    columns = ["dt"] if shape == "dt" else ["dt", "region"]
    regions = REGIONS if shape != "dt" else ("eu",)
    catalog.create_fact(fact)
    catalog.create_storage(fact, raw, ["HOURLY"], columns=columns,
                           dimensions=[f"region={','.join(REGIONS)}"] if "=" in shape else [])
    other = Catalog(catalog.kv.url, data_root=catalog.data_root, cache=TimelineCache())
    catalog.register(raw, "HOURLY", [{"dt": hour(h), "region": r}
                                     if shape != "dt" else {"dt": hour(h)}
                                     for h in range(HOURS - 1) for r in regions])
    request = CoverRequest.of(fact, T0, T0 + dt.timedelta(hours=HOURS), periods="HOURLY")
    sdef = catalog.get_storage(raw)
    catalog.cover_with_partitions(request)
    try:
        for op, h, region in [*ops, ("check", 0, "eu")]:
            values = {"dt": hour(h)} if shape == "dt" else {"dt": hour(h), "region": region}
            [(_, key)] = catalog.keyed_specs(sdef, "HOURLY", values)

            try:  # a write over a damaged row is refused (invariant 8): nothing written
                write(op, catalog, other, raw, values, key)
            except (CorruptCell, CorruptPartitionRow):
                pass
            if op == "ask":  # the kept rows move on with the feed
                catalog.cover_with_partitions(request)
            elif op == "check":
                remembered = answer(catalog.cover_with_partitions(request))
                forget_kept()
                assert answer(catalog.cover_with_partitions(request)) == remembered
    finally:
        other.close()


def _regions_fact(catalog: Catalog, hours: int, regions: int) -> tuple[str, list[str]]:
    names = [f"r{i:03d}" for i in range(regions)]
    fact = f"g{next(_names)}"
    catalog.create_fact(fact)
    catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=[f"region={','.join(names)}"])
    catalog.register(f"{fact}_raw", "HOURLY", [
        {"dt": hour(h), "region": r} for h in range(hours) for r in names
        if (h, r) != (hours - 1, names[0])])
    return fact, names


def test_one_region_written_elsewhere_reads_one_hour_and_takes_one_run_again(
        catalog: Catalog) -> None:
    """A month of regions in miniature: after another connection registers one partition,
    the cover reads the feed and that hour's rows, and every other region's run is the one
    kept (the same object); nothing is read whole. Store-agnostic on HBase: read whole."""
    fact, names = _regions_fact(catalog, 48, 20)
    request = CoverRequest.of(fact, T0, T0 + dt.timedelta(hours=48))
    before = catalog.cover_with_partitions(request)
    assert not before.cover.coverable
    other = Catalog(catalog.kv.url, data_root=catalog.data_root, cache=TimelineCache())
    other.register(f"{fact}_raw", "HOURLY", [{"dt": hour(47), "region": names[0]}])
    other.close()
    catalog.stats.reset()
    after = catalog.cover_with_partitions(request)
    assert after.cover.coverable
    assert len(after.partitions) == 48 * 20
    if not isinstance(catalog.kv, SQLiteStore):
        return
    assert "feed_position" not in catalog.stats.ops  # no read of the whole stretch
    assert catalog.stats.ops["changes_since"] >= 1
    kept = {r.run.dimensions: r for r in before._runs}
    same = [r for r in after._runs if kept.get(r.run.dimensions) is r]
    assert len(same) == len(names) - 1  # only the region written was taken again
    forget_all()
    assert answer(catalog.cover_with_partitions(request)) == answer(after)


def test_an_hour_appended_to_a_long_run_reads_only_that_hour(catalog: Catalog) -> None:
    fact = f"h{next(_names)}"
    catalog.create_fact(fact)
    catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"])
    catalog.register(f"{fact}_raw", "HOURLY", [{"dt": hour(h)} for h in range(2000)])
    request = CoverRequest.of(fact, T0, T0 + dt.timedelta(hours=2001))
    assert not catalog.cover_with_partitions(request).cover.coverable
    catalog.register(f"{fact}_raw", "HOURLY", [{"dt": hour(2000)}])
    catalog.stats.reset()
    after = catalog.cover_with_partitions(request)
    assert after.cover.coverable and len(after.partitions) == 2001
    assert [p.values["dt"] for p in after.partitions] == [hour(h) for h in range(2001)]
    if isinstance(catalog.kv, SQLiteStore):
        assert "feed_position" not in catalog.stats.ops  # no full read: the feed, then
        assert catalog.stats.ops["changes_since"] >= 1  # the new hour (and the changed one)
        assert catalog.stats.ops["scan_page"] <= 2


def test_a_first_question_keeps_its_rows_packed(catalog: Catalog) -> None:
    """Memory: the rows a first ten-thousand-hour question keeps (its answer and every memo)
    take less than 200 bytes a row (as tuples they took about 600); the partitions are still
    all there, exactly the rows checked. Allocation counts, no clock."""
    fact = f"m{next(_names)}"
    catalog.create_fact(fact)
    catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"])
    n = 10_000
    catalog.register(f"{fact}_raw", "HOURLY", [{"dt": hour(h)} for h in range(n)])
    request = CoverRequest.of(fact, T0, T0 + dt.timedelta(hours=n))
    catalog.fact_state(fact)
    forget_all()
    gc.collect()
    tracemalloc.start()
    try:
        verified = catalog.cover_with_partitions(request)
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert verified.cover.coverable
    assert kept / n < 200, f"{kept / n:.0f} bytes a row kept"
    assert [p.values["dt"] for p in verified.partitions] == [hour(h) for h in range(n)]
    assert (verified.cover.partitions[0].location or "").endswith(f"dt={hour(0)}")


def _writer(url: str, data_root: str, fact: str, seed: int, ops: int, start: Any) -> None:
    catalog = Catalog(url, data_root=data_root)
    rng = random.Random(seed)
    start.wait()
    for _ in range(ops):
        values = {"dt": hour(rng.randrange(HOURS)), "region": rng.choice(REGIONS)}
        if rng.random() < 0.6:
            catalog.register(f"{fact}_raw", "HOURLY", [values])
        else:
            catalog.drop(f"{fact}_raw", "HOURLY", [values])
    catalog.close()


def test_covers_read_while_processes_write_end_as_read_whole(catalog: Catalog) -> None:
    """Several processes register and drop while this one asks covers through the feed;
    every answer is a cover, and the last one is the cover read whole."""
    if not isinstance(catalog.kv, SQLiteStore):
        return  # the feed is SQLite's; HBase covers read their rows whole every time
    fact = f"c{next(_names)}"
    catalog.create_fact(fact)
    catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=[f"region={','.join(REGIONS)}"])
    catalog.register(f"{fact}_raw", "HOURLY", [{"dt": hour(h), "region": r}
                                               for h in range(HOURS) for r in REGIONS])
    request = CoverRequest.of(fact, T0, T0 + dt.timedelta(hours=HOURS))
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(4)
    writers = [ctx.Process(target=_writer, args=(catalog.kv.url, catalog.data_root, fact,
                                                 seed, 60, start)) for seed in range(3)]
    for writer in writers:
        writer.start()
    start.wait()
    asked = 0
    while any(w.is_alive() for w in writers) or asked < 3:
        try:
            verified = catalog.cover_with_partitions(request)
        except CoverVerificationError:  # writers this busy can outrun three rounds (as
            continue                    # when every row is read whole): never a wrong answer
        for p in verified.partitions:  # every row listed is registered and whole
            assert p.storage == f"{fact}_raw" and p.values["region"] in REGIONS
        asked += 1
    for writer in writers:
        writer.join(timeout=120)
        assert writer.exitcode == 0
    remembered = answer(catalog.cover_with_partitions(request))
    forget_all()
    assert answer(catalog.cover_with_partitions(request)) == remembered


@pytest.mark.parametrize(("op", "step"), CRASH_CASES, ids=[s for _, s in CRASH_CASES])
def test_a_write_killed_between_two_steps_is_seen_by_the_next_cover(
        events: Catalog, op: str, step: str) -> None:
    """Invariant 5 meets the feed: a register or drop killed between any two of its steps
    leaves rows the feed named as they were committed; the cover asked next (through the
    rows kept) is the cover read whole, and so is the one after the re-run."""
    events.register("raw", "HOURLY", [{"dt": hour(h), "region": r}
                                      for h in range(8) for r in ("us", "eu", "ap")])
    request = CoverRequest.of("events", T0, T0 + dt.timedelta(hours=8), periods="HOURLY")
    events.cover_with_partitions(request)  # rows kept, feed position taken
    for crash_at, code in ((step, 86), (None, 0)):
        child = multiprocessing.get_context("fork").Process(
            target=_crash_child, args=(events.kv.url, events.data_root, op, crash_at))
        child.start()
        child.join(timeout=120)
        assert child.exitcode == code
        remembered = answer(events.cover_with_partitions(request))
        forget_all()
        assert answer(events.cover_with_partitions(request)) == remembered


def _crash_child(url: str, data_root: str, op: str, crash_at: str | None) -> None:
    os.environ.pop(CRASH_ENV, None)
    if crash_at:
        os.environ[CRASH_ENV] = crash_at
    crash_op(url, data_root, op)
