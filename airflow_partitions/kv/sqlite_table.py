"""The rows of one SQLite-backed table: gets, scans, puts, deletes, check-and-put, increments.

Split from :mod:`airflow_partitions.kv.sqlite` (the file, its connections, its schema): a table
runs statements through its store's retrying helpers. A KV row is one SQL row ``(row, cells)``,
its cells one blob (:mod:`kv.cell_blob`): SQL finds rows by key, Python picks the cells.
"""

# SQL text is built only from whitelisted, quoted table identifiers (``sql_table``) and fixed
# fragments; every key and value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Protocol, TypeVar

from airflow_partitions.kv.base import Cells, KVTable, RowCells, RowValues
from airflow_partitions.kv.cell_blob import (
    Projection,
    RowEncoder,
    Selection,
    cells_for_rewrite,
    encode_cells,
    select_cells,
)
from airflow_partitions.kv.errors import (
    CorruptCell,
    DamagedCells,
    InvalidArgument,
)
from airflow_partitions.kv.scan_filters import ScanFilter, apply_filter
from airflow_partitions.kv.sqlite_feed import changes_since, feed_position, keep_feed
from airflow_partitions.kv.sqlite_layout import cells_of_page, sql_table
from airflow_partitions.kv.sqlite_plan import ScanPlan, plan_scan, ranged_plan
from airflow_partitions.kv.validation import (
    ScanRange,
    check_amount,
    check_cells,
    check_column,
    check_column_specs,
    check_mutation,
    check_row,
    check_row_columns,
    check_row_values,
    check_scan,
    check_swaps,
    column_selected,
    family_of,
    wrap_long,
)

T = TypeVar("T")


class SQLiteTableStore(Protocol):
    """What a table needs of its store (``kv/sqlite.py``'s ``SQLiteStore``): a protocol, so
    the table module does not import the store module that imports it."""

    #: The error kv_merge met during the current statement, for the table to re-raise.
    merge_error: CorruptCell | None

    def run(self, op: str, doing: str, body: Callable[[sqlite3.Connection], T], *,
            write: bool, table: str | None = None, one_statement: bool = False) -> T: ...

    def ensure_layout(self, table: str) -> None: ...

    #: Tables whose change feed this store has made sure of (``SQLiteTable._write``).
    fed_tables: set[str]

    def families(self, conn: sqlite3.Connection, table: str) -> tuple[str, ...]: ...


_ROWS_PER_IN_LIST = 500  # row keys per "row IN (...)" statement, far below SQLite's variable limit
#: What sqlite3 reports when kv_merge (a Python function called by SQLite) raised.
_CALLBACK_FAILED = "user-defined function raised exception"

__all__ = ["SQLiteTable", "SQLiteTableStore", "sql_table"]


