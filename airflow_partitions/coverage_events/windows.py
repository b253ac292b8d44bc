"""The windows of a coverage asset and, per window, whether the catalog can cover it now and
from which partition versions.

Why a cover per window and not one over the whole history: a window is due when its own cover
exists, the cover its consumer's covered job will ask for. A partition that straddles two
windows (a WEEKLY one under MONTHLY windows) covers neither alone, which a cover of the union
would hide. The whole history is read once, to find the windows worth asking about
(:func:`candidate_windows`); each candidate then costs one verified cover of its own range.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pendulum

from airflow_partitions.catalog import (
    Catalog,
    Dimension,
    Partition,
    required_slices,
    select_slices,
)
from airflow_partitions.cover import CoverRequest, NeededPartitions, missing_list
from airflow_partitions.coverage_events.spec import CoverageAssetSpec, Slice

#: What a window was made of: (storage, period, values, version) per partition, sorted.
InputRef = tuple[str, str, str, int]


@dataclass(frozen=True)
class Window:
    """One window of a coverage asset: ``[start, end)``, of one slice when per slice."""

    key: str
    start: pendulum.DateTime
    end: pendulum.DateTime
    slice: Slice = ()

    def where(self, spec: CoverageAssetSpec) -> str | None:
        """The slice filter a cover of this window takes: the asset's, and the slice's values."""
        terms = [f"{column} = '{value.replace(chr(39), chr(39) * 2)}'"
                 for column, value in self.slice]
        if spec.where is not None:
            terms.insert(0, f"({spec.where})")
        return " AND ".join(terms) or None


@dataclass(frozen=True)
class WindowState:
    """A window as the catalog answers it now: coverable from ``inputs``, or what it lacks."""

    window: Window
    coverable: bool
    inputs: tuple[InputRef, ...] = ()
    lacks: str = ""


def input_ref(p: Partition) -> InputRef:
    return (p.storage, p.period.name, ",".join(f"{k}={v}" for k, v in sorted(p.values.items())),
            p.version)


def window_state(catalog: Catalog, spec: CoverageAssetSpec, window: Window) -> WindowState:
    """The fresh cover of one window, verified against its rows (stale partitions do not
    count: a day rolled up from an hour that was restated is due again from its hours).
    Cost: one verified cover of the window's range (its rows, and their lineage)."""
    request = CoverRequest.of(spec.fact, window.start, window.end, where=window.where(spec),
                              fresh_only=True)
    verified = catalog.cover_with_partitions(request)
    cover = verified.cover
    if not cover.coverable:
        lacks = "; ".join([*missing_list(cover, 3), *cover.notes])
        return WindowState(window, False, lacks=lacks or "not coverable")
    return WindowState(window, True, tuple(sorted(input_ref(p) for p in verified.partitions)))


def windows_in(catalog: Catalog, spec: CoverageAssetSpec, tz: str, start: dt.datetime,
               end: dt.datetime) -> Iterator[Window]:
    """Every window of ``spec`` whose range lies in ``[start, end)`` (widened outward to
    whole windows), per required slice of it when per slice. O(windows x slices)."""
    period = spec.period
    at = period.truncate(start, tz)
    dimensions = _dimensions(catalog, spec.fact)
    while at < end:
        nxt = period.next(at, tz)
        if not spec.per_slice or not dimensions:
            yield Window(spec.key(at, tz), at, nxt)
        else:
            required = select_slices(required_slices(dimensions, at, nxt), dimensions,
                                     spec.where)
            for r in required:
                yield Window(spec.key(at, tz, r.slice), at, nxt, r.slice)
        at = nxt


def slice_columns(catalog: Catalog, fact: str) -> tuple[str, ...]:
    """The declared dimension columns of a fact's storages, sorted: a per-slice key's order."""
    return tuple(sorted({d.column for d in _dimensions(catalog, fact)}))


def _dimensions(catalog: Catalog, fact: str) -> list[Dimension]:
    """The fact's declared dimensions, one per column (the first storage declaring it)."""
    seen: dict[str, Dimension] = {}
    for sdef in catalog.list_storages(fact):
        for d in sdef.dimensions:
            seen.setdefault(d.column, d)
    return list(seen.values())


def extent(catalog: Catalog, fact: str) -> tuple[pendulum.DateTime, pendulum.DateTime] | None:
    """The span from the first to the last partition any storage of ``fact`` advertises
    (None when it has none). Cost: the cached timelines' ends, one generation read."""
    state = catalog.fact_state(fact)
    lo: pendulum.DateTime | None = None
    hi: pendulum.DateTime | None = None
    for storage in state.storages.values():
        timelines = [*storage.timelines.values(),
                     *(t for per_slice in storage.slices.values() for t in per_slice.values())]
        for timeline in timelines:
            first, latest = timeline.first(), timeline.latest()
            if first is None or latest is None:
                continue
            lo = first.start if lo is None else min(lo, first.start)
            hi = latest.end if hi is None else max(hi, latest.end)
    if lo is None or hi is None:
        return None
    tz = state.definition.tz
    return (pendulum.instance(lo).in_timezone(tz),
            pendulum.instance(hi).in_timezone(tz))


def candidate_windows(catalog: Catalog, spec: CoverageAssetSpec, tz: str,
                      since: dt.datetime | None = None) -> list[Window]:
    """The windows of ``spec`` inside the fact's extent (from ``since`` when given) that one
    cover of the whole extent does not already prove incomplete. Cost: one cover of the
    extent from the cached timelines (no row read), then O(windows)."""
    span = extent(catalog, spec.fact)
    if span is None:
        return []
    lo, hi = span
    if since is not None:
        lo = max(lo, pendulum.instance(since))
    lo, hi = spec.period.truncate(lo, tz), spec.period.ceil(hi, tz)
    if lo >= hi:
        return []
    cover = catalog.cover(spec.fact, lo, hi, verify=False, where=spec.where)
    out = []
    for window in windows_in(catalog, spec, tz, lo, hi):
        lacking = [m for m in cover.missing if m.start < window.end and window.start < m.end]
        if not lacking:
            out.append(window)
        elif window.slice and not any(_lacks(m.needed, window.slice) for m in lacking):
            out.append(window)  # only other slices lack partitions there
    return out


def _lacks(needed: Sequence[NeededPartitions], slice_: Slice) -> bool:
    """Whether a missing range's needed partitions say ``slice_`` lacks some: one names it,
    or none names any slice (a gap of every slice). The window's own cover has the last word;
    this only spares the covers of windows surely incomplete."""
    named = [n.dimensions for n in needed if n.dimensions]
    return not named or slice_ in named
