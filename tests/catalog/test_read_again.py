"""On HBase (no change stamp, no feeds) an answer kept for a request is given again only when
the fact's catalog rows, read now, hold what it came from but for the generation and
timeline ends moving outside the range, and its partition rows, read now, are byte for byte
the rows it was checked against (``verified._read_again``, ``AnswerBasis.holds``); anything
else works the cover out and checks it again.

The oracle is the model of ``test_answer_basis`` (the hours and days registered), sharing no
code with the catalog. The store is the Thrift1 double, or the real HBase when the run has one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, forget_kept
from airflow_partitions.catalog.covers import verified
from airflow_partitions.catalog.rows import runs
from airflow_partitions.catalog.rows.layout import CatalogRows
from airflow_partitions.periods import UpdatePeriod
from tests.catalog.test_answer_basis import (
    CHANGING_WRITES,
    FIRST_DAYS,
    FIRST_HOURS,
    WRITES,
    asked_beside_a_producer,
    day,
    elsewhere,
    expected,
    follow_the_model,
    history,
    hour,
    missing_hours,
    take_out_of_the_timeline,
)
from tests.hypothesis_budget import examples

pytestmark = pytest.mark.parametrize("store_url", ["hbase"], indirect=True)

#: What an answer read again costs: the catalog rows, then the day's partition rows by key.
READ_AGAIN = {"get_many": 2}


def ask(catalog: Catalog, lo: int, hi: int, fact: str = "f") -> tuple[list[int], dict[str, int]]:
    catalog.stats.reset()
    found = missing_hours(catalog, lo, hi, fact)
    return found, dict(catalog.stats.ops)


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every cover worked out (``compute_cover`` as the verified path calls it)."""
    calls: list[object] = []
    real = verified.compute_cover

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(verified, "compute_cover", counting)
    return calls


def test_writes_out_of_the_range_are_read_again_not_worked_out(
        catalog: Catalog, computed: list[object]) -> None:
    """After the end, another fact, a day after the range, here or by another catalog: the
    answer is given again for two reads, without decoding a timeline or computing a cover."""
    history(catalog, "f")
    catalog.create_fact("g")
    catalog.create_storage("g", "g_hourly", ["HOURLY"])
    lo, hi = 40, 64
    assert ask(catalog, lo, hi)[0] == expected(FIRST_HOURS, FIRST_DAYS, lo, hi) == []
    other = elsewhere(catalog)
    writes: list[Callable[[], object]] = [
        lambda: other.register("f_hourly", "HOURLY", [{"dt": hour(120)}]),  # latest + 1
        lambda: catalog.register("f_hourly", "HOURLY", [{"dt": hour(121)}]),
        lambda: other.register("g_hourly", "HOURLY", [{"dt": hour(50)}]),  # another fact
        lambda: other.register("f_daily", "DAILY", [{"dt": day(4)}]),  # a day after the end
    ]
    try:
        for i, write in enumerate(writes):
            write()
            computed.clear()
            assert ask(catalog, lo, hi) == ([], READ_AGAIN), i
            assert computed == [], i
    finally:
        other.close()


@pytest.mark.parametrize(("what", "lo", "hi", "after"), CHANGING_WRITES)
def test_writes_that_may_change_the_answer_work_it_out_again(
        catalog: Catalog, computed: list[object], monkeypatch: pytest.MonkeyPatch, what: str,
        lo: int, hi: int, after: Callable[[Catalog], object]) -> None:
    """Worked out from the catalog rows the proof read: neither the fact's row nor its
    storages' rows are read a second time."""
    history(catalog, "f")
    ask(catalog, lo, hi)
    other = elsewhere(catalog)
    try:
        after(other)
    finally:
        other.close()
    computed.clear()
    storage_reads: list[object] = []
    real = CatalogRows.read_storage_rows
    monkeypatch.setattr(CatalogRows, "read_storage_rows",
                        lambda self, names: storage_reads.append(names) or real(self, names))
    found, ops = ask(catalog, lo, hi)
    assert computed, what
    assert "get" not in ops and storage_reads == [], (what, ops, storage_reads)
    monkeypatch.undo()
    forget_kept()
    assert found == missing_hours(catalog, lo, hi), what


def test_a_row_deleted_behind_the_catalogs_back_is_not_given_again(
        catalog: Catalog) -> None:
    """The timeline still advertises the hour, its row is gone: the rows read again differ,
    so the cover is checked again, finds the hour unbacked, and reports it missing."""
    history(catalog, "f")
    lo, hi = 48, 72
    assert ask(catalog, lo, hi)[0] == []
    sdef = catalog.get_storage("f_hourly")
    catalog.rows.partitions.delete(catalog.rows.partition_key(sdef, UpdatePeriod.HOURLY,
                                                              (hour(50),)))
    found, ops = ask(catalog, lo, hi)
    assert found == [50] and ops != READ_AGAIN


