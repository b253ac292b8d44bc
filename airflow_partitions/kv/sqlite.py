"""The embedded default backend: one SQLite file, safe across processes.

Every Airflow task is its own process, so the file is opened in WAL mode (readers never block
the writer), every write is a ``BEGIN IMMEDIATE`` transaction retried on SQLITE_BUSY (reads, and
opening a store whose tables exist, never take that lock), and each KV table is a
``WITHOUT ROWID`` table of one SQL row per KV row, clustered on ``row``, its cells packed into one
blob (``kv.cell_blob``): BLOBs compare with memcmp, so walking the primary key is walking rows in
byte order, as HBase does. Tables of older files (one SQL row per cell) are converted the first
time a store touches them (``kv.sqlite_layout``).
"""

# SQL text is built only from whitelisted, quoted table identifiers (``sql_table``) and fixed
# fragments; every key and value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import itertools
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from airflow_partitions.kv.base import Cells, FeedChanges, KVStore
from airflow_partitions.kv.cell_blob import decode_cells, merge_cells
from airflow_partitions.kv.errors import (
    CorruptCell,
    KVError,
    StoreDamaged,
    StoreUnavailable,
    TableExists,
    TableNotFound,
)
from airflow_partitions.kv.sqlite_feed import changes_of_tables, feed_names
from airflow_partitions.kv.sqlite_layout import (
    create_table_sql,
    migrate_table,
    sql_table,
    table_layout,
)
from airflow_partitions.kv.sqlite_table import SQLiteTable
from airflow_partitions.kv.urls import Synchronous
from airflow_partitions.kv.validation import (
    check_families,
    check_table_name,
)

T = TypeVar("T")

log = logging.getLogger(__name__)

_META_TABLE = "_kv_meta"
#: What SQLite says of a file it can never read (SQLITE_NOTADB, SQLITE_CORRUPT).
_DAMAGED = ("file is not a database", "database disk image is malformed")
# Connections inherited across fork() are kept referenced, never closed: closing one in the
# child could disturb the parent's locks and WAL.
_ORPHANED_CONNECTIONS: list[sqlite3.Connection] = []
#: A number for every connection this process opens: a change stamp names its connection.
_OPENED = itertools.count(1)


def _is_busy(exc: sqlite3.Error) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


