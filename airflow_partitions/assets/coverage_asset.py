"""``CoverageAsset``: an Airflow asset whose partitioned events say "this window is coverable".

A consumer is plain Airflow::

    with DAG("events_daily", schedule=PartitionedAssetTimetable(
            assets=CoverageAsset(fact="events", period="DAILY"))):
        CoveredSparkSubmitOperator(task_id="rollup", fact="events", application=...)

and runs once per window the catalog can cover, with ``dag_run.partition_key`` = the window's
start in the fact's zone (``2024-01-01T00:00:00``; ``eu|2024-01-01T00:00:00`` per slice). The
events come from the provider, not from Airflow's key arithmetic: the follower
(``airflow-partitions assets follow``) and the provider's writing operators announce each
window once, when its own fresh cover exists (docs/airflow.md, "Coverage assets").
"""

from __future__ import annotations

import logging

from airflow.sdk import Asset

from airflow_partitions.coverage_events import CoverageAssetSpec
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.kv import StoreUnavailable

log = logging.getLogger(__name__)

GROUP = "airflow-partitions"


def CoverageAsset(
    fact: str, period: str = "DAILY", where: str | None = None, per_slice: bool = False, *,
    catalog_conn_id: str = PartitionCatalogHook.default_conn_name,
) -> Asset:
    """The asset announcing each ``period`` window of ``fact`` the catalog can cover.

    :param fact: the fact whose coverage is announced.
    :param period: the window period (``DAILY``, ``MONTHLY``, ...); some storage period of the
        fact must nest in it.
    :param where: which slices of the fact's declared dimensions a window needs (the
        sensor's ``where``); default every required slice.
    :param per_slice: one event per slice and window (``eu|2024-01-01T00:00:00``) instead of
        one per window once every slice is there.
    :param catalog_conn_id: the catalog checked when the DAG is parsed.

    An unknown fact or a period the fact cannot make is refused at parse time, in one line
    naming the fact's periods. A catalog that cannot be reached then is not: it is logged, and
    the follower checks again.
    """
    spec = CoverageAssetSpec.of(fact, period, where, per_slice)
    try:
        spec.check(PartitionCatalogHook(catalog_conn_id).cached_conn())
    except StoreUnavailable as exc:
        log.warning("coverage asset %s not checked, the catalog is unreachable: %s",
                    spec.name, exc)
    return Asset(name=spec.name, uri=spec.uri, group=GROUP,
                 extra={"fact": spec.fact, "period": spec.period.name})
