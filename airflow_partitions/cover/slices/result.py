"""Slices and the answer of a slice cover: which partitions each slice reads, what it misses.

A *slice* is one combination of dimension values, kept canonical as a tuple of
``(column, value)`` pairs sorted by column, so two spellings of the same slice compare equal.
Everything here is an immutable value; the computation is :mod:`.slices.compute`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, TypeAlias, TypedDict

from airflow_partitions.cover.clock import from_us, to_us
from airflow_partitions.cover.instant_text import format_instant
from airflow_partitions.cover.missing import NeededJson
from airflow_partitions.cover.result import Cover, CoverRun, MissingRange
from airflow_partitions.cover.slices.missing import NeededIndex
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline

#: One combination of dimension values: ``(("region", "eu"),)``; ``()`` is the slice of a
#: fact without dimensions.
Slice: TypeAlias = tuple[tuple[str, str], ...]
#: A half-open span of instants in microseconds since the epoch.
Span: TypeAlias = tuple[int, int]

#: How many slices a summary names before it counts the rest.
SUMMARY_SLICES: Final = 5


def slice_of(values: Mapping[str, str] | Iterable[tuple[str, str]]) -> Slice:
    """The canonical slice of ``values`` (sorted by column; a column given twice is an error).

    >>> slice_of({"source": "web", "region": "eu"})
    (('region', 'eu'), ('source', 'web'))
    """
    pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
    columns = [c for c, _ in pairs]
    if len(set(columns)) != len(columns):
        raise InvalidInput(f"a slice names a column twice: {pairs!r}")
    for column, value in pairs:
        if not isinstance(column, str) or not isinstance(value, str):
            raise InvalidInput(f"slice columns and values are strings, not {pairs!r}")
    return tuple(sorted(pairs))


def slice_text(slice_: Slice) -> str:
    """``region=eu,source=web``; the slice without dimensions is ``all``.

    >>> slice_text((("region", "eu"),)), slice_text(())
    ('region=eu', 'all')
    """
    return ",".join(f"{c}={v}" for c, v in slice_) or "all"


def agrees(fixed: Slice, slice_: Slice) -> bool:
    """Whether a source carrying ``fixed`` values holds ``slice_``: they agree on every column
    the source fixes (a source that fixes nothing, a rollup, holds every slice)."""
    values = dict(slice_)
    return all(values.get(column) == value for column, value in fixed)


@dataclass(frozen=True)
class SliceSource:
    """A :class:`~.CoverSource` whose partitions carry ``fixed``
    dimension values: a ``(dt, region)`` storage's timeline for ``region=eu`` has
    ``fixed=(("region", "eu"),)``; a rollup without the region column has ``fixed=()``."""

    storage: str
    priority: int
    period: UpdatePeriod
    timeline: PartitionTimeline
    fixed: Slice = ()

    def covers(self, slice_: Slice) -> bool:
        """Whether this source's partitions hold ``slice_``."""
        return agrees(self.fixed, slice_)


@dataclass(frozen=True)
class RequiredSlice:
    """A slice and the spans (microseconds, half-open, sorted, disjoint) it is required in."""

    slice: Slice
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class SliceRun:
    """Consecutive partitions ``[first, end)`` (ordinals) of one storage, period and ``fixed``."""

    storage: str
    period: UpdatePeriod
    first: int
    end: int
    fixed: Slice = ()

    @property
    def count(self) -> int:
        """How many partitions the run holds."""
        return self.end - self.first

    def cover_run(self) -> CoverRun:
        """The run as a time-only :class:`CoverRun` (the dimension values dropped)."""
        return CoverRun(self.storage, self.period, self.first, self.end)

    def to_json(self, tz: str) -> SliceRunJson:
        """``{"storage", "period", "first", "last", "count", "dimensions"}``."""
        return {
            "storage": self.storage,
            "period": self.period.name,
            "first": self.period.format_ordinal(self.first, tz),
            "last": self.period.format_ordinal(self.end - 1, tz),
            "count": self.count,
            "dimensions": dict(self.fixed),
        }


