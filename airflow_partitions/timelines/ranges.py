"""Ranges: sorted, disjoint, maximal half-open ranges of existing partitions.

Best when data arrives in a few long runs with long gaps: memory grows with the number of runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

from sortedcontainers import SortedDict

from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.periods import TzLike, UpdatePeriod
from airflow_partitions.timelines.base import OrdinalRange, PartitionTimeline
from airflow_partitions.timelines.properties import decode_chunks, encode_chunks


class RangesTimeline(PartitionTimeline):
    """A sorted map ``begin -> end`` of maximal ranges, searched by bisection."""

    kind = "Ranges"
    lens_class = "org.apache.lens.cube.metadata.timeline.RangesPartitionTimeline"

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

    def _content_properties(self) -> dict[str, str]:
        return encode_chunks(
            "ranges", (f"{self.format(b)},{self.format(e)}" for b, e in self._ranges.items())
        )

    def _load_content(self, props: Mapping[str, str]) -> None:
        flat = decode_chunks(props, "ranges")
        if len(flat) % 2:
            raise CorruptTimeline("the ranges list has an odd number of bounds")
        pairs = [
            (self.parse(flat[i], "ranges"), self.parse(flat[i + 1], "ranges"))
            for i in range(0, len(flat), 2)
        ]
        for (_, end), (begin, _) in pairwise(pairs):
            if begin <= end:
                raise CorruptTimeline("the ranges are unsorted, overlapping or not merged")
        if any(b >= e for b, e in pairs):
            raise CorruptTimeline("the ranges list holds an empty or reversed range")
        self.replace_ranges(pairs)
