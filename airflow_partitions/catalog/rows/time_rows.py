"""The rows of a stretch of time values kept between two verified covers, moved on with the
store's change feed (``KVTable.changes_since``) instead of read again.

Why: a sensor asks its cover again after each registration, and the cover grows by an hour
(a run one longer, two runs merged where a hole was filled): another group of runs, but the
same rows but one. :class:`TimeRows` keeps what the last full read found (one row a time value,
packed) with the feed position taken before that read; the feed names the keys written since
(by anyone: SQLite triggers record every write), their time values are read again, and what a
new group adds outside the stretch is read; everything else is the rows kept.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Final, overload

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.run_rows import (
    RowValues,
    RunRows,
    changed_in,
    strict_ordinals,
    whole_rows,
)
from airflow_partitions.catalog.rows.scan import list_whole_rows
from airflow_partitions.cover import CoverRun
from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import KeyEncodingError, decode_key, encode_value, prefix_successor
from airflow_partitions.kv import MAX_ROWS, PackedRows

if TYPE_CHECKING:
    from airflow_partitions.catalog.rows.layout import CatalogRows

#: Rows per packed chunk of :class:`TimeRows`: a changed time value repacks one chunk.
_CHUNK: Final = 4096
#: The most changed keys :meth:`TimeRows.advance` reads one by one; past that, everything.
PATCH_MAX: Final = 256


class ChainRows(Sequence[RowValues]):
    """Stretches of packed chunks read as one sequence of rows (a run's rows, no copy)."""

    __slots__ = ("_parts", "_size")

    def __init__(self, parts: list[tuple[PackedRows, int, int]]) -> None:
        self._parts = parts
        self._size = sum(hi - lo for _, lo, hi in parts)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[RowValues]:
        for packed, lo, hi in self._parts:
            yield from packed.between(lo, hi)

    @overload
    def __getitem__(self, index: int) -> RowValues: ...

    @overload
    def __getitem__(self, index: slice) -> list[RowValues]: ...

    def __getitem__(self, index: int | slice) -> RowValues | list[RowValues]:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._size
        for packed, lo, hi in self._parts:
            if 0 <= index < hi - lo:
                return packed[lo + index]
            index -= hi - lo
        raise IndexError("row index out of range")


class TimeRows:
    """The whole rows of a stretch ``[first, end)`` of time values of one (storage, period)
    whose time column leads the key, one row per time value, packed in chunks by ordinal:
    what the last full read of a group found, kept up to date through the change feed.

    Why: a sensor's cover grows by one hour after a registration (a run one longer, two runs
    merged where a hole was filled): another group of runs, but the same rows but one. Here
    the feed names the keys written since ``position``; their time values are read again
    (one prefix scan each), the part of a new group outside the stretch is read, and the runs
    are taken from the chunks. Cost: the feed read, the rows that changed or are new, a
    repack of the chunks they fall in (4,096 rows each), O(runs x log chunks).
    Memory: the rows packed (:class:`PackedRows`, about 100 bytes a four-cell row).
    """

    def __init__(self, decoder: PartitionDecoder, first: int, end: int) -> None:
        self.decoder = decoder
        self.first, self.end = first, end
        self.rows: CatalogRows | None = None
        self.sdef: StorageDef | None = None
        self.position: Hashable = None
        self.starts: list[int] = []  # chunk i holds the ordinals in [starts[i], starts[i+1])
        self.chunks: list[tuple[array[int], PackedRows]] = []
        self._lock = threading.Lock()

    def fill(self, ordinals: Sequence[int], values: Sequence[RowValues]) -> None:
        """Chunks of sorted, distinct ``ordinals`` and their rows; the chunks' bounds."""
        self.starts, self.chunks = self._chunked(self.first, ordinals, values)

    def _chunked(self, first: int, ordinals: Sequence[int], values: Sequence[RowValues]
                 ) -> tuple[list[int], list[tuple[array[int], PackedRows]]]:
        width = len(self.decoder.columns)
        starts, chunks = [], []
        for lo in range(0, max(len(ordinals), 1), _CHUNK):
            starts.append(first if lo == 0 else ordinals[lo])
            chunks.append((array("q", ordinals[lo:lo + _CHUNK]),
                           PackedRows(values[lo:lo + _CHUNK], width)))
        return starts, chunks

    def take(self, group: Sequence[CoverRun]) -> list[RunRows] | None:
        """Each run's rows out of the chunks; None if an ordinal of a run has no row (the
        full read names it) or lies outside the stretch."""
        out = []
        for run in group:
            if run.first < self.first or run.end > self.end:
                return None
            parts = []
            total = 0
            at = max(bisect_right(self.starts, run.first) - 1, 0)
            while at < len(self.chunks) and self.starts[at] < run.end:
                ordinals, packed = self.chunks[at]
                lo, hi = bisect_left(ordinals, run.first), bisect_left(ordinals, run.end)
                if hi > lo:
                    parts.append((packed, lo, hi))
                    total += hi - lo
                at += 1
            if total != run.count:
                return None
            out.append(RunRows(run, self.decoder, ChainRows(parts), None))
        return out

    def advance(self, rows: CatalogRows, sdef: StorageDef, group: Sequence[CoverRun]
                ) -> list[RunRows] | None:
        """The group's runs, after reading what the feed says changed in the stretch and
        what of the group lies outside it; None when the feed cannot tell, a key or a row
        read is not one the catalog writes whole, or a run lacks a row: read everything."""
        if rows is not self.rows or sdef != self.sdef:
            return None
        with self._lock:
            changed = rows.partitions.changes_since(self.position)
            if changed is None:
                return None
            position, keys = changed
            touched = changed_in(keys, self._prefix(self.first),
                                 prefix_successor(self._prefix(self.end - 1)))
            if len(touched) > PATCH_MAX:
                return None
            ordinals: set[int] = set()
            period = self.decoder.period
            for key in touched:
                try:
                    _, _, values = decode_key(sdef.key_schema, key)
                    ordinals.add(period.parse_ordinal(str(values[0]), sdef.tz))
                except (KeyEncodingError, InvalidInput, IndexError):
                    return None
            for ordinal in sorted(ordinals):
                fresh = self._read(ordinal, ordinal + 1)
                if fresh is None:
                    return None
                self._put(ordinal, fresh)
            first, end = group[0].first, group[-1].end
            if first < self.first:
                fresh = self._read(first, self.first)
                if fresh is None:
                    return None
                starts, chunks = self._chunked(first, [o for o, _ in fresh],
                                               [v for _, v in fresh])
                self.starts[:0], self.chunks[:0], self.first = starts, chunks, first
            if end > self.end:
                fresh = self._read(self.end, end)
                if fresh is None:
                    return None
                starts, chunks = self._chunked(self.end, [o for o, _ in fresh],
                                               [v for _, v in fresh])
                self.starts += starts
                self.chunks += chunks
                self.end = end
            if sum(len(packed) for _, packed in self.chunks) > MAX_ROWS:
                return None  # grown past the bound: read the group, keep it if it fits
            self.position = position
            return self.take(group)

    def _prefix(self, ordinal: int) -> bytes:
        assert self.rows is not None and self.sdef is not None
        sdef, period = self.sdef, self.decoder.period
        name, ctype = sdef.columns[0]
        return self.rows.period_prefix(sdef, period) + encode_value(
            ctype, period.format_ordinal(ordinal, sdef.tz), column=name)

    def _read(self, first: int, end: int) -> list[tuple[int, RowValues]] | None:
        """The rows of time values ``[first, end)`` with their ordinals, checked whole, one
        a time value; None otherwise (the full read logs and sorts out what is wrong)."""
        assert self.rows is not None and self.sdef is not None
        damaged: list[bytes] = []
        scanned = list_whole_rows(self.rows.partitions, self.decoder.columns,
                                  self._prefix(first), prefix_successor(self._prefix(end - 1)),
                                  on_damaged=lambda key, why: damaged.append(key))
        if damaged or not whole_rows(self.decoder.check, scanned, with_keys=True):
            return None
        found = [v for _, v in scanned]
        ordinals = strict_ordinals(self.decoder.period, [v[2] for v in found], self.sdef.tz)
        known = [o for o in ordinals if o is not None]
        if len(known) != len(found) or any(a >= b for a, b in pairwise(known)):
            return None
        return list(zip(known, found, strict=True))

    def _put(self, ordinal: int, fresh: list[tuple[int, RowValues]]) -> None:
        """The row (or none) of one time value read again: its chunk repacked."""
        if ordinal < self.first or ordinal >= self.end:
            return
        at = max(bisect_right(self.starts, ordinal) - 1, 0)
        ordinals, packed = self.chunks[at]
        kept = [(o, v) for o, v in zip(ordinals, packed, strict=True) if o != ordinal] + fresh
        kept.sort(key=lambda item: item[0])
        self.chunks[at] = (array("q", [o for o, _ in kept]),
                           PackedRows([v for _, v in kept], len(self.decoder.columns)))


__all__ = ["PATCH_MAX", "ChainRows", "TimeRows"]
