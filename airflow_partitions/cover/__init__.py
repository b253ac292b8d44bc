"""The cover: the fewest existing partitions whose disjoint union is exactly ``[start, end)``.

Pure: no store, no Airflow. See ``docs/cover.md``.
"""

from airflow_partitions.cover.compute import (
    Cover,
    CoverPartition,
    CoverRun,
    CoverSource,
    MisalignedBound,
    MissingRange,
    NaiveInstant,
    NeededPartitions,
    ValueRun,
    compute_cover,
    cover_key,
)

__all__ = [
    "Cover",
    "CoverPartition",
    "CoverRun",
    "CoverSource",
    "MisalignedBound",
    "MissingRange",
    "NaiveInstant",
    "NeededPartitions",
    "ValueRun",
    "compute_cover",
    "cover_key",
]
