"""The HBase test double's server-side scanners: bounds, selection, filter and a cursor.
A TEST DOUBLE, not HBase.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from sortedcontainers import SortedDict

from airflow_partitions.testing.hbase.filter_language import Cell, Filter, apply_filter
from airflow_partitions.testing.hbase.store import ColumnKey, Store, Version


@dataclass
class Scanner:
    """Server-side scanner state: bounds, selection, filter and a cursor into the row order."""

    table: bytes
    start: bytes
    stop: bytes
    reversed: bool
    columns: Sequence[bytes] | None
    max_ts: int | None
    flt: Filter | None
    batch: int | None
    sort_columns: bool
    cursor: bytes | None = None
    done: bool = False
    pending: collections.deque[tuple[bytes, list[tuple[ColumnKey, Version]]]] = field(
        default_factory=collections.deque
    )

    def key_range(self, rows: SortedDict[bytes, object]) -> Iterator[bytes]:
        """Row keys still to visit, honouring start (inclusive) and stop (exclusive)."""
        keys: Iterator[bytes]
        if not self.reversed:
            low, low_incl = (self.start, True) if self.cursor is None else (self.cursor, False)
            keys = rows.irange(low, self.stop or None, inclusive=(low_incl, False))
            return keys
        high, high_incl = (
            (self.start or None, True) if self.cursor is None else (self.cursor, False)
        )
        keys = rows.irange(self.stop or None, high, inclusive=(False, high_incl), reverse=True)
        return keys


def next_scan_row(
    store: Store, scanner: Scanner
) -> tuple[bytes, list[tuple[ColumnKey, Version]]] | None:
    """Advance to the next row that survives selection and filter; None when exhausted."""
    while not scanner.done:
        with store.lock:
            table = store.table(scanner.table)
            sel = store.selection(table, scanner.columns, max_ts=scanner.max_ts)
            row = next(scanner.key_range(table.rows), None)
            if row is None:
                scanner.done = True
                return None
            scanner.cursor = row
            visible = [(k, vs[0]) for k, vs in store.visible(table.rows[row], sel)]
        if not visible:
            continue  # HBase never shows a filter a row without cells
        cells = [Cell(k[0], k[1], v.value, v.timestamp) for k, v in visible]
        kept, stop = apply_filter(scanner.flt, row, cells)
        scanner.done = stop
        if kept:
            return row, [((c.family, c.qualifier), Version(c.timestamp, c.value)) for c in kept]
    return None
