"""What the Partitions view draws: per (storage, period) lane, the stretches of a window.

A *stretch* is a maximal run of partitions in one state, ``registered``, ``missing``, ``stale``
(registered, but built from inputs that changed since: :mod:`.staleness`) or ``not_applicable``
(absent, but sticking out of the window, so no cover of the window could use it: a MONTHLY partition
over three days is not a gap worth a red bar). The stretches of a lane tile the partitions
overlapping the window, in time order.

Why ranges: everything here is computed from the timelines' maximal ranges
(``ordinal_ranges(lo, hi)``), so a window over a million hourly partitions with a thousand holes
costs about two thousand stretches, never a million partitions. No Airflow here: the UI
(:mod:`airflow_partitions.ui`) only serves and draws this.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypedDict

import pendulum

from airflow_partitions.catalog import FactState, StalePartition, overlap_window
from airflow_partitions.cover import Cover, CoverRequest, status_line
from airflow_partitions.errors import InvalidInput, InvalidRange
from airflow_partitions.lanes.recent import Recent
from airflow_partitions.lanes.slice_lanes import (
    SlicedStorageJson,
    SlicePresence,
    UndeclaredJson,
    sliced_lanes,
    undeclared,
)
from airflow_partitions.lanes.stretches import (
    MISSING,
    NOT_APPLICABLE,
    REGISTERED,
    STALE,
    Instants,
    Stretch,
    StretchJson,
    inside_window,
    lane_stretches,
)
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import OrdinalRange, runs

if TYPE_CHECKING:
    from airflow_partitions.catalog import Catalog

#: The window shown when a fact has no partition at all: the last day (UTC) before ``now``.
EMPTY_WINDOW: Final = dt.timedelta(days=1)
#: How many missing ranges of the cover carry their text (the status line shows three).
MISSING_DESCRIBED: Final = 20
#: How many covers (with their status line and JSON) the process keeps, most recent first.
COVER_CACHE_SIZE: Final = 32



class LaneJson(TypedDict):
    """:meth:`LaneView.to_json`: one (storage, period) lane, its totals and stretches."""

    storage: str
    period: str
    priority: int
    registered: int
    missing: int
    stale: int
    not_applicable: int
    stretches: list[StretchJson]


class ViewRunJson(TypedDict):
    """A run of the cover, as the view draws it (never one entry per partition)."""

    storage: str
    period: str
    partitions: int
    start: str
    end: str


class ViewMissingJson(TypedDict):
    """A missing range; ``text`` is the sensor's for the first ones, else None."""

    start: str
    end: str
    text: str | None


class ViewCoverJson(TypedDict):
    """:func:`cover_json`: the cover as runs and missing ranges."""

    runs: list[ViewRunJson]
    missing: list[ViewMissingJson]


class ExtentJson(TypedDict):
    start: str
    end: str


class FactViewJson(TypedDict):
    """:func:`fact_view`, what ``GET .../api/facts/{fact}/view`` answers and the page draws."""

    fact: str
    tz: str
    time_column: str
    time_columns: list[str]
    start: str
    end: str
    extent: ExtentJson
    status: str
    coverable: bool
    stale_used: int
    covered_fraction: float
    stale_checked: bool
    cover: ViewCoverJson
    lanes: list[LaneJson]
    slices: list[SlicedStorageJson]
    undeclared: list[UndeclaredJson]


class StorageJson(TypedDict):
    name: str
    periods: list[str]
    priority: int


class FactJson(TypedDict):
    """One entry of :func:`facts_json` (``GET .../api/facts``)."""

    name: str
    tz: str
    time_columns: list[str]
    storages: list[StorageJson]


CoverEntry = tuple[Cover, str, ViewCoverJson]
_covers: Recent[tuple[str, str, int, str], CoverEntry] = Recent(COVER_CACHE_SIZE)


@dataclass(frozen=True)
class LaneView:
    """One (storage, period) lane: its stretches over the window, and its totals."""

    storage: str
    period: UpdatePeriod
    priority: int
    stretches: tuple[Stretch, ...]

    def count(self, state: str) -> int:
        return sum(s.end - s.first for s in self.stretches if s.state == state)

    def to_json(self, tz: str) -> LaneJson:
        at = Instants(self.period, tz, self.stretches[0].first if self.stretches else 0)
        return {
            "storage": self.storage,
            "period": self.period.name,
            "priority": self.priority,
            "registered": self.count(REGISTERED),
            "missing": self.count(MISSING),
            "stale": self.count(STALE),
            "not_applicable": self.count(NOT_APPLICABLE),
            "stretches": [s.to_json(at) for s in self.stretches],
        }


def stale_used(cover: Cover, stale: Mapping[tuple[str, UpdatePeriod], list[OrdinalRange]]
               ) -> int:
    """How many of the cover's partitions are stale: O(runs times stale ranges), no row read."""
    used = 0
    for run in cover.runs:
        for b, e in stale.get((run.storage, run.period), ()):
            used += max(0, min(e, run.end) - max(b, run.first))
    return used


