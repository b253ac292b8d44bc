"""Scans of partition rows that read on past a row whose stored bytes do not decode.

Why: on SQLite a row's cells are one blob; a plain scan fails on a truncated or mangled blob with
``corrupt cell blob (208 bytes, 205 present)``, naming no row, so that one damaged row would stop
every list, cover and reconcile of its period. Here the scan hands the row's key and the finding to
``on_damaged`` and resumes just after the row: the damaged row is left out (never used), everything
else is read as before.

Cost: nothing on rows that decode (the scan is the store's own); one new scan per damaged
row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from airflow_partitions.keys import prefix_successor
from airflow_partitions.kv import Cells, CorruptCell, KVTable, ScanFilter

OnDamaged = Callable[[bytes, str], None]


def _bounds(start: bytes | None, stop: bytes | None,
            prefix: bytes | None) -> tuple[bytes | None, bytes | None]:
    if prefix is not None:
        return prefix, prefix_successor(prefix)
    return start, stop


def scan_whole_rows(table: KVTable, columns: Sequence[bytes], start: bytes | None = None,
                    stop: bytes | None = None, prefix: bytes | None = None,
                    batch_size: int = 5000, on_damaged: OnDamaged | None = None,
                    ) -> Iterator[tuple[bytes, tuple[bytes | None, ...]]]:
    """``table.scan_columns`` that leaves out (and reports) rows whose bytes do not decode."""
    def scan(low: bytes | None, high: bytes | None, limit: int | None
             ) -> Iterator[tuple[bytes, tuple[bytes | None, ...]]]:
        return table.scan_columns(columns, low, high, limit=limit, batch_size=batch_size)

    return _resumed(scan, *_bounds(start, stop, prefix), None, on_damaged)


def scan_row_cells(table: KVTable, start: bytes | None = None, stop: bytes | None = None,
                   prefix: bytes | None = None, columns: Sequence[bytes] | None = None,
                   filter: ScanFilter | None = None, limit: int | None = None,
                   on_damaged: OnDamaged | None = None) -> Iterator[tuple[bytes, Cells]]:
    """``table.scan`` that leaves out (and reports) rows whose bytes do not decode."""
    def scan(low: bytes | None, high: bytes | None, left: int | None
             ) -> Iterator[tuple[bytes, Cells]]:
        return table.scan(start=low, stop=high, columns=columns, filter=filter, limit=left)

    return _resumed(scan, *_bounds(start, stop, prefix), limit, on_damaged)


def list_whole_rows(table: KVTable, columns: Sequence[bytes], start: bytes | None,
                    stop: bytes | None, batch_size: int = 5000,
                    on_damaged: OnDamaged | None = None,
                    ) -> list[tuple[bytes, tuple[bytes | None, ...]]]:
    """:func:`scan_whole_rows` as a list; the store's own scan unless a row does not decode
    (then read again, leaving it out): no generator step per row on the fast path."""
    try:
        return list(table.scan_columns(columns, start, stop, batch_size=batch_size))
    except CorruptCell as exc:
        if exc.row is None or on_damaged is None:
            raise
    return list(scan_whole_rows(table, columns, start, stop, batch_size=batch_size,
                                on_damaged=on_damaged))


_Row = TypeVar("_Row", bound=tuple[bytes, object])


def _resumed(scan: Callable[[bytes | None, bytes | None, int | None], Iterator[_Row]],
             low: bytes | None, high: bytes | None, limit: int | None,
             on_damaged: OnDamaged | None) -> Iterator[_Row]:
    """The rows of ``scan`` over ``[low, high)``; on a row that does not decode, the rows
    before it (a page is decoded whole, so some may not have been handed out) are read again
    up to it, and the scan goes on after it."""
    pending: list[tuple[bytes | None, bytes | None]] = [(low, high)]
    left = limit
    while pending:
        low, high = pending.pop()
        try:
            for row in scan(low, high, left):
                yield row
                low = row[0] + b"\x00"
                if left is not None:
                    left -= 1
                    if left == 0:
                        return
        except CorruptCell as exc:
            if exc.row is None or on_damaged is None:
                raise
            on_damaged(exc.row, str(exc))
            pending.append((exc.row + b"\x00", high))
            pending.append((low, exc.row))


__all__ = ["OnDamaged", "list_whole_rows", "scan_row_cells", "scan_whole_rows"]