class SliceRunJson(TypedDict):
    storage: str
    period: str
    first: str
    last: str
    count: int
    dimensions: dict[str, str]


class SliceMissingJson(TypedDict):
    dimensions: dict[str, str]
    start: str
    end: str
    needed: list[NeededJson]


class SliceAnswerJson(TypedDict):
    dimensions: dict[str, str]
    coverable: bool
    spans: list[list[str]]
    runs: list[SliceRunJson]
    missing: list[SliceMissingJson]


class SliceCoverJson(TypedDict):
    fact: str | None
    start: str
    end: str
    coverable: bool
    proven_minimal: bool
    partitions: int
    runs: list[SliceRunJson]
    slices: list[SliceAnswerJson]


@dataclass(frozen=True)
class SliceMissing:
    """A maximal missing range of one slice."""

    slice: Slice
    range: MissingRange

    def describe(self) -> str:
        """``missing 2015-01-01T05:00/06:00 for region=eu: no HOURLY 2015-01-01-05``."""
        start, end = self.range.start, self.range.end
        head = f"missing {format_instant(start)}/{format_instant(end, start)}"
        if self.slice:
            head += f" for {slice_text(self.slice)}"
        needed = ", ".join(n.describe() for n in self.range.needed)
        return f"{head}: {needed or 'no partition fits without overlapping the cover'}"

    def to_json(self) -> SliceMissingJson:
        """The slice's values and the :class:`MissingRange` JSON."""
        data = self.range.to_json()
        return {"dimensions": dict(self.slice), "start": data["start"], "end": data["end"],
                "needed": data["needed"]}


@dataclass(frozen=True)
class SliceAnswer:
    """One slice's part of a slice cover: its required spans, its runs, its missing stretches.

    Per slice the runs are disjoint, in time order, and their union is the spans minus the
    ``gaps`` (maximal, microseconds). :attr:`missing` builds the readable ranges on access.
    """

    slice: Slice
    spans: tuple[Span, ...]
    runs: tuple[SliceRun, ...]
    gaps: tuple[Span, ...] = ()
    needed: NeededIndex | None = field(default=None, compare=False, repr=False)

    @property
    def coverable(self) -> bool:
        """Whether nothing of the slice's spans is missing."""
        return not self.gaps

    @property
    def uncovered_us(self) -> int:
        """The missing length in microseconds."""
        return sum(b - a for a, b in self.gaps)

    @property
    def missing(self) -> tuple[MissingRange, ...]:
        """The gaps as :class:`MissingRange` with what would fill them; built on each access:
        O(gaps x periods)."""
        if not self.gaps:
            return ()
        if self.needed is None:
            return tuple(MissingRange(from_us(a, "UTC"), from_us(b, "UTC")) for a, b in self.gaps)
        return self.needed.missing(self.gaps, self.spans)

    def covers(self, tz: str, fact: str | None = None) -> tuple[Cover, ...]:
        """One time-only :class:`Cover` per required span (the stretch between two spans is
        not required, so it is neither covered nor missing).

        Cost: O(runs + missing) plus the spans' instants.
        """
        out = []
        missing = self.missing
        for lo, hi in self.spans:
            runs = [r.cover_run() for r in self.runs if _run_in(r, lo, hi, tz)]
            inside = [m for m in missing if lo <= to_us(m.start) and to_us(m.end) <= hi]
            out.append(Cover(from_us(lo, tz), from_us(hi, tz), runs, inside, tz=tz, fact=fact))
        return tuple(out)

    def to_json(self, tz: str) -> SliceAnswerJson:
        """Plain JSON: the slice's values, spans, runs and missing ranges."""
        return {
            "dimensions": dict(self.slice),
            "coverable": self.coverable,
            "spans": [[from_us(a, tz).isoformat(), from_us(b, tz).isoformat()]
                      for a, b in self.spans],
            "runs": [r.to_json(tz) for r in self.runs],
            "missing": [SliceMissing(self.slice, m).to_json() for m in self.missing],
        }


