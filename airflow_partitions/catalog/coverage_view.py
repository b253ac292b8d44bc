"""What the Partitions view draws: per (storage, period) lane, the stretches of a window.

A *stretch* is a maximal run of partitions in one state, ``registered``, ``missing``,
``stale`` (registered, but built from inputs that changed since: :mod:`.staleness`) or
``not_applicable`` (absent, but sticking out of the window, so no cover of the window could use
it: a MONTHLY partition over three days is not a gap worth a red bar; issue 31). The stretches
of a lane tile the partitions overlapping the window, in time order.

Why ranges: everything here is computed from the timelines' maximal ranges
(``ordinal_ranges(lo, hi)``), so a window over a million hourly partitions with a thousand holes
costs about two thousand stretches, never a million partitions. No Airflow here: the UI
(:mod:`airflow_partitions.ui`) only serves and draws this.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import pendulum

from airflow_partitions.catalog.cache import FactState
from airflow_partitions.catalog.staleness import StalePartition, overlap_window
from airflow_partitions.cover import Cover, CoverRequest, status_line
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod, zone
from airflow_partitions.timelines.base import OrdinalRange, difference_ranges, runs

if TYPE_CHECKING:
    from airflow_partitions.catalog.facade import Catalog

REGISTERED: Final = "registered"
MISSING: Final = "missing"
STALE: Final = "stale"
NOT_APPLICABLE: Final = "not_applicable"
#: The window shown when a fact has no partition at all: the last day (UTC) before ``now``.
EMPTY_WINDOW: Final = dt.timedelta(days=1)
#: How many missing ranges of the cover carry their text (the status line shows three).
MISSING_DESCRIBED: Final = 20
#: How many covers (with their status line and JSON) the process keeps, most recent first.
COVER_CACHE_SIZE: Final = 32

CoverEntry = tuple[Cover, str, dict[str, Any]]
_covers: OrderedDict[tuple[str, str, int, str], CoverEntry] = OrderedDict()
_covers_lock = threading.Lock()


class Instants:
    """Starts and values of one period's partitions in one zone, fast where that is exact.

    Why: ``UpdatePeriod.start_of`` and ``format_ordinal`` build zone-aware pendulum instants,
    some 40 µs a call; a page of two thousand stretches needs eight thousand of them. Fixed
    periods (SECONDLY, MINUTELY, HOURLY) start at instants linear in the ordinal, so one anchor
    and a step give them all; values are printed directly in UTC, where no wall-clock hour
    repeats. Everything else goes through the period itself. Tests hold both paths equal.
    """

    #: How many of (month, day, hour, minute, second) each fixed period's value prints.
    FIXED: Final = {UpdatePeriod.SECONDLY: 5, UpdatePeriod.MINUTELY: 4, UpdatePeriod.HOURLY: 3}

    def __init__(self, period: UpdatePeriod, tz: str, anchor: int) -> None:
        self.period, self.tz, self.anchor = period, tz, anchor
        self.zone = zone(tz)
        self.fixed = period in self.FIXED
        if self.fixed:
            t0 = period.start_of(anchor, tz).timestamp()
            self.t0 = dt.datetime.fromtimestamp(t0, dt.UTC)  # plain datetimes from here on
            self.step = dt.timedelta(seconds=period.start_of(anchor + 1, tz).timestamp() - t0)
        self.utc = self.fixed and tz == "UTC"

    def start(self, ordinal: int) -> dt.datetime:
        if not self.fixed:
            return self.period.start_of(ordinal, self.tz)
        instant = self.t0 + self.step * (ordinal - self.anchor)
        return instant if self.utc else instant.astimezone(self.zone)

    def value(self, ordinal: int) -> str:
        if not self.utc:
            return self.period.format_ordinal(ordinal, self.tz)
        i = self.t0 + self.step * (ordinal - self.anchor)
        fields = (i.month, i.day, i.hour, i.minute, i.second)[:self.FIXED[self.period]]
        return f"{i.year:04d}" + "".join(f"-{f:02d}" for f in fields)


@dataclass(frozen=True)
class Stretch:
    """Partitions ``[first, end)`` (ordinals) of one lane, all in ``state``."""

    state: str
    first: int
    end: int

    def to_json(self, at: Instants) -> dict[str, Any]:
        """``{"state", "start", "end", "first", "last", "partitions"}`` (values inclusive)."""
        return {
            "state": self.state,
            "start": at.start(self.first).isoformat(),
            "end": at.start(self.end).isoformat(),
            "first": at.value(self.first),
            "last": at.value(self.end - 1),
            "partitions": self.end - self.first,
        }


@dataclass(frozen=True)
class LaneView:
    """One (storage, period) lane: its stretches over the window, and its totals."""

    storage: str
    period: UpdatePeriod
    priority: int
    stretches: tuple[Stretch, ...]

    def count(self, state: str) -> int:
        return sum(s.end - s.first for s in self.stretches if s.state == state)

    def to_json(self, tz: str) -> dict[str, Any]:
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


def lane_stretches(present: Iterable[OrdinalRange], stale: Iterable[OrdinalRange],
                   lo: int, hi: int, inside: OrdinalRange | None = None) -> list[Stretch]:
    """Tile ``[lo, hi)``: present ranges (minus stale ones) registered, the rest missing, or
    not applicable where it lies outside ``inside`` (the partitions wholly in the window).

    >>> [(s.state, s.first, s.end) for s in lane_stretches([(2, 5)], [(3, 4)], 0, 6)]
    [('missing', 0, 2), ('registered', 2, 3), ('stale', 3, 4), ('registered', 4, 5), \
('missing', 5, 6)]
    >>> [(s.state, s.first, s.end) for s in lane_stretches([], [], 0, 3, inside=(1, 3))]
    [('not_applicable', 0, 1), ('missing', 1, 3)]
    """
    have = list(present)
    gaps = difference_ranges([(lo, hi)], have)
    usable = [(lo, hi)] if inside is None else [inside] if inside[0] < inside[1] else []
    absent = difference_ranges(gaps, difference_ranges(gaps, usable))  # gaps ∩ usable
    beside = difference_ranges(gaps, usable)
    # stale is a kind of registered: a stale row the timeline does not advertise stays missing
    stale_in = difference_ranges([(max(b, lo), min(e, hi)) for b, e in stale
                                  if b < hi and e > lo], absent)
    out = [Stretch(REGISTERED, b, e) for b, e in difference_ranges(have, stale_in)]
    out += [Stretch(STALE, b, e) for b, e in stale_in]
    out += [Stretch(MISSING, b, e) for b, e in absent]
    out += [Stretch(NOT_APPLICABLE, b, e) for b, e in beside]
    return sorted(out, key=lambda s: s.first)


def inside_window(period: UpdatePeriod, tz: str, start: dt.datetime, end: dt.datetime,
                  lo: int, hi: int) -> OrdinalRange:
    """Of the partitions ``[lo, hi)`` overlapping ``[start, end)``, those wholly inside it:
    the only ones a cover of the window can use (empty, ``(lo, lo)``, when none fits)."""
    first = lo if period.start_of(lo, tz) >= start else lo + 1
    last = hi if period.start_of(hi, tz) <= end else hi - 1
    return (first, max(first, last))


def stale_used(cover: Cover, stale: Mapping[tuple[str, UpdatePeriod], list[OrdinalRange]]
               ) -> int:
    """How many of the cover's partitions are stale: O(runs times stale ranges), no row read."""
    used = 0
    for run in cover.runs:
        for b, e in stale.get((run.storage, run.period), ()):
            used += max(0, min(e, run.end) - max(b, run.first))
    return used


