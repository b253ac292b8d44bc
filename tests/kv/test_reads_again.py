"""Keyed reads asked again together (``KVStore.reads_again``; on HBase one write,
``kv/hbase_again.py``): each answer is the rows ``get_many`` reads at that moment, and ``same``
only when those rows are the rows kept last; a store or connection that fails answers None and
leaves the next read working. On the double, or the real HBase when the run has one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.kv import AskedAgain, KeyedRead, KVStore, KVTable, open_store
from tests.hypothesis_budget import examples

KEYS = tuple(b"r%d" % i for i in range(6))


@pytest.fixture
def table(store: KVStore) -> KVTable:
    if store.url.startswith("sqlite"):
        pytest.skip("SQLite proves rows unchanged by its change stamp and feeds instead")
    store.create_table("t", families=("cf", "meta"))
    return store.table("t")


def as_get_many(table: KVTable, read: KeyedRead) -> list[tuple[bytes, dict[bytes, bytes]]]:
    found = table.get_many(read.keys, list(read.columns))
    return [(key, found[key]) for key in sorted(found)]


def test_sqlite_has_no_such_exchange(tmp_path: Any) -> None:
    store = open_store(f"sqlite:///{tmp_path}/s.db")
    try:
        assert store.reads_again([KeyedRead("t", (b"a",), (b"cf",))]) is None
    finally:
        store.close()


def test_an_answer_is_the_same_until_a_row_it_read_changes(table: KVTable,
                                                           store: KVStore) -> None:
    table.put_many((k, {b"cf:a": k * 3, b"meta:m": b"x"}) for k in KEYS)
    reads = [KeyedRead("t", (*KEYS[:3], b"absent"), (b"cf:a",)),
             KeyedRead("t", KEYS[3:], (b"cf", b"meta"))]
    again = store.reads_again(reads)
    assert again is not None
    store.stats.reset()
    first = again.ask()
    assert first is not None and [a.same for a in first] == [False, False]
    assert store.stats.ops["get_many"] == 2 and store.stats.round_trips == 2  # two calls
    assert [a.rows() for a in first] == [as_get_many(table, r) for r in reads]
    assert [a.same for a in again.ask() or []] == [False, False]  # nothing kept yet
    again.keep(first)
    assert [a.same for a in again.ask() or []] == [True, True]
    table.put(KEYS[4], {b"meta:m": b"y"})
    changed = again.ask()
    assert changed is not None and [a.same for a in changed] == [True, False]
    assert [a.rows() for a in changed] == [as_get_many(table, r) for r in reads]
    assert [a.same for a in again.ask() or []] == [True, False]  # still not what was kept
    again.keep(changed)
    assert [a.same for a in again.ask() or []] == [True, True]
    table.delete(KEYS[0])
    gone = again.ask()
    assert gone is not None and [a.same for a in gone] == [False, True]
    assert gone[0].rows() == as_get_many(table, reads[0])


def test_what_is_kept_is_the_answers_named_not_the_last_asked(table: KVTable,
                                                              store: KVStore) -> None:
    """Two threads share a kept answer: one proves its ask while the other asks after a
    write. Keeping the first one's answers keeps their bytes, so the write still shows."""
    table.put(b"a", {b"cf:v": b"1"})
    again = store.reads_again([KeyedRead("t", (b"a",), (b"cf",))])
    assert again is not None
    proven = again.ask()
    table.put(b"a", {b"cf:v": b"2"})
    unproven = again.ask()
    assert proven is not None and unproven is not None
    again.keep(proven)
    now = again.ask()
    assert now is not None and not now[0].same
    assert now[0].rows() == [(b"a", {b"cf:v": b"2"})]
    with pytest.raises(ValueError, match="answers of one ask"):
        again.keep([])


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(["put", "delete", "ask", "keep"]),
                                st.integers(0, len(KEYS) - 1), st.binary(max_size=3)),
                      max_size=12))
