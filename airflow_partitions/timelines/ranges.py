"""Ranges: sorted, disjoint, maximal half-open ranges of existing partitions.

Stored size grows with the number of runs, whatever the gaps between them: the representation
the catalog switches a sparse EndsAndHoles timeline to.

Each range is written as Lens's ``TimePartitionRange.toString()``, ``[2015-01-01, 2015-01-04)``,
and the list is chunked like every other (:mod:`.properties`). Reading splits the list on
``,`` as Lens does, so a range's two bounds are two items, and takes Lens's bracket forms:
``[``/``)`` (or no bracket, the form this project wrote before) keep the bound as it is, ``(``
moves the begin to the next partition and ``]`` moves the end past the bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import pairwise

from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines.base import OrdinalRange
from airflow_partitions.timelines.properties import (
    CorruptProperty,
    Item,
    decode_items,
    encode_chunks,
    storage_class_key,
    timeline_prefix,
)
from airflow_partitions.timelines.range_set import RangeSetTimeline


def split_begin(text: str) -> tuple[str, int]:
    """A begin bound without its bracket, and how far the bracket moves it.

    >>> split_begin("[2015-01-01"), split_begin("(2015-01-01"), split_begin("2015-01-01")
    (('2015-01-01', 0), ('2015-01-01', 1), ('2015-01-01', 0))
    """
    if text[:1] in ("[", "("):
        return text[1:].strip(), int(text[0] == "(")
    return text, 0


def split_end(text: str) -> tuple[str, int]:
    """An end bound without its bracket, and how far the bracket moves it.

    >>> split_end("2015-01-04)"), split_end("2015-01-04]"), split_end("2015-01-04")
    (('2015-01-04', 0), ('2015-01-04', 1), ('2015-01-04', 0))
    """
    if text[-1:] in (")", "]"):
        return text[:-1].strip(), int(text[-1] == "]")
    return text, 0


def _ranges_content(period: UpdatePeriod, tz: str, ranges: Iterable[OrdinalRange]
                    ) -> dict[str, str]:
    return encode_chunks("ranges", (f"[{period.format_ordinal(b, tz)}, "
                                    f"{period.format_ordinal(e, tz)})" for b, e in ranges))


class RangesTimeline(RangeSetTimeline):
    """Stored as ``ranges``: each maximal range as ``[begin, end)`` (end exclusive)."""

    kind = "Ranges"
    lens_class = "org.apache.lens.cube.metadata.timeline.RangesPartitionTimeline"

    def _content_properties(self) -> dict[str, str]:
        return _ranges_content(self.period, self.tz, self._ranges.items())

    @classmethod
    def properties_of(cls, period: UpdatePeriod, column: str, tz: str,
                      ranges: Iterable[OrdinalRange]) -> dict[str, str]:
        """The properties of a Ranges timeline holding exactly ``ranges`` (sorted, disjoint,
        merged; ``tz`` a zone name), without building one: what writing a new timeline costs
        is then its encoding alone (a batch over 10,000 new slices writes 10,000 of them).

        >>> from airflow_partitions.periods import UpdatePeriod
        >>> built = RangesTimeline(UpdatePeriod.HOURLY, "dt", "UTC")
        >>> built.add_ordinal_ranges([(10, 12), (20, 21)])
        True
        >>> RangesTimeline.properties_of(UpdatePeriod.HOURLY, "dt", "UTC",
        ...                              [(10, 12), (20, 21)]) == built.to_properties()
        True
        """
        prefix = timeline_prefix(period.name, column)
        out = {prefix + k: v for k, v in _ranges_content(period, tz, ranges).items()}
        out[storage_class_key(period.name, column)] = cls.lens_class
        return out

    def _load_content(self, props: Mapping[str, str]) -> None:
        items = decode_items(props, "ranges")
        if len(items) % 2:
            raise CorruptProperty(items[-1][1], "the ranges list has an odd number of bounds")
        pairs = [self._range(items[i], items[i + 1]) for i in range(0, len(items), 2)]
        for i, ((_, end), (begin, _)) in enumerate(pairwise(pairs)):
            if begin <= end:
                raise CorruptProperty(items[2 * i + 2][1],
                                      "the ranges are unsorted, overlapping or not merged")
        for i, (begin, end) in enumerate(pairs):
            if begin >= end:
                raise CorruptProperty(items[2 * i][1],
                                      "the ranges list holds an empty or reversed range")
        self.replace_ranges(pairs)

    def _range(self, begin: Item, end: Item) -> OrdinalRange:
        """One range from its two bound items (Lens's ``TimePartitionRange.parseFrom``)."""
        (begin_text, begin_key), (end_text, end_key) = begin, end
        begin_value, begin_shift = split_begin(begin_text)
        end_value, end_shift = split_end(end_text)
        return (self.parse(begin_value, begin_key) + begin_shift,
                self.parse(end_value, end_key) + end_shift)
