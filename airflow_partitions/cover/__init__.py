"""The cover: the fewest existing partitions whose disjoint union is exactly ``[start, end)``.

Pure: no store, no Airflow. See ``docs/cover.md``.
"""

from airflow_partitions.cover.compute import compute_cover, cover_key
from airflow_partitions.cover.model import (
    Cover,
    CoverPartition,
    CoverRun,
    MissingRange,
    NeededPartitions,
    ValueRun,
)
from airflow_partitions.cover.request import CoverRequest, NaiveInstant, to_instant
from airflow_partitions.cover.skipped import SkippedPartition
from airflow_partitions.cover.sources import CoverSource, MisalignedBound
from airflow_partitions.cover.text import missing_list, status_line

__all__ = [
    "Cover",
    "CoverPartition",
    "CoverRequest",
    "CoverRun",
    "CoverSource",
    "MisalignedBound",
    "MissingRange",
    "NaiveInstant",
    "NeededPartitions",
    "SkippedPartition",
    "ValueRun",
    "compute_cover",
    "cover_key",
    "missing_list",
    "status_line",
    "to_instant",
]
