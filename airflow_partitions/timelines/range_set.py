"""The in-memory model shared by Ranges and EndsAndHoles: maximal ranges in a sorted map.

The two differ only in how they write themselves as properties. Keeping both in ranges means
no registration pattern can blow up memory or time: one partition ten years past the last costs
one more range, not 87,600 holes.
"""

from __future__ import annotations

from sortedcontainers import SortedDict

from airflow_partitions.periods import TzLike, UpdatePeriod
from airflow_partitions.timelines.base import OrdinalRange, PartitionTimeline


class RangeSetTimeline(PartitionTimeline):
    """A sorted map ``begin -> end`` of maximal half-open ranges, searched by bisection.

    Add, drop and exists are O(log r) for r ranges; ``ordinal_ranges`` is O(log r + answer).
    Subclasses provide ``kind``, ``lens_class`` and the properties codec.
    """

    def __init__(self, period: UpdatePeriod | str, column: str = "dt", tz: TzLike = "UTC"):
        super().__init__(period, column, tz)
        self._ranges: SortedDict = SortedDict()
        self._count = 0

    def _containing(self, ordinal: int) -> OrdinalRange | None:
        i = self._ranges.bisect_right(ordinal) - 1
        if i < 0:
            return None
        begin, end = self._ranges.peekitem(i)
        return (begin, end) if ordinal < end else None

    def add_ordinal(self, ordinal: int) -> bool:
        if self._containing(ordinal) is not None:
            return False
        begin, end = ordinal, ordinal + 1
        left = self._containing(ordinal - 1)
        if left is not None:
            begin = left[0]
        right_end = self._ranges.pop(ordinal + 1, None)
        if right_end is not None:
            end = right_end
        self._ranges[begin] = end
        self._count += 1
        return True

    def drop_ordinal(self, ordinal: int) -> bool:
        found = self._containing(ordinal)
        if found is None:
            return False
        begin, end = found
        del self._ranges[begin]
        if begin < ordinal:
            self._ranges[begin] = ordinal
        if ordinal + 1 < end:
            self._ranges[ordinal + 1] = end
        self._count -= 1
        return True

    def exists_ordinal(self, ordinal: int) -> bool:
        return self._containing(ordinal) is not None

    def first_ordinal(self) -> int | None:
        return int(self._ranges.peekitem(0)[0]) if self._ranges else None

    def latest_ordinal(self) -> int | None:
        return int(self._ranges.peekitem(-1)[1]) - 1 if self._ranges else None

    def range_count(self) -> int:
        """How many maximal ranges; O(1)."""
        return len(self._ranges)

    def ordinal_ranges(self, lo: int | None = None, hi: int | None = None) -> list[OrdinalRange]:
        start = 0 if lo is None else max(self._ranges.bisect_right(lo) - 1, 0)
        out: list[OrdinalRange] = []
        keys = self._ranges.keys()
        for i in range(start, len(keys)):
            begin = keys[i]
            if hi is not None and begin >= hi:
                break
            end = self._ranges[begin]
            b = begin if lo is None else max(begin, lo)
            e = end if hi is None else min(end, hi)
            if b < e:
                out.append((b, e))
        return out

    def replace_ranges(self, ranges: list[OrdinalRange]) -> None:
        self._ranges = SortedDict(ranges)
        self._count = sum(e - b for b, e in ranges)

    def is_consistent(self) -> bool:
        prev_end: int | None = None
        count = 0
        for begin, end in self._ranges.items():
            if begin >= end or (prev_end is not None and begin <= prev_end):
                return False
            prev_end = end
            count += end - begin
        return count == self._count

    def __len__(self) -> int:
        return self._count
