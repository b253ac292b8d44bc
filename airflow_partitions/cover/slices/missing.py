"""What a slice's missing stretches need: the absent partitions that would fill them.

Why apart from the answer: a sensor over a thousand slices asks only whether each is coverable
and how long it misses; building every :class:`MissingRange` (instants, value text) is
O(gaps x periods) of pendulum work, so an answer keeps its gaps as integers and builds the
ranges only when asked (:attr:`~.slices.result.SliceAnswer.missing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from airflow_partitions.cover.clock import Clock, from_us
from airflow_partitions.cover.result import (
    MAX_NEEDED_RUNS,
    MissingRange,
    NeededPartitions,
    ValueRun,
)
from airflow_partitions.cover.slices.ordinal_sets import OrdinalSet
from airflow_partitions.periods import UpdatePeriod

Span = tuple[int, int]


@dataclass(frozen=True, eq=False)
class NeededIndex:
    """Per period (finest first), the partitions that the sources holding one slice have
    inside the range: what is absent there is what a missing range needs."""

    clock: Clock
    available: tuple[tuple[UpdatePeriod, OrdinalSet], ...]

    def missing(self, gaps: Sequence[Span], spans: Sequence[Span]) -> tuple[MissingRange, ...]:
        """The gaps (maximal, in time order) as :class:`MissingRange`, each with the absent
        partitions inside its span that intersect it (as ``compute_cover`` lists them).

        Cost: O(gaps x periods x log ranges).
        """
        clock, tz = self.clock, self.clock.tz
        out = []
        for t0, t1 in gaps:
            span_lo, span_hi = next((a, b) for a, b in spans if a <= t0 and t1 <= b)
            needed = []
            for period, ordinals in self.available:
                lo = max(clock.floor(period, t0), clock.ceil(period, span_lo))
                hi = min(clock.ceil(period, t1), clock.floor(period, span_hi))
                if lo >= hi:
                    continue
                total = hi - lo - ordinals.count(lo, hi)
                if not total:
                    continue
                runs = tuple(
                    ValueRun(period.format_ordinal(b, tz), period.format_ordinal(e - 1, tz),
                             e - b)
                    for b, e in ordinals.absent_runs(lo, hi, MAX_NEEDED_RUNS)
                )
                needed.append(NeededPartitions(period, runs, total))
            out.append(MissingRange(from_us(t0, tz), from_us(t1, tz), tuple(needed)))
        return tuple(out)


def merge_gaps(gaps: Sequence[Span]) -> tuple[Span, ...]:
    """Adjacent gaps (in time order) joined into maximal ones."""
    merged: list[Span] = []
    for t0, t1 in gaps:
        if merged and merged[-1][1] == t0:
            merged[-1] = (merged[-1][0], t1)
        else:
            merged.append((t0, t1))
    return tuple(merged)
