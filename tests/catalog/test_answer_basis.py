"""An answer kept for a request is handed out again after a write only when the change feeds
prove it still true (``catalog/covers/answer_basis.py``); every other write makes the cover
worked out and verified again.

The oracle is a model of what the test registered (a set of hours, a set of days), sharing no
code with the catalog: an hour is missing from ``[start, end)`` when it has no hourly row and
no daily row of a day inside the range.
"""

from __future__ import annotations

import datetime as dt
import itertools
import multiprocessing
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, forget_kept
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.rows.layout import storage_row, timeline_column
from airflow_partitions.periods import UpdatePeriod
from tests.hypothesis_budget import examples
from tests.kv.raw_sqlite import sql_table

T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
HOUR, DAY = dt.timedelta(hours=1), dt.timedelta(days=1)
#: The history every test starts from: 5 days of hours but two holes, two daily rollups.
FIRST_HOURS = {h for h in range(120) if h not in (30, 77)}
FIRST_DAYS = {1, 3}


def hour(h: int) -> str:
    return (T0 + h * HOUR).strftime("%Y-%m-%d-%H")


def day(d: int) -> str:
    return (T0 + d * DAY).strftime("%Y-%m-%d")


_facts = itertools.count()


def history(catalog: Catalog, fact: str) -> None:
    """``fact`` with ``<fact>_hourly`` and ``<fact>_daily`` (preferred) holding the history;
    the rollup's MONTHLY period never had a partition (its timeline cell was never stored)."""
    catalog.create_fact(fact)
    catalog.create_storage(fact, f"{fact}_hourly", ["HOURLY"])
    catalog.create_storage(fact, f"{fact}_daily", ["DAILY", "MONTHLY"], priority=5)
    catalog.register(f"{fact}_hourly", "HOURLY", [{"dt": hour(h)} for h in sorted(FIRST_HOURS)])
    catalog.register(f"{fact}_daily", "DAILY", [{"dt": day(d)} for d in sorted(FIRST_DAYS)])


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    """Fact ``f`` holding the history, and fact ``g`` (one hourly storage) beside it."""
    cat = Catalog(f"sqlite:///{tmp_path}/basis.db", data_root=str(tmp_path / "data"),
                  cache=TimelineCache())
    history(cat, "f")
    cat.create_fact("g")
    cat.create_storage("g", "g_hourly", ["HOURLY"])
    yield cat
    cat.close()


def elsewhere(catalog: Catalog) -> Catalog:
    """A catalog on the same file with its own cache: another process's view of it."""
    return Catalog(catalog.kv.url, data_root=catalog.data_root, cache=TimelineCache())


