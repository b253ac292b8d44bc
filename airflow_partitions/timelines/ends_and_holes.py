"""EndsAndHoles (the default): first, latest and the missing partitions between them.

Compact for the usual long, nearly complete history. In memory it is a set of ranges like
Ranges (so one partition ten years past the last costs one range, not a hole per hour); only
its properties list every hole, as Lens does. The catalog switches a timeline whose holes far
outnumber its ranges to Ranges (see :func:`airflow_partitions.timelines.shape.is_sparse`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import pairwise

from airflow_partitions.timelines.base import OrdinalRange, runs
from airflow_partitions.timelines.properties import (
    CorruptProperty,
    Item,
    decode_items,
    encode_chunks,
)
from airflow_partitions.timelines.range_set import RangeSetTimeline


class EndsAndHolesTimeline(RangeSetTimeline):
    """Stored as ``first``, ``latest`` and the ``holes`` between them."""

    kind = "EndsAndHoles"
    lens_class = "org.apache.lens.cube.metadata.timeline.EndsAndHolesPartitionTimeline"

    def hole_count(self) -> int:
        """Missing partitions between first and latest; O(1).

        >>> t = EndsAndHolesTimeline("DAILY")
        >>> t.add_ordinal(10), t.add_ordinal(14)
        (True, True)
        >>> t.hole_count()
        3
        """
        first, latest = self.first_ordinal(), self.latest_ordinal()
        return 0 if first is None or latest is None else latest - first + 1 - len(self)

    def _holes(self) -> Iterator[int]:
        for (_, gap_begin), (gap_end, _) in pairwise(self._ranges.items()):
            yield from range(gap_begin, gap_end)

    def _content_properties(self) -> dict[str, str]:
        """As Lens writes them: ``first`` and ``latest`` are ``""`` when the timeline is empty."""
        out = encode_chunks("holes", (self.format(o) for o in self._holes()))
        first, latest = self.first_ordinal(), self.latest_ordinal()
        out["first"] = "" if first is None else self.format(first)
        out["latest"] = "" if latest is None else self.format(latest)
        return out

    def _load_content(self, props: Mapping[str, str]) -> None:
        """Empty (or blank) ``first``/``latest`` mean none, as in Lens (it writes them so)."""
        first = (props.get("first") or "").strip() or None
        latest = (props.get("latest") or "").strip() or None
        items = decode_items(props, "holes")
        holes = self._parse_holes(items)
        if (first is None) != (latest is None):
            missing = "latest" if latest is None else "first"
            raise CorruptProperty(
                missing, "EndsAndHoles properties hold only one of first and latest")
        if first is None or latest is None:
            if holes:
                raise CorruptProperty(items[0][1], "an empty EndsAndHoles timeline lists holes")
            return
        lo, hi = self.parse(first, "first"), self.parse(latest, "latest")
        if lo > hi:
            raise CorruptProperty("first", f"first {first} is after latest {latest}")
        order = sorted(range(len(holes)), key=holes.__getitem__)
        for a, b in pairwise(order):
            if holes[a] == holes[b]:
                raise CorruptProperty(items[b][1], "the EndsAndHoles holes list holds duplicates")
        for i in order[:1] + order[-1:]:
            if not lo < holes[i] < hi:
                raise CorruptProperty(items[i][1], f"a hole lies outside ({first}, {latest})")
        self.replace_ranges(_between(lo, hi + 1, runs(sorted(holes))))

    def _parse_holes(self, items: list[Item]) -> list[int]:
        """Ordinals of the hole strings, formatting a guess before parsing in full.

        Why: holes come in runs, and checking that a string equals the formatted successor of
        the previous hole costs a third of a strict parse while proving the same thing (the
        formatted value is canonical). E.g. after ``2015-01-01-05`` the guess for the next
        string is ``2015-01-01-06``; any other string is parsed (and validated) in full.
        """
        out: list[int] = []
        for text, key in items:
            if out and text == self.format(out[-1] + 1):
                out.append(out[-1] + 1)
            else:
                out.append(self.parse(text, key))
        return out


def _between(begin: int, end: int, holes: list[OrdinalRange]) -> list[OrdinalRange]:
    """The ranges of ``[begin, end)`` left after cutting out sorted hole runs.

    >>> _between(0, 10, [(2, 4), (7, 8)])
    [(0, 2), (4, 7), (8, 10)]
    """
    out: list[OrdinalRange] = []
    for hole_begin, hole_end in holes:
        out.append((begin, hole_begin))
        begin = hole_end
    out.append((begin, end))
    return out