def test_a_timeline_rewritten_inside_the_range_without_a_row_is_worked_out_again(
        catalog: Catalog, computed: list[object]) -> None:
    """Another writer takes an hour inside the range out of the hourly timeline cell (no row
    changed): the catalog rows no longer hold what the answer came from."""
    history(catalog, "f")
    lo, hi = 48, 72
    assert ask(catalog, lo, hi)[0] == []
    take_out_of_the_timeline(catalog, 50)
    computed.clear()
    assert ask(catalog, lo, hi)[0] == [50]
    assert computed


def test_a_storage_added_is_worked_out_again(catalog: Catalog) -> None:
    """A storage joining the fact changes the fact row: its hours now cover the hole."""
    history(catalog, "f")
    lo, hi = 64, 80
    assert ask(catalog, lo, hi)[0] == [77]
    other = elsewhere(catalog)
    try:
        other.create_storage("f", "f_hourly_too", ["HOURLY"])
        other.register("f_hourly_too", "HOURLY", [{"dt": hour(77)}])
    finally:
        other.close()
    assert ask(catalog, lo, hi)[0] == []


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(window=st.sampled_from([(24, 48), (30, 60), (100, 130), (-5, 10), (40, 41)]),
       ops=st.lists(st.tuples(
           st.sampled_from([*WRITES, "ask"]),
           st.integers(-12, 140), st.booleans()), max_size=10))
def test_after_any_writes_the_answer_is_the_models(
        catalog: Catalog, window: tuple[int, int], ops: list[tuple[str, int, bool]]) -> None:
    """Property: whatever was written, here or by another catalog, inside the range or out of
    it, to this fact or another, each answer is the model's."""
    fact = f"r{len(catalog.list_facts())}"  # the fixture outlives one example
    history(catalog, fact)
    if "g_hourly" not in {s.name for s in catalog.rows.list_storage_defs()}:
        catalog.create_fact("g")
        catalog.create_storage("g", "g_hourly", ["HOURLY"])
    follow_the_model(catalog, fact, window, ops)


def test_a_sensor_beside_a_producer_in_another_process(catalog: Catalog) -> None:
    """A producer process appends hours after the end while this one asks one day again and
    again: every answer is the model's, and answers are read again rather than worked out."""
    history(catalog, "f")
    seen = asked_beside_a_producer(catalog, 48, 72, 30)
    assert ask(catalog, 48, 72) == ([], READ_AGAIN) and READ_AGAIN in seen


def test_rows_the_memo_no_longer_holds_are_checked_not_read_twice(
        catalog: Catalog, computed: list[object], monkeypatch: pytest.MonkeyPatch) -> None:
    """A group too large for the rows' memo (or pushed out of it) comes back as new objects:
    the answer is worked out again, and checked against the rows just read."""
    monkeypatch.setattr(runs, "AS_READ_MAX_ROWS", 0)
    history(catalog, "f")
    lo, hi = 40, 64
    assert ask(catalog, lo, hi)[0] == []
    other = elsewhere(catalog)
    try:
        other.register("f_hourly", "HOURLY", [{"dt": hour(120)}])
    finally:
        other.close()
    computed.clear()
    assert ask(catalog, lo, hi) == ([], READ_AGAIN)
    assert computed  # worked out, from what was read


def test_rows_unchanged_are_compared_as_bytes_not_checked_again(
        catalog: Catalog, computed: list[object], monkeypatch: pytest.MonkeyPatch) -> None:
    """After a registration after the end, the catalog rows and the day's rows are asked in
    one write: the day's reply is the bytes proven last time, so no row is checked again
    (``read_runs`` is not called) and nothing is worked out."""
    history(catalog, "f")
    lo, hi = 40, 64
    assert ask(catalog, lo, hi)[0] == []
    assert ask(catalog, lo, hi) == ([], READ_AGAIN)  # the replies proven are kept
    checked: list[object] = []
    real = verified.read_runs
    monkeypatch.setattr(verified, "read_runs",
                        lambda *a, **k: checked.append(a) or real(*a, **k))
    other = elsewhere(catalog)
    try:
        for i in range(3):
            other.register("f_hourly", "HOURLY", [{"dt": hour(120 + i)}])
            computed.clear()
            assert ask(catalog, lo, hi) == ([], READ_AGAIN), i
            assert computed == [] and checked == [], i
    finally:
        other.close()
    assert catalog.stats.events["reads_again_failed"] == 0


def test_without_the_one_write_exchange_the_rows_are_read_one_after_the_other(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store without the exchange (or whose exchange cannot answer: a busy connection, a
    failed one) reads the catalog rows, then the day's rows: the same answers, for the same
    two calls."""
    monkeypatch.setattr(type(catalog.kv), "reads_again", lambda self, reads: None)
    history(catalog, "f")
    seen = asked_beside_a_producer(catalog, 48, 72, 10)
    assert READ_AGAIN in seen
    catalog.rows.partitions.delete(catalog.rows.partition_key(
        catalog.get_storage("f_hourly"), UpdatePeriod.HOURLY, (hour(50),)))
    assert ask(catalog, 48, 72)[0] == [50]
