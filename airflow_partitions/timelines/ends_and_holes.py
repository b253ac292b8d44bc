"""EndsAndHoles (the default): first, latest and the missing partitions between them.

Compact for the usual long, nearly complete history. In memory it is a set of ranges like
Ranges (so one partition ten years past the last costs one range, not a hole per hour); only
its properties list every hole, as Lens does. The catalog switches a timeline whose holes far
outnumber its ranges to Ranges (see :func:`airflow_partitions.timelines.shape.is_sparse`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import pairwise

from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.timelines.base import OrdinalRange, runs
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
        for gap_begin, gap_end in zip(self._ends, self._begins[1:], strict=False):
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

    def patched(self, before: Mapping[str, str], after: Mapping[str, str]
                ) -> EndsAndHolesTimeline | None:
        """The timeline ``after`` describes, made from this one (decoded from ``before``) by
        applying what changed; ``None`` when that is not one cheap, certain step (an empty
        side, a first or latest that moved inwards, anything malformed): then decode
        ``after`` in full, which also names what is wrong with it.

        Why: after one registration a reader meets a cell that differs from the one it decoded
        by a ``latest`` or a hole or two; decoding ten years of holes again costs thousands of
        parses, patching costs a copy (``memcpy``), a comparison of the hole chunks (``memcmp``)
        and a parse per changed hole. The result equals a full decode of ``after``
        (tests/timelines/test_patched.py checks it against one).

        >>> from airflow_partitions.periods import UpdatePeriod
        >>> d = UpdatePeriod.DAILY.parse_ordinal("2015-01-01", "UTC")
        >>> t = EndsAndHolesTimeline("DAILY")
        >>> t.replace_ranges([(d, d + 3), (d + 4, d + 6)])
        >>> before = t.to_properties()
        >>> after = dict(before, **{"cube.storagetable.partition.timeline.cache.DAILY.dt.latest":
        ...                         "2015-01-09"})
        >>> [(b - d, e - d) for b, e in t.patched(before, after).ordinal_ranges()]
        [(0, 3), (4, 9)]
        """
        prefix = timeline_prefix(self.period.name, self.column)
        named = after.get(storage_class_key(self.period.name, self.column))
        if named is not None and named.strip() and not self.names(named):
            return None
        try:
            ends = self._outward_ends(after)
            old_first, old_latest = self.first_ordinal(), self.latest_ordinal()
            if ends is None or old_first is None or old_latest is None:
                return None
            lo, hi = ends
            rest_before = self.properties_but_ends(before)
            rest_after = self.properties_but_ends(after)
            out = self.copy()
            if lo < old_first:
                out._begins[0] = lo
                out._count += old_first - lo
            if hi > old_latest:
                out._ends[-1] = hi + 1
                out._count += hi - old_latest
            listed: int | None = self.hole_count()
            if rest_before != rest_after:
                listed = _patch_holes(out, before, after, prefix, lo, hi)
        except CorruptTimeline:
            return None
        return out if listed is not None and out.hole_count() == listed else None

    def ends_moved_to(self, rest_before: Mapping[str, str], after: Mapping[str, str]
                      ) -> tuple[int, int] | None:
        """``after``'s first and latest ordinals when ``after`` is this timeline's properties
        with only those two moved outwards (or kept); None otherwise (a hole, the kind or
        anything else changed, an end moved inwards or does not parse).

        ``rest_before``: this timeline's properties without ``first`` and ``latest``
        (:meth:`properties_but_ends`). Then ``after`` lists the same holes, which lie between
        the old ends and so between the new ones: it is a valid timeline that equals this one
        plus the partitions between the old and the new ends. Why: a reader that kept an
        answer asks whether a write changed a timeline inside its range without decoding it
        (``catalog/covers/answer_basis.py``). Cost: a dict comparison and two parses.

        >>> from airflow_partitions.periods import UpdatePeriod
        >>> d = UpdatePeriod.DAILY.parse_ordinal("2015-01-01", "UTC")
        >>> t = EndsAndHolesTimeline("DAILY")
        >>> t.replace_ranges([(d, d + 3), (d + 4, d + 6)])
        >>> before = t.to_properties()
        >>> key = "cube.storagetable.partition.timeline.cache.DAILY.dt.latest"
        >>> moved = t.ends_moved_to(t.properties_but_ends(before),
        ...                         dict(before, **{key: "2015-01-09"}))
        >>> [o - d for o in moved]
        [0, 8]
        >>> t.ends_moved_to(t.properties_but_ends(before), dict(before, **{key: "2015-01-02"}))
        """
        if self.properties_but_ends(after) != rest_before:
            return None
        try:
            return self._outward_ends(after)
        except CorruptTimeline:
            return None

    def properties_but_ends(self, properties: Mapping[str, str]) -> dict[str, str]:
        """``properties`` without this timeline's ``first`` and ``latest``."""
        first_key, latest_key = self.end_keys()
        return {k: v for k, v in properties.items() if k not in (first_key, latest_key)}

    def end_keys(self) -> tuple[str, str]:
        """The property keys of this timeline's ``first`` and ``latest``."""
        prefix = timeline_prefix(self.period.name, self.column)
        return prefix + "first", prefix + "latest"

    def outward_ends(self, first: str, latest: str, stored: tuple[str, str] = ("", ""),
                     ends: tuple[int, int] | None = None) -> tuple[int, int] | None:
        """The ordinals of the texts ``first`` and ``latest`` (as stored) when both lie on or
        outside the ends compared with; None when either is empty, this timeline is empty, or
        an end lies inside. A bad value raises ``CorruptTimeline``.

        The ends compared with are ``ends`` (ordinals of this period) or this timeline's own;
        ``stored``: their texts as a cell holds them, which are not parsed again, and an end
        moved within its last field (the next hour of a day) is read against its text
        (:meth:`parse_near`). Cost: at most two parses (a reader proving an answer after each
        registration elsewhere calls this).
        """
        first, latest = first.strip(), latest.strip()
        if not first or not latest or not self._begins:
            return None
        old_first, old_latest = (self._begins[0], self._ends[-1] - 1) if ends is None else ends
        lo = old_first if first == stored[0] else self.parse_near(first, stored[0], old_first,
                                                                  "first")
        hi = old_latest if latest == stored[1] else self.parse_near(latest, stored[1],
                                                                    old_latest, "latest")
        if lo > old_first or hi < old_latest:
            return None
        return lo, hi

    def _outward_ends(self, after: Mapping[str, str]) -> tuple[int, int] | None:
        """:meth:`outward_ends` of the ``first`` and ``latest`` properties of ``after``."""
        first_key, latest_key = self.end_keys()
        return self.outward_ends(after.get(first_key) or "", after.get(latest_key) or "")

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


def _patch_holes(out: EndsAndHolesTimeline, before: Mapping[str, str],
                 after: Mapping[str, str], prefix: str, lo: int, hi: int) -> int | None:
    """Turn ``out``'s holes listed only in ``before`` into partitions and those listed only in
    ``after`` into holes (each strictly inside ``(lo, hi)``), and return how many holes
    ``after`` lists; None when that is not possible (a duplicate, a value outside): decode in
    full then. A malformed value raises ``CorruptTimeline``.
    O(holes) set work in C plus a parse per changed hole."""
    now = decode_items_under(after, prefix, "holes")
    now_texts = {text: key for text, key in now}
    if len(now_texts) != len(now):
        return None
    was = {text for text, _ in decode_items_under(before, prefix, "holes")}
    for text in was - now_texts.keys():
        if not out.add_ordinal(out.parse(text, "holes")):
            return None
    for text in now_texts.keys() - was:
        ordinal = out.parse(text, now_texts[text])
        if not lo < ordinal < hi or not out.drop_ordinal(ordinal):
            return None
    return len(now)


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
