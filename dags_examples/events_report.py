"""events_report: totals per region over any range, read from the exact mixed cover.

By default the range is the run's day; trigger it with ``{"start": ..., "end": ...}`` (ISO-8601)
for any range, e.g. 45 days across month ends. The sensor waits until the range is coverable,
and the job reads monthly partitions where they exist, daily ones elsewhere and hourly ones at
the edges, so the report equals the totals of the raw events over the same range.
"""

from __future__ import annotations

from airflow.sdk import DAG, CronDataIntervalTimetable, Param

from airflow_partitions.demo.events import (
    EXAMPLE_END,
    EXAMPLE_START,
    FACT,
    MACROS,
    REPORTS,
    SPARK_CONF,
)
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.spark import job_path

START = "{{ params.start or logical_date }}"
END = "{{ params.end or period_end(logical_date, 'DAILY') }}"
OUTPUT = f"{REPORTS}/{{{{ params.output or 'events_report_' ~ ts_nodash ~ '.json' }}}}"

with DAG(
    dag_id="events_report",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=EXAMPLE_START,
    end_date=EXAMPLE_END,  # no runs past the demo data, see EXAMPLE_START
    catchup=False,
    user_defined_macros=MACROS,
    params={
        "start": Param(None, type=["null", "string"], description="range start (ISO-8601)"),
        "end": Param(None, type=["null", "string"], description="range end, excluded"),
        "output": Param(None, type=["null", "string"], description="report file name"),
    },
    tags=["airflow-partitions", "example"],
):
    wait = PartitionCoverageSensor(
        task_id="wait_for_range",
        fact=FACT,
        start=START,
        end=END,
        mode="reschedule",
        retries=1,  # a late executor event can fail a re-queued poke: apache/airflow#71172
        poke_interval=600,
        timeout=24 * 3600,
    )
    report = CoveredSparkSubmitOperator(
        task_id="report",
        cover_from="wait_for_range",
        application=job_path("events_aggregate"),
        application_args=["--output", OUTPUT, "--format", "json"],
        conf=SPARK_CONF,
        name="events_report",
    )
    wait >> report