def with_stale_used(status: str, coverable: bool, used: int) -> str:
    """The sensor's status line, plus how many stale partitions the cover uses (issue 31).

    >>> with_stale_used("ev [00:00, 01:00): 100.0% covered by 1 partition(s), coverable", True, 1)
    'ev [00:00, 01:00): 100.0% covered by 1 partition(s), coverable, 1 stale partition used'
    """
    if not used:
        return status
    sep = ", " if coverable and status.endswith("coverable") else "; "  # after notes: "; "
    return f"{status}{sep}{used} stale partition{'s' * (used != 1)} used"


def fact_extent(state: FactState, column: str) -> tuple[pendulum.DateTime, pendulum.DateTime]:
    """From the first partition's start to the latest's end, over every lane of ``column``.

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
                ends.append(period.start_of(latest + 1, tz))
    if not starts:
        end = pendulum.now(tz).start_of("day")
        return end - EMPTY_WINDOW, end
    return min(starts), max(ends)


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
          stale: Mapping[tuple[str, UpdatePeriod], list[OrdinalRange]]) -> list[LaneView]:
    """Every lane of ``column``, by storage name then coarsest period first."""
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
            inside = inside_window(period, tz, start, end, lo, hi)
            out.append(LaneView(name, period, sdef.priority,
                                tuple(lane_stretches(present, stale.get((name, period), ()),
                                                     lo, hi, inside))))
    return out


def cover_json(cover: Cover, tz: str) -> dict[str, Any]:
    """The cover as runs (never one entry per partition) and its missing ranges; the first
    :data:`MISSING_DESCRIBED` missing ranges carry the sensor's text for them."""
    instants: dict[UpdatePeriod, Instants] = {}
    runs_out = []
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
    with _covers_lock:
        hit = _covers.get(key)
        if hit is not None:
            _covers.move_to_end(key)
            return hit
    cover = catalog.cover_with_partitions(request, verify=False).cover
    entry = (cover, status_line(cover), cover_json(cover, tz))
    with _covers_lock:
        _covers[key] = entry
        while len(_covers) > COVER_CACHE_SIZE:
            _covers.popitem(last=False)
    return entry


def forget_covers() -> None:
    """Empty the cover cache (tests, benchmarks)."""
    with _covers_lock:
        _covers.clear()


def fact_view(catalog: Catalog, fact: str, start: Any = None, end: Any = None, *,
              time_column: str | None = None, with_stale: bool = True,
              align: str | None = "outer") -> dict[str, Any]:
    """The JSON of one fact's view over ``[start, end)`` (default: its whole extent).

    The cover is the one the sensor computes from the cached timelines, not re-verified
    against the partition rows (the sensor does that before it succeeds); its status line is
    the sensor's, word for word, plus how many stale partitions the cover uses when it uses
    any (``coverable, 1 stale partition used``: the sensor would succeed on them). The cover
    is reused while the fact's generation stands (:func:`cached_cover`); the stale check and
    the lanes are computed on every call.
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
    views = lanes(state, column, cover.start, cover.end, stale_by_lane)
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
    }


def facts_json(catalog: Catalog) -> list[dict[str, Any]]:
    """Every fact with its time columns, zone and storages (definitions only: no timeline)."""
    storages: dict[str, list[dict[str, Any]]] = {}
    for sdef in catalog.list_storages():
        storages.setdefault(sdef.fact, []).append(
            {"name": sdef.name, "periods": [p.name for p in sdef.periods],
             "priority": sdef.priority})
    return [
        {"name": f.name, "tz": f.tz, "time_columns": list(f.time_columns),
         "storages": sorted(storages.get(f.name, []), key=lambda s: str(s["name"]))}
        for f in sorted(catalog.list_facts(), key=lambda f: f.name)
    ]
