"""Coverage that sees the declared dimensions: a time partition counts only when complete.

Why: a storage partitioned by ``(dt, region)`` keeps one timeline per time column, so it advertises
an hour as soon as any region has it, and a sensor reading it alone would fire while one region is
late. For a storage that declares ``region`` a dimension, an hour of it is usable in a cover only
when every *required* slice (each combination of the declared columns' values that the domain
requires at that time, narrowed by the request's ``where``) has its row there.

How: a time partition is complete when the per-column timeline advertises it and every slice
required there has it in its *slice timeline* (:mod:`.slices.cells`, kept by the write protocol
and cached with the fact): O(required slices x window) in memory, no read. Where the slice
timelines are not built (a storage declared before they existed, a build not finished, a
corrupt slice cell), the storage's rows in the range are read instead, with one projected scan
per period (O(rows in the range)), and each time partition is kept only when every required
slice has a live row in it. Where the marker says they are built but a required slice has no
cell at hours the per-column timeline advertises, the marker and the cells disagree (a lost
cell, or a write stopped between the two): that slice is read from the rows with a WARNING
(:func:`read_lost_slices`). Either way the cover is computed over the complete partitions, and
every run it chooses is checked again when its rows are read for verification (a row dropped
in between makes the cover be recomputed, and a slice timeline that over-reports is settled).
Columns that are not declared keep their meaning: any value counts.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.decode import LIST_BATCH, PartitionDecoder
from airflow_partitions.catalog.rows.layout import CatalogRows
from airflow_partitions.catalog.slices.cells import slice_key
from airflow_partitions.catalog.slices.dimensions import (
    NotADimension,
    required_slices,
    select_slices,
)
from airflow_partitions.cover import (
    MAX_NEEDED_RUNS,
    CoverRequest,
    CoverSource,
    MissingRange,
    NeededPartitions,
    Slice,
    ValueRun,
    clock_for,
    to_us,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import prefix_successor
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline, RangesTimeline, runs

if TYPE_CHECKING:
    from airflow_partitions.catalog.cache import FactState

log = logging.getLogger(__name__)

#: A dimensioned (storage, period) whose completeness a cover checked.
StorageKey = tuple[str, UpdatePeriod]


@dataclass(frozen=True)
class SliceCompleteness:
    """One dimensioned (storage, period) over a request's window of ordinals.

    ``complete``: the ordinals where every required slice has a row (and the timeline
    advertises the time value); ``needs``: per required slice, the window's ordinals where it
    is required; ``lacking``: per slice, those of them without a row.
    """

    storage: str
    period: UpdatePeriod
    lo: int
    hi: int
    complete: frozenset[int]
    needs: dict[Slice, frozenset[int]]
    lacking: dict[Slice, tuple[int, ...]]

    def timeline(self, column: str, tz: str) -> PartitionTimeline:
        """The complete ordinals as a timeline the cover reads (in memory only)."""
        out = RangesTimeline(self.period, column, tz)
        out.replace_ranges(runs(sorted(self.complete)))
        return out


def completeness(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
                 advertised: PartitionTimeline, request: CoverRequest,
                 slices: Mapping[Slice, PartitionTimeline] | None = None) -> SliceCompleteness:
    """Which time partitions of ``sdef``'s ``period`` inside the request are complete.

    ``slices``: the stored slice timelines of (period, column) (None: not built). Cost with
    them: O(required slices x window), no read; without: one projected scan of the period's
    rows in the window (of the period when ``column`` does not lead the key), O(rows +
    required slices x window). With them, a required slice without a cell at ordinals the
    per-column timeline advertises is read from the rows (:func:`read_lost_slices`: that scan,
    once, only then: a lost cell, or a slice never registered while others are).
    """
    clock = clock_for(sdef.tz)
    start_us, end_us = to_us(request.start), to_us(request.end)
    lo, hi = clock.floor(period, start_us), clock.ceil(period, end_us)
    required = select_slices(required_slices(sdef.dimensions, request.start, request.end),
                             sdef.dimensions, request.where)
    needs: dict[Slice, frozenset[int]] = {}
    shared: dict[tuple[tuple[int, int], ...], frozenset[int]] = {}
    for slice_ in required:  # slices with the same spans (usually all) share one set
        spans = tuple(slice_.spans)
        if spans not in shared:
            wanted: set[int] = set()
            for a, b in spans:
                wanted.update(range(max(lo, clock.floor(period, a)),
                                    min(hi, clock.ceil(period, b))))
            shared[spans] = frozenset(wanted)
        needs[slice_.slice] = shared[spans]
    advertised_set = {o for b, e in advertised.ordinal_ranges(lo, hi) for o in range(b, e)}
    if slices is not None:  # the per-column timeline ∩ each required slice's timeline
        lost = [s for s, wanted in needs.items()
                if s not in slices and not advertised_set.isdisjoint(wanted)]
        if lost:
            slices = {**slices, **read_lost_slices(rows, sdef, period, column, lost, lo, hi)}
        bounds = {w: (min(w), max(w) + 1) for w in shared.values() if w}
        lacking = {s: _lacking(wanted, slices.get(s), bounds.get(wanted, (lo, lo)))
                   for s, wanted in needs.items()}
        incomplete = set().union(*lacking.values())
        complete = frozenset(advertised_set - incomplete)
    else:
        present = _present(rows, sdef, period, column, lo, hi)
        lacking = {s: tuple(sorted(o for o in wanted if s not in present.get(o, ())))
                   for s, wanted in needs.items()}
        incomplete = {o for ordinals in lacking.values() for o in ordinals}
        complete = frozenset(o for o in advertised_set if o in present and o not in incomplete)
    return SliceCompleteness(sdef.name, period, lo, hi, complete, needs,
                             {s: o for s, o in lacking.items() if o})


def _lacking(wanted: frozenset[int], timeline: PartitionTimeline | None,
             bounds: tuple[int, int]) -> tuple[int, ...]:
    """The ordinals of ``wanted`` (within ``bounds``, half-open) a slice timeline does not
    hold (all of them when absent). O(1) when one run holds them all, else O(wanted)."""
    if not wanted:
        return ()
    if timeline is None:
        return tuple(sorted(wanted))
    lo, hi = bounds
    have = timeline.ordinal_ranges(lo, hi)
    if have and have[0][0] <= lo and have[0][1] >= hi:  # the common case
        return ()
    held = {o for b, e in have for o in range(b, e)}
    return tuple(sorted(wanted - held))


def read_lost_slices(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
                     lost: Collection[Slice], lo: int, hi: int) -> dict[Slice, PartitionTimeline]:
    """The slices of ``lost`` that have rows in ``[lo, hi)``, as :func:`slice_presence` reads
    them, each named in a WARNING (storage, period, column, slice).

    ``lost``: required slices with no cell where the build marker says the slice timelines
    of (period, column) are built, at ordinals the per-column timeline advertises. One that
    has rows is the marker and the cells disagreeing (its cell deleted or lost, or a write
    stopped after the per-column timeline and before the slice cells): reading it as empty
    would call its registered hours missing, so its rows are read, as for a corrupt cell,
    until ``reconcile`` rebuilds the cell. One without rows is a slice never registered, not
    a disagreement: it is left out and lacks what it lacks. Why this test and not a marker
    listing every built slice: it needs no write beyond the cells, and it is exact for the
    window asked about. Cost: nothing when ``lost`` is empty (the normal case), else one
    projected scan of the window, as :func:`slice_presence`.
    """
    if not lost:
        return {}
    found = slice_presence(rows, sdef, period, column, lo, hi)
    out = {s: found[s] for s in lost if s in found}
    for slice_ in sorted(out):
        log.warning("the %s %s slice timeline of %s of storage %r has no cell, though the "
                    "build marker says it is built and the partition rows have that slice; "
                    "reading it from the rows (run 'airflow-partitions reconcile %s' to "
                    "rebuild it)", period.name, column, slice_key(slice_), sdef.name, sdef.name)
    return out


def with_lost_slices(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
                     advertised: PartitionTimeline, stored: dict[Slice, PartitionTimeline],
                     request: CoverRequest) -> dict[Slice, PartitionTimeline]:
    """``stored`` (the built slice timelines of (period, column)), plus each slice ``sdef``
    requires in the request that has no cell at ordinals ``advertised`` holds, read from the
    rows where they have it (:func:`read_lost_slices`): for a reader that takes the slice
    timelines whole (the per-slice cover's sources). Cost: O(required slices x their spans'
    ranges) in memory; the scan only when such a slice exists."""
    clock = clock_for(sdef.tz)
    lo = clock.floor(period, to_us(request.start))
    hi = clock.ceil(period, to_us(request.end))
    required = required_slices(sdef.dimensions, request.start, request.end)
    try:
        required = select_slices(required, sdef.dimensions, request.where)
    except NotADimension:  # ``where`` names a column another storage declares: keep them all
        pass
    lost = [r.slice for r in required if r.slice not in stored and any(
        advertised.ordinal_ranges(max(lo, clock.floor(period, a)), min(hi, clock.ceil(period, b)))
        for a, b in r.spans if clock.floor(period, a) < hi)]
    if not lost:
        return stored
    return {**stored, **read_lost_slices(rows, sdef, period, column, lost, lo, hi)}


def slice_presence(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
                   lo: int, hi: int) -> dict[Slice, PartitionTimeline]:
    """Per slice (over ``sdef``'s declared columns) that has a row in ``[lo, hi)``, the
    ordinals it has there, as in-memory timelines: what the slice timelines hold, read from
    the rows where those are not built. Cost: one projected scan, as :func:`completeness`."""
    by_slice: dict[Slice, list[int]] = {}
    for ordinal, found in _present(rows, sdef, period, column, lo, hi).items():
        for slice_ in found:
            by_slice.setdefault(slice_, []).append(ordinal)
    out: dict[Slice, PartitionTimeline] = {}
    for slice_, ordinals in by_slice.items():
        timeline = RangesTimeline(period, column, sdef.tz)
        timeline.replace_ranges(runs(sorted(ordinals)))
        out[slice_] = timeline
    return out


def _present(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
             lo: int, hi: int) -> dict[int, set[Slice]]:
    """Per ordinal of ``[lo, hi)``, the slices (over the declared columns) that have a row."""
    decoder = PartitionDecoder(sdef, period)
    names = sdef.column_names
    at = 2 + names.index(column)
    dims = sorted(d.column for d in sdef.dimensions)
    dim_at = [2 + names.index(c) for c in dims]
    base = rows.period_prefix(sdef, period)
    if names[0] == column and lo < hi:
        start = rows.period_prefix(sdef, period, (period.format_ordinal(lo, sdef.tz),))
        stop = prefix_successor(
            rows.period_prefix(sdef, period, (period.format_ordinal(hi - 1, sdef.tz),)))
    else:
        start, stop = base, prefix_successor(base)
    out: dict[int, set[Slice]] = {}
    ordinal_of: dict[bytes, int | None] = {}
    # Whole rows only: a damaged row holds no slice (catalog/rows/check.py).
    for _, values in decoder.rows(rows.partitions, start, stop, batch_size=LIST_BATCH):
        text = values[at]
        if values[0] is None or text is None:  # no location: not a partition
            continue
        ordinal = ordinal_of.get(text, -1)
        if ordinal == -1:
            ordinal = ordinal_of[text] = _ordinal(period, text, sdef.tz)
        if ordinal is None or not lo <= ordinal < hi:
            continue
        slice_ = tuple((c, (values[i] or b"").decode("utf-8", "replace"))
                       for c, i in zip(dims, dim_at, strict=True))
        out.setdefault(ordinal, set()).add(slice_)
    return out


def _ordinal(period: UpdatePeriod, text: bytes, tz: str) -> int | None:
    """The strict ordinal of a stored time value, None when it does not parse."""
    try:
        return period.parse_ordinal(text.decode("utf-8"), tz)
    except (InvalidInput, UnicodeDecodeError):
        return None


def incomplete_in(run_ordinals: Iterable[tuple[int, Sequence[tuple[bytes | None, ...]]]],
                  sdef: StorageDef, check: SliceCompleteness) -> list[int]:
    """Ordinals of a verified run whose rows (projected as :class:`.PartitionDecoder` does)
    no longer hold every slice ``check`` requires there: a row dropped since the check.

    Cost: O(rows + slices) per run: slices that are required at the same ordinals (usually
    all of them) are checked together as one set of encoded values against each ordinal's
    rows, with no decoding per row.
    """
    names = sdef.column_names
    dims = sorted(d.column for d in sdef.dimensions)
    dim_at = [2 + names.index(c) for c in dims]
    classes: dict[frozenset[int], set[tuple[bytes, ...]]] = {}
    for slice_, ordinals in check.needs.items():
        if ordinals:
            classes.setdefault(ordinals, set()).add(tuple(v.encode() for _, v in slice_))
    out = []
    for ordinal, group in run_ordinals:
        wanted = [need for ordinals, need in classes.items() if ordinal in ordinals]
        if not wanted:
            continue
        have = {tuple(v[i] or b"" for i in dim_at) for v in group}
        if any(not need <= have for need in wanted):
            out.append(ordinal)
    return out


def with_slices(missing: Sequence[MissingRange], checks: Sequence[SliceCompleteness],
                tz: str, sliced: Collection[UpdatePeriod] = ()) -> tuple[MissingRange, ...]:
    """The missing ranges, each also naming, per slice, the partitions that slice lacks in it
    (``no HOURLY 2015-01-01-05..23 (19) for region=eu``). For the ``sliced`` periods (every
    source of them has declared dimensions) the per-slice entries replace the time-only one,
    which would call hours absent that other slices have."""
    if not checks:
        return tuple(missing)
    clock = clock_for(tz)
    out = []
    for m in missing:
        a, b = to_us(m.start), to_us(m.end)
        kept = tuple(n for n in m.needed if n.period not in sliced)
        extra = []
        for check in checks:
            lo = max(check.lo, clock.floor(check.period, a))
            hi = min(check.hi, clock.ceil(check.period, b))
            for slice_, ordinals in sorted(check.lacking.items()):
                inside = [o for o in ordinals if lo <= o < hi]
                if inside:
                    extra.append(_needed(check.period, inside, slice_, tz))
        out.append(MissingRange(m.start, m.end, (*kept, *extra))
                   if extra or len(kept) != len(m.needed) else m)
    return tuple(out)


def _needed(period: UpdatePeriod, ordinals: list[int], slice_: Slice,
            tz: str) -> NeededPartitions:
    spans = runs(ordinals)
    shown = tuple(ValueRun(period.format_ordinal(b, tz), period.format_ordinal(e - 1, tz), e - b)
                  for b, e in spans[:MAX_NEEDED_RUNS])
    return NeededPartitions(period, shown, len(ordinals), slice_)


def complete_sources(rows: CatalogRows, state: FactState, request: CoverRequest, column: str
                     ) -> tuple[list[CoverSource], dict[StorageKey, SliceCompleteness]]:
    """Every (storage, period) of the fact as a cover source: its cached timeline, or for a
    storage with declared dimensions the time partitions where every required slice has its
    row there (:func:`completeness`), with those checks by (storage, period). The verified
    cover's and the plan's input. Cost: O(storages x periods) plus each completeness."""
    sources: list[CoverSource] = []
    checks: dict[StorageKey, SliceCompleteness] = {}
    allowed_periods, allowed = request.period_set, request.storages
    for name, s in sorted(state.storages.items()):
        sdef = s.definition
        if column not in sdef.time_columns:
            continue
        for period in sdef.periods:
            timeline = s.timelines[(period, column)]
            if sdef.dimensions and (allowed_periods is None or period in allowed_periods) and (
                    allowed is None or name in allowed):
                check = completeness(rows, sdef, period, column, timeline, request,
                                     s.slice_timelines(period, column))
                checks[(name, period)] = check
                timeline = check.timeline(column, sdef.tz)
            sources.append(CoverSource(name, sdef.priority, period, timeline))
    if request.where is not None and not any(
            s.definition.dimensions for s in state.storages.values()):
        raise NotADimension(f"where {request.where!r}: no storage of fact {request.fact!r} "
                            "declares a dimension (docs/dimensions.md)")
    return sources, checks


__all__ = [
    "SliceCompleteness",
    "complete_sources",
    "completeness",
    "incomplete_in",
    "read_lost_slices",
    "slice_presence",
    "with_lost_slices",
    "with_slices",
]
