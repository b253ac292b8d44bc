"""Planning: which producer DAG runs would make a range of a fact coverable.

Pure core above the catalog (no Airflow): the backfill command and ``airflow-partitions plan``
build on it. See ``docs/backfill.md``.
"""

from airflow_partitions.planning.model import (
    KINDS,
    PartitionRefJson,
    Plan,
    PlanJson,
    PlannedRun,
    PlannedRunJson,
    UnfillableJson,
)
from airflow_partitions.planning.plan import plan
from airflow_partitions.planning.slices import slices_text

__all__ = [
    "KINDS",
    "PartitionRefJson",
    "Plan",
    "PlanJson",
    "PlannedRun",
    "PlannedRunJson",
    "UnfillableJson",
    "plan",
    "slices_text",
]
