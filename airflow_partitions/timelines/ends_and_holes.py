"""EndsAndHoles (the default): first, latest and the missing partitions between them.

Best for the usual case of long, nearly complete histories: memory grows with the holes only.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

from sortedcontainers import SortedSet

from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.periods import TzLike, UpdatePeriod
from airflow_partitions.timelines.base import OrdinalRange, PartitionTimeline
from airflow_partitions.timelines.properties import decode_chunks, encode_chunks


class EndsAndHolesTimeline(PartitionTimeline):
    """``[first, latest]`` minus a sorted set of holes."""

    kind = "EndsAndHoles"
    lens_class = "org.apache.lens.cube.metadata.timeline.EndsAndHolesPartitionTimeline"

    def __init__(self, period: UpdatePeriod | str, column: str = "dt", tz: TzLike = "UTC"):
        super().__init__(period, column, tz)
        self._first: int | None = None
        self._latest: int | None = None
        self._holes: SortedSet = SortedSet()

    def add_ordinal(self, ordinal: int) -> bool:
        if self._first is None or self._latest is None:
            self._first = self._latest = ordinal
            return True
        if ordinal < self._first:
            self._holes.update(range(ordinal + 1, self._first))
            self._first = ordinal
            return True
        if ordinal > self._latest:
            self._holes.update(range(self._latest + 1, ordinal))
            self._latest = ordinal
            return True
        if ordinal in self._holes:
            self._holes.remove(ordinal)
            return True
        return False

    def drop_ordinal(self, ordinal: int) -> bool:
        if not self.exists_ordinal(ordinal):
            return False
        assert self._first is not None and self._latest is not None
        if self._first == self._latest:
            self._first = self._latest = None
        elif ordinal == self._first:
            nxt = ordinal + 1
            while nxt in self._holes:
                self._holes.remove(nxt)
                nxt += 1
            self._first = nxt
        elif ordinal == self._latest:
            prev = ordinal - 1
            while prev in self._holes:
                self._holes.remove(prev)
                prev -= 1
            self._latest = prev
        else:
            self._holes.add(ordinal)
        return True

    def exists_ordinal(self, ordinal: int) -> bool:
        if self._first is None or self._latest is None:
            return False
        return self._first <= ordinal <= self._latest and ordinal not in self._holes

    def first_ordinal(self) -> int | None:
        return self._first

    def latest_ordinal(self) -> int | None:
        return self._latest

    def ordinal_ranges(self, lo: int | None = None, hi: int | None = None) -> list[OrdinalRange]:
        if self._first is None or self._latest is None:
            return []
        begin = self._first if lo is None else max(self._first, lo)
        end = self._latest + 1 if hi is None else min(self._latest + 1, hi)
        out: list[OrdinalRange] = []
        for hole in self._holes.irange(begin, end, inclusive=(True, False)):
            if hole > begin:
                out.append((begin, hole))
            begin = hole + 1
        if begin < end:
            out.append((begin, end))
        return out

    def replace_ranges(self, ranges: list[OrdinalRange]) -> None:
        if not ranges:
            self._first = self._latest = None
            self._holes = SortedSet()
            return
        self._first, self._latest = ranges[0][0], ranges[-1][1] - 1
        self._holes = SortedSet(
            o for (_, gap_begin), (gap_end, _) in pairwise(ranges)
            for o in range(gap_begin, gap_end)
        )

    def is_consistent(self) -> bool:
        if self._first is None or self._latest is None:
            return self._first is None and self._latest is None and not self._holes
        if self._first > self._latest:
            return False
        return not self._holes or (self._first < self._holes[0] and self._holes[-1] < self._latest)

    def __len__(self) -> int:
        if self._first is None or self._latest is None:
            return 0
        return self._latest - self._first + 1 - len(self._holes)

    def _content_properties(self) -> dict[str, str]:
        out = encode_chunks("holes", (self.format(o) for o in self._holes))
        if self._first is not None and self._latest is not None:
            out["first"] = self.format(self._first)
            out["latest"] = self.format(self._latest)
        return out

    def _load_content(self, props: Mapping[str, str]) -> None:
        first, latest = props.get("first"), props.get("latest")
        holes = [self.parse(v, "holes") for v in decode_chunks(props, "holes")]
        if (first is None) != (latest is None):
            raise CorruptTimeline("EndsAndHoles properties hold only one of first and latest")
        if first is None or latest is None:
            if holes:
                raise CorruptTimeline("an empty EndsAndHoles timeline lists holes")
            return
        self._first, self._latest = self.parse(first, "first"), self.parse(latest, "latest")
        self._holes = SortedSet(holes)
        if len(self._holes) != len(holes):
            raise CorruptTimeline("the EndsAndHoles holes list holds duplicates")
        if self._first > self._latest:
            raise CorruptTimeline(f"first {first} is after latest {latest}")
        if self._holes and not (self._first < self._holes[0] and self._holes[-1] < self._latest):
            raise CorruptTimeline(f"a hole lies outside ({first}, {latest})")
