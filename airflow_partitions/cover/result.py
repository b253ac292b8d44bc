"""The result of a cover: partitions in time order, missing ranges, their JSON and text forms.

A :class:`Cover` keeps its partitions as *runs* (consecutive ordinals of one storage and period)
so that computing a cover costs O(runs); the per-partition objects are built on first access to
:attr:`Cover.partitions`, which costs O(answer). Covers read back from JSON (XCom) or given
locations keep explicit partitions instead. The missing side (:class:`MissingRange` and what
fills it) lives in :mod:`.missing` and is importable from here too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, NotRequired, TypedDict, cast

import pendulum

from airflow_partitions.cover.instant_text import format_instant
from airflow_partitions.cover.json_fields import iso, json_field, parse_instant
from airflow_partitions.cover.missing import MAX_NEEDED_RUNS as MAX_NEEDED_RUNS
from airflow_partitions.cover.missing import MissingJson
from airflow_partitions.cover.missing import MissingRange as MissingRange
from airflow_partitions.cover.missing import NeededPartitions as NeededPartitions
from airflow_partitions.cover.missing import ValueRun as ValueRun
from airflow_partitions.cover.skipped import SkippedJson, SkippedPartition
from airflow_partitions.cover.slices.summary import lacking_text, slice_lacks
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod

#: How many lines ``str(cover)`` shows for partitions, and for missing ranges.
MAX_STR_RUNS: Final = 12
MAX_STR_MISSING: Final = 6


class CoverPartitionJson(TypedDict):
    """:meth:`CoverPartition.to_json`, a manifest's partition: ``dimensions`` only for a
    partition chosen for one slice."""

    storage: str
    period: str
    value: str
    start: str
    end: str
    location: str | None
    dimensions: NotRequired[dict[str, str]]


class CoverJson(TypedDict):
    """:meth:`Cover.to_json` (the sensor's XCom, the manifest's cover): ``skipped`` and
    ``notes`` only when there are some."""

    fact: str | None
    start: str
    end: str
    coverable: bool
    partitions: list[CoverPartitionJson]
    missing: list[MissingJson]
    skipped: NotRequired[list[SkippedJson]]
    notes: NotRequired[list[str]]
    #: The note saying the request's ``where`` selects no declared slice (also in ``notes``).
    unselected: NotRequired[str]
    #: The sensor's XCom only: the slice filter the cover answered (``CoverRequest.where``),
    #: which a ``cover_from`` operator asks again.
    where: NotRequired[str]


@dataclass(frozen=True)
class CoverPartition:
    """One partition of a cover: ``storage``'s ``period`` partition ``value``, ``[start, end)``."""

    storage: str
    period: UpdatePeriod
    value: str
    ordinal: int
    start: pendulum.DateTime
    end: pendulum.DateTime
    location: str | None = None
    #: The slice whose rows this partition stands for (``(("region", "eu"),)``) when it was
    #: chosen for one slice of a fact with declared dimensions (docs/dimensions.md); ``()``
    #: for a partition that holds every slice (a rollup) or a fact without dimensions.
    dimensions: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> CoverPartitionJson:
        """The manifest form (no ordinal: it is derived from the value); ``"dimensions"`` only
        for a partition chosen for one slice, so covers without slices keep their JSON."""
        out: CoverPartitionJson = {
            "storage": self.storage,
            "period": self.period.name,
            "value": self.value,
            "start": iso(self.start),
            "end": iso(self.end),
            "location": self.location,
        }
        if self.dimensions:
            out["dimensions"] = dict(self.dimensions)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, object], tz: str | None = None) -> CoverPartition:
        """Read :meth:`to_json` back; the ordinal comes from the start instant's own offset."""
        period = UpdatePeriod.of(cast(str, json_field(d, "period", "a partition")))  # checks it
        start = parse_instant(json_field(d, "start", "a partition"), "partition start", tz)
        end = parse_instant(json_field(d, "end", "a partition"), "partition end", tz)
        value = json_field(d, "value", "a partition")
        location = d.get("location")
        storage = json_field(d, "storage", "a partition")
        if not isinstance(value, str) or not isinstance(storage, str):
            raise InvalidInput(f"cover JSON: bad partition {dict(d)!r}")
        if location is not None and not isinstance(location, str):
            raise InvalidInput(f"cover JSON: location must be a string or null: {location!r}")
        offset = start.utcoffset() or dt.timedelta(0)
        ordinal = period.ordinal(start, tz if tz is not None else dt.timezone(offset))
        if tz is not None and period.format_ordinal(ordinal, tz) != value:
            raise InvalidInput(
                f"cover JSON: {period.name} value {value!r} does not start at {start.isoformat()}"
            )
        return cls(storage, period, value, ordinal, start, end, location,
                   _dimensions(d.get("dimensions")))


