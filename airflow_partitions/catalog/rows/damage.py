"""Damaged cells of the catalog's rows: named, never used.

A damaged cell's bytes fail their own checksum (:class:`~airflow_partitions.kv.DamagedCells`,
the SQLite backend's per-cell form); the row's other cells read as usual. What a reader of a
storage row does with one: a damaged definition is a :class:`CorruptDefinition` naming the
store, table, row and cell (nothing can rebuild it); any other cell (a timeline, a slice
timeline, the slice build marker, the ``present`` or lineage flag: all derived data) reads as
empty, which its readers treat as an undecodable cell, with a WARNING naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from airflow_partitions.errors import CorruptDefinition
from airflow_partitions.kv import Cells, DamagedCells

log = logging.getLogger(__name__)


def damaged_cell(url: str, table: str, row: bytes, column: bytes) -> str:
    """Names a damaged cell: store, table, row and column."""
    return (f"cell {column.decode('utf-8', 'replace')} of row "
            f"{row.decode('utf-8', 'replace')!r} in table {table!r} of store {url} is damaged "
            "(its bytes do not match their checksum)")


def stand_ins(url: str, exc: DamagedCells, row: bytes, columns: Iterable[bytes],
              definition: bytes) -> Cells:
    """What a storage row's damaged cells read as: empty, or CorruptDefinition for its
    ``definition`` cell (the layout's ``m:def``)."""
    out: Cells = {}
    for column in columns:
        where = damaged_cell(url, exc.table or "catalog", row, column)
        if column == definition:
            raise CorruptDefinition(f"{where}: the storage's definition cannot be read, and "
                                    "reconcile cannot rebuild it; restore it by hand")
        log.warning("%s; read as an undecodable cell (reconcile rebuilds it)", where)
        out[column] = b""
    return out


__all__ = ["damaged_cell", "stand_ins"]