class SQLiteStore(KVStore):
    """A KV store in one SQLite file (see the module docstring)."""

    writes_are_ordered = True  # every write is one serialised transaction

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        url: str | None = None,
        busy_timeout_ms: int = 5000,
        lock_timeout_s: float = 120.0,
        synchronous: Synchronous = "NORMAL",
    ) -> None:
        self.path = Path(path)
        default_url = f"sqlite://{self.path}" if self.path.is_absolute() else f"sqlite:{self.path}"
        super().__init__(url or default_url)
        self._busy_timeout_ms = busy_timeout_ms
        self._lock_timeout_s = lock_timeout_s
        self._synchronous = synchronous
        self._lock = threading.RLock()
        self._pid = os.getpid()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._conn_number = 0  # which connection (``_OPENED``) ``_conn`` is
        self._writes = 0  # write transactions begun on ``_conn``: part of the change stamp
        # The ``-shm`` file (its connection's number and descriptor): the change stamp reads
        # its WAL-index header.
        self._shm: tuple[int, int] | None = None
        # Tables known to be in today's layout: checked once per store, not per call.
        self._blob_tables: set[str] = set()
        # Tables whose change feed exists, as far as this store knows (``SQLiteTable._write``).
        self.fed_tables: set[str] = set()
        # Why kv_merge failed: sqlite3 reports only "user-defined function raised exception".
        self.merge_error: CorruptCell | None = None

    # -- connection management ----------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        """This process's connection, opened on first use (and again after fork)."""
        if self._closed:
            raise KVError(f"store {self.url} is closed")
        if self._pid != os.getpid():
            if self._conn is not None:
                _ORPHANED_CONNECTIONS.append(self._conn)
            self._conn = None
            self._lock = threading.RLock()
            self._pid = os.getpid()
        if self._conn is None:
            self._conn = self._retry_busy("opening the database", self._open)
            self._conn_number = next(_OPENED)
        return self._conn

    def change_stamp(self) -> tuple[int, bytes | int, int, int]:
        """Equal between two calls only if no row of the file changed in between.

        Every commit to the file, by any connection of any process, rewrites the WAL-index
        header (:meth:`_wal_index_header`: its change counter, frame count and checksums), so
        an equal header means no commit in between; when it cannot be read whole, SQLite's
        ``PRAGMA data_version`` (moved by any other connection's commit) stands in. This
        connection's own changes also move ``total_changes`` (every INSERT, UPDATE or DELETE
        on it, raw statements and uncommitted ones included) and the count of write
        transactions (a table dropped, which ``total_changes`` does not count). With the
        connection's number: a reopened connection is another stamp.

        Cost, kept short because an idle sensor poke is this call and little else: one
        ``pread`` of the header (about a file-system stat), also right after a commit; the
        PRAGMA, which begins and ends a read transaction, only while a commit is rewriting
        the header or before SQLite created it. A busy or failing database takes the slow
        path, with the retries and errors of every other read.
        """
        with self._lock:
            conn = self._conn
            if conn is None or self._pid != os.getpid():
                conn = self._connection()  # first use, after fork, or closed (raises)
            header = self._wal_index_header()
            found: bytes | int
            if header is not None:
                found = header
            else:
                try:
                    found = conn.execute("PRAGMA data_version").fetchone()[0]
                except sqlite3.Error:

                    def version() -> int:
                        return int(conn.execute("PRAGMA data_version").fetchone()[0])

                    found = self._retry_busy("reading the data version", version)
            self.stats.record("change_stamp")
            return (self._conn_number, found, conn.total_changes, self._writes)

    def changed_rows(self, since: Sequence[tuple[str, Hashable]], *,
                     with_rows: Collection[str] = ()) -> list[FeedChanges] | None:
        """:meth:`KVStore.changed_rows`: one SELECT over the tables' feeds and the schema
        version after it (:func:`.sqlite_feed.changes_of_tables`), each blob decoded; a blob
        that fails its checks makes the answer None (the usual read reports it)."""
        named, positions = [], []
        for name, position in since:
            self.ensure_layout(name)
            named.append((name, name in with_rows))
            positions.append(position)
        tables = tuple(named)
        found = self.run("changed_rows", "reading the change feeds", changes_of_tables,
                         tables, positions, write=False, one_statement=True)
        if found is None:
            return None
        out = []
        for (_, rows_wanted), (position, keys, blobs) in zip(tables, found, strict=True):
            rows: dict[bytes, Cells] | None = None
            if rows_wanted:
                rows = {}
                try:
                    for key, blob in zip(keys, blobs, strict=True):
                        rows[key] = {} if blob is None else decode_cells(blob)
                except CorruptCell:  # damaged or corrupt (DamagedCells too): proves nothing
                    return None
            out.append(FeedChanges(position, tuple(keys), rows))
        return out

    def _wal_index_header(self) -> bytes | None:
        """The WAL-index header of the ``-shm`` file (https://sqlite.org/walformat.html), or
        None when it cannot be read whole.

        Every commit rewrites it (its change counter, frame count and checksums; a WAL
        restart its salts), first one copy and then the other, so two equal copies are a
        committed state and a changed one means a commit. The file stays as it is while this
        connection is open: SQLite holds a shared lock on it for as long, and nobody deletes,
        truncates or reinitialises it under that lock. Cost: one ``pread`` of 96 bytes.
        """
        if self._shm is None or self._shm[0] != self._conn_number:
            if self._shm is not None:
                os.close(self._shm[1])
            self._shm = None
            try:
                fd = os.open(f"{self.path}-shm", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                return None  # not opened by SQLite yet (no read so far), or not WAL
            self._shm = (self._conn_number, fd)
        try:
            both = os.pread(self._shm[1], 96, 0)
        except OSError:
            return None
        if len(both) != 96 or both[:48] != both[48:] or both[12] != 1:  # isInit
            return None  # mid-commit, or not initialised: ask SQLite
        return both[:48]

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(self.url, "creating the database directory", str(exc)) from exc
        conn = sqlite3.connect(
            str(self.path),
            timeout=self._busy_timeout_ms / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreUnavailable(self.url, "enabling WAL", f"journal_mode is {mode}")
            conn.execute(f"PRAGMA synchronous = {self._synchronous}")
            # The upsert of put/put_many calls back into Python only for rows that exist.
            conn.create_function("kv_merge", 2, self._merge, deterministic=True)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_META_TABLE} "
                "(name TEXT PRIMARY KEY, families TEXT NOT NULL) WITHOUT ROWID"
            )
        except BaseException:
            conn.close()
            raise
        self.stats.note("connect")
        return conn

    def _merge(self, old: bytes, new: bytes) -> bytes:
        """``kv_merge``: remembers a corrupt blob's error for the table to re-raise."""
        try:
            return merge_cells(old, new)
        except CorruptCell as exc:
            self.merge_error = exc
            raise

    def _retry_busy(self, doing: str, attempt: Callable[..., T], *args: object) -> T:
        """Run ``attempt(*args)``, retrying with jittered back-off while the database is
        locked."""
        deadline = time.monotonic() + self._lock_timeout_s
        delay = 0.002
        while True:
            try:
                return attempt(*args)
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise self._translate(exc, doing) from exc
                if time.monotonic() >= deadline:
                    raise StoreUnavailable(
                        self.url, doing, f"database stayed locked for {self._lock_timeout_s:g} s"
                    ) from exc
                self.stats.note("busy_retry")
                time.sleep(delay * (0.5 + random.random()))  # noqa: S311 - jitter, not crypto
                delay = min(delay * 2, 0.25)
            except sqlite3.Error as exc:
                raise self._translate(exc, doing) from exc

    def _translate(self, exc: sqlite3.Error, doing: str) -> KVError:
        message = str(exc)
        if message.startswith("no such table"):
            return KVError(f"store {self.url}: {message} while {doing}")
        if any(sign in message for sign in _DAMAGED):  # permanent: waiting cannot help
            return StoreDamaged(self.url, doing, f"{type(exc).__name__}: {message}")
        return StoreUnavailable(self.url, doing, f"{type(exc).__name__}: {message}")

    def run(
        self,
        op: str,
        doing: str,
        body: Callable[..., T],
        *args: object,
        write: bool,
        table: str | None = None,
        one_statement: bool = False,
    ) -> T:
        """One round trip: ``body(connection, *args)`` inside one transaction, retried while
        the file is locked.

        ``one_statement``: ``body`` needs no snapshot wider than each statement's own: a
        single SELECT run to its end, or reads whose order makes them safe apart (a feed, then
        the schema version: :mod:`.sqlite_feed`). It runs without BEGIN and COMMIT (an idle
        sensor's generation read: two statements of three saved).
        """
        with self._lock:
            try:
                if one_statement and not write:
                    conn = self._connection()
                    result = self._retry_busy(doing, body, conn, *args)
                else:
                    result = self._transaction(doing, body, *args, write=write)
            except KVError as exc:
                if table is not None and "no such table" in str(exc):
                    raise TableNotFound(table, self.url) from exc
                raise
            self.stats.record(op)
            return result

    def _transaction(
        self, doing: str, body: Callable[..., T], *args: object, write: bool
    ) -> T:
        """``body(connection, *args)`` in one transaction, retried while locked; the caller
        holds ``_lock``."""
        conn = self._connection()
        if write:
            self._writes += 1

        def attempt() -> T:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                result = body(conn, *args)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        return self._retry_busy(doing, attempt)

    def ensure_layout(self, table: str) -> None:
        """Convert ``table`` from the old one-row-per-cell layout if it still has it.

        Cached per store, so only a store's first call on a table reads the schema (a read: no
        write lock unless there is something to convert). The conversion re-checks under
        ``BEGIN IMMEDIATE``, so two processes opening an old file convert it once.
        """
        if table in self._blob_tables:
            return
        with self._lock:
            layout = self._transaction(
                f"reading the layout of {table!r}",
                lambda conn: table_layout(conn, table), write=False,
            )
            if layout == "cells":
                rows = self._transaction(
                    f"converting table {table!r} to one row per KV row",
                    lambda conn: migrate_table(conn, table), write=True,
                )
                if rows is not None:
                    self.stats.note("migrate_table")
                    log.info(
                        "SQLite store %s: converted KV table %r to one SQL row per KV row "
                        "(%d rows)", self.url, table, rows,
                    )
            if layout != "missing":
                self._blob_tables.add(table)

    def families(self, conn: sqlite3.Connection, table: str) -> tuple[str, ...]:
        """The table's column families, read inside the caller's transaction."""
        found = conn.execute(
            f"SELECT families FROM {_META_TABLE} WHERE name = ?", (table,)
        ).fetchone()
        if found is None:
            raise TableNotFound(table, self.url)
        return tuple(str(found[0]).split(","))

    # -- KVStore --------------------------------------------------------------------------------

    def table(self, name: str) -> SQLiteTable:
        return SQLiteTable(self, check_table_name(name))

    def create_table(
        self, name: str, families: Iterable[str] = ("cf",), *, exist_ok: bool = False
    ) -> None:
        check_table_name(name)
        checked_families = check_families(families)
        if exist_ok and self.table_exists(name):
            # Why: opening a catalog ensures its tables; a read transaction never waits for a
            # writer (WAL), while BEGIN IMMEDIATE would queue every new reader behind one.
            return

        def body(conn: sqlite3.Connection) -> None:
            found = conn.execute(f"SELECT 1 FROM {_META_TABLE} WHERE name = ?", (name,)).fetchone()
            if found is not None:
                if exist_ok:
                    return
                raise TableExists(name, self.url)
            conn.execute(create_table_sql(name))
            conn.execute(
                f"INSERT INTO {_META_TABLE} (name, families) VALUES (?, ?)",
                (name, ",".join(checked_families)),
            )

        self.run("create_table", f"creating table {name!r}", body, write=True)
        self.ensure_layout(name)  # the SQL table may predate the meta row (an older file)

    def drop_table(self, name: str, *, missing_ok: bool = False) -> None:
        check_table_name(name)

        def body(conn: sqlite3.Connection) -> None:
            found = conn.execute(f"SELECT 1 FROM {_META_TABLE} WHERE name = ?", (name,)).fetchone()
            if found is None:
                if missing_ok:
                    return
                raise TableNotFound(name, self.url)
            conn.execute(f"DROP TABLE IF EXISTS {sql_table(name)}")  # its triggers too
            conn.execute(f"DROP TABLE IF EXISTS {feed_names(name)[0]}")
            conn.execute(f"DELETE FROM {_META_TABLE} WHERE name = ?", (name,))

        self.run("drop_table", f"dropping table {name!r}", body, write=True)
        self._blob_tables.discard(name)
        self.fed_tables.discard(name)

    def table_exists(self, name: str) -> bool:
        check_table_name(name)

        def body(conn: sqlite3.Connection) -> bool:
            return (
                conn.execute(f"SELECT 1 FROM {_META_TABLE} WHERE name = ?", (name,)).fetchone()
                is not None
            )

        return self.run("table_exists", f"checking table {name!r}", body, write=False)

    def list_tables(self) -> list[str]:
        def body(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(f"SELECT name FROM {_META_TABLE} ORDER BY name")
            return [str(name) for (name,) in rows]

        return self.run("list_tables", "listing tables", body, write=False)

    def close(self) -> None:
        with self._lock:
            if self._shm is not None and self._pid == os.getpid():
                os.close(self._shm[1])
            self._shm = None
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._closed = True
