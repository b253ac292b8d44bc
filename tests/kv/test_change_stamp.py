"""A store's change stamp: equal between two calls only if no row changed in between.

``KVStore.change_stamp`` lets a verified cover of an unchanged store be answered again
(``catalog/covers/verified.py``); a stamp that stays equal across a change would hand out an
answer checked against rows that are gone. So every way a row of the SQLite file can change
moves it: a write through the store, a second connection in this process, another process, a
dropped table. HBase over Thrift1 cannot tell: ``None``.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.kv import KVStore, encode_cells
from airflow_partitions.kv.sqlite import SQLiteStore
from airflow_partitions.kv.sqlite_table import sql_table
from tests.hypothesis_budget import examples


def filled(path: Path) -> SQLiteStore:
    store = SQLiteStore(path / "stamp.db")
    store.create_table("t", ("cf",))
    store.table("t").put_many([(b"r%d" % i, {b"cf:a": b"%d" % i}) for i in range(5)])
    return store


def test_reads_leave_the_stamp_equal(tmp_path: Path) -> None:
    store = filled(tmp_path)
    table = store.table("t")
    before = store.change_stamp()
    table.get(b"r1")
    list(table.scan())
    list(table.scan_columns([b"cf:a"]))
    store.list_tables()
    assert store.change_stamp() == before


def test_a_write_through_the_store_moves_it(tmp_path: Path) -> None:
    store = filled(tmp_path)
    table = store.table("t")
    stamps = [store.change_stamp()]
    table.put(b"r1", {b"cf:a": b"changed"})
    stamps.append(store.change_stamp())
    table.delete(b"r2")
    stamps.append(store.change_stamp())
    assert not table.check_and_put(b"r3", b"cf:a", b"not it", b"x")  # no change, still moved
    stamps.append(store.change_stamp())
    store.drop_table("t")  # rows gone without an INSERT, UPDATE or DELETE
    stamps.append(store.change_stamp())
    assert len(set(stamps)) == len(stamps), stamps


def test_another_connection_of_this_process_moves_it(tmp_path: Path) -> None:
    store = filled(tmp_path)
    before = store.change_stamp()
    other = sqlite3.connect(store.path)
    with other:
        other.execute(f"UPDATE {sql_table('t')} SET cells = ? WHERE row = ?",
                      (encode_cells({b"cf:a": b"behind its back"}), b"r1"))
    other.close()
    assert store.change_stamp() != before
    assert store.table("t").get(b"r1") == {b"cf:a": b"behind its back"}


def test_another_process_moves_it(tmp_path: Path) -> None:
    store = filled(tmp_path)
    before = store.change_stamp()
    script = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
              f"c.execute('DELETE FROM {sql_table('t')} WHERE row = ?', (b'r4',)); c.commit()")
    subprocess.run([sys.executable, "-c", script, str(store.path)], check=True, timeout=120)
    assert store.change_stamp() != before
    assert store.table("t").get(b"r4") == {}


def test_a_reopened_store_is_another_stamp(tmp_path: Path) -> None:
    store = filled(tmp_path)
    before = store.change_stamp()
    store.close()
    again = SQLiteStore(store.path)
    assert again.change_stamp() != before


def test_only_sqlite_can_tell(store: KVStore) -> None:
    """HBase over Thrift1 has no counter of changes: every verification reads its rows."""
    stamp = store.change_stamp()
    assert (stamp is not None) == isinstance(store, SQLiteStore), store


def statements(store: SQLiteStore) -> list[str]:
    """The SQL the store's connection runs from now on (SQLite's own trace)."""
    seen: list[str] = []
    store._connection().set_trace_callback(seen.append)
    return seen


def test_an_idle_stamp_reads_the_wal_index_header_not_sqlite(tmp_path: Path) -> None:
    """Nothing committed since the last stamp: no statement runs (the ``-shm`` header is
    unchanged), and the stamp is the same."""
    store = filled(tmp_path)
    first = store.change_stamp()
    seen = statements(store)
    assert [store.change_stamp() for _ in range(5)] == [first] * 5
    assert seen == []


def test_a_commit_by_another_connection_moves_the_idle_stamp(tmp_path: Path) -> None:
    store = filled(tmp_path)
    store.change_stamp()
    idle = store.change_stamp()  # idle: the fast path
    other = sqlite3.connect(tmp_path / "stamp.db")
    with other:
        other.execute(f"DELETE FROM {sql_table('t')} WHERE row = ?", (b"r1",))
    seen = statements(store)
    before = store.change_stamp()
    assert before != idle  # the header moved
    assert seen == []  # and its read said so: no statement ran
    assert store.change_stamp() == before  # and nothing since


@given(st.lists(st.sampled_from(["write", "checkpoint", "truncate", "idle", "own"]),
                min_size=1, max_size=12))
@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_commit_between_two_stamps_moves_it(tmp_path_factory: pytest.TempPathFactory,
                                                 steps: list[str]) -> None:
    """Writes by another connection, checkpoints that restart or truncate the WAL, this
    store's own writes and idle calls, in any order: a stamp never stays equal across a
    commit that changed a row."""
    store = filled(tmp_path_factory.mktemp("stamp"))
    other = sqlite3.connect(store.path, isolation_level=None)
    try:
        stamp = store.change_stamp()
        for i, step in enumerate(steps):
            changed = step in ("write", "own")
            if step == "write":
                other.execute(f"UPDATE {sql_table('t')} SET cells = ? WHERE row = ?",
                              (encode_cells({b"cf:a": b"w%d" % i}), b"r2"))
            elif step in ("checkpoint", "truncate"):
                mode = "RESTART" if step == "checkpoint" else "TRUNCATE"
                other.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
            elif step == "own":
                store.table("t").put(b"r3", {b"cf:a": b"o%d" % i})
            again = store.change_stamp()
            if changed:
                assert again != stamp, steps[: i + 1]
            elif step == "idle":
                assert again == stamp
            stamp = again
    finally:
        other.close()
        store.close()
