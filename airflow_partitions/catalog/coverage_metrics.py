"""Coverage metrics of a request, read from the catalog's cached timelines.

Why here: the numbers are pure (:mod:`airflow_partitions.cover.metrics`); this module only picks
the timelines they need (the request's storages, periods and time column) from the cache, so
the sensor, the trigger and the CLI measure the same thing.
"""

from __future__ import annotations

import datetime as dt

from airflow_partitions.catalog.cache import FactState
from airflow_partitions.catalog.facade import Catalog
from airflow_partitions.cover.metrics import CoverageMetrics, coverage_metrics
from airflow_partitions.cover.model import Cover
from airflow_partitions.cover.request import CoverRequest
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


def measure(
    catalog: Catalog, request: CoverRequest, cover: Cover, now: dt.datetime
) -> CoverageMetrics:
    """The metrics of ``cover`` (the answer to ``request``) at ``now``: one cached read."""
    state = catalog.fact_state(request.require_fact())
    return coverage_metrics(cover, request_timelines(state, request), now)