def expected(hours: set[int], days: set[int], lo: int, hi: int) -> list[int]:
    """The model's missing hours of ``[lo, hi)``."""
    return [h for h in range(lo, hi)
            if h not in hours and not (h // 24 in days and lo <= h // 24 * 24
                                       and h // 24 * 24 + 24 <= hi)]


def missing_hours(catalog: Catalog, lo: int, hi: int, fact: str = "f") -> list[int]:
    cover = catalog.cover(fact, T0 + lo * HOUR, T0 + hi * HOUR)
    out: list[int] = []
    for gap in cover.missing:  # plain datetimes: pendulum's intervals do not divide
        start = dt.datetime.fromisoformat(gap.start.isoformat())
        end = dt.datetime.fromisoformat(gap.end.isoformat())
        first = (start - T0) // HOUR
        out += range(first, first + (end - start) // HOUR)
    return out


def ask(catalog: Catalog, lo: int, hi: int) -> tuple[list[int], dict[str, int]]:
    """The missing hours of ``[lo, hi)`` and the store operations the question took."""
    catalog.stats.reset()
    found = missing_hours(catalog, lo, hi)
    return found, dict(catalog.stats.ops)


KEPT = {"change_stamp": 1, "changed_rows": 1}  # what an answer proven still true costs

#: The writes the property tests draw: to the fact's hourly or daily storage, or another fact.
WRITES = ["add_hour", "drop_hour", "add_day", "drop_day", "other_fact"]


def write(writer: Catalog, op: str, n: int, fact: str, hours: set[int], days: set[int]) -> None:
    """One of :data:`WRITES` through ``writer``, and the same to the model (``hours``,
    ``days``): hour ``n``, or the day holding it."""
    if op == "other_fact":
        writer.register("g_hourly", "HOURLY", [{"dt": hour(n)}])
        return
    hourly = op.endswith("_hour")
    key, model = (n, hours) if hourly else (n // 24, days)
    storage, period = (f"{fact}_hourly", "HOURLY") if hourly else (f"{fact}_daily", "DAILY")
    values = [{"dt": hour(key) if hourly else day(key)}]
    if op.startswith("add_"):
        writer.register(storage, period, values)
        model.add(key)
    else:
        writer.drop(storage, period, values)
        model.discard(key)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(window=st.sampled_from([(24, 48), (30, 60), (100, 130), (-5, 10), (40, 41)]),
       ops=st.lists(st.tuples(
           st.sampled_from([*WRITES, "scratch", "ask"]),
           st.integers(-12, 140), st.booleans()), max_size=14))
def test_after_any_writes_the_answer_is_the_models(
        catalog: Catalog, window: tuple[int, int], ops: list[tuple[str, int, bool]]) -> None:
    """Property: whatever was written, here or by another connection, inside the range or
    out of it, to this fact or another, each answer is the model's. Writes between two
    questions come in batches, so the feeds list several at once."""
    fact = f"p{next(_facts)}"  # the fixture outlives one example: a fact of its own
    history(catalog, fact)
    catalog.kv.create_table("scratch", ("cf",), exist_ok=True)
    scratch = catalog.kv.table("scratch")
    follow_the_model(catalog, fact, window, ops,
                     lambda _op, n: scratch.put(b"r", {b"cf:n": b"%d" % n}))


def follow_the_model(catalog: Catalog, fact: str, window: tuple[int, int],
                     ops: list[tuple[str, int, bool]],
                     other_op: Callable[[str, int], object] | None = None) -> None:
    """Run ``ops`` on ``fact`` (holding the history): each of :data:`WRITES` through this
    catalog or another one on the same store, ``"ask"`` checks the answer to ``window``
    against the model, anything else goes to ``other_op``. The last op is always a question."""
    hours, days = set(FIRST_HOURS), set(FIRST_DAYS)
    other = elsewhere(catalog)
    lo, hi = window
    assert missing_hours(catalog, lo, hi, fact) == expected(hours, days, lo, hi)
    try:
        for op, n, by_other in [*ops, ("ask", 0, False)]:
            if op in WRITES:
                write(other if by_other else catalog, op, n, fact, hours, days)
            elif op == "ask":
                assert missing_hours(catalog, lo, hi, fact) == expected(hours, days, lo, hi)
            else:
                assert other_op is not None, op
                other_op(op, n)
    finally:
        other.close()


def test_writes_out_of_the_range_are_proven_harmless_by_one_read(catalog: Catalog) -> None:
    """After the end, before the start, another fact, another table, by this connection or
    another: the answer kept is given again, for one statement over both feeds."""
    lo, hi = 40, 64
    catalog.kv.create_table("scratch", ("cf",), exist_ok=True)  # DDL (the table, and its
    catalog.kv.table("scratch").put(b"r", {b"cf:a": b"0"})  # feed at its first write) proves
    before, _ = ask(catalog, lo, hi)
    assert before == expected(FIRST_HOURS, FIRST_DAYS, lo, hi) == []
    other = elsewhere(catalog)
    writes = [
        lambda: other.register("f_hourly", "HOURLY", [{"dt": hour(120)}]),  # latest + 1
        lambda: catalog.register("f_hourly", "HOURLY", [{"dt": hour(121)}]),
        lambda: other.register("g_hourly", "HOURLY", [{"dt": hour(50)}]),  # another fact
        lambda: catalog.kv.table("scratch").put(b"r", {b"cf:a": b"1"}),  # nothing: before
        lambda: other.register("f_daily", "DAILY", [{"dt": day(4)}]),  # a day after the end
    ]
    try:
        for i, write in enumerate(writes):
            write()
            assert ask(catalog, lo, hi) == ([], KEPT), i
    finally:
        other.close()


#: Writes that may change the answer to ``[lo, hi)`` of fact ``f``: (what, lo, hi, the write
#: through a catalog).
CHANGING_WRITES: list[tuple[str, int, int, Callable[[Catalog], object]]] = [
    ("an hour inside the range", 24, 48, lambda c: c.drop("f_hourly", "HOURLY",
                                                          [{"dt": hour(30 + 1)}])),
    ("a day inside the range", 24, 72, lambda c: c.drop("f_daily", "DAILY", [{"dt": day(1)}])),
    ("the latest end moving into the range", 118, 124,
     lambda c: c.register("f_hourly", "HOURLY", [{"dt": hour(120)}])),
    ("a daily partition straddling the end", 30, 60,
     lambda c: c.register("f_daily", "DAILY", [{"dt": day(2)}])),
    ("a hole filled", 24, 48, lambda c: c.register("f_hourly", "HOURLY", [{"dt": hour(30)}])),
]


@pytest.mark.parametrize(("what", "lo", "hi", "after"), CHANGING_WRITES)
def test_writes_that_may_change_the_answer_work_it_out_again(
        catalog: Catalog, what: str, lo: int, hi: int, after: object) -> None:
    ask(catalog, lo, hi)
    other = elsewhere(catalog)
    try:
        after(other)  # type: ignore[operator]
    finally:
        other.close()
    found, ops = ask(catalog, lo, hi)
    assert ops != KEPT, what
    forget_kept()
    assert found == missing_hours(catalog, lo, hi), what


def test_a_first_partition_of_an_unused_period_is_worked_out_again(catalog: Catalog) -> None:
    """Its timeline cell appears: not a move of the ends, so the cover is worked out again,
    however far from the range (here the next year's first month)."""
    found, ops = ask(catalog, 24, 48)
    assert found == [] and "scan_page" in ops  # the first question reads its rows
    assert ask(catalog, 24, 48) == ([], {"change_stamp": 1})  # nothing written: the stamp
    catalog.register("f_daily", "MONTHLY", [{"dt": "2016-01"}])
    found, ops = ask(catalog, 24, 48)
    assert ops != KEPT and found == []
    catalog.register("f_hourly", "HOURLY", [{"dt": hour(120)}])
    assert ask(catalog, 24, 48) == ([], KEPT)  # and from there on as before


def test_after_the_feeds_could_not_tell_the_next_answer_is_kept_again(
        catalog: Catalog) -> None:
    """DDL (a table created) leaves the feeds unable to vouch for the interval: that once,
    the cover is worked out again, and the answer after it is kept as before."""
    ask(catalog, 24, 48)
    catalog.kv.create_table("another", ("cf",))
    found, ops = ask(catalog, 24, 48)
    assert ops != KEPT and found == []
    catalog.register("f_hourly", "HOURLY", [{"dt": hour(120)}])
    assert ask(catalog, 24, 48) == ([], KEPT)


def test_a_new_hole_beyond_the_end_changes_a_timeline_and_is_worked_out_again(
        catalog: Catalog) -> None:
    """Registering three hours after the latest lists two holes: not the ends alone moving,
    so the cover is worked out again (and is the same)."""
    ask(catalog, 24, 48)
    catalog.register("f_hourly", "HOURLY", [{"dt": hour(122)}])
    found, ops = ask(catalog, 24, 48)
    assert ops != KEPT and found == []


def take_out_of_the_timeline(catalog: Catalog, h: int) -> None:
    """Another catalog writes fact ``f``'s hourly timeline cell with hour ``h`` listed as a
    hole, as a writer does (the cell, then the fact's generation); no partition row changes."""
    row, cell = storage_row("f_hourly"), timeline_column(UpdatePeriod.HOURLY, "dt")
    cells = catalog.rows.catalog.get(row)
    rewritten = cells[cell].replace(b'holes0":"', b'holes0":"' + hour(h).encode() + b",")
    assert rewritten != cells[cell]
    other = elsewhere(catalog)
    try:
        other.rows.catalog.put(row, {cell: rewritten})
        other.rows.bump_generation("f")
    finally:
        other.close()


def test_a_timeline_rewritten_inside_the_range_without_a_row_is_worked_out_again(
        catalog: Catalog) -> None:
    """Another connection writes the hourly timeline cell with an hour inside the range
    taken out (no row changed): the kept answer is not given; the cover now reports it."""
    lo, hi = 48, 72
    assert ask(catalog, lo, hi)[0] == []
    take_out_of_the_timeline(catalog, 50)
    found, ops = ask(catalog, lo, hi)
    assert ops != KEPT
    assert found == [50]


def test_a_storage_cell_taken_away_is_worked_out_again(catalog: Catalog) -> None:
    """A value cell of a family the answer does not read (``v:``, a StoreAll timeline's)
    written into the storage row leaves the answer kept; the row's hourly timeline cell
    deleted does not: the answer is worked out again and equals a fresh catalog's."""
    lo, hi = 48, 72
    assert ask(catalog, lo, hi)[0] == []
    row = storage_row("f_hourly")
    other = elsewhere(catalog)
    try:
        other.rows.catalog.put(row, {b"v:HOURLY.dt:note": b""})
        assert ask(catalog, lo, hi) == ([], KEPT)
        other.rows.catalog.delete(row, [timeline_column(UpdatePeriod.HOURLY, "dt")])
        other.rows.bump_generation("f")
        found, ops = ask(catalog, lo, hi)
        assert ops != KEPT
        assert found == missing_hours(elsewhere(catalog), lo, hi) != []
    finally:
        other.close()


def test_a_definition_changed_or_a_storage_added_is_worked_out_again(
        catalog: Catalog) -> None:
    lo, hi = 64, 80  # no whole day: hour 77 is missing
    assert ask(catalog, lo, hi)[0] == [77]
    from airflow_partitions.catalog import Producer

    catalog.set_producers("f_hourly", {"HOURLY": Producer("ingest")})
    assert ask(catalog, lo, hi) != ([77], KEPT)
    catalog.create_storage("f", "f_hourly_too", ["HOURLY"])
    assert ask(catalog, lo, hi) != ([77], KEPT)
    elsewhere(catalog).register("f_hourly_too", "HOURLY", [{"dt": hour(77)}])
    found, ops = ask(catalog, lo, hi)
    assert (found, ops != KEPT) == ([], True)


def test_a_damaged_catalog_row_is_never_proof(catalog: Catalog) -> None:
    """A storage row written since that does not decode proves nothing: the cover is worked
    out the usual way (which reads that row only when the fact's generation moves)."""
    ask(catalog, 24, 48)
    since = [("catalog", catalog.rows.catalog.feed_position())]
    with sqlite3.connect(catalog.kv.path) as other:  # type: ignore[attr-defined]
        other.execute(f"UPDATE {sql_table('catalog')} SET cells = ? WHERE row = ?",
                      (b"\x03\x00\x01", storage_row("f_daily")))
    assert catalog.kv.changed_rows(since) is not None  # the feed names the row
    assert catalog.kv.changed_rows(since, with_rows=["catalog"]) is None  # which proves nothing
    found, ops = ask(catalog, 24, 48)
    assert ops != KEPT and found == []


def _register_after_the_end(url: str, data_root: str, n: int, start: object) -> None:
    writer = Catalog(url, data_root=data_root)
    start.wait()  # type: ignore[attr-defined]
    for k in range(n):
        writer.register("f_hourly", "HOURLY", [{"dt": hour(120 + k)}])
    writer.close()


def asked_beside_a_producer(catalog: Catalog, lo: int, hi: int, n: int) -> list[dict[str, int]]:
    """Ask ``[lo, hi)`` of fact ``f`` again and again while a producer process registers
    ``n`` hours after the history's end (at least three times): each answer must be that
    nothing is missing. The store operations of each answer, in order."""
    ask(catalog, lo, hi)
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    producer = ctx.Process(target=_register_after_the_end,
                           args=(catalog.kv.url, catalog.data_root, n, start))
    producer.start()
    start.wait()
    seen: list[dict[str, int]] = []
    while producer.is_alive() or len(seen) < 3:
        found, ops = ask(catalog, lo, hi)
        assert found == []
        seen.append(ops)
    producer.join(timeout=120)
    assert producer.exitcode == 0
    return seen


def test_a_sensor_beside_a_producer_in_another_process(catalog: Catalog) -> None:
    """A producer process appends hours after the end while this one asks one day again
    and again: every answer is the model's, and most are proven by the feeds alone."""
    seen = asked_beside_a_producer(catalog, 48, 72, 40)
    assert ask(catalog, 48, 72)[0] == [] and KEPT in seen
