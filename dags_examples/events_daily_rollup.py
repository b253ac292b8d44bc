"""events_daily_rollup: once a day is fully ingested, roll its hours up into one partition.

The coverage sensor waits (in reschedule mode, holding no worker slot between pokes) until the
day is coverable from ``events_raw``: every hour of every declared region (``region=eu,us``);
each poke logs what is still missing, e.g. ``no HOURLY 2015-01-31-05 for region=eu`` when one
region's hour is late. The covered Spark job aggregates exactly the (hour, region) partitions
in the manifest and overwrites the DAILY partition of ``events_rollup`` (per-region totals, no
region column: one partition covers every region), which is then registered (idempotent on
re-runs).
"""

from __future__ import annotations

from airflow.sdk import DAG, CronDataIntervalTimetable

from airflow_partitions.demo.events import (
    EXAMPLE_END,
    EXAMPLE_START,
    FACT,
    MACROS,
    RAW,
    ROLLUP,
    ROLLUP_LOCATION,
    SPARK_CONF,
)
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.spark import job_path

DAY = "{{ period_value(logical_date, 'DAILY') }}"
OUTPUT = ROLLUP_LOCATION.format(period="DAILY", dt=DAY)

with DAG(
    dag_id="events_daily_rollup",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=EXAMPLE_START,
    end_date=EXAMPLE_END,  # no runs past the demo data, see EXAMPLE_START
    catchup=False,
    user_defined_macros=MACROS,
    tags=["airflow-partitions", "example"],
):
    wait = PartitionCoverageSensor(
        task_id="wait_for_hours",
        fact=FACT,
        storages=[RAW],
        start="{{ logical_date }}",
        end="{{ period_end(logical_date, 'DAILY') }}",
        mode="reschedule",
        retries=1,  # a late executor event can fail a re-queued poke: apache/airflow#71172
        # Hours land about once an hour: a check a minute starts the rollup within a minute of
        # the day's last hour, and costs one small catalog read while nothing changed.
        poke_interval=60,
        timeout=12 * 3600,
    )
    rollup = CoveredSparkSubmitOperator(
        task_id="rollup_day",
        cover_from="wait_for_hours",
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
    wait >> rollup >> register
