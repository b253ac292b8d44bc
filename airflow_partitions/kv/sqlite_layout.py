"""The SQL layout of a SQLite KV table, and the migration from the old one.

A KV table is ``kv_<name>(row PRIMARY KEY, cells)``: one SQL row per KV row, its cells
packed by :mod:`airflow_partitions.kv.cell_blob`. Files written before that hold
``kv_<name>(row, col, val)``, one SQL row per cell; a store converts such a table the first
time it touches it, in one write transaction, so a crash leaves the old table as it was.
:func:`cells_of_page` reads a page of SQL rows as KV rows and their cells.
"""

# SQL text is built only from whitelisted, quoted table identifiers (``sql_table``) and fixed
# fragments; every key and value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from typing import Literal, TypeAlias

from airflow_partitions.kv.base import Cells, RowCells
from airflow_partitions.kv.cell_blob import Selection, decode_cells, encode_cells
from airflow_partitions.kv.errors import CorruptCell, DamagedCells

Layout: TypeAlias = Literal["blob", "cells", "missing"]

#: Rows written per executemany while migrating: bounds memory, not the transaction.
MIGRATION_BATCH = 2000


def sql_table(name: str) -> str:
    """The quoted SQL identifier of a KV table; upper case escaped (SQL names fold case)."""
    escaped = "".join(f"^{c.lower()}" if c.isupper() else c for c in name)
    return f'"kv_{escaped}"'


def create_table_sql(name: str) -> str:
    """The DDL of a KV table in today's layout."""
    return (
        f"CREATE TABLE IF NOT EXISTS {sql_table(name)} "
        "(row BLOB NOT NULL PRIMARY KEY, cells BLOB NOT NULL) WITHOUT ROWID"
    )


def table_layout(conn: sqlite3.Connection, name: str) -> Layout:
    """Which layout the table's SQL table has (``missing``: there is none)."""
    columns = {str(found[1]) for found in conn.execute(f"PRAGMA table_info({sql_table(name)})")}
    if not columns:
        return "missing"
    if columns == {"row", "col", "val"}:
        return "cells"
    return "blob"


def migrate_table(conn: sqlite3.Connection, name: str) -> int | None:
    """Convert one table from the cell layout, inside the caller's write transaction.

    Returns the number of KV rows converted, or None when there was nothing to do (another
    process converted it first: the caller re-checks under the write lock, here).
    """
    if table_layout(conn, name) != "cells":
        return None
    old = sql_table(name)
    # '~' cannot occur in a table name (see validation.check_table_name): no clash.
    new = old[:-1] + '~blob"'
    conn.execute(f"DROP TABLE IF EXISTS {new}")
    conn.execute(
        f"CREATE TABLE {new} (row BLOB NOT NULL PRIMARY KEY, cells BLOB NOT NULL) WITHOUT ROWID"
    )
    insert = f"INSERT INTO {new} (row, cells) VALUES (?, ?)"
    rows = 0
    batch: list[tuple[bytes, bytes]] = []
    current: bytes | None = None
    cells: dict[bytes, bytes] = {}
    for row, col, val in conn.execute(f"SELECT row, col, val FROM {old} ORDER BY row, col"):
        if row != current:
            if cells and current is not None:
                batch.append((current, encode_cells(cells)))
            current, cells = bytes(row), {}
            if len(batch) >= MIGRATION_BATCH:
                conn.executemany(insert, batch)
                rows += len(batch)
                batch = []
        cells[bytes(col)] = bytes(val)
    if cells and current is not None:
        batch.append((current, encode_cells(cells)))
    conn.executemany(insert, batch)
    rows += len(batch)
    conn.execute(f"DROP TABLE {old}")
    conn.execute(f"ALTER TABLE {new} RENAME TO {old}")
    return rows


def cells_of_page(page: list[tuple[bytes, bytes]], specs: tuple[bytes, ...] | None,
                   selection: Selection | None = None) -> list[RowCells]:
    """The page's rows with the cells ``specs`` select; rows left without cells dropped."""
    if specs is None:
        out: list[RowCells] = []
        damaged: dict[bytes, Cells] = {}
        key = b""
        try:
            for key, blob in page:
                try:
                    out.append((key, decode_cells(blob)))
                except DamagedCells as exc:  # its sound cells; the page is read to its end
                    out.append((key, exc.cells))
                    damaged[key] = exc.damaged[exc.row or b""]
        except CorruptCell as exc:
            exc.row = key  # the row a caller names and reads on past
            raise
        if damaged:
            raise DamagedCells(dict(out), damaged)
        return out
    return (selection or Selection(specs)).page(page)
