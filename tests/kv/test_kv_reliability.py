"""Outages: a stopped server gives a readable StoreUnavailable, a restarted one works again."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.kv import KVStore, StoreDamaged, StoreUnavailable, open_store
from airflow_partitions.kv.sqlite import SQLiteStore


@pytest.fixture
def hbase_store(hbase_server_factory: Callable[..., Any]) -> Any:
    server = hbase_server_factory()
    store = open_store(f"{server.url}?table_prefix=rel&timeout=5000")
    store.create_table("t")
    store.table("t").put_many((b"r%02d" % i, {b"cf:v": b"%d" % i}) for i in range(10))
    yield server, store
    store.close()


def test_stopped_server_raises_store_unavailable(hbase_store: tuple[Any, KVStore]) -> None:
    server, store = hbase_store
    table = store.table("t")
    server.stop()
    with pytest.raises(StoreUnavailable) as info:
        table.get(b"r01")
    message = str(info.value)
    assert server.url in message and "get on 't'" in message and "is it running" in message
    assert "\n" not in message
    with pytest.raises(StoreUnavailable, match="increment"):
        table.increment(b"r01", b"cf:n")
    with pytest.raises(StoreUnavailable):
        list(table.scan())
    server.start()  # same port, data kept
    assert table.get(b"r01") == {b"cf:v": b"1"}
    assert table.increment(b"r01", b"cf:n") == 1


def test_restart_does_not_break_the_next_write(hbase_store: tuple[Any, KVStore]) -> None:
    server, store = hbase_store
    table = store.table("t")
    table.get(b"r01")  # the pool now holds an open connection
    server.restart()  # ...which the server has dropped
    assert table.increment(b"r01", b"cf:n") == 1  # applied once, no error
    assert table.check_and_put(b"r01", b"cf:x", None, b"1") is True
    assert store.stats.events["reconnect"] >= 1
    assert table.get(b"r01", columns=[b"cf:n"]) == {b"cf:n": (1).to_bytes(8, "big")}


def test_scan_survives_a_restart_between_pages(hbase_store: tuple[Any, KVStore]) -> None:
    server, store = hbase_store
    scan = store.table("t").scan(batch_size=3)
    first = [next(scan) for _ in range(4)]
    server.restart()  # the scanner is gone; the scan reopens after the last row it returned
    rest = list(scan)
    assert [r for r, _ in first + rest] == [b"r%02d" % i for i in range(10)]
    assert store.stats.events["scan_restart"] == 1


def test_sqlite_unreachable_path_is_store_unavailable() -> None:
    store = open_store("sqlite:///proc/no-such-dir/k.db")
    with pytest.raises(StoreUnavailable, match=r"k\.db"):
        store.create_table("t")


def test_sqlite_lock_held_too_long_is_store_unavailable(tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    store = SQLiteStore(db, busy_timeout_ms=1, lock_timeout_s=0.05)
    store.create_table("t")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreUnavailable, match="locked"):
            store.table("t").put(b"r", {b"cf:a": b"1"})
        assert store.table("t").get(b"r") == {}  # WAL: readers are not blocked by the writer
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.table("t").put(b"r", {b"cf:a": b"1"})
    assert store.stats.events["busy_retry"] >= 1


class FailsFirst:
    """Stands in for the store's connection: the next ``execute`` raises ``error`` (SQLite's
    own error for a locked or a damaged file, which a WAL reader cannot be made to meet on
    demand), every other call goes to the connection."""

    def __init__(self, conn: sqlite3.Connection, error: sqlite3.Error) -> None:
        self.conn, self.error, self.calls = conn, error, 0

    def execute(self, *args: object) -> sqlite3.Cursor:
        self.calls += 1
        if self.calls == 1:
            raise self.error
        return self.conn.execute(*args)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self.conn, name)


@pytest.mark.parametrize(("error", "outcome"), [
    (sqlite3.OperationalError("database is locked"), None),
    (sqlite3.DatabaseError("file is not a database"), StoreDamaged),
    (sqlite3.OperationalError("disk I/O error"), StoreUnavailable),
])
def test_sqlite_one_statement_read_errors(tmp_path: Path, error: sqlite3.Error,
                                          outcome: type[Exception] | None) -> None:
    """A one-statement read that meets a locked file retries (and answers); any other error
    is translated as every read's is."""
    store = SQLiteStore(tmp_path / "first.db")
    store.create_table("t")
    store.table("t").put(b"r", {b"cf:a": b"1"})
    conn = store._connection()
    failing = FailsFirst(conn, error)
    store._conn = failing  # type: ignore[assignment]
    try:
        if outcome is None:
            assert store.table("t").get(b"r") == {b"cf:a": b"1"}
            assert failing.calls == 2  # the locked attempt, then the retry
        else:
            with pytest.raises(outcome):
                store.table("t").get(b"r")
    finally:
        store._conn = conn
        store.close()
