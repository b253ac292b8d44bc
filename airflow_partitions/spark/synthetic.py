"""Deterministic synthetic events for the examples, the demo and their tests.

Pure Python (no Spark): tests compute the expected totals from the same generator, independently
of any Spark job. Amounts are integer cents so totals are exact whatever order Spark sums them in.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

REGIONS: Final = (
    "us-east", "us-west", "eu-west", "eu-central", "ap-south", "ap-east", "sa-east", "af-south",
)
#: The regions of the events pipeline's ``(dt, region)`` partitions (:func:`events_for_slice`;
#: the declared domain of ``events_raw``'s region column in the example).
SLICE_REGIONS: Final = ("eu", "us")


@dataclass(frozen=True)
class Event:
    """One synthetic event."""

    event_time: dt.datetime
    user_id: int
    region: str
    amount_cents: int


def events_for_hour(hour_start: dt.datetime, seed: int = 7) -> list[Event]:
    """The events of one UTC hour: 40-80 of them, the same for the same (hour, seed)."""
    start = hour_start.astimezone(dt.UTC)
    hour_index = int(start.timestamp()) // 3600
    rng = random.Random(seed * 1_000_003 + hour_index)  # noqa: S311 - synthetic data
    count = rng.randint(40, 80)
    return [
        Event(
            event_time=start + dt.timedelta(seconds=rng.randrange(3600)),
            user_id=rng.randrange(1, 500),
            region=REGIONS[rng.randrange(len(REGIONS))],
            amount_cents=rng.randrange(100, 20_000),
        )
        for _ in range(count)
    ]


def hours(start: dt.datetime, end: dt.datetime) -> Iterator[dt.datetime]:
    """Every UTC hour start in ``[start, end)``."""
    current = start.astimezone(dt.UTC)
    stop = end.astimezone(dt.UTC)
    while current < stop:
        yield current
        current += dt.timedelta(hours=1)


def totals(events: Iterable[Event]) -> dict[str, tuple[int, int]]:
    """region -> (events, amount_cents): what every rollup and report must add up to."""
    out: dict[str, tuple[int, int]] = {}
    for event in events:
        n, cents = out.get(event.region, (0, 0))
        out[event.region] = (n + 1, cents + event.amount_cents)
    return dict(sorted(out.items()))


def expected_totals(start: dt.datetime, end: dt.datetime, seed: int = 7,
                    skip: Iterable[dt.datetime] = ()) -> dict[str, tuple[int, int]]:
    """Totals of every event in ``[start, end)``, straight from the generator."""
    skipped = {h.astimezone(dt.UTC) for h in skip}
    return totals(
        event for hour in hours(start, end) if hour not in skipped
        for event in events_for_hour(hour, seed)
    )


def events_for_slice(hour_start: dt.datetime, region: str, seed: int = 7) -> list[Event]:
    """The events of one UTC hour in one region (a ``(dt, region)`` partition): 20-40 of them,
    each with that ``region``, the same for the same (hour, region, seed) in every process."""
    start = hour_start.astimezone(dt.UTC)
    hour_index = int(start.timestamp()) // 3600
    rng = random.Random(f"{seed}/{hour_index}/{region}")  # noqa: S311 - synthetic data
    return [
        Event(
            event_time=start + dt.timedelta(seconds=rng.randrange(3600)),
            user_id=rng.randrange(1, 500),
            region=region,
            amount_cents=rng.randrange(100, 20_000),
        )
        for _ in range(rng.randint(20, 40))
    ]


def expected_slice_totals(start: dt.datetime, end: dt.datetime, regions: Iterable[str],
                          seed: int = 7) -> dict[str, tuple[int, int]]:
    """Totals of every (hour, region) slice's events in ``[start, end)``, from the generator."""
    chosen = tuple(regions)
    return totals(event for hour in hours(start, end) for region in chosen
                  for event in events_for_slice(hour, region, seed))