@dataclass(frozen=True)
class CoverRun:
    """Consecutive partitions ``[first, end)`` (ordinals) of one storage and period."""

    storage: str
    period: UpdatePeriod
    first: int
    end: int
    #: The slice the run was chosen for (docs/dimensions.md); ``()`` when it holds every slice.
    dimensions: tuple[tuple[str, str], ...] = ()

    @property
    def count(self) -> int:
        """How many partitions the run holds."""
        return self.end - self.first


Locations = (
    Mapping[tuple[str, str, str], str] | Callable[[CoverPartition], str | None]
)
#: One location per partition of a run, in order: how a verified cover attaches locations
#: without building a partition object (called only when the partitions are built).
RunLocator = Callable[[CoverRun], Sequence[str | None]]


class Cover:
    """The answer of :func:`.compute.compute_cover`.

    ``partitions`` are disjoint, in time order, and their union is ``[start, end)`` minus the
    ``missing`` ranges. Immutable: every attribute is read-only, and :meth:`with_locations`
    returns a new cover.
    """

    __slots__ = ("_end", "_fact", "_locator", "_missing", "_notes", "_partitions", "_runs",
                 "_skipped", "_start", "_tz", "_unselected")

    def __init__(
        self,
        start: pendulum.DateTime,
        end: pendulum.DateTime,
        runs: Iterable[CoverRun] = (),
        missing: Iterable[MissingRange] = (),
        *,
        tz: str | None = "UTC",
        fact: str | None = None,
        partitions: Iterable[CoverPartition] | None = None,
        skipped: Iterable[SkippedPartition] = (),
        locator: RunLocator | None = None,
        notes: Iterable[str] = (),
        unselected: str | None = None,
    ) -> None:
        """``locator`` gives each run's locations when the partitions are first built (a
        verified cover's rows); ``partitions`` given explicitly take precedence over runs;
        ``notes`` are said with every answer (:attr:`notes`), ``unselected`` too."""
        self._fact = fact
        self._unselected = unselected
        self._notes: tuple[str, ...] = tuple(notes)
        self._locator = locator
        self._skipped: tuple[SkippedPartition, ...] = tuple(skipped)
        self._start = start
        self._end = end
        self._tz = tz
        self._missing: tuple[MissingRange, ...] = tuple(missing)
        self._partitions = None if partitions is None else tuple(partitions)
        self._runs = (
            tuple(runs) if self._partitions is None else tuple(_group(self._partitions))
        )

    @property
    def fact(self) -> str | None:
        """The fact covered (None for a cover of bare sources)."""
        return self._fact

    @property
    def start(self) -> pendulum.DateTime:
        return self._start

    @property
    def end(self) -> pendulum.DateTime:
        return self._end

    @property
    def tz(self) -> str | None:
        """The fact's zone (None for a cover read from JSON without one)."""
        return self._tz

    @property
    def missing(self) -> tuple[MissingRange, ...]:
        """Maximal uncovered sub-ranges, in time order (empty when coverable)."""
        return self._missing

    @property
    def skipped(self) -> tuple[SkippedPartition, ...]:
        """Stale partitions a ``fresh_only`` cover left out, in time order (else empty)."""
        return self._skipped

    @property
    def notes(self) -> tuple[str, ...]:
        """What a reader must know to read the answer right, said with every status line and
        in the JSON: ``region: not a dimension, any value counts`` for a partition column that
        is not a declared dimension (docs/dimensions.md). Empty for most covers."""
        return self._notes

    @property
    def unselected(self) -> str | None:
        """The note (one of :attr:`notes`) saying the request's ``where`` selects no declared
        slice, so no registration can make the cover coverable: it never is (None otherwise)."""
        return self._unselected

    def with_skipped(self, skipped: Iterable[SkippedPartition]) -> Cover:
        """A copy that reports these partitions as skipped."""
        return self._copy(skipped=tuple(skipped), notes=self._notes)

    def with_notes(self, notes: Iterable[str]) -> Cover:
        """A copy that carries these notes (:attr:`notes`)."""
        return self._copy(skipped=self._skipped, notes=tuple(notes))

    def _copy(self, skipped: tuple[SkippedPartition, ...], notes: tuple[str, ...]) -> Cover:
        return Cover(self.start, self.end, self._runs if self._partitions is None else (),
                     self.missing, tz=self.tz, fact=self.fact, partitions=self._partitions,
                     skipped=skipped, locator=self._locator, notes=notes,
                     unselected=self._unselected)

    # -- contents ---------------------------------------------------------------------------------

    @property
    def coverable(self) -> bool:
        """Whether the partitions cover the whole range (never when :attr:`unselected`)."""
        return not self.missing and self._unselected is None

    @property
    def runs(self) -> tuple[CoverRun, ...]:
        """The partitions as maximal runs of one (storage, period), in time order."""
        return self._runs

    @property
    def partitions(self) -> tuple[CoverPartition, ...]:
        """Every partition, in time order (built once, on first access: O(answer)).

        The lazily built tuple is a cache of a value the runs already fix, so the cover stays
        immutable in every way a caller can observe.
        """
        if self._partitions is None:
            self._partitions = tuple(self._expand())
        return self._partitions

    def _expand(self) -> Iterator[CoverPartition]:
        tz = self.tz or "UTC"
        for run in self._runs:
            period = run.period
            locations = self._locator(run) if self._locator is not None else None
            start = period.start_of(run.first, tz)
            for i, ordinal in enumerate(range(run.first, run.end)):
                end = period.start_of(ordinal + 1, tz)
                value = period.format_ordinal(ordinal, tz)
                location = locations[i] if locations is not None else None
                yield CoverPartition(run.storage, period, value, ordinal, start, end, location,
                                     run.dimensions)
                start = end

    def __len__(self) -> int:
        return sum(r.count for r in self._runs)

    @property
    def covered_fraction(self) -> float:
        """Covered duration over the requested duration (1.0 for an empty range)."""
        total = (self.end - self.start).total_seconds()
        if self._unselected is not None:
            return 0.0
        if total <= 0:
            return 1.0
        gaps = sum(m.duration.total_seconds() for m in self.missing)
        return (total - gaps) / total

    def with_locations(self, locations: Locations) -> Cover:
        """A copy whose partitions carry locations.

        ``locations`` is a mapping ``(storage, period name, value) -> location`` (absent keys
        leave ``None``) or a callable ``CoverPartition -> location | None``.
        """
        if callable(locations):
            find = locations
        else:
            table = locations

            def find(p: CoverPartition) -> str | None:
                return table.get((p.storage, p.period.name, p.value))

        parts = [replace(p, location=find(p)) for p in self.partitions]
        return Cover(self.start, self.end, (), self.missing, tz=self.tz, fact=self.fact,
                     partitions=parts, skipped=self.skipped, notes=self.notes,
                     unselected=self._unselected)

    # -- JSON (XCom, manifests) -------------------------------------------------------------------

    def to_json(self) -> CoverJson:
        """``{"fact", "start", "end", "coverable", "partitions", "missing"}``, JSON-serialisable,
        ``"skipped"`` when a ``fresh_only`` cover left stale partitions out, and ``"notes"``
        when it has :attr:`notes`."""
        out: CoverJson = {
            "fact": self.fact,
            "start": iso(self.start),
            "end": iso(self.end),
            "coverable": self.coverable,
            "partitions": [p.to_json() for p in self.partitions],
            "missing": [m.to_json() for m in self.missing],
        }
        if self.skipped:
            out["skipped"] = [s.to_json() for s in self.skipped]
        if self.notes:
            out["notes"] = list(self.notes)
        if self._unselected is not None:
            out["unselected"] = self._unselected
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, object], tz: str | None = None) -> Cover:
        """Read :meth:`to_json` back. With ``tz`` the instants are put in that zone and every
        value is checked against its start; without it they keep their written offsets."""
        fact = d.get("fact") if isinstance(d, Mapping) else None
        if fact is not None and not isinstance(fact, str):
            raise InvalidInput(f"cover JSON: fact must be a string or null, not {fact!r}")
        cover = cls(
            parse_instant(json_field(d, "start", "the cover"), "start", tz),
            parse_instant(json_field(d, "end", "the cover"), "end", tz),
            (),
            (MissingRange.from_json(m, tz)
             for m in _objects(json_field(d, "missing", "the cover"))),
            tz=tz,
            fact=fact,
            partitions=(
                CoverPartition.from_json(p, tz)
                for p in _objects(json_field(d, "partitions", "the cover"))
            ),
            skipped=(SkippedPartition.from_json(s) for s in _objects(d.get("skipped") or ())),
            notes=_notes(d.get("notes")),
            unselected=(_notes([d["unselected"]])[0] if d.get("unselected") else None),
        )
        if "coverable" in d and bool(d["coverable"]) != cover.coverable:
            raise InvalidInput("cover JSON: 'coverable' contradicts the 'missing' list")
        return cover

    # -- text -------------------------------------------------------------------------------------

    def __str__(self) -> str:
        count = len(self)
        head = (
            f"{self.fact + ' ' if self.fact else ''}"
            f"[{format_instant(self.start)}, {format_instant(self.end)}): "
            f"{count} partition{'s' if count != 1 else ''}"
        )
        if self.coverable:
            head += ", coverable"
        elif self._unselected is not None:
            head += ", NOT coverable: the where selects no declared slice"
        else:
            head += (
                f", NOT coverable: {len(self.missing)} missing "
                f"range{'s' if len(self.missing) != 1 else ''}, "
                f"{self.covered_fraction:.1%} covered"
            )
        skipped = [f"  {s.describe()}" for s in self.skipped[:MAX_STR_MISSING]]
        lacking = lacking_text(slice_lacks(self.missing), MAX_STR_MISSING)
        lacks = [f"  slices lacking partitions: {lacking}"] if lacking else []
        notes = [f"  {n}" for n in self.notes]
        return "\n".join([head, *self._run_lines(), *lacks, *self._missing_lines(), *skipped,
                          *notes])

    def _run_lines(self) -> list[str]:
        show_storage = len({r.storage for r in self._runs}) > 1
        tz = self.tz or "UTC"
        values: dict[tuple[UpdatePeriod, int], str] | None = None
        if self._partitions is not None:
            values = {(p.period, p.ordinal): p.value for p in self._partitions}
        lines = [_run_text(r, tz, show_storage, values) for r in self._runs_shown()]
        hidden = len(self._runs) - MAX_STR_RUNS
        if hidden > 0:
            lines.insert(MAX_STR_RUNS // 2, f"  ... {hidden} more runs ...")
        return lines

    def _runs_shown(self) -> list[CoverRun]:
        if len(self._runs) <= MAX_STR_RUNS:
            return list(self._runs)
        half = MAX_STR_RUNS // 2
        return [*self._runs[:half], *self._runs[-half:]]

    def _missing_lines(self) -> list[str]:
        lines = [f"  {m.describe()}" for m in self.missing[:MAX_STR_MISSING]]
        if len(self.missing) > MAX_STR_MISSING:
            lines.append(f"  ... {len(self.missing) - MAX_STR_MISSING} more missing ranges")
        return lines

    def __repr__(self) -> str:
        return (
            f"Cover({iso(self.start)}, {iso(self.end)}, partitions={len(self)}, "
            f"missing={len(self.missing)}, fact={self.fact!r})"
        )

    def __hash__(self) -> int:
        return hash((self.fact, self.start, self.end, len(self), self.missing))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cover):
            return NotImplemented
        return (self.fact, self.start, self.end, self.partitions, self.missing) == (
            other.fact,
            other.start,
            other.end,
            other.partitions,
            other.missing,
        )


