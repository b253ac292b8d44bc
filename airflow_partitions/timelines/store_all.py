"""StoreAll: every existing partition in a sorted set. Best for few, widely spaced partitions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sortedcontainers import SortedSet

from airflow_partitions.periods import TzLike, UpdatePeriod
from airflow_partitions.timelines.base import OrdinalRange, PartitionTimeline, runs
from airflow_partitions.timelines.properties import CorruptProperty, decode_items, encode_chunks


class StoreAllTimeline(PartitionTimeline):
    """Keeps every ordinal; memory grows with the number of partitions."""

    kind = "StoreAll"
    lens_class = "org.apache.lens.cube.metadata.timeline.StoreAllPartitionTimeline"

    def __init__(self, period: UpdatePeriod | str, column: str = "dt", tz: TzLike = "UTC"):
        super().__init__(period, column, tz)
        self._values: SortedSet = SortedSet()

    def add_ordinal(self, ordinal: int) -> bool:
        if ordinal in self._values:
            return False
        self._values.add(ordinal)
        return True

    def add_ordinal_ranges(self, ranges: Iterable[OrdinalRange]) -> bool:
        before = len(self._values)
        for begin, end in ranges:
            self._values.update(range(begin, end))
        return len(self._values) != before

    def drop_ordinal(self, ordinal: int) -> bool:
        if ordinal not in self._values:
            return False
        self._values.remove(ordinal)
        return True

    def exists_ordinal(self, ordinal: int) -> bool:
        return ordinal in self._values

    def first_ordinal(self) -> int | None:
        return int(self._values[0]) if self._values else None

    def latest_ordinal(self) -> int | None:
        return int(self._values[-1]) if self._values else None

    def ordinal_ranges(self, lo: int | None = None, hi: int | None = None) -> list[OrdinalRange]:
        return runs(self._values.irange(lo, hi, inclusive=(True, False)))

    def replace_ranges(self, ranges: list[OrdinalRange]) -> None:
        self._values = SortedSet(o for b, e in ranges for o in range(b, e))

    def is_consistent(self) -> bool:
        return True

    def __len__(self) -> int:
        return len(self._values)

    def _content_properties(self) -> dict[str, str]:
        return encode_chunks("partitions", (self.format(o) for o in self._values))

    def _load_content(self, props: Mapping[str, str]) -> None:
        ordinals: SortedSet = SortedSet()
        for text, key in decode_items(props, "partitions"):
            ordinal = self.parse(text, key)
            if ordinal in ordinals:
                raise CorruptProperty(key, "the StoreAll partitions list holds duplicates")
            ordinals.add(ordinal)
        self._values = ordinals
