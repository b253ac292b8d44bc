"""The embedded default backend: one SQLite file, safe across processes.

Every Airflow task is its own process, so the file is opened in WAL mode (readers never block
the writer), every write is a ``BEGIN IMMEDIATE`` transaction retried on SQLITE_BUSY, and each
KV table is a ``WITHOUT ROWID`` table clustered on ``(row, col)``: BLOBs compare with memcmp,
so walking the primary key is walking rows in byte order, as HBase does.
"""

# SQL text is built only from whitelisted, quoted table identifiers (``sql_table``) and fixed
# fragments; every key and value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from airflow_partitions.kv.base import Cells, KVStore, KVTable, RowCells
from airflow_partitions.kv.errors import (
    CorruptCell,
    InvalidArgument,
    KVError,
    StoreUnavailable,
    TableExists,
    TableNotFound,
)
from airflow_partitions.kv.scan_filters import ScanFilter, apply_filter
from airflow_partitions.kv.sqlite_plan import columns_sql, plan_scan
from airflow_partitions.kv.urls import Synchronous
from airflow_partitions.kv.validation import (
    ScanRange,
    check_amount,
    check_cells,
    check_column,
    check_column_specs,
    check_families,
    check_mutation,
    check_row,
    check_table_name,
    family_of,
    wrap_long,
)

T = TypeVar("T")

_META = "_kv_meta"
_IN_CHUNK = 500  # row keys per "row IN (...)" statement, far below SQLite's variable limit
# Connections inherited across fork() are kept referenced, never closed: closing one in the
# child could disturb the parent's locks and WAL.
_ORPHANED: list[sqlite3.Connection] = []


def sql_table(name: str) -> str:
    """The quoted SQL identifier of a KV table; upper case escaped (SQL names fold case)."""
    escaped = "".join(f"^{c.lower()}" if c.isupper() else c for c in name)
    return f'"kv_{escaped}"'


def _is_busy(exc: sqlite3.Error) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


