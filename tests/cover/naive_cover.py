"""The Lens-style cover (seed 002), done right: a test oracle and the benchmark baseline.

Largest period first; every slot of the largest period that fits is checked with ``exists`` (one
call per storage holding that period, best storage first); an absent slot is covered
recursively with the strictly smaller periods, and so are the left AND the right remainders
(the seed's pseudo-code drops the right one). It never gives up early, so with nothing registered
it asks about every slot of every period: 1 + 12 + 365 + 8760 + 525600 = 534,738 calls for a
year with YEARLY..MINUTELY. For nested period sets its answer is the minimal cover.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pendulum

from airflow_partitions.cover.clock import Clock, from_us
from airflow_partitions.cover.request import CoverRequest
from airflow_partitions.cover.sources import CoverSource, PreparedCover, prepare
from airflow_partitions.periods import UpdatePeriod


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
class _State:
    request: PreparedCover
    clock: Clock
    partitions: list[tuple[str, UpdatePeriod, int]] = field(default_factory=list)
    gaps: list[list[int]] = field(default_factory=list)
    calls: int = 0


def naive_cover_slots(
    sources: Sequence[CoverSource], request: CoverRequest, *, tz: str = "UTC"
) -> NaiveCover:
    """Cover the request slot by slot with ``exists_ordinal``, counting the calls."""
    prepared = prepare(sources, request, tz=tz)
    state = _State(prepared, Clock(prepared.tz, cache=False))
    _cover(state, prepared.start_us, prepared.end_us, sorted(prepared.by_period, reverse=True))
    return NaiveCover(
        tuple(state.partitions),
        tuple((from_us(a, prepared.tz), from_us(b, prepared.tz)) for a, b in state.gaps),
        state.calls,
    )


def _cover(state: _State, a: int, b: int, periods: Sequence[UpdatePeriod]) -> None:
    """Lens's recursion on ``[a, b)`` with ``periods`` (coarsest first)."""
    if a >= b:
        return
    clock = state.clock
    fits = _largest_fitting(clock, a, b, periods)
    if fits is None:
        _gap(state, a, b)
        return
    index, lo, hi = fits
    period, smaller = periods[index], periods[index + 1 :]
    timelines = state.request.by_period[period]
    names = state.request.storages
    t0 = clock.start(period, lo)
    _cover(state, a, t0, smaller)
    for ordinal in range(lo, hi):
        t1 = clock.start(period, ordinal + 1)
        for rank, timeline in timelines:
            state.calls += 1
            if timeline.exists_ordinal(ordinal):
                state.partitions.append((names[rank], period, ordinal))
                break
        else:
            _cover(state, t0, t1, smaller)
        t0 = t1
    _cover(state, t0, b, smaller)


def _largest_fitting(
    clock: Clock, a: int, b: int, periods: Sequence[UpdatePeriod]
) -> tuple[int, int, int] | None:
    """The first period (coarsest first) with a whole partition in ``[a, b)``, and its slots."""
    for index, period in enumerate(periods):
        lo, hi = clock.ceil(period, a), clock.floor(period, b)
        if lo < hi:
            return index, lo, hi
    return None


def _gap(state: _State, a: int, b: int) -> None:
    if state.gaps and state.gaps[-1][1] == a:
        state.gaps[-1][1] = b
    else:
        state.gaps.append([a, b])
