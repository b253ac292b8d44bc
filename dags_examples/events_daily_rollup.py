"""events_daily_rollup: once a day is fully ingested, roll its hours up into one partition.

Scheduled on a coverage asset: the DAG runs once per day the catalog can cover from its own
fresh partitions, every hour of every declared region (``region=eu,us``), however those hours
were written (this pipeline's ingest DAG, the CLI, a Spark job of its own). A day with one
region's hour late starts no run until that hour is registered; an hour restated after the day
ran announces the day again (the event's ``extra["restated"]`` is true) and the day is rolled
up again. ``dag_run.partition_key`` is the day's start in the fact's zone
(``2015-01-31T00:00:00``).

The covered Spark job covers the run's window (from the asset and the key), reads exactly the
(hour, region) partitions in the manifest and overwrites the DAILY partition of
``events_rollup`` (per-region totals, no region column: one partition covers every region),
which is then registered (idempotent on re-runs).

A run started by hand names its day in the conf, as the asset's key:
``airflow dags test events_daily_rollup -c '{"partition_key": "2015-01-31T00:00:00"}'``.
The DAG file imports once the catalog has the fact ``events`` (``make demo`` creates it): a
coverage asset of an unknown fact is refused when the DAG is parsed.
"""

from __future__ import annotations

from airflow.sdk import DAG, PartitionedAssetTimetable

from airflow_partitions.assets import CoverageAsset
from airflow_partitions.demo.events import (
    EXAMPLE_END,
    EXAMPLE_START,
    FACT,
    RAW,
    ROLLUP,
    ROLLUP_LOCATION,
    SPARK_CONF,
)
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator
from airflow_partitions.spark import job_path

#: The run's day, ``2015-01-31``: the first ten characters of its partition key (wall time in
#: the fact's zone, UTC), or of the key a run started by hand passes in its conf.
DAY = "{{ (dag_run.partition_key or dag_run.conf['partition_key'])[:10] }}"
OUTPUT = ROLLUP_LOCATION.format(period="DAILY", dt=DAY)

with DAG(
    dag_id="events_daily_rollup",
    schedule=PartitionedAssetTimetable(assets=CoverageAsset(fact=FACT, period="DAILY")),
    start_date=EXAMPLE_START,
    end_date=EXAMPLE_END,
    catchup=False,
    tags=["airflow-partitions", "example"],
):
    rollup = CoveredSparkSubmitOperator(
        task_id="rollup_day",
        fact=FACT,
        storages=[RAW],  # the hours, never this DAG's own DAILY output
        application=job_path("events_aggregate"),
        application_args=["--output", OUTPUT, "--format", "parquet"],
        conf=SPARK_CONF,
        name="events_daily_rollup",
    )
    register = RegisterPartitionsOperator(
        task_id="register_day",
        storage=ROLLUP,
        period="DAILY",
        values={"dt": DAY},
        location=OUTPUT,
        inputs_from="rollup_day",  # lineage: the partitions the job read, with versions
    )
    rollup >> register