class SQLiteStore(KVStore):
    """A KV store in one SQLite file (see the module docstring)."""

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

    # -- connection management ----------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        """This process's connection, opened on first use (and again after fork)."""
        if self._closed:
            raise KVError(f"store {self.url} is closed")
        if self._pid != os.getpid():
            if self._conn is not None:
                _ORPHANED.append(self._conn)
            self._conn = None
            self._lock = threading.RLock()
            self._pid = os.getpid()
        if self._conn is None:
            self._conn = self._retry_busy("opening the database", self._open)
        return self._conn

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
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_META} "
                "(name TEXT PRIMARY KEY, families TEXT NOT NULL) WITHOUT ROWID"
            )
        except BaseException:
            conn.close()
            raise
        self.stats.note("connect")
        return conn

    def _retry_busy(self, doing: str, attempt: Callable[[], T]) -> T:
        """Run ``attempt``, retrying with jittered back-off while the database is locked."""
        deadline = time.monotonic() + self._lock_timeout_s
        delay = 0.002
        while True:
            try:
                return attempt()
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
        return StoreUnavailable(self.url, doing, f"{type(exc).__name__}: {message}")

    def run(
        self,
        op: str,
        doing: str,
        body: Callable[[sqlite3.Connection], T],
        *,
        write: bool,
        table: str | None = None,
    ) -> T:
        """One round trip: ``body`` inside one transaction, retried while the file is locked."""
        with self._lock:
            conn = self._connection()

            def attempt() -> T:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    result = body(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                return result

            try:
                result = self._retry_busy(doing, attempt)
            except KVError as exc:
                if table is not None and "no such table" in str(exc):
                    raise TableNotFound(table, self.url) from exc
                raise
            self.stats.record(op)
            return result

    def families(self, conn: sqlite3.Connection, table: str) -> tuple[str, ...]:
        """The table's column families, read inside the caller's transaction."""
        found = conn.execute(f"SELECT families FROM {_META} WHERE name = ?", (table,)).fetchone()
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
        fams = check_families(families)

        def body(conn: sqlite3.Connection) -> None:
            found = conn.execute(f"SELECT 1 FROM {_META} WHERE name = ?", (name,)).fetchone()
            if found is not None:
                if exist_ok:
                    return
                raise TableExists(name, self.url)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {sql_table(name)} (row BLOB NOT NULL, "
                "col BLOB NOT NULL, val BLOB NOT NULL, PRIMARY KEY (row, col)) WITHOUT ROWID"
            )
            conn.execute(
                f"INSERT INTO {_META} (name, families) VALUES (?, ?)", (name, ",".join(fams))
            )

        self.run("create_table", f"creating table {name!r}", body, write=True)

    def drop_table(self, name: str, *, missing_ok: bool = False) -> None:
        check_table_name(name)

        def body(conn: sqlite3.Connection) -> None:
            found = conn.execute(f"SELECT 1 FROM {_META} WHERE name = ?", (name,)).fetchone()
            if found is None:
                if missing_ok:
                    return
                raise TableNotFound(name, self.url)
            conn.execute(f"DROP TABLE IF EXISTS {sql_table(name)}")
            conn.execute(f"DELETE FROM {_META} WHERE name = ?", (name,))

        self.run("drop_table", f"dropping table {name!r}", body, write=True)

    def table_exists(self, name: str) -> bool:
        check_table_name(name)

        def body(conn: sqlite3.Connection) -> bool:
            return (
                conn.execute(f"SELECT 1 FROM {_META} WHERE name = ?", (name,)).fetchone()
                is not None
            )

        return self.run("table_exists", f"checking table {name!r}", body, write=False)

    def list_tables(self) -> list[str]:
        def body(conn: sqlite3.Connection) -> list[str]:
            return [str(r[0]) for r in conn.execute(f"SELECT name FROM {_META} ORDER BY name")]

        return self.run("list_tables", "listing tables", body, write=False)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._closed = True


class SQLiteTable(KVTable):
    """A KV table stored as ``kv_<name>(row, col, val)`` in the store's file."""

    def __init__(self, store: SQLiteStore, name: str) -> None:
        super().__init__(name)
        self._store = store
        self._sql = sql_table(name)

    def _read(self, op: str, body: Callable[[sqlite3.Connection], T]) -> T:
        return self._store.run(op, f"{op} on {self.name!r}", body, write=False, table=self.name)

    def _write(self, op: str, body: Callable[[sqlite3.Connection], T]) -> T:
        return self._store.run(op, f"{op} on {self.name!r}", body, write=True, table=self.name)

    def _check_families(self, conn: sqlite3.Connection, specs: Iterable[bytes]) -> None:
        families = self._store.families(conn, self.name)
        for spec in specs:
            if family_of(spec) not in families:
                raise InvalidArgument(
                    f"column family {family_of(spec)!r} of {spec!r} does not exist in table "
                    f"{self.name!r} (families: {', '.join(families)})"
                )

    def _upsert(self, conn: sqlite3.Connection, row: bytes, cells: Mapping[bytes, bytes]) -> None:
        conn.executemany(
            f"INSERT INTO {self._sql} (row, col, val) VALUES (?, ?, ?) "
            "ON CONFLICT (row, col) DO UPDATE SET val = excluded.val",
            [(row, col, val) for col, val in cells.items()],
        )

    def _delete(
        self, conn: sqlite3.Connection, row: bytes, specs: tuple[bytes, ...] | None
    ) -> None:
        clauses, params = columns_sql(specs)
        where = " AND ".join(["row = ?", *clauses])
        conn.execute(f"DELETE FROM {self._sql} WHERE {where}", [row, *params])

    # -- reads --------------------------------------------------------------------------------

    def get(self, row: bytes, columns: Iterable[bytes] | None = None) -> Cells:
        check_row(row)
        specs = check_column_specs(columns)
        clauses, params = columns_sql(specs)
        sql = f"SELECT col, val FROM {self._sql} WHERE {' AND '.join(['row = ?', *clauses])}"

        def body(conn: sqlite3.Connection) -> Cells:
            return {
                bytes(c): bytes(v) for c, v in conn.execute(sql + " ORDER BY col", [row, *params])
            }

        return self._read("get", body)

    def get_many(
        self, rows: Iterable[bytes], columns: Iterable[bytes] | None = None
    ) -> dict[bytes, Cells]:
        keys = sorted(dict.fromkeys(check_row(r) for r in rows))
        specs = check_column_specs(columns)
        if not keys:
            return {}
        clauses, params = columns_sql(specs)

        def body(conn: sqlite3.Connection) -> dict[bytes, Cells]:
            result: dict[bytes, Cells] = {}
            for i in range(0, len(keys), _IN_CHUNK):
                chunk = keys[i : i + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                where = " AND ".join([f"row IN ({marks})", *clauses])
                for r, c, v in conn.execute(
                    f"SELECT row, col, val FROM {self._sql} WHERE {where} ORDER BY row, col",
                    [*chunk, *params],
                ):
                    result.setdefault(bytes(r), {})[bytes(c)] = bytes(v)
            return result

        return self._read("get_many", body)

    def _scan(
        self,
        rng: ScanRange,
        columns: tuple[bytes, ...] | None,
        filter: ScanFilter | None,
        reverse: bool,
    ) -> Iterator[RowCells]:
        plan = plan_scan(filter)
        if rng.start is not None:
            plan.lower.append((rng.start, True))
        if rng.stop is not None:
            plan.upper.append((rng.stop, False))
        col_clauses, col_params = plan.column_sql(columns)
        order = "DESC" if reverse else "ASC"
        remaining = rng.limit
        last: bytes | None = None
        if rng.empty or remaining == 0:
            return
        while True:
            want = rng.batch_size
            if remaining is not None and plan.residual is None:
                want = min(want, remaining)
            resume = (last, False) if last is not None else None
            page_clauses, page_params = plan.row_sql(
                after=None if reverse else resume, before=resume if reverse else None
            )
            inner_where = " AND ".join(page_clauses + col_clauses) or "1"
            outer_where = " AND ".join(["row IN (SELECT r FROM page)", *col_clauses])
            sql = (
                f"WITH page(r) AS (SELECT DISTINCT row FROM {self._sql} WHERE {inner_where} "
                f"ORDER BY row {order} LIMIT ?) "
                f"SELECT row, col, val FROM {self._sql} WHERE {outer_where} "
                f"ORDER BY row {order}, col ASC"
            )
            params = [*page_params, *col_params, want, *col_params]

            def body(
                conn: sqlite3.Connection, sql: str = sql, params: list[object] = params
            ) -> list[RowCells]:
                page: list[RowCells] = []
                for r, c, v in conn.execute(sql, params):
                    key = bytes(r)
                    if not page or page[-1][0] != key:
                        page.append((key, {}))
                    page[-1][1][bytes(c)] = bytes(v)
                return page

            page = self._read("scan_page", body)
            for key, cells in page:
                kept: Cells | None = cells
                if plan.residual is not None:
                    kept = apply_filter(plan.residual, key, cells)
                if kept is None:
                    continue
                yield key, kept
                if remaining is not None:
                    remaining -= 1
                    if remaining == 0:
                        return
            if len(page) < want:
                return
            last = page[-1][0]

    # -- writes -------------------------------------------------------------------------------

    def put(self, row: bytes, cells: Mapping[bytes, bytes]) -> None:
        check_row(row)
        checked = check_cells(cells)
        if not checked:
            return

        def body(conn: sqlite3.Connection) -> None:
            self._check_families(conn, checked)
            self._upsert(conn, row, checked)

        self._write("put", body)

    def put_many(
        self, items: Iterable[tuple[bytes, Mapping[bytes, bytes]]], batch_size: int = 1000
    ) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgument(f"batch_size must be a positive int, got {batch_size!r}")
        batch: list[tuple[bytes, dict[bytes, bytes]]] = []
        for row, cells in items:
            checked = check_cells(cells)
            if checked:
                batch.append((check_row(row), checked))
            if len(batch) >= batch_size:
                self._put_batch(batch)
                batch = []
        if batch:
            self._put_batch(batch)

    def _put_batch(self, batch: list[tuple[bytes, dict[bytes, bytes]]]) -> None:
        def body(conn: sqlite3.Connection) -> None:
            self._check_families(conn, {c for _, cells in batch for c in cells})
            for row, cells in batch:
                self._upsert(conn, row, cells)

        self._write("put_many", body)

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        check_row(row)
        specs = check_column_specs(columns)

        def body(conn: sqlite3.Connection) -> None:
            self._check_families(conn, specs or ())
            self._delete(conn, row, specs)

        self._write("delete", body)

    def mutate_row(
        self,
        row: bytes,
        puts: Mapping[bytes, bytes] | None = None,
        deletes: Iterable[bytes] | None = None,
    ) -> None:
        check_row(row)
        checked_puts, checked_deletes = check_mutation(puts, deletes)
        if not checked_puts and not checked_deletes:
            return

        def body(conn: sqlite3.Connection) -> None:
            self._check_families(conn, [*checked_puts, *checked_deletes])
            if checked_deletes:
                self._delete(conn, row, checked_deletes)
            self._upsert(conn, row, checked_puts)

        self._write("mutate_row", body)

    def check_and_put(
        self, row: bytes, column: bytes, expected: bytes | None, value: bytes
    ) -> bool:
        check_row(row)
        check_column(column)
        if expected is not None and not isinstance(expected, bytes):
            raise InvalidArgument(f"expected must be bytes or None, got {type(expected).__name__}")
        check_cells({column: value})

        def body(conn: sqlite3.Connection) -> bool:
            self._check_families(conn, [column])
            found = conn.execute(
                f"SELECT val FROM {self._sql} WHERE row = ? AND col = ?", (row, column)
            ).fetchone()
            current = None if found is None else bytes(found[0])
            if expected is None or expected == b"":
                ok = current is None or current == b""
            else:
                ok = current == expected
            if ok:
                self._upsert(conn, row, {column: value})
            return ok

        return self._write("check_and_put", body)

    def increment(self, row: bytes, column: bytes, amount: int = 1) -> int:
        check_row(row)
        check_column(column)
        check_amount(amount)

        def body(conn: sqlite3.Connection) -> int:
            self._check_families(conn, [column])
            found = conn.execute(
                f"SELECT val FROM {self._sql} WHERE row = ? AND col = ?", (row, column)
            ).fetchone()
            current = 0
            if found is not None:
                raw = bytes(found[0])
                if len(raw) != 8:
                    raise CorruptCell(
                        f"cannot increment {self.name!r} {row!r} {column!r}: "
                        f"the cell holds {len(raw)} bytes, not an 8-byte counter"
                    )
                current = int.from_bytes(raw, "big", signed=True)
            new = wrap_long(current + amount)
            self._upsert(conn, row, {column: new.to_bytes(8, "big", signed=True)})
            return new

        return self._write("increment", body)
