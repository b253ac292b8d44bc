"""The Lens-style cover, done right: a test oracle and the benchmark baseline.

Largest period first; every slot of the largest period that fits is checked with
``exists_ordinal`` (one call per storage holding that period, best storage first); an absent
slot is covered recursively with the strictly smaller periods, and so are the left AND the right
remainders. It never gives up early, so with nothing registered it asks about every slot of
every period: 1 + 12 + 365 + 8760 + 525600 = 534,738 calls for a year with YEARLY..MINUTELY.
For nested period sets its answer is the minimal cover.

Why it shares no code with :mod:`airflow_partitions.cover` or the periods' arithmetic: a bug
there would otherwise be in the answer and in its check alike. ``WallClock`` finds partition
bounds with ``datetime`` and ``zoneinfo`` only (calendar periods step the local date and start
at the first instant at or after local midnight; sub-daily ones are fixed seconds on the local
clock's whole steps), and numbers them as the timelines do. From the package it takes only data:
the period names, the sources, the request's fields and each timeline's ``exists_ordinal``.
Cost: slot by slot, about a second per 500,000 slots.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple, TypeAlias
from zoneinfo import ZoneInfo

import pendulum

from airflow_partitions.cover import CoverRequest, CoverSource
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline

EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
ONE_US: Final = dt.timedelta(microseconds=1)
SECOND_US: Final = 1_000_000
#: Period names, coarsest first: the order the recursion tries them and the cover's objective
#: counts them in.
COARSEST_FIRST_NAMES: Final = (
    "YEARLY", "QUARTERLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY",
)
COARSEST_FIRST: Final = tuple(UpdatePeriod[name] for name in COARSEST_FIRST_NAMES)
#: Sub-daily periods: their length in microseconds.
FIXED_US: Final = {"HOURLY": 3600 * SECOND_US, "MINUTELY": 60 * SECOND_US,
                   "SECONDLY": SECOND_US}
#: Period -> (storage, timeline), best storage first.
ByPeriod: TypeAlias = dict[UpdatePeriod, list[tuple[str, PartitionTimeline]]]
_FIXED_OFFSET = re.compile(r"([+-])(\d{2}):(\d{2})")


def coarseness(period: UpdatePeriod) -> int:
    """0 for YEARLY up to 7 for SECONDLY."""
    return COARSEST_FIRST_NAMES.index(period.name)


def us_of(instant: dt.datetime) -> int:
    """Microseconds since 1970-01-01T00:00Z of an aware instant."""
    return dt.datetime.__sub__(instant, EPOCH) // ONE_US


class Slot(NamedTuple):
    """One partition: its ordinal (the timelines' numbering) and ``[start, end)`` in µs."""

    ordinal: int
    start: int
    end: int


class WallClock:
    """Partitions of every period in one zone, from ``datetime`` and ``zoneinfo`` alone."""

    def __init__(self, tz: str) -> None:
        fixed = _FIXED_OFFSET.fullmatch(tz)
        if tz == "UTC":
            self.zone: dt.tzinfo = dt.UTC
        elif fixed:
            minutes = int(fixed.group(2)) * 60 + int(fixed.group(3))
            self.zone = dt.timezone(dt.timedelta(minutes=minutes if fixed.group(1) == "+"
                                                 else -minutes))
        else:
            self.zone = ZoneInfo(tz)

    def local(self, us: int) -> dt.datetime:
        """The instant as a local (aware) time."""
        return (EPOCH + dt.timedelta(microseconds=us)).astimezone(self.zone)

    def slots(self, period: UpdatePeriod, a: int, b: int) -> list[Slot]:
        """The partitions of ``period`` wholly inside ``[a, b)``, in time order."""
        out: list[Slot] = []
        slot = self.slot_at(period, a)
        if slot.start < a:
            slot = self.following(period, slot)
        while slot.end <= b:
            out.append(slot)
            slot = self.following(period, slot)
        return out

    def slot_at(self, period: UpdatePeriod, us: int) -> Slot:
        """The partition holding instant ``us``."""
        step = FIXED_US.get(period.name)
        if step is not None:
            offset = self.offset_us(us)
            start = us - (us + offset) % step  # the local clock's last whole step
            return Slot((start + offset % step) // step, start, start + step)
        first = self.first_day(period, self.local(us).date())
        return Slot(self.calendar_ordinal(period, first), self.midnight(first),
                    self.midnight(self.next_first_day(period, first)))

    def following(self, period: UpdatePeriod, slot: Slot) -> Slot:
        """The partition after ``slot``."""
        step = FIXED_US.get(period.name)
        if step is not None:
            return Slot(slot.ordinal + 1, slot.end, slot.end + step)
        return self.slot_at(period, slot.end)

    def offset_us(self, us: int) -> int:
        offset = self.local(us).utcoffset()
        assert offset is not None
        return offset // ONE_US

    @staticmethod
    def first_day(period: UpdatePeriod, day: dt.date) -> dt.date:
        """The local date a calendar partition holding ``day`` starts on."""
        if period.name == "DAILY":
            return day
        if period.name == "WEEKLY":  # ISO weeks start on Monday
            return day - dt.timedelta(days=day.weekday())
        if period.name == "MONTHLY":
            return day.replace(day=1)
        if period.name == "QUARTERLY":
            return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
        return day.replace(month=1, day=1)

    @staticmethod
    def next_first_day(period: UpdatePeriod, first: dt.date) -> dt.date:
        """The local date the following calendar partition starts on."""
        if period.name in ("DAILY", "WEEKLY"):
            return first + dt.timedelta(days=1 if period.name == "DAILY" else 7)
        months = {"MONTHLY": 1, "QUARTERLY": 3, "YEARLY": 12}[period.name]
        index = first.year * 12 + first.month - 1 + months
        return dt.date(index // 12, index % 12 + 1, 1)

    @staticmethod
    def calendar_ordinal(period: UpdatePeriod, first: dt.date) -> int:
        """The timelines' number of the calendar partition starting on local date ``first``."""
        if period.name == "DAILY":
            return first.toordinal()
        if period.name == "WEEKLY":
            return (first.toordinal() - 1) // 7
        if period.name == "MONTHLY":
            return first.year * 12 + first.month - 1
        if period.name == "QUARTERLY":
            return first.year * 4 + (first.month - 1) // 3
        return first.year

    def midnight(self, day: dt.date) -> int:
        """The first instant at or after local midnight starting ``day`` (the earlier one of a
        repeated midnight; the end of the jump when DST skips it)."""
        wall = dt.datetime(day.year, day.month, day.day)
        candidates = [wall.replace(tzinfo=self.zone, fold=fold).astimezone(dt.UTC)
                      for fold in (0, 1)]
        real = [us_of(c) for c in candidates
                if c.astimezone(self.zone).replace(tzinfo=None) == wall]
        if real:
            return min(real)
        # skipped: the clock jumps over midnight somewhere between the two readings
        lo, hi = sorted(us_of(c) // SECOND_US for c in candidates)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.local(mid * SECOND_US).replace(tzinfo=None) >= wall:
                hi = mid
            else:
                lo = mid + 1
        return lo * SECOND_US


@dataclass(frozen=True)
class NaiveCover:
    """The baseline's answer: (storage, period, ordinal) in time order, gaps, and its cost."""

    partitions: tuple[tuple[str, UpdatePeriod, int], ...]
    missing: tuple[tuple[pendulum.DateTime, pendulum.DateTime], ...]
    exists_calls: int

    @property
    def coverable(self) -> bool:
        """Whether nothing is missing."""
        return not self.missing


@dataclass
class LensRun:
    """One run of the recursion: the sources by period (best storage first) and the answer."""

    clock: WallClock
    by_period: ByPeriod
    partitions: list[tuple[str, UpdatePeriod, int]] = field(default_factory=list)
    gaps: list[list[int]] = field(default_factory=list)
    calls: int = 0

    def cover(self, a: int, b: int, periods: Sequence[UpdatePeriod]) -> None:
        """Lens's recursion on ``[a, b)`` with ``periods`` (coarsest first)."""
        if a >= b:
            return
        fitting = next(((i, slots) for i, p in enumerate(periods)
                        if (slots := self.clock.slots(p, a, b))), None)
        if fitting is None:
            self.gap(a, b)
            return
        index, slots = fitting
        period, smaller = periods[index], periods[index + 1:]
        self.cover(a, slots[0].start, smaller)
        for slot in slots:
            for storage, timeline in self.by_period[period]:
                self.calls += 1
                if timeline.exists_ordinal(slot.ordinal):
                    self.partitions.append((storage, period, slot.ordinal))
                    break
            else:
                self.cover(slot.start, slot.end, smaller)
        self.cover(slots[-1].end, b, smaller)

    def gap(self, a: int, b: int) -> None:
        if self.gaps and self.gaps[-1][1] == a:
            self.gaps[-1][1] = b
        else:
            self.gaps.append([a, b])


def usable_sources(sources: Sequence[CoverSource], request: CoverRequest) -> ByPeriod:
    """Period -> (storage, timeline) the request allows, higher priority first, then name."""
    periods = None if request.periods is None else set(request.periods)
    storages = None if request.storages is None else set(request.storages)
    kept = [s for s in sources
            if (periods is None or s.period.name in periods)
            and (storages is None or s.storage in storages)]
    kept.sort(key=lambda s: (-s.priority, s.storage))
    by_period: ByPeriod = {}
    for s in kept:
        by_period.setdefault(s.period, []).append((s.storage, s.timeline))
    return by_period


def aligned_bounds(clock: WallClock, finest: UpdatePeriod, a: int, b: int,
                   align: str | None) -> tuple[int, int]:
    """The request's bounds widened (``outer``) or narrowed (``inner``) to ``finest``; refused
    (``ValueError``) when they are not partition starts and no alignment is asked for."""
    floor_a, floor_b = clock.slot_at(finest, a), clock.slot_at(finest, b)
    ceil_a = floor_a.start if floor_a.start == a else floor_a.end
    ceil_b = floor_b.start if floor_b.start == b else floor_b.end
    if align == "outer":
        return floor_a.start, ceil_b
    if align == "inner":
        return (ceil_a, floor_b.start) if ceil_a <= floor_b.start else (ceil_a, ceil_a)
    if (ceil_a, ceil_b) != (a, b):
        raise ValueError(f"bounds {a}, {b} (µs) do not start {finest.name} partitions")
    return a, b


def naive_cover_slots(
    sources: Sequence[CoverSource], request: CoverRequest, *, tz: str = "UTC"
) -> NaiveCover:
    """Cover the request slot by slot with ``exists_ordinal``, counting the calls."""
    clock = WallClock(tz)
    by_period = usable_sources(sources, request)
    a, b = us_of(request.start), us_of(request.end)
    if by_period and a != b:
        finest = max(by_period, key=coarseness)
        a, b = aligned_bounds(clock, finest, a, b, request.align)
    run = LensRun(clock, by_period)
    run.cover(a, b, sorted(by_period, key=coarseness))
    # in the zone object pendulum gives (as the cover's bounds), so the two compare equal
    shown = clock.zone if _FIXED_OFFSET.fullmatch(tz) else pendulum.timezone(tz)
    return NaiveCover(
        tuple(run.partitions),
        tuple((pendulum.instance(clock.local(x).astimezone(shown), tz=shown),
               pendulum.instance(clock.local(y).astimezone(shown), tz=shown))
              for x, y in run.gaps),
        run.calls,
    )
