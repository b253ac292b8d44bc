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
    decode_items_under,
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
        return _ranges_content(self.period, self.tz, self.ordinal_ranges())

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

    def patched(self, before: Mapping[str, str], after: Mapping[str, str]
                ) -> RangesTimeline | None:
        """The timeline ``after`` describes, made from this one (decoded from ``before``) by
        removing the ranges only ``before`` lists and inserting those only ``after`` lists;
        ``None`` when that is not one certain step (then decode ``after`` in full, which also
        names what is wrong with it). The result equals a full decode of ``after``.

        Why: a registration changes one range or two of a sparse history or of a slice; this
        costs a list copy, a set comparison of the range texts (C) and a parse per changed
        range, where a full decode parses every range.

        >>> d = UpdatePeriod.DAILY.parse_ordinal("2015-01-01", "UTC")
        >>> t = RangesTimeline("DAILY")
        >>> t.replace_ranges([(d, d + 3), (d + 5, d + 6)])
        >>> before = t.to_properties()
        >>> u = RangesTimeline("DAILY"); u.replace_ranges([(d, d + 3), (d + 5, d + 7)])
        >>> [(b - d, e - d) for b, e in t.patched(before, u.to_properties()).ordinal_ranges()]
        [(0, 3), (5, 7)]
        """
        prefix = timeline_prefix(self.period.name, self.column)
        named = after.get(storage_class_key(self.period.name, self.column))
        if named is not None and named.strip() and not self.names(named):
            return None
        try:
            now = _bound_pairs(decode_items_under(after, prefix, "ranges"))
            was = _bound_pairs(decode_items_under(before, prefix, "ranges"))
            if now is None or was is None or len(set(now)) != len(now):
                return None
            out = self.copy()
            for pair in set(was) - set(now):
                begin, end = self._range(*pair)
                i = out._index(begin)
                if i < 0 or out._begins[i] != begin or out._ends[i] != end:
                    return None
                del out._begins[i], out._ends[i]
                out._count -= end - begin
            for pair in sorted(set(now) - set(was), key=lambda p: self._range(*p)):
                begin, end = self._range(*pair)
                i = out._index(begin) + 1
                if begin >= end or (i > 0 and out._ends[i - 1] >= begin) \
                        or (i < len(out._begins) and out._begins[i] <= end):
                    return None
                out._begins.insert(i, begin)
                out._ends.insert(i, end)
                out._count += end - begin
        except CorruptProperty:
            return None
        return out if len(out._begins) == len(now) else None

    def _range(self, begin: Item, end: Item) -> OrdinalRange:
        """One range from its two bound items (Lens's ``TimePartitionRange.parseFrom``)."""
        (begin_text, begin_key), (end_text, end_key) = begin, end
        begin_value, begin_shift = split_begin(begin_text)
        end_value, end_shift = split_end(end_text)
        return (self.parse(begin_value, begin_key) + begin_shift,
                self.parse(end_value, end_key) + end_shift)


def _bound_pairs(items: list[Item]) -> list[tuple[Item, Item]] | None:
    """A ranges list's bounds as (begin, end) pairs of texts (each named ``ranges`` for
    errors: only a full decode reports them); None for an odd count."""
    if len(items) % 2:
        return None
    texts = [(text, "ranges") for text, _ in items]
    return list(zip(texts[0::2], texts[1::2], strict=True))