def _objects(data: object) -> Iterable[Mapping[str, object]]:
    """A JSON list of objects, as the readers take it: each reader checks its own entry (a
    damaged one fails there, with its own message), so this only names the type."""
    return cast("Iterable[Mapping[str, object]]", data)


def _notes(data: Any) -> tuple[str, ...]:
    if data is None:
        return ()
    if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
        raise InvalidInput(f"cover JSON: notes must be a list of strings, not {data!r}")
    return tuple(data)


def _dimensions(data: Any) -> tuple[tuple[str, str], ...]:
    """A partition's ``"dimensions"`` JSON object as a canonical slice (sorted by column)."""
    if data is None:
        return ()
    if not isinstance(data, Mapping) or not all(
            isinstance(c, str) and isinstance(v, str) for c, v in data.items()):
        raise InvalidInput(f"cover JSON: dimensions must map columns to strings, not {data!r}")
    return tuple(sorted(data.items()))


def _group(partitions: Iterable[CoverPartition]) -> Iterator[CoverRun]:
    """Maximal runs of explicit partitions (same storage, period and slice, consecutive
    ordinals)."""
    run: CoverRun | None = None
    for p in partitions:
        if (
            run is not None
            and (run.storage, run.period, run.dimensions) == (p.storage, p.period, p.dimensions)
            and run.end == p.ordinal
        ):
            run = CoverRun(run.storage, run.period, run.first, p.ordinal + 1, run.dimensions)
            continue
        if run is not None:
            yield run
        run = CoverRun(p.storage, p.period, p.ordinal, p.ordinal + 1, p.dimensions)
    if run is not None:
        yield run


def _run_text(
    run: CoverRun,
    tz: str,
    show_storage: bool,
    values: Mapping[tuple[UpdatePeriod, int], str] | None,
) -> str:
    """``  [storage] HOURLY 2015-01-29-06..23 (18)``."""
    if values is not None:
        first, last = values[run.period, run.first], values[run.period, run.end - 1]
    else:
        first = run.period.format_ordinal(run.first, tz)
        last = run.period.format_ordinal(run.end - 1, tz)
    who = f"{run.storage} " if show_storage else ""
    of = " for " + ",".join(f"{c}={v}" for c, v in run.dimensions) if run.dimensions else ""
    return f"  {who}{run.period.name} {ValueRun(first, last, run.count).describe()}{of}"
