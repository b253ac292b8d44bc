"""events_by_region_pruned: join regional events with a small dimension, reading only its regions.

Every six hours: the setup job writes the ``regions_of_interest`` dimension if it is absent
and the six hours x eight regions of events; they are registered in the catalog; then the
pruned join collects the dimension's distinct regions (a small Spark step), asks the catalog
for just those regions' partitions of the interval, logs the decision record and runs the
join on 12 of the 48 partitions. The manifest carries the record under ``"pruning"``.
"""

from __future__ import annotations

import pendulum
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, CronDataIntervalTimetable, task

from airflow_partitions.demo.pruning import (
    ALL_REGIONS,
    DIMENSION,
    FACT,
    JOINS,
    LOCATION,
    PRUNING_SPARK_CONF,
    REGIONS_OF_INTEREST,
    REPORTS,
    SMALL_TABLES,
    STORAGE,
    ensure_catalog,
)
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.operators.pruned_spark import PrunedSparkSubmitOperator
from airflow_partitions.spark import job_path

with DAG(
    dag_id="events_by_region_pruned",
    schedule=CronDataIntervalTimetable("0 */6 * * *", timezone="UTC"),
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["airflow-partitions", "example", "pruning"],
):

    @task
    def ensure_tables() -> None:
        """Create the regional events fact and storage once (idempotent; an unreachable
        catalog is waited out, as the register task does)."""
        PartitionCatalogHook().ride_out(ensure_catalog, doing="create the regional events tables")

    setup = SparkSubmitOperator(
        task_id="write_events",
        application=job_path("regional_join"),
        application_args=[
            "setup", "--dimension", DIMENSION, "--regions", ",".join(REGIONS_OF_INTEREST),
            "--start", "{{ data_interval_start }}", "--end", "{{ data_interval_end }}",
            "--location-template", LOCATION,
        ],
        conf=PRUNING_SPARK_CONF,
        name="regional_setup",
    )
    register = RegisterPartitionsOperator(
        task_id="register_events",
        storage=STORAGE,
        period="HOURLY",
        values={"range": ["{{ data_interval_start }}", "{{ data_interval_end }}"],
                "region": list(ALL_REGIONS)},
    )
    join = PrunedSparkSubmitOperator(
        task_id="pruned_join",
        fact=FACT,
        joins=JOINS,
        small_tables=SMALL_TABLES,
        application=job_path("regional_join"),
        application_args=[
            "join", "--dimension", DIMENSION,
            "--output", REPORTS + "/regional-{{ ts_nodash }}.json",
        ],
        conf=PRUNING_SPARK_CONF,
        name="regional_join",
    )
    ensure_tables() >> setup >> register >> join
