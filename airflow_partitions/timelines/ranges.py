"""Ranges: sorted, disjoint, maximal half-open ranges of existing partitions.

Stored size grows with the number of runs, whatever the gaps between them: the representation
the catalog switches a sparse EndsAndHoles timeline to.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.timelines.properties import decode_chunks, encode_chunks
from airflow_partitions.timelines.range_set import RangeSetTimeline


class RangesTimeline(RangeSetTimeline):
    """Stored as ``ranges``: each maximal range as ``begin,end`` (end exclusive)."""

    kind = "Ranges"
    lens_class = "org.apache.lens.cube.metadata.timeline.RangesPartitionTimeline"

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