def with_stale_used(status: str, coverable: bool, used: int) -> str:
    """The sensor's status line, plus how many stale partitions the cover uses.

    >>> with_stale_used("ev [00:00, 01:00): 100.0% covered by 1 partition(s), coverable", True, 1)
    'ev [00:00, 01:00): 100.0% covered by 1 partition(s), coverable, 1 stale partition used'
    """
    if not used:
        return status
    sep = ", " if coverable and status.endswith("coverable") else "; "  # after notes: "; "
    return f"{status}{sep}{used} stale partition{'s' * (used != 1)} used"


def fact_extent(state: FactState, column: str) -> tuple[pendulum.DateTime, pendulum.DateTime]:
    """From the first partition's start to the latest's end, over every lane of ``column``.

    The calendar's last partition (``DAILY 9999-12-31``) ends where no instant can be held:
    the extent stops at its start instead (else the default view would answer 400).

    Why the finest lane's bounds are kept as they are: any partition start is aligned for the
    periods that nest in it, so the cover of the extent needs no alignment.
    """
    tz = state.definition.tz
    starts: list[pendulum.DateTime] = []
    ends: list[pendulum.DateTime] = []
    for storage in state.storages.values():
        if column not in storage.definition.time_columns:
            continue
        for period in storage.definition.periods:
            timeline = storage.timelines[(period, column)]
            first, latest = timeline.first_ordinal(), timeline.latest_ordinal()
            if first is not None and latest is not None:
                starts.append(period.start_of(first, tz))
                try:
                    ends.append(period.start_of(latest + 1, tz))
                except InvalidRange:  # the calendar's last partition ends at 10000-01-01,
                    ends.append(period.start_of(latest, tz))  # which no instant holds
    if not starts:
        end = pendulum.now(tz).start_of("day")
        return end - EMPTY_WINDOW, end
    start, end = min(starts), max(ends)
    return (end - EMPTY_WINDOW if start >= end else start), end


def stale_runs(stale: Iterable[StalePartition], column: str,
               tz: str) -> dict[tuple[str, UpdatePeriod], list[OrdinalRange]]:
    """Stale partitions grouped per (storage, period) as ordinal runs."""
    ordinals: dict[tuple[str, UpdatePeriod], set[int]] = {}
    for item in stale:
        part = item.partition
        period = UpdatePeriod.of(part.period)
        value = part.values.get(column)
        if value is not None:
            ordinals.setdefault((part.storage, period), set()).add(
                period.parse_ordinal(value, tz))
    return {key: runs(sorted(found)) for key, found in ordinals.items()}


def lanes(state: FactState, column: str, start: dt.datetime, end: dt.datetime,
          stale: Mapping[tuple[str, UpdatePeriod], list[OrdinalRange]],
          sliced: Mapping[tuple[str, UpdatePeriod], SlicePresence] | None = None
          ) -> list[LaneView]:
    """Every lane of ``column``, by storage name then coarsest period first.

    A (storage, period) in ``sliced`` (declared dimensions) shows a partition registered only where
    every required slice has its row, as the cover counts it; its own timeline alone would show an
    hour as soon as any region has it.
    """
    tz = state.definition.tz
    out: list[LaneView] = []
    for name, storage in sorted(state.storages.items()):
        sdef = storage.definition
        if column not in sdef.time_columns:
            continue
        for period in sorted(sdef.periods, reverse=True):
            lo, hi = overlap_window(period, tz, start, end)
            assert lo is not None and hi is not None
            present = storage.timelines[(period, column)].ordinal_ranges(lo, hi)
            presence = (sliced or {}).get((name, period))
            if presence is not None:
                present = presence.complete(present)
            inside = inside_window(period, tz, start, end, lo, hi)
            out.append(LaneView(name, period, sdef.priority,
                                tuple(lane_stretches(present, stale.get((name, period), ()),
                                                     lo, hi, inside))))
    return out


def cover_json(cover: Cover, tz: str) -> ViewCoverJson:
    """The cover as runs (never one entry per partition) and its missing ranges; the first
    :data:`MISSING_DESCRIBED` missing ranges carry the sensor's text for them."""
    instants: dict[UpdatePeriod, Instants] = {}
    runs_out: list[ViewRunJson] = []
    for r in cover.runs:
        at = instants.setdefault(r.period, Instants(r.period, tz, r.first))
        runs_out.append({"storage": r.storage, "period": r.period.name, "partitions": r.count,
                         "start": at.start(r.first).isoformat(),
                         "end": at.start(r.end).isoformat()})
    return {
        "runs": runs_out,
        "missing": [{"start": m.start.isoformat(), "end": m.end.isoformat(),
                     "text": m.describe() if i < MISSING_DESCRIBED else None}
                    for i, m in enumerate(cover.missing)],
    }


