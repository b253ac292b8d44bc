"""Riding out an outage: the one loop and pause schedule of everything that waits for a store
or a database to come back.

Why one place: a writing task waits out its partition catalog
(``PartitionCatalogHook.ride_out``) and ``airflow-partitions backfill`` waits out Airflow's
metadata DB; an operator who learns how long one waits and how often it tries knows both.

The schedule: pauses of about 1, 2, 4, 8, then 15 s each, each drawn between half and all of
that so that processes that met the same outage do not all come back in the same instant, for
up to a bound (two minutes by default: longer than a Thrift server's or PostgreSQL's restart,
and at least a minute). Only what the caller calls an outage is tried again; anything else is
raised at once, because waiting cannot mend it. Cost while nothing fails: one call.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Final, TypeVar

#: How long a caller keeps trying by default, in seconds.
OUTAGE_TIMEOUT: Final = 120.0
#: The first pause after a failed attempt; each next one doubles, up to :data:`MAX_PAUSE`.
FIRST_PAUSE: Final = 1.0
MAX_PAUSE: Final = 15.0

T = TypeVar("T")


class OutageOutlasted(Exception):
    """The outage lasted the whole bound: ``last`` is the last attempt's error, ``waited_s``
    how long attempts went on, ``attempts`` how many there were. Callers turn it into their
    own error (``CatalogOutage``, ``MetadataDbUnreachable``)."""

    def __init__(self, last: BaseException, waited_s: float, attempts: int) -> None:
        super().__init__(f"still failing after {waited_s:.1f} s and {attempts} attempt(s): "
                         f"{last}")
        self.last, self.waited_s, self.attempts = last, waited_s, attempts


def outage_pauses(jitter: Callable[[], float] = random.random) -> Iterator[float]:
    """The pauses between attempts, without end: about 1, 2, 4, 8, then 15 s each time, each
    ``base * (0.5 + 0.5 * jitter())`` with ``jitter()`` in ``[0, 1)``.

    >>> [round(p) for p, _ in zip(outage_pauses(lambda: 1.0), range(6))]
    [1, 2, 4, 8, 15, 15]
    """
    base = FIRST_PAUSE
    while True:
        yield base * (0.5 + 0.5 * jitter())
        base = min(base * 2, MAX_PAUSE)


def ride_out(attempt: Callable[[], T], *, is_outage: Callable[[Exception], bool],
             timeout: float, on_pause: Callable[[Exception, int, float, float], None],
             sleep: Callable[[float], None] = time.sleep,
             clock: Callable[[], float] = time.monotonic,
             pauses: Iterator[float] | None = None) -> T:
    """``attempt()``, run again after a pause each time it fails with an error ``is_outage``
    accepts, until ``timeout`` seconds have passed since the first attempt; then
    :class:`OutageOutlasted` from the last error. Before each pause, ``on_pause(error,
    attempts so far, seconds since the first attempt, the pause)``: the caller's warning or
    progress line, and what it must forget (a cached connection) before the next attempt.
    ``attempt`` must be safe to run again from the start.

    >>> tries = iter([ConnectionError("refused"), ConnectionError("refused"), "done"])
    >>> def attempt():
    ...     got = next(tries)
    ...     if isinstance(got, Exception):
    ...         raise got
    ...     return got
    >>> ride_out(attempt, is_outage=lambda e: isinstance(e, ConnectionError), timeout=60,
    ...          on_pause=lambda *_: None, sleep=lambda s: None)
    'done'
    """
    if not timeout >= 0:
        raise ValueError(f"an outage timeout is seconds, 0 or more, not {timeout!r}")
    schedule = outage_pauses() if pauses is None else pauses
    began = clock()
    attempts = 0
    while True:
        attempts += 1
        try:
            return attempt()
        except Exception as exc:
            if not is_outage(exc):
                raise
            elapsed = clock() - began
            left = timeout - elapsed
            if left <= 0:
                raise OutageOutlasted(exc, elapsed, attempts) from exc
            pause = min(next(schedule), left)
            on_pause(exc, attempts, elapsed, pause)
            sleep(pause)
