"""events_hourly_ingest: write one hour of synthetic events with Spark, then register it.

Every hour: the Spark job writes ``events_raw``'s HOURLY partition for the hour that starts at
the run's logical date, and the register task advertises it in the catalog (emitting an asset
event with the partition key, so partitioned-asset DAGs can follow). Re-running an hour
overwrites its data and re-registers it harmlessly.
"""

from __future__ import annotations

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Asset, CronDataIntervalTimetable, task

from airflow_partitions.demo.events import (
    EXAMPLE_END,
    EXAMPLE_START,
    MACROS,
    RAW,
    RAW_LOCATION,
    SPARK_CONF,
    ensure_catalog,
)
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.spark.jobs import job_path

with DAG(
    dag_id="events_hourly_ingest",
    schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
    start_date=EXAMPLE_START,
    end_date=EXAMPLE_END,  # no runs past the demo data, see EXAMPLE_START
    catchup=False,
    user_defined_macros=MACROS,
    tags=["airflow-partitions", "example"],
):

    @task
    def ensure_tables() -> None:
        """Create the events fact and its storages once (idempotent)."""
        ensure_catalog(PartitionCatalogHook().get_conn())

    ingest = SparkSubmitOperator(
        task_id="ingest_hour",
        application=job_path("events_ingest"),
        application_args=[
            "--start", "{{ logical_date }}",
            "--end", "{{ period_end(logical_date, 'HOURLY') }}",
            "--location-template", RAW_LOCATION,
        ],
        conf=SPARK_CONF,
        name="events_ingest",
    )
    register = RegisterPartitionsOperator(
        task_id="register_hour",
        storage=RAW,
        period="HOURLY",
        values={"dt": "{{ period_value(logical_date, 'HOURLY') }}"},
        outlets=[Asset("events_raw")],
    )
    ensure_tables() >> ingest >> register
