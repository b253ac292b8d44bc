"""events_monthly_rollup: roll a month up from whatever mix covers it (daily, else hourly).

The sensor waits until the month is coverable from the raw hours and the daily rollups; the
covered job reads that mix and writes the MONTHLY partition of ``events_rollup``.
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

MONTH = "{{ period_value(logical_date, 'MONTHLY') }}"
OUTPUT = ROLLUP_LOCATION.format(period="MONTHLY", dt=MONTH)

with DAG(
    dag_id="events_monthly_rollup",
    schedule=CronDataIntervalTimetable("0 0 1 * *", timezone="UTC"),
    start_date=EXAMPLE_START,
    end_date=EXAMPLE_END,  # no runs past the demo data, see EXAMPLE_START
    catchup=False,
    user_defined_macros=MACROS,
    tags=["airflow-partitions", "example"],
):
    wait = PartitionCoverageSensor(
        task_id="wait_for_month",
        fact=FACT,
        storages=[RAW, ROLLUP],
        periods=["HOURLY", "DAILY"],
        start="{{ logical_date }}",
        end="{{ period_end(logical_date, 'MONTHLY') }}",
        mode="reschedule",
        retries=1,  # a late executor event can fail a re-queued poke: apache/airflow#71172
        poke_interval=1800,  # a month's rollup is not urgent: half an hour late is fine
        timeout=3 * 24 * 3600,
    )
    rollup = CoveredSparkSubmitOperator(
        task_id="rollup_month",
        cover_from="wait_for_month",
        application=job_path("events_aggregate"),
        application_args=["--output", OUTPUT, "--format", "parquet"],
        conf=SPARK_CONF,
        name="events_monthly_rollup",
    )
    register = RegisterPartitionsOperator(
        task_id="register_month",
        storage=ROLLUP,
        period="MONTHLY",
        values={"dt": MONTH},
        location=OUTPUT,
        inputs_from="rollup_month",  # lineage: the partitions the job read, with versions
    )
    wait >> rollup >> register
