"""The planner's core: which missing partitions to produce so that a range becomes coverable.

Pure and integer-only (ordinals and microseconds, like :mod:`airflow_partitions.cover.compute`):
no store, no pendulum objects, so a year of hourly slots plans in milliseconds.

The rule, applied on a nested chain of periods (coarsest first), on ``[u, v)``:

* a slot of the coarsest period that fits inside ``[u, v)`` and is available is used as is;
* a missing slot whose period has a producer is produced when its own span can be made
  coverable by the finer periods (recursively, the same rule: their runs become its inputs);
  the finest period's producer needs no inputs (it reads outside data);
* anything else (a missing slot without a producer, or whose inputs cannot all exist, and the
  edges where no slot fits) is handed to the next finer period; past the finest it is a gap.

Each slot is visited at most once per level, and a missing stretch of a period with no
producer is handed down whole, so the cost is O(levels x (available ranges + missing slots of
producible periods)) plus the answer. Why coarsest first: in a nested family the maximal
partitions give the fewest partitions; producing a coarse partition instead of its finer
inputs is what a pipeline of rollups does anyway.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from airflow_partitions.cover import Clock
from airflow_partitions.errors import RangeTooLarge
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import OrdinalRange

SlotKey = tuple[UpdatePeriod, int]


@dataclass(frozen=True, slots=True)
class Slot:
    """A partition to produce; ``enables`` is the rollup it is a direct input of, if any."""

    period: UpdatePeriod
    ordinal: int
    enables: SlotKey | None = None


@dataclass(frozen=True)
class Level:
    """One period of the chain: its available ordinals (sorted, disjoint) and whether any
    storage of the fact names a producer for it."""

    period: UpdatePeriod
    available: Sequence[OrdinalRange]
    producible: bool
    ends: list[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ends", [e for _, e in self.available])

    def missing(self, lo: int, hi: int) -> Iterator[OrdinalRange]:
        """Maximal absent runs inside ``[lo, hi)``, in order (bisection, then a walk)."""
        cursor = lo
        i = bisect_right(self.ends, lo)
        while i < len(self.available) and self.available[i][0] < hi:
            begin, end = self.available[i]
            if begin > cursor:
                yield cursor, begin
            cursor = max(cursor, end)
            i += 1
        if cursor < hi:
            yield cursor, hi


@dataclass
class FillResult:
    """Slots to produce (inputs before the rollup they enable) and uncovered ``[t0, t1)``."""

    slots: list[Slot] = field(default_factory=list)
    gaps: list[tuple[int, int]] = field(default_factory=list)


class Filler:
    """One planning computation over a nested chain of levels (coarsest first)."""

    def __init__(self, clock: Clock, levels: Sequence[Level], limit: int) -> None:
        self.clock = clock
        self.levels = list(levels)
        self.limit = limit
        self.count = 0

    def run(self, start_us: int, end_us: int) -> FillResult:
        """Plan ``[start_us, end_us)``; gaps come out merged and in time order."""
        out = FillResult()
        self._fill(start_us, end_us, 0, out)
        merged: list[tuple[int, int]] = []
        for t0, t1 in out.gaps:
            if merged and merged[-1][1] == t0:
                merged[-1] = (merged[-1][0], t1)
            else:
                merged.append((t0, t1))
        out.gaps = merged
        return out

    def _fill(self, u: int, v: int, i: int, out: FillResult) -> None:
        if u >= v:
            return
        if i == len(self.levels):
            out.gaps.append((u, v))
            return
        level, clock = self.levels[i], self.clock
        period = level.period
        lo, hi = clock.ceil(period, u), clock.floor(period, v)
        if lo >= hi:
            self._fill(u, v, i + 1, out)
            return
        self._fill(u, clock.start(period, lo), i + 1, out)  # the left edge
        for begin, end in level.missing(lo, hi):
            if not level.producible:
                self._fill(clock.start(period, begin), clock.start(period, end), i + 1, out)
                continue
            for ordinal in range(begin, end):
                self._slot(period, ordinal, i, out)
        self._fill(clock.start(period, hi), v, i + 1, out)  # the right edge

    def _slot(self, period: UpdatePeriod, ordinal: int, i: int, out: FillResult) -> None:
        """A missing slot of a producible period: produce it if its inputs can all exist."""
        sub = FillResult()
        if i + 1 < len(self.levels):
            t0, t1 = self.clock.start(period, ordinal), self.clock.start(period, ordinal + 1)
            self._fill(t0, t1, i + 1, sub)
        if sub.gaps:  # cannot be produced: what its inputs could cover still helps the range
            out.slots.extend(sub.slots)
            out.gaps.extend(sub.gaps)
            return
        key = (period, ordinal)
        out.slots.extend(s if s.enables else Slot(s.period, s.ordinal, key) for s in sub.slots)
        out.slots.append(Slot(period, ordinal))
        self.count += 1  # its inputs were counted when they were planned
        if self.count > self.limit:
            raise RangeTooLarge(
                f"the plan holds more than {self.limit:,} runs; plan a shorter range"
            )
