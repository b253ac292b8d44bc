"""The one ride-out loop and pause schedule (``airflow_partitions.outages``): what a writing
task and the backfill command both wait by."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions.outages import (
    FIRST_PAUSE,
    MAX_PAUSE,
    OUTAGE_TIMEOUT,
    OutageOutlasted,
    outage_pauses,
    ride_out,
)


@given(st.lists(st.floats(min_value=0, max_value=1, exclude_max=True), min_size=1,
                max_size=30))
def test_pauses_double_up_to_the_longest_each_between_half_and_all_of_it(
        draws: list[float]) -> None:
    jitter = iter(draws)
    pauses = list(itertools.islice(outage_pauses(lambda: next(jitter)), len(draws)))
    for n, (pause, drawn) in enumerate(zip(pauses, draws, strict=True)):
        base = min(FIRST_PAUSE * 2 ** n, MAX_PAUSE)
        assert base / 2 <= pause <= base
        assert pause == pytest.approx(base * (0.5 + drawn / 2))


def test_the_default_bound_covers_more_than_a_minute_of_pauses() -> None:
    """Even with the shortest pauses, a writer keeps trying for at least a minute, and never
    for an unbounded time: the pauses it can take within the bound are few."""
    assert OUTAGE_TIMEOUT >= 60
    shortest = outage_pauses(lambda: 0.0)
    waited, attempts = 0.0, 1
    while waited < OUTAGE_TIMEOUT:
        waited += next(shortest)
        attempts += 1
    assert attempts < 30


class Clock:
    """A clock the sleeps move: the loop's bound without waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_an_outage_that_outlasts_the_bound_ends_in_its_last_error() -> None:
    clock, seen = Clock(), []
    errors = (ConnectionError(f"refused {n}") for n in itertools.count(1))

    def attempt() -> str:
        raise next(errors)

    with pytest.raises(OutageOutlasted) as info:
        ride_out(attempt, is_outage=lambda e: isinstance(e, ConnectionError), timeout=30,
                 on_pause=lambda e, n, elapsed, pause: seen.append((n, elapsed, pause)),
                 sleep=clock.sleep, clock=lambda: clock.now, pauses=itertools.repeat(4.0))
    outlasted = info.value
    assert outlasted.waited_s == pytest.approx(30)
    assert outlasted.attempts == len(seen) + 1
    assert str(outlasted.last) == f"refused {outlasted.attempts}"
    assert [n for n, _, _ in seen] == list(range(1, len(seen) + 1))
    assert sum(clock.slept) == pytest.approx(30)  # the last pause is cut to the bound
    assert clock.slept[-1] == pytest.approx(2)


def test_an_error_that_is_no_outage_is_raised_at_once() -> None:
    calls = []

    def attempt() -> str:
        calls.append(1)
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        ride_out(attempt, is_outage=lambda e: isinstance(e, ConnectionError), timeout=60,
                 on_pause=lambda *_: pytest.fail("paused"), sleep=lambda s: pytest.fail("slept"))
    assert calls == [1]


def test_a_timeout_of_zero_tries_once_and_a_negative_one_is_refused() -> None:
    calls = []

    def attempt() -> str:
        calls.append(1)
        raise ConnectionError("refused")

    with pytest.raises(OutageOutlasted):
        ride_out(attempt, is_outage=lambda e: True, timeout=0, on_pause=lambda *_: None)
    assert calls == [1]
    with pytest.raises(ValueError, match="0 or more"):
        ride_out(attempt, is_outage=lambda e: True, timeout=-1, on_pause=lambda *_: None)