def covered_fraction(cover: Cover) -> float:
    """``Cover.covered_fraction`` on plain timestamps (pendulum's differences are slow)."""
    total = cover.end.timestamp() - cover.start.timestamp()
    if total <= 0:
        return 1.0
    gaps = sum(m.end.timestamp() - m.start.timestamp() for m in cover.missing)
    return (total - gaps) / total


def cached_cover(catalog: Catalog, request: CoverRequest, generation: int,
                 tz: str) -> CoverEntry:
    """The request's cover from the cached timelines, its status line and its JSON.

    Why a cache: the cover is most of a view's cost (describing every missing range), and it
    depends only on the timelines, which change only with the fact's generation; so views of
    the same range (paging through lanes, reloads, several people) reuse it until the next
    write. Keyed by store, fact, generation and request; the last :data:`COVER_CACHE_SIZE`.
    """
    key = (catalog.kv.url, request.require_fact(), generation,
           json.dumps(request.to_json(), sort_keys=True))
    hit = _covers.get(key)
    if hit is not None:
        return hit
    cover = catalog.cover_with_partitions(request, verify=False).cover
    entry = (cover, status_line(cover), cover_json(cover, tz))
    _covers.put(key, entry)
    return entry


def forget_covers() -> None:
    """Empty the cover cache (tests, benchmarks)."""
    _covers.clear()


def fact_view(catalog: Catalog, fact: str, start: dt.datetime | str | None = None,
              end: dt.datetime | str | None = None, *,
              time_column: str | None = None, with_stale: bool = True,
              align: str | None = "outer") -> FactViewJson:
    """The JSON of one fact's view over ``[start, end)`` (default: its whole extent).

    The cover is the one the sensor computes from the cached timelines, not re-verified
    against the partition rows (the sensor does that before it succeeds); its status line is
    the sensor's, word for word, plus how many stale partitions the cover uses when it uses
    any (``coverable, 1 stale partition used``: the sensor would succeed on them). The cover
    is reused while the fact's generation stands (:func:`cached_cover`), and so is each
    dimensioned storage's slice presence (:func:`.slice_lanes.read_presence`); the stale check
    and the lanes are computed on every call. ``slices``: per dimensioned (storage, period),
    every slice lane, grouped per dimension, worst first (:mod:`.slice_lanes`); ``undeclared``:
    the non-time partition columns that are not dimensions (``region: not a dimension, any
    value counts``).
    """
    state = catalog.fact_state(fact)
    fdef = state.definition
    column = time_column or fdef.time_columns[0]
    if column not in fdef.time_columns:
        raise InvalidInput(f"{column!r} is not a time column of fact {fact!r} "
                           f"({', '.join(fdef.time_columns)})")
    extent = fact_extent(state, column)
    request = CoverRequest.of(fact, start if start is not None else extent[0],
                              end if end is not None else extent[1], time_column=column,
                              align=align)
    cover, status, cover_doc = cached_cover(catalog, request, state.generation, fdef.tz)
    stale = catalog.stale(fact, cover.start, cover.end, time_column=column) \
        if with_stale else []
    stale_by_lane = stale_runs(stale, column, fdef.tz)
    slices, presences = sliced_lanes(catalog, state, column, cover.start, cover.end, stale)
    views = lanes(state, column, cover.start, cover.end, stale_by_lane, presences)
    used = stale_used(cover, stale_by_lane)
    return {
        "fact": fact,
        "tz": fdef.tz,
        "time_column": column,
        "time_columns": list(fdef.time_columns),
        "start": cover.start.isoformat(),
        "end": cover.end.isoformat(),
        "extent": {"start": extent[0].isoformat(), "end": extent[1].isoformat()},
        "status": with_stale_used(status, cover.coverable, used),
        "coverable": cover.coverable,
        "stale_used": used,
        "covered_fraction": covered_fraction(cover),
        "stale_checked": with_stale,
        "cover": cover_doc,
        "lanes": [lane.to_json(fdef.tz) for lane in views],
        "slices": slices,
        "undeclared": undeclared(state, column),
    }


def facts_json(catalog: Catalog) -> list[FactJson]:
    """Every fact with its time columns, zone and storages (definitions only: no timeline)."""
    storages: dict[str, list[StorageJson]] = {}
    for sdef in catalog.list_storages():
        storages.setdefault(sdef.fact, []).append(
            {"name": sdef.name, "periods": [p.name for p in sdef.periods],
             "priority": sdef.priority})
    return [
        {"name": f.name, "tz": f.tz, "time_columns": list(f.time_columns),
         "storages": sorted(storages.get(f.name, []), key=lambda s: s["name"])}
        for f in sorted(catalog.list_facts(), key=lambda f: f.name)
    ]
