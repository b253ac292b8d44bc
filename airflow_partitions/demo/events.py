"""Shared settings of the ``events`` example DAGs (dags_examples/): fact, storages, data.

The layout (created idempotently by :func:`ensure_catalog`):

* ``events_raw`` (HOURLY): one Parquet directory of events per hour, written by the ingest job;
* ``events_rollup`` (DAILY and MONTHLY, priority 10): per-region totals, written by the rollups.

Covers prefer the rollups, so a report over any range reads monthly partitions where they
exist, daily ones elsewhere, and hourly ones at the ragged edges.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.producers import Producer
from airflow_partitions.defaults import default_data_root
from airflow_partitions.periods import UpdatePeriod

FACT = "events"
RAW = "events_raw"
ROLLUP = "events_rollup"
DATA_ROOT = default_data_root()
RAW_LOCATION = f"{DATA_ROOT}/{FACT}/{RAW}/HOURLY/dt={{dt}}"
ROLLUP_LOCATION = f"{DATA_ROOT}/{FACT}/{ROLLUP}/{{period}}/dt={{dt}}"
REPORTS = f"{DATA_ROOT}/reports"

#: The window the examples' data lives in (``make demo`` ingests from 2015-01-30). The example DAGs
#: start and end there, so unpausing one creates no run over hours that have no data: with
#: ``catchup=False`` and an end date in the past, the scheduler schedules nothing, and backfills
#: (``airflow backfill create``) and ``airflow dags test`` run any date inside the window. A live
#: pipeline drops ``end_date`` and starts at its first data (docs/pipelines.md).
EXAMPLE_START = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
EXAMPLE_END = dt.datetime(2015, 3, 31, 23, tzinfo=dt.UTC)

#: Small local Spark: no UI, few shuffle partitions, instants in UTC.
SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
}


#: The example DAG that writes each storage period (``airflow-partitions plan`` and
#: ``backfill`` run them; docs/backfill.md).
PRODUCERS = {
    RAW: {"HOURLY": Producer("events_hourly_ingest")},
    ROLLUP: {"DAILY": Producer("events_daily_rollup"),
             "MONTHLY": Producer("events_monthly_rollup")},
}


def ensure_catalog(catalog: Catalog) -> None:
    """Create the fact and its storages if they are not there yet, and name their producers
    (safe to call every run: nothing is written when all is in place)."""
    catalog.create_fact(FACT, time_columns=["dt"], tz="UTC", exist_ok=True)
    catalog.create_storage(FACT, RAW, ["HOURLY"], location=RAW_LOCATION, exist_ok=True)
    catalog.create_storage(FACT, ROLLUP, ["DAILY", "MONTHLY"], location=ROLLUP_LOCATION,
                           priority=10, exist_ok=True)
    for storage, producers in PRODUCERS.items():
        if dict(catalog.get_storage(storage).producers) != producers:
            catalog.set_producers(storage, dict(producers))


def period_end(start: Any, period: str) -> str:
    """Jinja macro: the end of the ``period`` partition starting at ``start`` (ISO-8601)."""
    return UpdatePeriod.of(period).next(_instant(start), "UTC").isoformat()


def period_value(instant: Any, period: str) -> str:
    """Jinja macro: the partition value of ``period`` containing ``instant``."""
    return UpdatePeriod.of(period).format(_instant(instant), "UTC")


def _instant(value: Any) -> dt.datetime:
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value  # type: ignore[no-any-return]


MACROS = {"period_end": period_end, "period_value": period_value}
