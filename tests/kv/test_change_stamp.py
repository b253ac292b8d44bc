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

from airflow_partitions.kv import KVStore, encode_cells
from airflow_partitions.kv.sqlite import SQLiteStore
from airflow_partitions.kv.sqlite_table import sql_table


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
