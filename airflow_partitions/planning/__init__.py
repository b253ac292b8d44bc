"""Planning: which producer DAG runs would make a range of a fact coverable.

Pure core above the catalog (no Airflow): the backfill command and ``airflow-partitions plan``
build on it. See ``docs/backfill.md``.
"""

from airflow_partitions.planning.plan import Instant, plan
from airflow_partitions.planning.planned_runs import (
    KINDS,
    PartitionRefJson,
    Plan,
    PlanJson,
    PlannedRun,
    PlannedRunJson,
    UnfillableJson,
)
from airflow_partitions.planning.slices import conf_text, run_conf, slices_text

__all__ = [
    "KINDS",
    "Instant",
    "PartitionRefJson",
    "Plan",
    "PlanJson",
    "PlannedRun",
    "PlannedRunJson",
    "UnfillableJson",
    "conf_text",
    "plan",
    "run_conf",
    "slices_text",
]
