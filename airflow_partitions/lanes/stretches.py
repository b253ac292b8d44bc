"""The stretches the Partitions view draws: states, fast instants, and the tiling of a lane.

Shared by the per-(storage, period) lanes (:mod:`.fact_lanes`) and the per-slice lanes
(:mod:`.slice_lanes`). A *stretch* is a maximal run of partitions in one state; everything here
works on ordinal ranges, never one entry per partition. No Airflow, no store access.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, TypedDict

from airflow_partitions.periods import UpdatePeriod, zone
from airflow_partitions.timelines import OrdinalRange, difference_ranges

REGISTERED: Final = "registered"
MISSING: Final = "missing"
STALE: Final = "stale"
NOT_APPLICABLE: Final = "not_applicable"


class Instants:
    """Starts and values of one period's partitions in one zone, fast where that is exact.

    Why: ``UpdatePeriod.start_of`` and ``format_ordinal`` build zone-aware pendulum instants,
    some 40 µs a call; a page of two thousand stretches needs eight thousand of them. Fixed
    periods (SECONDLY, MINUTELY, HOURLY) start at instants linear in the ordinal, so one anchor
    and a step give them all; values are printed directly in UTC, where no wall-clock hour
    repeats. Everything else goes through the period itself. Tests hold both paths equal.
    """

    #: How many of (month, day, hour, minute, second) each fixed period's value prints.
    FIXED: Final[dict[UpdatePeriod, int]] = {
        p: 2 + p.spec.clock_fields for p in UpdatePeriod if p.spec.fixed}

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


class StretchJson(TypedDict):
    """:meth:`Stretch.to_json`: a lane's stretch, its instants and its first and last value."""

    state: str
    start: str
    end: str
    first: str
    last: str
    partitions: int


@dataclass(frozen=True)
class Stretch:
    """Partitions ``[first, end)`` (ordinals) of one lane, all in ``state``."""

    state: str
    first: int
    end: int

    def to_json(self, at: Instants) -> StretchJson:
        """``{"state", "start", "end", "first", "last", "partitions"}`` (values inclusive)."""
        return {
            "state": self.state,
            "start": at.start(self.first).isoformat(),
            "end": at.start(self.end).isoformat(),
            "first": at.value(self.first),
            "last": at.value(self.end - 1),
            "partitions": self.end - self.first,
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