def test_same_only_when_the_rows_are_the_rows_kept(
        table: KVTable, store: KVStore, steps: list[tuple[str, int, bytes]]) -> None:
    """Property: after any puts and deletes, each answer is ``get_many``'s, and an answer
    said to be the same holds the rows of the answers last kept (any earlier ask's)."""
    for key in KEYS:
        table.delete(key)
    read = KeyedRead("t", KEYS, (b"cf",))
    again = store.reads_again([read])
    assert again is not None
    kept: list[tuple[bytes, dict[bytes, bytes]]] | None = None
    asked: list[list[AskedAgain]] = []
    for op, i, value in [*steps, ("ask", 0, b"")]:
        if op == "put":
            table.put(KEYS[i], {b"cf:v": value})
        elif op == "delete":
            table.delete(KEYS[i])
        elif op == "keep" and asked:  # any answers asked so far, not only the last
            chosen = asked[i % len(asked)]
            again.keep(chosen)
            kept = chosen[0].rows()
        elif op == "ask":
            answers = again.ask()
            assert answers is not None
            asked.append(answers)
            assert answers[0].rows() == as_get_many(table, read)
            if answers[0].same:
                assert answers[0].rows() == kept


def test_an_error_reply_answers_none_and_the_connection_stays_in_step(
        table: KVTable, store: KVStore) -> None:
    table.put(b"a", {b"cf:v": b"1"})
    missing = store.reads_again([KeyedRead("t", (b"a",), (b"cf",)),
                                 KeyedRead("no_such_table", (b"a",), (b"cf",))])
    assert missing is not None and missing.ask() is None
    fine = store.reads_again([KeyedRead("t", (b"a",), (b"cf",))])
    assert fine is not None
    answers = fine.ask()
    assert answers is not None and answers[0].rows() == [(b"a", {b"cf:v": b"1"})]
    assert table.get(b"a") == {b"cf:v": b"1"}


def test_threads_asking_at_once_get_the_rows_or_none(table: KVTable, store: KVStore) -> None:
    table.put_many((k, {b"cf:v": k}) for k in KEYS)
    again = store.reads_again([KeyedRead("t", KEYS, (b"cf",))])
    assert again is not None
    expected = as_get_many(table, KeyedRead("t", KEYS, (b"cf",)))
    wrong: list[object] = []
    answered = [0]

    def ask() -> None:
        for _ in range(40):
            answers = again.ask()
            if answers is None:
                continue
            answered[0] += 1
            if answers[0].rows() != expected:
                wrong.append(answers[0].rows())

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == [] and answered[0] > 0


@pytest.fixture
def double_store(hbase_server_factory: Callable[..., Any]) -> Any:
    server = hbase_server_factory()
    store = open_store(f"{server.url}?table_prefix=again&timeout=5000")
    store.create_table("t")
    store.table("t").put(b"a", {b"cf:v": b"1"})
    yield server, store
    store.close()


def test_a_stopped_server_answers_none_and_a_restarted_one_answers_again(
        double_store: tuple[Any, KVStore]) -> None:
    server, store = double_store
    again = store.reads_again([KeyedRead("t", (b"a",), (b"cf",))])
    assert again is not None
    first = again.ask()
    assert first is not None
    again.keep(first)
    server.restart()  # the pooled connection is dropped: noticed before it is used
    answers = again.ask()
    assert answers is not None and answers[0].same
    server.stop()
    assert again.ask() is None
    assert store.stats.events["reads_again_failed"] >= 1
    server.start()
    answers = again.ask()
    assert answers is not None and answers[0].rows() == [(b"a", {b"cf:v": b"1"})]


@pytest.mark.parametrize("options", [{"transport": "framed"}, {"protocol": "compact"}])
def test_only_the_servers_defaults_are_spoken(hbase_server_factory: Callable[..., Any],
                                              options: dict[str, str]) -> None:
    server = hbase_server_factory(**options)
    query = "&".join(f"{k}={v}" for k, v in options.items())
    store = open_store(f"{server.url}?{query}")
    try:
        assert store.reads_again([KeyedRead("t", (b"a",), (b"cf",))]) is None
    finally:
        store.close()