def _run_in(run: SliceRun, lo: int, hi: int, tz: str) -> bool:
    start = to_us(run.period.start_of(run.first, tz))
    return lo <= start < hi


def duration_text(us: int) -> str:
    """A length for people: ``19 hours``, ``3 days``, ``90 minutes``, ``1 hour``.

    >>> duration_text(19 * 3600 * 10**6), duration_text(3 * 86400 * 10**6)
    ('19 hours', '3 days')
    """
    seconds, rest = divmod(us, 10**6)
    for unit, size in (("day", 86_400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds >= size and seconds % size == 0 and not rest:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{us / 10**6:g} seconds"


@dataclass(frozen=True)
class SliceCover:
    """The answer of :func:`~.slices.compute.compute_slice_cover`.

    ``answers`` holds one :class:`SliceAnswer` per required slice, in slice order. ``runs`` are
    the distinct partitions overall (a rollup partition read by many slices is listed once).
    ``proven_minimal`` is False only where the computation fell back to a documented heuristic
    for the number of partitions (the uncovered length is always minimal).
    """

    start_us: int
    end_us: int
    tz: str
    answers: tuple[SliceAnswer, ...]
    runs: tuple[SliceRun, ...]
    proven_minimal: bool = True
    fact: str | None = None

    @property
    def coverable(self) -> bool:
        """Whether every required slice is coverable over its required spans."""
        return all(a.coverable for a in self.answers)

    @property
    def partition_count(self) -> int:
        """The number of distinct partitions read (objective rule 2)."""
        return sum(r.count for r in self.runs)

    @property
    def uncovered_us(self) -> int:
        """The missing length summed over slices (objective rule 1)."""
        return sum(a.uncovered_us for a in self.answers)

    @property
    def missing(self) -> tuple[SliceMissing, ...]:
        """Every missing range with its slice, slice by slice, in time order (built on
        access: O(gaps x periods))."""
        return tuple(SliceMissing(a.slice, m) for a in self.answers for m in a.missing)

    def answer(self, slice_: Slice) -> SliceAnswer:
        """The answer of one slice (an unknown slice is an :class:`InvalidInput`)."""
        for found in self.answers:
            if found.slice == slice_:
                return found
        raise InvalidInput(f"slice {slice_text(slice_)} is not required by this cover")

    def summary(self, shown: int = SUMMARY_SLICES) -> str:
        """One line for people: ``ev [..): 2 slices, 29 partitions, NOT coverable: 19 hours of
        region=eu missing``; at most ``shown`` slices are named, worst first."""
        start, end = from_us(self.start_us, self.tz), from_us(self.end_us, self.tz)
        n = len(self.answers)
        head = (f"{self.fact + ' ' if self.fact else ''}[{format_instant(start)}, "
                f"{format_instant(end, start)}): {n} slice{'s' if n != 1 else ''}, "
                f"{self.partition_count} partition{'s' if self.partition_count != 1 else ''}")
        if self.coverable:
            return head + ", coverable"
        late = sorted((a for a in self.answers if not a.coverable),
                      key=lambda a: (-a.uncovered_us, a.slice))
        parts = [f"{duration_text(a.uncovered_us)} of {slice_text(a.slice)}" for a in late[:shown]]
        more = f" and {len(late) - shown} more slices" if len(late) > shown else ""
        return f"{head}, NOT coverable: missing {', '.join(parts)}{more}"

    def to_json(self) -> SliceCoverJson:
        """Plain JSON: every distinct run with its dimension values, and every slice's runs
        and missing ranges (complete, however long)."""
        return {
            "fact": self.fact,
            "start": from_us(self.start_us, self.tz).isoformat(),
            "end": from_us(self.end_us, self.tz).isoformat(),
            "coverable": self.coverable,
            "proven_minimal": self.proven_minimal,
            "partitions": self.partition_count,
            "runs": [r.to_json(self.tz) for r in self.runs],
            "slices": [a.to_json(self.tz) for a in self.answers],
        }
