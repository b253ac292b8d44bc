"""The input of a catalog slice cover: the fact's required slices and one source per slice.

Why: the pure slice cover (:mod:`airflow_partitions.cover.slices`) gives each required slice its
own minimal mixed-granularity cover and counts a shared rollup once, but it needs the catalog's
knowledge laid out per slice. Here:

* **The fact-level domain** (:func:`fact_dimensions`): storages of one fact may declare the same
  column differently (``ev_raw`` declares ``region=eu,us``, ``ev_eu`` ``region=eu,apac``). A value
  is required at an instant when *any* storage of the fact that the request may read requires it
  then: per column the union of the values, and per value the union of its spans. Columns are
  the union of every storage's declared columns. So a region one storage declares is never
  silently dropped because another storage does not know it.
* **Sources** (:func:`slice_sources`): per dimensioned (storage, period), one
  :class:`~airflow_partitions.cover.slices.result.SliceSource` per slice timeline, ``fixed`` = that
  slice over *the storage's own* declared columns. A storage declaring fewer columns than the
  fact (``region`` only, the fact also ``source``) fixes only its own: its ``region=eu`` partition
  holds every ``(region=eu, source=*)`` slice, exactly as a rollup without the column does
  (its rows are over every value of the column it does not declare: any value counts). A
  storage without dimensions is one source with ``fixed=()`` and its per-column timeline: it
  holds every slice at once.

Each slice timeline is intersected with the storage's per-column timeline (both under-report at
worst, never over-report: invariant 5), so a slice is never offered an hour the storage's own
timeline does not advertise. Where a storage's slice timelines are not built (a marker not
written yet, a corrupt slice cell), its per-slice availability is read from the rows in the
window with one projected scan (:func:`.slices.completeness.slice_presence`): the same answer,
at O(rows in the range).

Cost with slice timelines built: O(storages x periods x slices x ranges in the window) in
memory, no read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.layout import CatalogRows
from airflow_partitions.catalog.slices.completeness import slice_presence, with_lost_slices
from airflow_partitions.catalog.slices.dimensions import (
    Dimension,
    DomainValue,
    required_slices,
    select_slices,
)
from airflow_partitions.cover import (
    CoverRequest,
    RequiredSlice,
    Slice,
    SliceSource,
    clock_for,
    from_us,
    to_us,
)
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline, RangesTimeline, difference_ranges

#: The stored slice timelines of one (period, column), or None when they are not built.
SliceTimelines = dict[Slice, PartitionTimeline] | None


@dataclass(frozen=True)
class StorageInput:
    """What the catalog knows of one storage for a cover: its definition, per-column
    timelines and, per period, its stored slice timelines (None: not built)."""

    definition: StorageDef
    timelines: dict[UpdatePeriod, PartitionTimeline]
    slices: dict[UpdatePeriod, SliceTimelines]


@dataclass(frozen=True)
class SliceInput:
    """A slice cover's input: its sources, the required slices, and the dimensioned
    (storage, period) pairs whose sources came from *stored* slice timelines (those a
    verification may settle when they over-report)."""

    sources: tuple[SliceSource, ...]
    required: tuple[RequiredSlice, ...]
    stored: frozenset[tuple[str, UpdatePeriod]]


def fact_dimensions(storages: Iterable[StorageDef], start_us: int,
                    end_us: int) -> tuple[Dimension, ...]:
    """The fact-level domain over ``[start_us, end_us)``: per column (in first-declared
    order, storages by name) the union of every storage's values, each value required
    wherever any storage requires it (spans merged, clipped to the window; a span reaching a
    window edge is left unbounded there). Values required nowhere in the window are left out;
    a column left with none is dropped (nothing of it is required in the window)."""
    spans: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for sdef in sorted(storages, key=lambda s: s.name):
        for d in sdef.dimensions:
            per_value = spans.setdefault(d.column, {})
            for v in d.values:
                a, b = v.span_us(start_us, end_us)
                if a < b:
                    per_value.setdefault(v.value, []).append((a, b))
    out = []
    for column, per_value in spans.items():
        values = []
        for value, found in per_value.items():
            for a, b in _merged(found):
                values.append(DomainValue(
                    value, None if a <= start_us else from_us(a, "UTC"),
                    None if b >= end_us else from_us(b, "UTC")))
        if values:
            out.append(Dimension(column, tuple(values)))
    return tuple(out)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans joined."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def fact_required(storages: Sequence[StorageDef], request: CoverRequest) -> list[RequiredSlice]:
    """The slices the request needs: the fact-level domain's (:func:`fact_dimensions`) over
    the request's range, narrowed by ``request.where`` (only the fact's declared columns may
    appear there: :class:`~.slices.dimensions.NotADimension` otherwise)."""
    dims = fact_dimensions(storages, to_us(request.start), to_us(request.end))
    declared = {d.column for s in storages for d in s.dimensions}
    named = dims + tuple(Dimension(c, (DomainValue("any"),))
                         for c in sorted(declared - {d.column for d in dims}))
    return select_slices(required_slices(dims, request.start, request.end), named,
                         request.where)


def _projected(per_slice: dict[Slice, PartitionTimeline], wanted: dict[str, set[str]],
               lo: int, hi: int) -> dict[Slice, list[tuple[int, int]]]:
    """Each slice timeline's ranges in ``[lo, hi)``, keyed by its values of the columns some
    required slice names (a column nothing requires in the range counts any value: those
    slices' ranges are united); slices with a value no required slice has are left out (they
    can serve nobody)."""
    out: dict[Slice, list[tuple[int, int]]] = {}
    for slice_, timeline in per_slice.items():
        if not all(v in wanted[c] for c, v in slice_ if c in wanted):
            continue
        key = tuple((c, v) for c, v in slice_ if c in wanted)
        ranges = timeline.ordinal_ranges(lo, hi)
        if key in out:
            both = RangesTimeline(timeline.period, timeline.column, timeline.tz)
            both.replace_ranges(out[key])
            both.add_ordinal_ranges(ranges)
            ranges = both.ordinal_ranges(lo, hi)
        out[key] = list(ranges)
    return out


def slice_sources(rows: CatalogRows, storages: Sequence[StorageInput], request: CoverRequest,
                  column: str, required: Sequence[RequiredSlice]) -> SliceInput:
    """One source per slice of each usable dimensioned (storage, period), one ``fixed=()``
    source per (storage, period) otherwise (see the module docstring).

    A dimensioned (storage, period) the request may not read keeps one plain source, which
    the cover leaves out as it does any source the request excludes.
    """
    wanted: dict[str, set[str]] = {}
    for r in required:
        for c, v in r.slice:
            wanted.setdefault(c, set()).add(v)
    out: list[SliceSource] = []
    stored: set[tuple[str, UpdatePeriod]] = set()
    for s in storages:
        sdef = s.definition
        for period in sdef.periods:
            advertised = s.timelines[period]
            usable = ((request.period_set is None or period in request.period_set)
                      and (request.storages is None or sdef.name in request.storages))
            if not sdef.dimensions or not usable:
                out.append(SliceSource(sdef.name, sdef.priority, period, advertised))
                continue
            clock = clock_for(sdef.tz)
            lo = clock.floor(period, to_us(request.start))
            hi = clock.ceil(period, to_us(request.end))
            per_slice = s.slices.get(period)
            if per_slice is None:
                per_slice = slice_presence(rows, sdef, period, column, lo, hi)
            else:  # a slice whose cell is lost is read from the rows, with a WARNING
                stored.add((sdef.name, period))
                per_slice = with_lost_slices(rows, sdef, period, column, advertised, per_slice,
                                             request)
            have = advertised.ordinal_ranges(lo, hi)
            projected = _projected(per_slice, wanted, lo, hi)
            own = {d.column for d in sdef.dimensions}
            for r in required:  # a required slice with no row here still gets its (empty)
                key = tuple((c, v) for c, v in r.slice if c in own)  # source: its missing
                projected.setdefault(key, [])  # ranges name this period's partitions
            for slice_, mine in sorted(projected.items()):
                both = difference_ranges(have, difference_ranges(have, mine))
                kept = RangesTimeline(period, column, sdef.tz)
                kept.replace_ranges(both)
                out.append(SliceSource(sdef.name, sdef.priority, period, kept, fixed=slice_))
    return SliceInput(tuple(out), tuple(required), frozenset(stored))


__all__ = ["SliceInput", "StorageInput", "fact_dimensions", "fact_required", "slice_sources"]
