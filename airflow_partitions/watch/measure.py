"""Coverage metrics of a request, read from the catalog's cached timelines.

Why here: the numbers are pure (:mod:`airflow_partitions.cover.gauges`); this module only picks
the timelines they need (the request's storages, periods and time column) from the cache, so
the sensor, the trigger and the CLI measure the same thing.
"""

from __future__ import annotations

import datetime as dt

from airflow_partitions.catalog import Catalog, FactState, required_slices, select_slices
from airflow_partitions.cover import (
    Cover,
    CoverageMetrics,
    CoverRequest,
    SliceKey,
    coverage_metrics,
)
from airflow_partitions.timelines import PartitionTimeline


def request_timelines(
    state: FactState, request: CoverRequest
) -> dict[str, list[PartitionTimeline]]:
    """Each allowed storage's timelines of the request's time column, storages in name order."""
    column = request.time_column or state.definition.time_columns[0]
    periods = request.period_set
    allowed = set(request.storages) if request.storages is not None else None
    return {
        name: [
            timeline
            for (period, col), timeline in storage.timelines.items()
            if col == column and (periods is None or period in periods)
        ]
        for name, storage in sorted(state.storages.items())
        if allowed is None or name in allowed
    }


def request_slices(state: FactState, request: CoverRequest) -> list[SliceKey]:
    """The slices the request requires somewhere in its range: over every allowed storage
    with declared dimensions (of the request's time column), each combination of declared
    values required during the range, narrowed by ``request.where``; sorted, no repeats.

    Cost: O(storages x slices); no store access (the definitions are in the cached state).
    """
    column = request.time_column or state.definition.time_columns[0]
    allowed = set(request.storages) if request.storages is not None else None
    out: set[SliceKey] = set()
    for name, storage in state.storages.items():
        sdef = storage.definition
        if not sdef.dimensions or column not in sdef.time_columns or (
                allowed is not None and name not in allowed):
            continue
        chosen = select_slices(required_slices(sdef.dimensions, request.start, request.end),
                               sdef.dimensions, request.where)
        out.update(s.slice for s in chosen)
    return sorted(out)


def metrics_of(state: FactState, request: CoverRequest, cover: Cover,
               now: dt.datetime) -> CoverageMetrics:
    """The metrics of ``cover`` at ``now`` from the fact's cached state (no store access)."""
    return coverage_metrics(cover, request_timelines(state, request), now,
                            request_slices(state, request))


def measure(
    catalog: Catalog, request: CoverRequest, cover: Cover, now: dt.datetime
) -> CoverageMetrics:
    """The metrics of ``cover`` (the answer to ``request``) at ``now``: one cached read."""
    return metrics_of(catalog.fact_state(request.require_fact()), request, cover, now)
