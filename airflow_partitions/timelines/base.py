"""The partition timeline interface: which partitions of one (table, period, column) exist.

Implementations keep integer ordinals (see :mod:`airflow_partitions.periods`) and differ only in
memory and speed; every query answers identically. Their common model is the list of maximal
contiguous ordinal ranges, which is also what the cover consumes and what migration goes through.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar, Self

from airflow_partitions.errors import CorruptTimeline, MixedPeriods
from airflow_partitions.periods import (
    UTC,
    TimePartition,
    TimePartitionRange,
    TzLike,
    UpdatePeriod,
    fast_ordinal,
    fast_ordinal_near,
    zone,
    zone_name,
)
from airflow_partitions.timelines.properties import (
    CorruptProperty,
    storage_class_key,
    timeline_prefix,
)

OrdinalRange = tuple[int, int]  # half-open [begin, end)


def runs(ordinals: Iterable[int]) -> list[OrdinalRange]:
    """Maximal contiguous half-open ranges of sorted, distinct ordinals."""
    out: list[OrdinalRange] = []
    begin = end = None
    for o in ordinals:
        if end is not None and o == end:
            end += 1
            continue
        if begin is not None and end is not None:
            out.append((begin, end))
        begin, end = o, o + 1
    if begin is not None and end is not None:
        out.append((begin, end))
    return out


def union_ranges(a: Iterable[OrdinalRange], b: Iterable[OrdinalRange]) -> list[OrdinalRange]:
    """Union of two range lists, merged into maximal ranges."""
    merged: list[OrdinalRange] = []
    for begin, end in sorted([*a, *b]):
        if merged and begin <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((begin, end))
    return merged


def difference_ranges(a: Iterable[OrdinalRange],
                      b: Iterable[OrdinalRange]) -> list[OrdinalRange]:
    """The parts of sorted, disjoint ranges ``a`` outside sorted, disjoint ranges ``b``.

    >>> difference_ranges([(0, 10), (12, 14)], [(2, 4), (7, 8), (13, 20)])
    [(0, 2), (4, 7), (8, 10), (12, 13)]
    """
    cut = list(b)
    out: list[OrdinalRange] = []
    j = 0
    for begin, end in a:
        while j < len(cut) and cut[j][1] <= begin:
            j += 1
        k, at = j, begin
        while k < len(cut) and cut[k][0] < end:
            if cut[k][0] > at:
                out.append((at, cut[k][0]))
            at = max(at, cut[k][1])
            k += 1
        if at < end:
            out.append((at, end))
    return out


class PartitionTimeline(abc.ABC):
    """Which time partitions of one period exist, for one (storage table, period, column)."""

    #: Short name used in the ``storage.class`` property and on the command line.
    kind: ClassVar[str]
    #: The Apache Lens class name, accepted on read for compatibility.
    lens_class: ClassVar[str]

    def __init__(self, period: UpdatePeriod | str, column: str = "dt", tz: TzLike = "UTC"):
        self.period = UpdatePeriod.of(period)
        self.column = column
        self.tz = zone_name(zone(tz)) or "UTC"
        # What parse hands the fast parser: the period's name and the zone, resolved once
        # (UTC as the constant it knows without asking the zone its name).
        self._parse_as = (self.period.name, UTC if self.tz == "UTC" else zone(self.tz))

    # -- ordinal-level operations the implementations provide -----------------------------------

    @abc.abstractmethod
    def add_ordinal(self, ordinal: int) -> bool:
        """Add one partition; return whether anything changed."""

    @abc.abstractmethod
    def drop_ordinal(self, ordinal: int) -> bool:
        """Drop one partition; absent partitions are a no-op returning False."""

    @abc.abstractmethod
    def exists_ordinal(self, ordinal: int) -> bool:
        """Whether the partition exists."""

    @abc.abstractmethod
    def first_ordinal(self) -> int | None:
        """The earliest existing ordinal."""

    @abc.abstractmethod
    def latest_ordinal(self) -> int | None:
        """The latest existing ordinal."""

    @abc.abstractmethod
    def ordinal_ranges(self, lo: int | None = None, hi: int | None = None) -> list[OrdinalRange]:
        """Maximal existing ranges clipped to ``[lo, hi)``; costs O(ranges or holes inside)."""

    @abc.abstractmethod
    def replace_ranges(self, ranges: list[OrdinalRange]) -> None:
        """Reset the contents to exactly these maximal, sorted, disjoint ranges.

        The common range model every kind converts through (``factory.convert``).
        """

    @abc.abstractmethod
    def is_consistent(self) -> bool:
        """Whether the internal structure satisfies its invariants."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """How many partitions exist."""

    @abc.abstractmethod
    def _content_properties(self) -> dict[str, str]:
        """The implementation's own properties, keys relative to the timeline prefix."""

    @abc.abstractmethod
    def _load_content(self, props: Mapping[str, str]) -> None:
        """Fill an empty timeline from relative properties; raise CorruptTimeline on bad input."""

    # -- the public, partition-level API ---------------------------------------------------------

    def _ordinal_of(self, partition: TimePartition) -> int:
        if partition.period is not self.period or partition.tz != self.tz:
            raise MixedPeriods(
                f"{partition!r} does not belong to the {self.period.name} timeline of "
                f"{self.column!r} in {self.tz}"
            )
        return partition.ordinal

    def _partition(self, ordinal: int) -> TimePartition:
        return TimePartition(self.period, ordinal, self.tz)

    def add(self, partition: TimePartition) -> bool:
        """Add a partition; return whether the timeline changed."""
        return self.add_ordinal(self._ordinal_of(partition))

    def add_all(self, partitions: Iterable[TimePartition]) -> bool:
        """Add many partitions in one pass (sort once, merge ranges); return whether it changed."""
        ordinals = sorted({self._ordinal_of(p) for p in partitions})
        return self.add_ordinal_ranges(runs(ordinals))

    def add_ordinal_ranges(self, ranges: Iterable[OrdinalRange]) -> bool:
        """Bulk add of whole ranges, merged with the existing ranges."""
        new = [r for r in ranges if r[0] < r[1]]
        if not new:
            return False
        before = self.ordinal_ranges()
        merged = union_ranges(before, new)
        if merged == before:
            return False
        self.replace_ranges(merged)
        return True

    def drop(self, partition: TimePartition) -> bool:
        """Drop a partition; dropping an absent one is a no-op returning False."""
        return self.drop_ordinal(self._ordinal_of(partition))

    def exists(self, partition: TimePartition) -> bool:
        """Whether the partition exists."""
        return self.exists_ordinal(self._ordinal_of(partition))

    def first(self) -> TimePartition | None:
        """The earliest partition, or None when empty."""
        o = self.first_ordinal()
        return None if o is None else self._partition(o)

    def latest(self) -> TimePartition | None:
        """The latest partition, or None when empty."""
        o = self.latest_ordinal()
        return None if o is None else self._partition(o)

    def is_empty(self) -> bool:
        """Whether no partition exists."""
        return self.first_ordinal() is None

    def ranges(self) -> list[TimePartitionRange]:
        """The maximal contiguous ranges of existing partitions, in order."""
        return [
            TimePartitionRange(self._partition(b), self._partition(e))
            for b, e in self.ordinal_ranges()
        ]

    def __iter__(self) -> Iterator[TimePartition]:
        for begin, end in self.ordinal_ranges():
            for o in range(begin, end):
                yield self._partition(o)

    def __eq__(self, other: object) -> bool:
        """Same partitions of the same (period, column, zone), whatever the implementation."""
        if not isinstance(other, PartitionTimeline):
            return NotImplemented
        return (
            (self.period, self.column, self.tz) == (other.period, other.column, other.tz)
            and self.ordinal_ranges() == other.ordinal_ranges()
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        shown = ", ".join(str(r) for r in self.ranges()[:5])
        more = " ..." if len(self.ordinal_ranges()) > 5 else ""
        return f"{type(self).__name__}({self.period.name}, {self.column!r}, [{shown}{more}])"

    # -- properties ------------------------------------------------------------------------------

    @classmethod
    def names(cls, name: str) -> bool:
        """Whether ``name`` (short, Lens or Python class name; any case) means this class."""
        wanted = name.strip().lower()
        return wanted in (cls.kind.lower(), cls.lens_class.lower(), cls.__name__.lower())

    def format(self, ordinal: int) -> str:
        """The value string of an ordinal in this timeline's period and zone."""
        return self.period.format_ordinal(ordinal, self.tz)

    def parse(self, value: str, key: str) -> int:
        """Parse a stored value, reporting which property held a bad one. Cost: the fast
        parser's (:func:`~airflow_partitions.periods.fast_ordinal`) for a usual value; the
        strict parser decides the others."""
        found = fast_ordinal(self._parse_as[0], value, self._parse_as[1])
        if found is not None:
            return found
        try:
            return self.period.strict_ordinal(value, self.tz)
        except ValueError as exc:
            raise CorruptProperty(key, f"property {key!r} holds a bad value: {exc}") from None

    def parse_near(self, value: str, known: str, ordinal: int, key: str) -> int:
        """:meth:`parse` of ``value``, which may be ``known`` (this timeline's text of
        ``ordinal``) with its last field changed: then, in UTC, read from it
        (:func:`~airflow_partitions.periods.fast_ordinal_near`), else parsed."""
        if self._parse_as[1] is UTC:
            found = fast_ordinal_near(self._parse_as[0], value, known, ordinal)
            if found is not None:
                return found
        return self.parse(value, key)

    def to_properties(self) -> dict[str, str]:
        """Lens-compatible properties with full key names, including ``storage.class``."""
        prefix = timeline_prefix(self.period.name, self.column)
        out = {prefix + k: v for k, v in self._content_properties().items()}
        out[storage_class_key(self.period.name, self.column)] = self.lens_class
        return out

    @classmethod
    def from_properties(
        cls,
        props: Mapping[str, str],
        period: UpdatePeriod | str,
        column: str = "dt",
        tz: TzLike = "UTC",
    ) -> Self:
        """Build this implementation from properties; corrupt input raises, never half-builds.

        A ``storage.class`` that names another implementation (or none) is corrupt: these
        properties describe a different timeline, and reading them as this one would drop it.
        """
        timeline = cls(period, column, tz)
        prefix = timeline_prefix(timeline.period.name, column)
        named = props.get(storage_class_key(timeline.period.name, column))
        if named is not None and named.strip() and not cls.names(named):
            raise CorruptProperty(
                f"{prefix}storage.class",
                f"{prefix}storage.class is {named!r}, which is not the {cls.kind} "
                "implementation being loaded",
            )
        relative = {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}
        try:
            timeline._load_content(relative)
        except CorruptProperty as exc:  # name the key in full: the caller has no prefix
            raise CorruptProperty(prefix + exc.key, exc.message) from None
        if not timeline.is_consistent():
            raise CorruptTimeline(f"{prefix}* properties describe an inconsistent timeline")
        return timeline
