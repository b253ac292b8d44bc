"""What the Partitions view draws per slice of a storage with declared dimensions.

A storage partitioned by ``(dt, region)`` with ``region`` declared gets, per period, one *slice
lane* per required slice (``region=eu``): its ``registered``, ``missing``, ``stale`` and
``not_applicable`` stretches over the window, where *not applicable* also covers the time
the slice is not required (``apac`` launched on 2025-06-01 is not missing before). Lanes are
grouped per dimension column, the worst first (most missing partitions), each group with a
summary line; with two or more dimensions, each column's group has one lane per value (the
value is missing where any of its slices is) and a last group holds every slice.

How, and what it costs: the per-slice presence comes from
:func:`.dimension_coverage.completeness` over the stored slice timelines (O(slices x window),
no read; one projected scan of the rows in the window, O(rows), where they are not built),
reduced at once to ordinal ranges per slice (:class:`SlicePresence`) and kept per fact
generation, like the view's cover, so every later view of the window until the next write is
O(slices + stretches) and never reads a row. The lanes are computed in O(stretches) per slice
(ranges, never one entry per partition). No Airflow here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypedDict

from airflow_partitions.catalog import (
    StalePartition,
    StorageDef,
    completeness,
    overlap_window,
    required_slices,
    undeclared_notes,
)
from airflow_partitions.cover import CoverRequest, Slice, clock_for, slice_text
from airflow_partitions.lanes.recent import Recent
from airflow_partitions.lanes.stretches import (
    MISSING,
    NOT_APPLICABLE,
    REGISTERED,
    STALE,
    Instants,
    Stretch,
    StretchJson,
    inside_window,
)
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import OrdinalRange, difference_ranges, runs

if TYPE_CHECKING:
    from airflow_partitions.catalog import Catalog, FactState

#: How many slice presences (one per dimensioned storage, period and window) the process keeps.
PRESENCE_CACHE_SIZE: Final = 32
#: How many lanes of a group the summary line names.
SUMMARY_NAMED: Final = 3

_presence: Recent[tuple[object, ...], SlicePresence] = Recent(PRESENCE_CACHE_SIZE)


class SliceLaneJson(TypedDict):
    """One slice's (or one dimension value's) lane."""

    slice: dict[str, str]
    label: str
    registered: int
    missing: int
    stale: int
    not_applicable: int
    stretches: list[StretchJson]


class DimensionGroupJson(TypedDict):
    """The lanes of one dimension column (``kind`` ``values``: one lane per value, or
    ``slices``: one lane per slice), worst first, and their summary line."""

    column: str
    kind: str
    summary: str
    incomplete: int
    missing: int
    lanes: list[SliceLaneJson]


class SlicedStorageJson(TypedDict):
    """Every slice lane of one dimensioned (storage, period) over the window."""

    storage: str
    period: str
    dimensions: list[str]
    slices: int
    incomplete: int
    missing: int
    groups: list[DimensionGroupJson]


class UndeclaredJson(TypedDict):
    """A non-time partition column that is not a dimension: any of its values counts."""

    storage: str
    column: str
    note: str


@dataclass(frozen=True)
class SlicePresence:
    """One dimensioned (storage, period) over the partitions ``[lo, hi)`` of a window.

    ``needs``: per required slice, the ordinal ranges where it is required; ``lacking``: per
    slice, those of them without a row (slices lacking nothing are left out); ``inside``: the
    partitions wholly in the window (the others stick out: no cover could use them).
    """

    storage: str
    period: UpdatePeriod
    lo: int
    hi: int
    inside: OrdinalRange
    needs: Mapping[Slice, Sequence[OrdinalRange]]
    lacking: Mapping[Slice, Sequence[OrdinalRange]]

    def complete(self, present: Iterable[OrdinalRange]) -> list[OrdinalRange]:
        """``present`` (the storage's own timeline) minus every ordinal some slice lacks: what
        the cover counts as this storage's partitions."""
        return difference_ranges(present, merge(r for ranges in self.lacking.values()
                                                for r in ranges))


def merge(ranges: Iterable[OrdinalRange]) -> list[OrdinalRange]:
    """Sorted, disjoint union of any ranges (touching ones joined).

    >>> merge([(5, 7), (0, 2), (1, 3), (7, 8)])
    [(0, 3), (5, 8)]
    """
    out: list[OrdinalRange] = []
    for b, e in sorted(r for r in ranges if r[0] < r[1]):
        if out and b <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((b, e))
    return out


def intersect(a: Sequence[OrdinalRange], b: Sequence[OrdinalRange]) -> list[OrdinalRange]:
    """Intersection of two sorted, disjoint range lists, O(len(a) + len(b))."""
    out: list[OrdinalRange] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return out


def slice_stretches(needs: Sequence[OrdinalRange], lacking: Sequence[OrdinalRange],
                    stale: Sequence[OrdinalRange], lo: int, hi: int,
                    inside: OrdinalRange) -> list[Stretch]:
    """Tile ``[lo, hi)`` for one slice: where it is required and has its row, registered
    (stale where ``stale`` says so); required, lacking and wholly in the window, missing;
    everything else (not required there, or sticking out of the window) not applicable.

    >>> [(s.state, s.first, s.end) for s in slice_stretches([(2, 8)], [(5, 6)], [(3, 4)],
    ...                                                     0, 10, (0, 10))]
    [('not_applicable', 0, 2), ('registered', 2, 3), ('stale', 3, 4), ('registered', 4, 5), \
('missing', 5, 6), ('registered', 6, 8), ('not_applicable', 8, 10)]
    """
    window = [(lo, hi)] if lo < hi else []
    needed = intersect(merge(needs), window)
    gaps = intersect(merge(lacking), needed)
    have = difference_ranges(needed, gaps)
    missing = intersect(gaps, [inside] if inside[0] < inside[1] else [])
    stale_in = intersect(merge(stale), have)
    out = [Stretch(REGISTERED, b, e) for b, e in difference_ranges(have, stale_in)]
    out += [Stretch(STALE, b, e) for b, e in stale_in]
    out += [Stretch(MISSING, b, e) for b, e in missing]
    out += [Stretch(NOT_APPLICABLE, b, e)
            for b, e in difference_ranges(window, merge([*have, *missing]))]
    return sorted(out, key=lambda s: s.first)


def presence_of(storage: str, period: UpdatePeriod, tz: str, start: dt.datetime,
                end: dt.datetime, required: Iterable[tuple[Slice, Sequence[tuple[int, int]]]],
                lacking: Mapping[Slice, Sequence[int]]) -> SlicePresence:
    """Reduce required spans (microseconds) and lacking ordinals to ranges over the window.

    A slice is required at every partition its spans touch, exactly as
    :func:`.dimension_coverage.completeness` counts it. Cost: O(slices x spans + lacking).
    """
    clock = clock_for(tz)
    lo, hi = overlap_window(period, tz, start, end)
    assert lo is not None and hi is not None
    needs: dict[Slice, list[OrdinalRange]] = {}
    for slice_, spans in required:
        needs[slice_] = merge((max(lo, clock.floor(period, a)), min(hi, clock.ceil(period, b)))
                              for a, b in spans)
    return SlicePresence(storage, period, lo, hi,
                         inside_window(period, tz, start, end, lo, hi), needs,
                         {s: runs(ordinals) for s, ordinals in lacking.items() if ordinals})


def read_presence(catalog: Catalog, state: FactState, sdef: StorageDef, period: UpdatePeriod,
                  column: str, start: dt.datetime, end: dt.datetime) -> SlicePresence:
    """The slices' presence of one dimensioned (storage, period) over ``[start, end)``.

    Kept per (store, fact, generation, storage, its dimensions, period, column, window): a
    write bumps the generation, so a kept answer is never older than the timelines the view
    shows. Cost when not kept: :func:`.dimension_coverage.completeness` (O(slices x window)
    from the slice timelines; O(rows in the window) where they are not built) plus
    O(slices x spans).
    """
    key = (catalog.kv.url, sdef.fact, state.generation, sdef.name, sdef.dimensions, period,
           column, start.isoformat(), end.isoformat())
    hit = _presence.get(key)
    if hit is not None:
        return hit
    timeline = state.storages[sdef.name].timelines[(period, column)]
    request = CoverRequest.of(sdef.fact, start, end, time_column=column)
    check = completeness(catalog.rows, sdef, period, column, timeline, request,
                         state.storages[sdef.name].slice_timelines(period, column))
    required = [(r.slice, r.spans) for r in
                required_slices(sdef.dimensions, request.start, request.end)]
    found = presence_of(sdef.name, period, sdef.tz, start, end, required, check.lacking)
    _presence.put(key, found)
    return found


def forget_presence() -> None:
    """Empty the presence cache (tests, benchmarks)."""
    _presence.clear()


def stale_slices(stale: Iterable[StalePartition], sdef: StorageDef, period: UpdatePeriod,
                 column: str) -> dict[Slice, list[OrdinalRange]]:
    """The stale partitions of one dimensioned (storage, period), per slice, as ranges."""
    columns = sorted(d.column for d in sdef.dimensions)
    found: dict[Slice, set[int]] = {}
    for item in stale:
        part = item.partition
        value = part.values.get(column)
        if part.storage != sdef.name or UpdatePeriod.of(part.period) is not period or value is None:
            continue
        slice_ = tuple((c, part.values.get(c, "")) for c in columns)
        found.setdefault(slice_, set()).add(period.parse_ordinal(value, sdef.tz))
    return {s: runs(sorted(o)) for s, o in found.items()}


@dataclass(frozen=True)
class SliceLane:
    """One lane: a slice (or one value of one column), its stretches and totals."""

    slice: Slice
    stretches: tuple[Stretch, ...]

    def count(self, state: str) -> int:
        return sum(s.end - s.first for s in self.stretches if s.state == state)

    def to_json(self, at: Instants) -> SliceLaneJson:
        return {"slice": dict(self.slice), "label": slice_text(self.slice),
                "registered": self.count(REGISTERED), "missing": self.count(MISSING),
                "stale": self.count(STALE), "not_applicable": self.count(NOT_APPLICABLE),
                "stretches": [s.to_json(at) for s in self.stretches]}


def worst_first(lanes: Iterable[SliceLane]) -> list[SliceLane]:
    """Most missing partitions first, then by slice (ties keep a stable, readable order)."""
    return sorted(lanes, key=lambda lane: (-lane.count(MISSING), lane.slice))


def group_summary(column: str, kind: str, lanes: Sequence[SliceLane], period: UpdatePeriod
                  ) -> str:
    """``region: 1 of 2 slices incomplete, 19 HOURLY partitions missing (worst region=eu 19)``
    or ``region: all 1,000 slices complete``; ``lanes`` worst first."""
    noun = "values" if kind == "values" else "slices"
    bad = [lane for lane in lanes if lane.count(MISSING)]
    if not bad:
        return f"{column}: all {len(lanes):,} {noun} complete"
    total = sum(lane.count(MISSING) for lane in bad)
    named = ", ".join(f"{slice_text(lane.slice)} {lane.count(MISSING):,}"
                      for lane in bad[:SUMMARY_NAMED])
    more = f" and {len(bad) - SUMMARY_NAMED:,} more" if len(bad) > SUMMARY_NAMED else ""
    return (f"{column}: {len(bad):,} of {len(lanes):,} {noun} incomplete, {total:,} "
            f"{period.name} partitions missing (worst {named}{more})")


def sliced_storage(presence: SlicePresence, stale: Mapping[Slice, Sequence[OrdinalRange]],
                   tz: str) -> SlicedStorageJson:
    """The JSON of one dimensioned (storage, period): every slice lane, grouped and sorted.

    Cost: O(slices x stretches); slices with equal needs, gaps and stale ranges (a thousand
    complete regions) share one tiling.
    """
    p = presence
    at = Instants(p.period, tz, p.lo)
    tiled: dict[tuple[object, ...], tuple[Stretch, ...]] = {}

    def lane(slice_: Slice, needs: Sequence[OrdinalRange], lacking: Sequence[OrdinalRange],
             stale_in: Sequence[OrdinalRange]) -> SliceLane:
        key = (tuple(needs), tuple(lacking), tuple(stale_in))
        found = tiled.get(key)
        if found is None:
            found = tiled[key] = tuple(slice_stretches(needs, lacking, stale_in, p.lo, p.hi,
                                                       p.inside))
        return SliceLane(slice_, found)

    slices = worst_first(lane(s, needs, p.lacking.get(s, ()), stale.get(s, ()))
                         for s, needs in p.needs.items())
    columns = sorted({c for s in p.needs for c, _ in s})
    groups: list[tuple[str, str, list[SliceLane]]] = []
    if len(columns) > 1:
        for column in columns:
            groups.append((column, "values", worst_first(
                lane(*ranges) for ranges in value_ranges(column, p, stale))))
    groups.append((", ".join(columns), "slices", slices))
    out_groups: list[DimensionGroupJson] = []
    for column, kind, lanes in groups:
        out_groups.append({
            "column": column, "kind": kind,
            "summary": group_summary(column, kind, lanes, p.period),
            "incomplete": sum(1 for ln in lanes if ln.count(MISSING)),
            "missing": sum(ln.count(MISSING) for ln in lanes),
            "lanes": [ln.to_json(at) for ln in lanes]})
    return {"storage": p.storage, "period": p.period.name, "dimensions": columns,
            "slices": len(slices), "incomplete": out_groups[-1]["incomplete"],
            "missing": out_groups[-1]["missing"], "groups": out_groups}


def value_ranges(column: str, p: SlicePresence,
                 stale: Mapping[Slice, Sequence[OrdinalRange]]
                 ) -> list[tuple[Slice, list[OrdinalRange], list[OrdinalRange],
                                 list[OrdinalRange]]]:
    """Per value of ``column``: its one-column slice, and where it is required (where any of
    its slices is), lacking (any of them lacks its row) and stale (any of them is stale)."""
    needs: dict[str, list[OrdinalRange]] = {}
    lacking: dict[str, list[OrdinalRange]] = {}
    stale_of: dict[str, list[OrdinalRange]] = {}
    for s, ranges in p.needs.items():
        value = dict(s)[column]
        needs.setdefault(value, []).extend(ranges)
        lacking.setdefault(value, []).extend(p.lacking.get(s, ()))
        stale_of.setdefault(value, []).extend(stale.get(s, ()))
    return [(((column, v),), merge(needs[v]), merge(lacking[v]), merge(stale_of[v]))
            for v in needs]


def undeclared(state: FactState, column: str) -> list[UndeclaredJson]:
    """Per storage of ``column``, each non-time partition column that is not a dimension."""
    out: list[UndeclaredJson] = []
    for name, storage in sorted(state.storages.items()):
        sdef = storage.definition
        if column not in sdef.time_columns:
            continue
        for c, note in zip(sdef.undeclared_columns,
                           undeclared_notes(sdef.undeclared_columns, sdef.dimensions),
                           strict=True):
            out.append({"storage": name, "column": c, "note": note})
    return out


def sliced_lanes(catalog: Catalog, state: FactState, column: str, start: dt.datetime,
                 end: dt.datetime, stale: Sequence[StalePartition]
                 ) -> tuple[list[SlicedStorageJson], dict[tuple[str, UpdatePeriod],
                                                         SlicePresence]]:
    """Every dimensioned (storage, period) of ``column`` over the window: its slice lanes, and
    the presences (so the storage's own lane can count an hour only when it is complete)."""
    tz = state.definition.tz
    out: list[SlicedStorageJson] = []
    found: dict[tuple[str, UpdatePeriod], SlicePresence] = {}
    for name, storage in sorted(state.storages.items()):
        sdef = storage.definition
        if column not in sdef.time_columns or not sdef.dimensions:
            continue
        for period in sorted(sdef.periods, reverse=True):
            presence = read_presence(catalog, state, sdef, period, column, start, end)
            found[(name, period)] = presence
            out.append(sliced_storage(presence, stale_slices(stale, sdef, period, column), tz))
    return out, found


__all__ = ["DimensionGroupJson", "SliceLane", "SliceLaneJson", "SlicePresence",
           "SlicedStorageJson", "StretchJson", "UndeclaredJson", "forget_presence", "merge",
           "presence_of", "read_presence", "slice_stretches", "sliced_lanes", "sliced_storage",
           "stale_slices", "undeclared", "value_ranges"]
