"""The rows of one SQLite-backed table: gets, scans, puts, deletes, check-and-put, increments.

Split from :mod:`airflow_partitions.kv.sqlite` (the file, its connections and its schema) so
each reads on its own: a table only runs statements through its store's retrying helpers.
"""

# SQL text is built only from whitelisted, quoted table identifiers (``sql_table``) and fixed
# fragments; every key and value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from airflow_partitions.kv.base import Cells, KVTable, RowCells, RowValues
from airflow_partitions.kv.errors import (
    CorruptCell,
    InvalidArgument,
)
from airflow_partitions.kv.scan_filters import ScanFilter, apply_filter
from airflow_partitions.kv.sqlite_plan import columns_sql, plan_scan
from airflow_partitions.kv.validation import (
    ScanRange,
    check_amount,
    check_cells,
    check_column,
    check_column_specs,
    check_mutation,
    check_row,
    check_scan,
    family_of,
    wrap_long,
)

if TYPE_CHECKING:
    from airflow_partitions.kv.sqlite import SQLiteStore

T = TypeVar("T")

_ROWS_PER_IN_LIST = 500  # row keys per "row IN (...)" statement, far below SQLite's variable limit


def sql_table(name: str) -> str:
    """The quoted SQL identifier of a KV table; upper case escaped (SQL names fold case)."""
    escaped = "".join(f"^{c.lower()}" if c.isupper() else c for c in name)
    return f'"kv_{escaped}"'


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

    def _delete_cells(
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
            found = conn.execute(sql + " ORDER BY col", [row, *params])
            return {bytes(col): bytes(val) for col, val in found}

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
            for i in range(0, len(keys), _ROWS_PER_IN_LIST):
                chunk = keys[i : i + _ROWS_PER_IN_LIST]
                marks = ",".join("?" * len(chunk))
                where = " AND ".join([f"row IN ({marks})", *clauses])
                for found_row, col, val in conn.execute(
                    f"SELECT row, col, val FROM {self._sql} WHERE {where} ORDER BY row, col",
                    [*chunk, *params],
                ):
                    result.setdefault(bytes(found_row), {})[bytes(col)] = bytes(val)
            return result

        return self._read("get_many", body)

    def _scan(
        self,
        scan_range: ScanRange,
        columns: tuple[bytes, ...] | None,
        filter: ScanFilter | None,
        reverse: bool,
    ) -> Iterator[RowCells]:
        plan = plan_scan(filter)
        if scan_range.start is not None:
            plan.lower.append((scan_range.start, True))
        if scan_range.stop is not None:
            plan.upper.append((scan_range.stop, False))
        col_clauses, col_params = plan.column_sql(columns)
        order = "DESC" if reverse else "ASC"
        remaining = scan_range.limit
        last_row: bytes | None = None
        if scan_range.empty or remaining == 0:
            return
        while True:
            page_size = scan_range.batch_size
            if remaining is not None and plan.residual is None:
                page_size = min(page_size, remaining)
            resume = (last_row, False) if last_row is not None else None
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
            params = [*page_params, *col_params, page_size, *col_params]

            def body(
                conn: sqlite3.Connection, sql: str = sql, params: list[object] = params
            ) -> list[RowCells]:
                # Keys and values are bound as bytes, so SQLite hands back bytes: no copies.
                page: list[RowCells] = []
                last: bytes | None = None
                cells: Cells = {}
                for found_row, col, val in conn.execute(sql, params):
                    if found_row != last:
                        last, cells = found_row, {}
                        page.append((found_row, cells))
                    cells[col] = val
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
            if len(page) < page_size:
                return
            last_row = page[-1][0]

    def scan_columns(
        self,
        columns: Sequence[bytes],
        start: bytes | None = None,
        stop: bytes | None = None,
        prefix: bytes | None = None,
        limit: int | None = None,
        batch_size: int = 1000,
    ) -> Iterator[RowValues]:
        """The projection pivoted in SQL: one result row per KV row, grouped on the key.

        Why: a partition row is one SQL row per cell, and turning cells into Python tuples and
        dicts one by one cost more than SQLite's own walk of the rows (docs/benchmarks.md).
        """
        wanted = self._projected(columns)
        scan_range = check_scan(start, stop, prefix, limit, batch_size)
        if scan_range.empty or limit == 0:
            return iter(())
        return self._pivot_pages(wanted, scan_range)

    def _pivot_pages(self, wanted: tuple[bytes, ...], scan_range: ScanRange
                     ) -> Iterator[RowValues]:
        pivot = ", ".join("max(CASE WHEN col = ? THEN val END)" for _ in wanted)
        marks = ",".join("?" * len(wanted))
        remaining = scan_range.limit
        lower: tuple[bytes, str] | None = (
            (scan_range.start, ">=") if scan_range.start is not None else None)
        while True:
            page_size = scan_range.batch_size if remaining is None else min(
                scan_range.batch_size, remaining)
            clauses = [f"col IN ({marks})"]
            params: list[object] = [*wanted, *wanted]
            if lower is not None:
                clauses.append(f"row {lower[1]} ?")
                params.append(lower[0])
            if scan_range.stop is not None:
                clauses.append("row < ?")
                params.append(scan_range.stop)
            sql = (f"SELECT row, {pivot} FROM {self._sql} WHERE {' AND '.join(clauses)} "
                   "GROUP BY row ORDER BY row LIMIT ?")
            params.append(page_size)

            def body(conn: sqlite3.Connection, sql: str = sql,
                     params: list[object] = params) -> list[RowValues]:
                return [(found[0], found[1:]) for found in conn.execute(sql, params)]

            page = self._read("scan_page", body)
            yield from page
            if remaining is not None:
                remaining -= len(page)
            if len(page) < page_size or remaining == 0:
                return
            lower = (page[-1][0], ">")

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
            # One statement for the whole batch: per-row statements cost more than the writes.
            # REPLACE is the upsert here ((row, col) is the whole key) and a little cheaper.
            conn.executemany(
                f"INSERT OR REPLACE INTO {self._sql} (row, col, val) VALUES (?, ?, ?)",
                [(row, col, val) for row, cells in batch for col, val in cells.items()],
            )

        self._write("put_many", body)

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        check_row(row)
        specs = check_column_specs(columns)

        def body(conn: sqlite3.Connection) -> None:
            self._check_families(conn, specs or ())
            self._delete_cells(conn, row, specs)

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
                self._delete_cells(conn, row, checked_deletes)
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

    def check_and_delete(self, row: bytes, column: bytes, expected: bytes) -> bool:
        check_row(row)
        check_column(column)
        if not isinstance(expected, bytes):
            raise InvalidArgument(f"expected must be bytes, got {type(expected).__name__}")

        def body(conn: sqlite3.Connection) -> bool:
            self._check_families(conn, [column])
            found = conn.execute(
                f"SELECT val FROM {self._sql} WHERE row = ? AND col = ?", (row, column)
            ).fetchone()
            if found is None or bytes(found[0]) != expected:
                return False
            self._delete_cells(conn, row, None)
            return True

        return self._write("check_and_delete", body)

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
