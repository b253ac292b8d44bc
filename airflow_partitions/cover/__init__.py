"""The cover: the fewest existing partitions whose disjoint union is exactly ``[start, end)``.

Pure: no store, no Airflow. See ``docs/cover.md``.
"""

from airflow_partitions.cover.compute import compute_cover, cover_key
from airflow_partitions.cover.missing import MissingJson, NeededJson, ValueRunJson
from airflow_partitions.cover.model import (
    Cover,
    CoverJson,
    CoverPartition,
    CoverPartitionJson,
    CoverRun,
    MissingRange,
    NeededPartitions,
    ValueRun,
)
from airflow_partitions.cover.request import CoverRequest, NaiveInstant, to_instant
from airflow_partitions.cover.skipped import SkippedJson, SkippedPartition
from airflow_partitions.cover.sources import CoverSource, MisalignedBound
from airflow_partitions.cover.text import missing_list, status_line

__all__ = [
    "Cover",
    "CoverJson",
    "CoverPartition",
    "CoverPartitionJson",
    "CoverRequest",
    "CoverRun",
    "CoverSource",
    "MisalignedBound",
    "MissingJson",
    "MissingRange",
    "NaiveInstant",
    "NeededJson",
    "NeededPartitions",
    "SkippedJson",
    "SkippedPartition",
    "ValueRun",
    "ValueRunJson",
    "compute_cover",
    "cover_key",
    "missing_list",
    "status_line",
    "to_instant",
]
