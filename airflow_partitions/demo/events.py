"""Shared settings of the ``events`` example DAGs (dags_examples/): fact, storages, data.

The layout (created idempotently by :func:`ensure_catalog`):

* ``events_raw`` (HOURLY, partitioned by ``(dt, region)``): one Parquet directory of events per
  hour and region, written by the ingest job. ``region`` is a declared dimension
  (``region=eu,us``): an hour counts as present only when every region has it, so a sensor
  waits for a late region and names it (docs/dimensions.md);
* ``events_rollup`` (DAILY and MONTHLY, priority 10): per-region totals over every region,
  written by the rollups. It has no region column, so one rollup partition covers every region.

Covers prefer the rollups, so a report over any range reads monthly partitions where they
exist, daily ones elsewhere, and hourly ones (every region's) at the ragged edges.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from airflow_partitions.catalog import AlreadyExists, Catalog, Producer
from airflow_partitions.defaults import default_data_root
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.spark import SLICE_REGIONS

FACT = "events"
RAW = "events_raw"
ROLLUP = "events_rollup"
DATA_ROOT = default_data_root()
#: The regions of the raw events: the declared domain of ``events_raw``'s region column.
REGIONS: Final = SLICE_REGIONS
REGION_DIMENSION: Final = "region=" + ",".join(REGIONS)
RAW_LOCATION = f"{DATA_ROOT}/{FACT}/{RAW}/HOURLY/dt={{dt}}/region={{region}}"
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
#: ``backfill`` run them; docs/backfill.md). The hourly ingest takes the regions it must write
#: in its ``regions`` param, so a backfill of one late region's hour passes
#: ``{"regions": ["eu"]}`` as the run's conf.
PRODUCERS = {
    RAW: {"HOURLY": Producer("events_hourly_ingest", slice_conf="regions")},
    ROLLUP: {"DAILY": Producer("events_daily_rollup"),
             "MONTHLY": Producer("events_monthly_rollup")},
}


def ensure_catalog(catalog: Catalog) -> None:
    """Create the fact and its storages if they are not there yet, and name their producers
    (safe to call every run: nothing is written when all is in place)."""
    catalog.create_fact(FACT, time_columns=["dt"], tz="UTC", exist_ok=True)
    try:
        catalog.create_storage(FACT, RAW, ["HOURLY"], columns=["dt", "region"],
                               location=RAW_LOCATION, dimensions=[REGION_DIMENSION],
                               exist_ok=True)
    except AlreadyExists as exc:  # e.g. made by an older example, with no region column
        raise AlreadyExists(
            f"storage {RAW!r} exists in this catalog with another definition than the "
            f"example's (partitioned by dt and region, {REGION_DIMENSION}, at {RAW_LOCATION}); "
            "start afresh (`make demo-clean`) or use another catalog") from exc
    catalog.create_storage(FACT, ROLLUP, ["DAILY", "MONTHLY"], location=ROLLUP_LOCATION,
                           priority=10, exist_ok=True)
    for storage, producers in PRODUCERS.items():
        if dict(catalog.get_storage(storage).producers) != producers:
            catalog.set_producers(storage, dict(producers))


def period_end(start: dt.datetime | str, period: str) -> str:
    """Jinja macro: the end of the ``period`` partition starting at ``start`` (ISO-8601)."""
    return UpdatePeriod.of(period).next(_instant(start), "UTC").isoformat()


def period_value(instant: dt.datetime | str, period: str) -> str:
    """Jinja macro: the partition value of ``period`` containing ``instant``."""
    return UpdatePeriod.of(period).format(_instant(instant), "UTC")


def _instant(value: dt.datetime | str) -> dt.datetime:
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value


MACROS = {"period_end": period_end, "period_value": period_value}
