"""The in-memory model shared by Ranges and EndsAndHoles: maximal ranges in two sorted lists.

The two differ only in how they write themselves as properties. Keeping both in ranges means
no registration pattern can blow up memory or time: one partition ten years past the last costs
one more range, not 87,600 holes.

Why plain lists (the begins and the ends, searched by bisection) rather than a sorted map: a
reader that decoded a timeline once takes a private copy to patch after a write
(:meth:`RangeSetTimeline.copy`), and a list copy is one ``memcpy``; a sorted map is copied a
Python object at a time (about 50 times slower at 2,000 ranges).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Self

from airflow_partitions.periods import TzLike, UpdatePeriod
from airflow_partitions.timelines.base import OrdinalRange, PartitionTimeline


class RangeSetTimeline(PartitionTimeline):
    """Maximal half-open ranges ``[begins[i], ends[i])``, sorted and disjoint, never touching.

    Exists is O(log r) for r ranges; add and drop are O(log r) plus one list insert or delete
    (a ``memmove`` of up to r pointers); ``ordinal_ranges`` is O(log r + answer); ``copy`` is
    O(r) at ``memcpy`` speed. Subclasses provide ``kind``, ``lens_class`` and the properties
    codec.

    >>> from airflow_partitions.timelines import RangesTimeline
    >>> t = RangesTimeline("HOURLY")
    >>> [t.add_ordinal(o) for o in (1, 2, 5)]
    [True, True, True]
    >>> t.ordinal_ranges(), t.drop_ordinal(1), t.ordinal_ranges()
    ([(1, 3), (5, 6)], True, [(2, 3), (5, 6)])
    """

    def __init__(self, period: UpdatePeriod | str, column: str = "dt", tz: TzLike = "UTC"):
        super().__init__(period, column, tz)
        self._begins: list[int] = []
        self._ends: list[int] = []
        self._count = 0

    def copy(self) -> Self:
        """An independent timeline with the same ranges: O(r), two list copies.

        >>> from airflow_partitions.timelines import RangesTimeline
        >>> t = RangesTimeline("DAILY"); _ = t.add_ordinal(3)
        >>> c = t.copy(); _ = c.add_ordinal(9)
        >>> t.ordinal_ranges(), c.ordinal_ranges()
        ([(3, 4)], [(3, 4), (9, 10)])
        """
        out = type(self)(self.period, self.column, self.tz)
        out._begins = self._begins[:]
        out._ends = self._ends[:]
        out._count = self._count
        return out

    def _index(self, ordinal: int) -> int:
        """The index of the range that would hold ``ordinal`` (-1 when none starts at or
        before it)."""
        return bisect_right(self._begins, ordinal) - 1

    def add_ordinal(self, ordinal: int) -> bool:
        begins, ends = self._begins, self._ends
        i = self._index(ordinal)
        if i >= 0 and ordinal < ends[i]:
            return False
        joins_left = i >= 0 and ends[i] == ordinal
        joins_right = i + 1 < len(begins) and begins[i + 1] == ordinal + 1
        if joins_left and joins_right:
            ends[i] = ends[i + 1]
            del begins[i + 1], ends[i + 1]
        elif joins_left:
            ends[i] = ordinal + 1
        elif joins_right:
            begins[i + 1] = ordinal
        else:
            begins.insert(i + 1, ordinal)
            ends.insert(i + 1, ordinal + 1)
        self._count += 1
        return True

    def drop_ordinal(self, ordinal: int) -> bool:
        begins, ends = self._begins, self._ends
        i = self._index(ordinal)
        if i < 0 or ordinal >= ends[i]:
            return False
        begin, end = begins[i], ends[i]
        if begin == ordinal and end == ordinal + 1:
            del begins[i], ends[i]
        elif begin == ordinal:
            begins[i] = ordinal + 1
        elif end == ordinal + 1:
            ends[i] = ordinal
        else:
            ends[i] = ordinal
            begins.insert(i + 1, ordinal + 1)
            ends.insert(i + 1, end)
        self._count -= 1
        return True

    def exists_ordinal(self, ordinal: int) -> bool:
        i = self._index(ordinal)
        return i >= 0 and ordinal < self._ends[i]

    def first_ordinal(self) -> int | None:
        return self._begins[0] if self._begins else None

    def latest_ordinal(self) -> int | None:
        return self._ends[-1] - 1 if self._ends else None

    def range_count(self) -> int:
        """How many maximal ranges; O(1)."""
        return len(self._begins)

    def ordinal_ranges(self, lo: int | None = None, hi: int | None = None) -> list[OrdinalRange]:
        begins, ends = self._begins, self._ends
        start = 0 if lo is None else max(self._index(lo), 0)
        stop = len(begins) if hi is None else bisect_right(begins, hi - 1)
        out = list(zip(begins[start:stop], ends[start:stop], strict=True))
        if out and lo is not None and out[0][0] < lo:
            out[0] = (lo, out[0][1])
        if out and hi is not None and out[-1][1] > hi:
            out[-1] = (out[-1][0], hi)
        if out and out[0][0] >= out[0][1]:
            del out[0]
        return out

    def replace_ranges(self, ranges: list[OrdinalRange]) -> None:
        self._begins = [b for b, _ in ranges]
        self._ends = [e for _, e in ranges]
        self._count = sum(e - b for b, e in ranges)

    def is_consistent(self) -> bool:
        prev_end: int | None = None
        count = 0
        if len(self._begins) != len(self._ends):
            return False
        for begin, end in zip(self._begins, self._ends, strict=True):
            if begin >= end or (prev_end is not None and begin <= prev_end):
                return False
            prev_end = end
            count += end - begin
        return count == self._count

    def __len__(self) -> int:
        return self._count
