"""Covers that use fresh partitions only: stale ones are taken out of the timelines first.

Why masking the timelines: the cover computation already falls back to finer partitions where
a coarser one is absent, so removing the stale time values from copies of the timelines
(clipped to the range) gives the best fresh cover with no new cover logic. What was removed is
reported as :class:`~airflow_partitions.cover.skipped.SkippedPartition`, so a gap reads "stale",
not "absent".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

from airflow_partitions.catalog.lineage.staleness import StalePartition, find_stale, overlap_window
from airflow_partitions.cover import CoverRequest, CoverSource, SkippedPartition
from airflow_partitions.errors import InvalidRange
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import RangesTimeline, difference_ranges, runs

if TYPE_CHECKING:
    from airflow_partitions.catalog.core import CatalogCore

_Mask = dict[tuple[str, UpdatePeriod], dict[int, StalePartition]]


def fresh_sources(
    catalog: CatalogCore, request: CoverRequest, column: str, tz: str,
    sources: Sequence[CoverSource],
) -> tuple[list[CoverSource], tuple[SkippedPartition, ...]]:
    """The sources without their stale time values in the range, and what was left out.

    A time value is left out when any of its rows is stale (a cover reads all of them).
    """
    fact = request.require_fact()
    mask: _Mask = {}
    for stale in find_stale(catalog, fact, request.start, request.end, time_column=column):
        period = stale.partition.period
        ordinal = period.parse_ordinal(stale.partition.values[column], tz)
        mask.setdefault((stale.partition.storage, period), {}).setdefault(ordinal, stale)
    out: list[CoverSource] = []
    skipped: list[tuple[tuple[dt.datetime, str], SkippedPartition]] = []
    usable = {(s.storage, s.period) for s in sources
              if (request.period_set is None or s.period in request.period_set)
              and (request.storages is None or s.storage in request.storages)}
    for source in sources:
        stale_here = mask.get((source.storage, source.period))
        if not stale_here:
            out.append(source)
            continue
        lo, hi = overlap_window(source.period, tz, request.start, request.end)
        masked = RangesTimeline(source.period, source.timeline.column, tz)
        masked.replace_ranges(difference_ranges(source.timeline.ordinal_ranges(lo, hi),
                                                runs(sorted(stale_here))))
        out.append(CoverSource(source.storage, source.priority, source.period, masked))
        if (source.storage, source.period) not in usable:
            continue
        for ordinal, stale in stale_here.items():
            if not _inside(source.period, ordinal, tz, request):
                continue  # sticks out of the range: the cover could not have used it anyway
            value = source.period.format_ordinal(ordinal, tz)
            skipped.append(((source.period.start_of(ordinal, tz), source.storage),
                            SkippedPartition(source.storage, source.period, value,
                                             stale.reason())))
    skipped.sort(key=lambda item: item[0])
    return out, tuple(s for _, s in skipped)


def _inside(period: UpdatePeriod, ordinal: int, tz: str, request: CoverRequest) -> bool:
    """Whether the partition lies within the requested range."""
    try:
        return (period.start_of(ordinal, tz) >= request.start
                and period.start_of(ordinal + 1, tz) <= request.end)
    except InvalidRange:  # a bound past what datetime holds: not inside any range
        return False