class SQLiteTable(KVTable):
    """A KV table stored as ``kv_<name>(row, cells)`` in the store's file."""

    def __init__(self, store: SQLiteTableStore, name: str) -> None:
        super().__init__(name)
        self._store = store
        self._sql = sql_table(name)
        self._upsert_sql = (
            f"INSERT INTO {self._sql} (row, cells) VALUES (?, ?) "
            "ON CONFLICT (row) DO UPDATE SET cells = kv_merge(cells, excluded.cells)"
        )

    def _read(self, op: str, body: Callable[[sqlite3.Connection], T],
              one_statement: bool = False) -> T:
        self._store.ensure_layout(self.name)
        return self._store.run(op, f"{op} on {self.name!r}", body, write=False, table=self.name,
                               one_statement=one_statement)

    def _write(self, op: str, body: Callable[[sqlite3.Connection], T]) -> T:
        """``body`` in a write transaction that also keeps the table's change feed
        (:func:`.sqlite_feed.keep_feed`: created by the store's first write if the file
        predates it, trimmed by every write)."""
        self._store.ensure_layout(self.name)
        fed = self._store.fed_tables

        def kept(conn: sqlite3.Connection) -> T:
            result = body(conn)
            keep_feed(conn, self.name, create=self.name not in fed)
            return result

        result = self._store.run(op, f"{op} on {self.name!r}", kept, write=True,
                                 table=self.name)
        fed.add(self.name)
        return result

    def _check_families(self, conn: sqlite3.Connection, specs: Iterable[bytes]) -> None:
        families = self._store.families(conn, self.name)
        for spec in specs:
            if family_of(spec) not in families:
                raise InvalidArgument(
                    f"column family {family_of(spec)!r} of {spec!r} does not exist in table "
                    f"{self.name!r} (families: {', '.join(families)})"
                )

    def _upsert(self, conn: sqlite3.Connection, rows: list[tuple[bytes, bytes]]) -> None:
        """Insert blobs, merging into rows that exist (SQLite calls kv_merge only for those)."""
        self._store.merge_error = None
        try:
            conn.executemany(self._upsert_sql, rows)
        except sqlite3.OperationalError as exc:
            cause, self._store.merge_error = self._store.merge_error, None
            if _CALLBACK_FAILED not in str(exc) or cause is None:
                raise
            raise CorruptCell(f"cannot put into a row of {self.name!r}: {cause}") from cause

    def _load(self, conn: sqlite3.Connection, row: bytes) -> Cells:
        """The row's cells, read inside the caller's (write) transaction.

        Damaged cells come with their stored bytes, and their stored checksums are kept for
        :meth:`_store_row`: a write keeps them damaged unless it replaces or deletes them.
        """
        found = conn.execute(f"SELECT cells FROM {self._sql} WHERE row = ?", (row,)).fetchone()
        if found is None:
            return _Loaded()
        cells, sums = cells_for_rewrite(found[0])
        loaded = _Loaded(cells)
        loaded.kept = {c: (cells[c], s) for c, s in sums.items()}
        return loaded

    def _store_row(self, conn: sqlite3.Connection, row: bytes, cells: Cells,
                   before: Cells) -> None:
        """Replace the row's cells; a row left without cells disappears, as on HBase.

        ``before`` is what :meth:`_load` read: its damaged cells that ``cells`` still holds
        (the same bytes object, not rewritten) keep their stored checksum, so stay damaged.
        """
        kept = getattr(before, "kept", {})
        sums = {c: s for c, (raw, s) in kept.items() if cells.get(c) is raw}
        if cells:
            conn.execute(f"INSERT OR REPLACE INTO {self._sql} (row, cells) VALUES (?, ?)",
                         (row, encode_cells(cells, sums)))
        else:
            conn.execute(f"DELETE FROM {self._sql} WHERE row = ?", (row,))

    # -- the change feed (kv/sqlite_feed.py) --------------------------------------------------

    def feed_position(self) -> tuple[int, int] | None:
        """:func:`.sqlite_feed.feed_position` of the table: one SELECT."""
        return self._read("feed_position", partial(feed_position, name=self.name), True)

    def changes_since(self, position: Hashable) -> tuple[Hashable, tuple[bytes, ...]] | None:
        """:func:`.sqlite_feed.changes_since` of the table: one SELECT, then the schema version."""
        body = partial(changes_since, name=self.name, position=position)
        return self._read("changes_since", body, one_statement=True)

    # -- reads --------------------------------------------------------------------------------

    def get(self, row: bytes, columns: Iterable[bytes] | None = None) -> Cells:
        check_row(row)
        specs = check_column_specs(columns)
        sql = f"SELECT cells FROM {self._sql} WHERE row = ?"

        def body(conn: sqlite3.Connection) -> bytes | None:
            found = conn.execute(sql, (row,)).fetchall()  # stepped to its end: no open read
            return None if not found else bytes(found[0][0])

        blob = self._read("get", body, one_statement=True)
        try:
            return {} if blob is None else select_cells(blob, specs)
        except DamagedCells as exc:
            raise DamagedCells({row: exc.cells}, {row: exc.damaged[exc.row or b""]},
                               self.name) from None

    def get_many(
        self, rows: Iterable[bytes], columns: Iterable[bytes] | None = None
    ) -> dict[bytes, Cells]:
        keys = sorted(dict.fromkeys(check_row(r) for r in rows))
        specs = check_column_specs(columns)
        if not keys:
            return {}

        def body(conn: sqlite3.Connection) -> list[tuple[bytes, bytes]]:
            found: list[tuple[bytes, bytes]] = []
            for i in range(0, len(keys), _ROWS_PER_IN_LIST):
                chunk = keys[i : i + _ROWS_PER_IN_LIST]
                marks = ",".join("?" * len(chunk))
                found += conn.execute(
                    f"SELECT row, cells FROM {self._sql} WHERE row IN ({marks}) ORDER BY row",
                    chunk,
                ).fetchall()
            return found

        one = len(keys) <= _ROWS_PER_IN_LIST  # one SELECT: one snapshot, no BEGIN/COMMIT
        try:
            return dict(cells_of_page(self._read("get_many", body, one_statement=one), specs))
        except DamagedCells as exc:
            exc.table = self.name
            raise

    def _page(
        self, plan: ScanPlan, resume: bytes | None, reverse: bool, page_size: int
    ) -> list[tuple[bytes, bytes]]:
        """One page of raw ``(row, blob)`` pairs, keys past ``resume`` in the scan's direction.

        Decoding happens after the transaction, outside the store's lock.
        """
        bound = (resume, False) if resume is not None else None
        clauses, params = plan.row_sql(
            after=None if reverse else bound, before=bound if reverse else None
        )
        where = " AND ".join(clauses) or "1"
        sql = (f"SELECT row, cells FROM {self._sql} WHERE {where} "
               f"ORDER BY row {'DESC' if reverse else 'ASC'} LIMIT ?")
        args = [*params, page_size]

        def body(conn: sqlite3.Connection) -> list[tuple[bytes, bytes]]:
            # Keys and blobs are bound as bytes, so SQLite hands back bytes: no copies.
            return conn.execute(sql, args).fetchall()

        return self._read("scan_page", body, one_statement=True)

    def _scan(
        self,
        scan_range: ScanRange,
        columns: tuple[bytes, ...] | None,
        filter: ScanFilter | None,
        reverse: bool,
    ) -> Iterator[RowCells]:
        plan = ranged_plan(plan_scan(filter), scan_range)
        residual = plan.residual
        selection = Selection(columns) if columns is not None else None
        remaining = scan_range.limit
        last_row: bytes | None = None
        if scan_range.empty or remaining == 0:
            return
        while True:
            page_size = scan_range.batch_size
            if remaining is not None and residual is None:
                page_size = min(page_size, remaining)
            page = self._page(plan, last_row, reverse, page_size)
            try:
                found = cells_of_page(page, columns, selection)
            except DamagedCells as exc:  # the rows before the first damaged one, then it
                exc.table = self.name
                keys = list(exc.found)
                cut = keys.index(exc.row) if exc.row in exc.found else len(keys)
                found = [(k, exc.found[k]) for k in keys[:cut]]
                failed: DamagedCells | None = exc
            else:
                failed = None
            for key, cells in found:
                kept = cells if residual is None else apply_filter(residual, key, cells)
                if not kept:
                    continue
                yield key, kept
                if remaining is not None:
                    remaining -= 1
                    if remaining == 0:
                        return
            if failed is not None:
                raise failed
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
        """The projection read straight out of each row's blob, no dict per row.

        Why: this is the catalog's full scan; ``cell_blob.Projection`` reads the wanted values
        at offsets it worked out once per distinct set of columns.
        """
        wanted = self._projected(columns)
        scan_range = check_scan(start, stop, prefix, limit, batch_size)
        if scan_range.empty or limit == 0:
            return iter(())
        return self._projected_pages(Projection(wanted), scan_range)

    def _projected_pages(self, projection: Projection, scan_range: ScanRange
                         ) -> Iterator[RowValues]:
        plan = ranged_plan(ScanPlan(), scan_range)
        remaining = scan_range.limit
        last_row: bytes | None = None
        while True:
            page_size = scan_range.batch_size
            if remaining is not None:
                page_size = min(page_size, remaining)
            page = self._page(plan, last_row, False, page_size)
            found = projection.page(page)
            if remaining is not None:
                found = found[:remaining]
                remaining -= len(found)
            yield from found
            if len(page) < page_size or remaining == 0:
                return
            last_row = page[-1][0]

    # -- writes -------------------------------------------------------------------------------

    def put(self, row: bytes, cells: Mapping[bytes, bytes]) -> None:
        check_row(row)
        checked = check_cells(cells)
        if not checked:
            return
        blob = encode_cells(checked)

        def body(conn: sqlite3.Connection) -> None:
            self._check_families(conn, checked)
            self._upsert(conn, [(row, blob)])

        self._write("put", body)

    def put_many(
        self, items: Iterable[tuple[bytes, Mapping[bytes, bytes]]], batch_size: int = 1000
    ) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgument(f"batch_size must be a positive int, got {batch_size!r}")
        batch: list[tuple[bytes, bytes]] = []
        columns: set[bytes] = set()
        for row, cells in items:
            checked = check_cells(cells)
            if checked:
                columns.update(checked)
                batch.append((check_row(row), encode_cells(checked)))
            if len(batch) >= batch_size:
                self._put_batch(batch, columns)
                batch, columns = [], set()
        if batch:
            self._put_batch(batch, columns)

    def put_rows(
        self, columns: Sequence[bytes], rows: Iterable[tuple[bytes, Sequence[bytes]]],
        batch_size: int = 1000,
    ) -> None:
        """Each row encoded by one :class:`~.cell_blob.RowEncoder`: no dict, no sort per row."""
        names = check_row_columns(columns)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgument(f"batch_size must be a positive int, got {batch_size!r}")
        encode = RowEncoder(names).encode
        families = set(names)
        batch: list[tuple[bytes, bytes]] = []
        for row, values in rows:
            batch.append((check_row(row), encode(check_row_values(names, values))))
            if len(batch) >= batch_size:
                self._put_batch(batch, families)
                batch = []
        if batch:
            self._put_batch(batch, families)

    def _put_batch(self, batch: list[tuple[bytes, bytes]], columns: set[bytes]) -> None:
        def body(conn: sqlite3.Connection) -> None:
            self._check_families(conn, columns)
            # One statement for the whole batch: a new row is a blind insert, and only a row
            # that exists calls kv_merge (cell_blob.merge_cells) to keep its other cells.
            self._upsert(conn, batch)

        self._write("put_many", body)

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        check_row(row)
        specs = check_column_specs(columns)

        def body(conn: sqlite3.Connection) -> None:
            self._check_families(conn, specs or ())
            if specs is None:
                conn.execute(f"DELETE FROM {self._sql} WHERE row = ?", (row,))
                return
            cells = self._load(conn, row)
            kept = {c: v for c, v in cells.items() if not column_selected(c, specs)}
            if len(kept) != len(cells):
                self._store_row(conn, row, kept, cells)

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
            cells = self._load(conn, row)
            kept = {c: v for c, v in cells.items() if not column_selected(c, checked_deletes)}
            if checked_puts or len(kept) != len(cells):
                self._store_row(conn, row, {**kept, **checked_puts}, cells)

        self._write("mutate_row", body)

    def check_and_put(
        self, row: bytes, column: bytes, expected: bytes | None, value: bytes
    ) -> bool:
        return self._swap("check_and_put", row, [(column, expected, value)])[0]

    def check_and_put_many(self, row: bytes, swaps: Sequence[tuple[bytes, bytes | None, bytes]]
                           ) -> list[bool]:
        return self._swap("check_and_put_many", row, swaps) if swaps else []

    def _swap(self, op: str, row: bytes, swaps: Sequence[tuple[bytes, bytes | None, bytes]]
              ) -> list[bool]:
        """Each swap a compare-and-swap of its cell, in one transaction: one read, one write."""
        check_row(row)
        check_swaps(swaps)

        def body(conn: sqlite3.Connection) -> list[bool]:
            self._check_families(conn, [column for column, _, _ in swaps])
            cells = self._load(conn, row)
            done = []
            for column, expected, value in swaps:
                current = cells.get(column)
                ok = current in (None, b"") if expected in (None, b"") else current == expected
                if ok:
                    cells[column] = value
                done.append(ok)
            if any(done):
                self._store_row(conn, row, cells, cells)
            return done

        return self._write(op, body)

    def check_and_delete(self, row: bytes, column: bytes, expected: bytes) -> bool:
        check_row(row)
        check_column(column)
        if not isinstance(expected, bytes):
            raise InvalidArgument(f"expected must be bytes, got {type(expected).__name__}")

        def body(conn: sqlite3.Connection) -> bool:
            self._check_families(conn, [column])
            if self._load(conn, row).get(column) != expected:
                return False
            conn.execute(f"DELETE FROM {self._sql} WHERE row = ?", (row,))
            return True

        return self._write("check_and_delete", body)

    def increment(self, row: bytes, column: bytes, amount: int = 1) -> int:
        check_row(row)
        check_column(column)
        check_amount(amount)

        def body(conn: sqlite3.Connection) -> int:
            self._check_families(conn, [column])
            cells = self._load(conn, row)
            current = 0
            raw = cells.get(column)
            if column in getattr(cells, "kept", {}):
                raise DamagedCells({row: {}}, {row: {column: raw or b""}}, self.name)
            if raw is not None:
                if len(raw) != 8:
                    raise CorruptCell(
                        f"cannot increment {self.name!r} {row!r} {column!r}: "
                        f"the cell holds {len(raw)} bytes, not an 8-byte counter"
                    )
                current = int.from_bytes(raw, "big", signed=True)
            new = wrap_long(current + amount)
            cells[column] = new.to_bytes(8, "big", signed=True)
            self._store_row(conn, row, cells, cells)
            return new

        return self._write("increment", body)


class _Loaded(dict[bytes, bytes]):
    """A row's cells as a write loaded them; ``kept``: its damaged cells, each with its stored
    bytes and checksum."""

    kept: dict[bytes, tuple[bytes, int]] = {}
