"""events_hourly_ingest: write one hour of synthetic events with Spark, then register it.

Every hour: the Spark job writes ``events_raw``'s HOURLY partitions for the hour that starts at
the run's logical date, one per region (``dt=.../region=...``), and the register task advertises
them in the catalog (emitting an asset event with the partition key, so partitioned-asset DAGs
can follow). The ``regions`` param narrows a run to the regions named, for one region's late
data: ``airflow dags test events_hourly_ingest 2015-01-31T05:00:00+00:00 --conf
'{"regions": ["eu"]}'`` writes and registers eu's 05:00 and leaves us's alone. Re-running an
hour overwrites its data and re-registers it harmlessly.
"""

from __future__ import annotations

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Asset, CronDataIntervalTimetable, Param, task

from airflow_partitions.demo.events import (
    EXAMPLE_END,
    EXAMPLE_START,
    MACROS,
    RAW,
    RAW_LOCATION,
    REGIONS,
    SPARK_CONF,
    ensure_catalog,
)
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.spark import job_path

HOUR = "{{ period_value(logical_date, 'HOURLY') }}"

with DAG(
    dag_id="events_hourly_ingest",
    schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
    start_date=EXAMPLE_START,
    end_date=EXAMPLE_END,  # no runs past the demo data, see EXAMPLE_START
    catchup=False,
    user_defined_macros=MACROS,
    params={
        "regions": Param(list(REGIONS), type="array", minItems=1,
                         items={"type": "string", "enum": list(REGIONS)},
                         description="the regions to ingest (default: every region)"),
    },
    tags=["airflow-partitions", "example"],
):

    @task
    def ensure_tables() -> None:
        """Create the events fact and its storages once (idempotent; an unreachable catalog
        is waited out, as the register task does)."""
        PartitionCatalogHook().ride_out(ensure_catalog, doing="create the events tables")

    ingest = SparkSubmitOperator(
        task_id="ingest_hour",
        application=job_path("events_ingest"),
        application_args=[
            "--start", "{{ logical_date }}",
            "--end", "{{ period_end(logical_date, 'HOURLY') }}",
            "--regions", "{{ params.regions | join(',') }}",
            "--location-template", RAW_LOCATION,
        ],
        conf=SPARK_CONF,
        name="events_ingest",
    )
    register = RegisterPartitionsOperator(
        task_id="register_hour",
        storage=RAW,
        period="HOURLY",
        # JSON text, so the regions stay a list once rendered: one partition per region
        values='{"dt": "' + HOUR + '", "region": {{ params.regions | tojson }}}',
        outlets=[Asset("events_raw")],
    )
    ensure_tables() >> ingest >> register
