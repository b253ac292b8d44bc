"""The range the view's Plan, Fill missing and Re-run stale act on: aligned and bounded first.

A drag on the selection bar gives instants anywhere (19:12, 09:36), while a plan needs bounds
on the fact's finest period. ``align`` snaps them with the cover's own rule
(:func:`airflow_partitions.cover.align_bounds`): ``outer`` widens to whole partitions,
``inner`` narrows, None refuses a misaligned bound as the command line does. The range is then
counted in partitions of that period (clock arithmetic, O(1)) and refused past
:data:`MAX_PLAN_PARTITIONS`, before anything is planned or asked of Airflow: a century of
hours is refused at once instead of being planned for minutes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import pendulum

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import (
    CoverRequest,
    align_bounds,
    clock_for,
    from_us,
    to_us,
    zoned_instant,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod

#: The most partitions of the fact's finest period one plan of the view may span (about 5.7
#: years of hours, 137 of days). A plan costs about 45 microseconds per partition (ten years
#: of hours: 4 s) and a preparation plans twice; larger ranges are the command line's
#: (``airflow-partitions backfill``), or several selections.
MAX_PLAN_PARTITIONS: Final = 50_000


class RangeTooLarge(InvalidInput):
    """The range spans more partitions than one plan of the view may (400)."""


@dataclass(frozen=True)
class Selection:
    """``[start, end)`` in the fact's zone, aligned to ``finest`` (None: the fact has no
    storage of its time column), and how many ``finest`` partitions it spans."""

    start: pendulum.DateTime
    end: pendulum.DateTime
    finest: UpdatePeriod | None
    partitions: int


def finest_period(catalog: Catalog, fact: str) -> UpdatePeriod | None:
    """The finest period of the storages a plan reads (those of the fact's first time
    column): what its bounds must start. Definitions only, no timeline read."""
    state = catalog.fact_state(fact)
    column = state.definition.time_columns[0]
    periods = [p for s in state.storages.values() if column in s.definition.time_columns
               for p in s.definition.periods]
    return min(periods) if periods else None


def select(catalog: Catalog, fact: str, start: str, end: str, align: str | None
           ) -> Selection:
    """The selection ``[start, end)`` of ``fact`` (ISO-8601; without an offset, the fact's
    zone) snapped by ``align`` and counted. Raises :class:`RangeTooLarge` past
    :data:`MAX_PLAN_PARTITIONS`, ``MisalignedBound`` for a misaligned bound without
    ``align``, ``InvalidInput`` for a bad instant or a reversed range."""
    tz = catalog.get_fact(fact).tz
    request = CoverRequest.of(fact, zoned_instant(start, tz, "start"),
                              zoned_instant(end, tz, "end"), align=align)  # checks the order
    lo, hi = to_us(request.start), to_us(request.end)
    finest = finest_period(catalog, fact)
    if finest is None or lo == hi:
        return Selection(from_us(lo, tz), from_us(hi, tz), finest, 0)
    clock = clock_for(tz)
    lo, hi = align_bounds(clock, finest, lo, hi, align)
    count = clock.floor(finest, hi) - clock.floor(finest, lo) if lo < hi else 0
    first, last = from_us(lo, tz), from_us(hi, tz)
    if count > MAX_PLAN_PARTITIONS:
        raise RangeTooLarge(
            f"[{first.isoformat()}, {last.isoformat()}) spans {count:,} {finest.name} "
            f"partitions; the view plans at most {MAX_PLAN_PARTITIONS:,} at once: narrow "
            "the selection, or run airflow-partitions backfill from the command line")
    return Selection(first, last, finest, count)
