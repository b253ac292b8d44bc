"""The cover: the fewest existing partitions whose disjoint union is exactly ``[start, end)``.

Pure: no store, no Airflow. See ``docs/cover.md``.
"""

from airflow_partitions.cover.clock import Clock, clock_for, from_us, to_us
from airflow_partitions.cover.compute import compute_cover, cover_key, forget_solved
from airflow_partitions.cover.gauges import CoverageMetrics, coverage_metrics
from airflow_partitions.cover.instant_text import format_instant
from airflow_partitions.cover.missing import MissingJson, NeededJson, ValueRunJson
from airflow_partitions.cover.request import (
    CoverRequest,
    NaiveInstant,
    forget_requests,
    to_instant,
    zoned_instant,
)
from airflow_partitions.cover.result import (
    MAX_NEEDED_RUNS,
    Cover,
    CoverJson,
    CoverPartition,
    CoverPartitionJson,
    CoverRun,
    MissingRange,
    NeededPartitions,
    RunLocator,
    ValueRun,
)
from airflow_partitions.cover.skipped import SkippedJson, SkippedPartition, skipped_text
from airflow_partitions.cover.slices.compute import compute_slice_cover
from airflow_partitions.cover.slices.gauges import MAX_SLICE_TAGS, slice_label
from airflow_partitions.cover.slices.ordinal_sets import OrdinalSet
from airflow_partitions.cover.slices.result import (
    RequiredSlice,
    Slice,
    SliceCover,
    SliceSource,
    slice_of,
    slice_text,
)
from airflow_partitions.cover.slices.summary import SliceKey
from airflow_partitions.cover.sources import (
    CoverSource,
    MisalignedBound,
    PreparedCover,
    align_bounds,
    prepare,
)
from airflow_partitions.cover.text import missing_list, status_line

__all__ = [
    "MAX_NEEDED_RUNS",
    "MAX_SLICE_TAGS",
    "Clock",
    "Cover",
    "CoverJson",
    "CoverPartition",
    "CoverPartitionJson",
    "CoverRequest",
    "CoverRun",
    "CoverSource",
    "CoverageMetrics",
    "MisalignedBound",
    "MissingJson",
    "MissingRange",
    "NaiveInstant",
    "NeededJson",
    "NeededPartitions",
    "OrdinalSet",
    "PreparedCover",
    "RequiredSlice",
    "RunLocator",
    "SkippedJson",
    "SkippedPartition",
    "Slice",
    "SliceCover",
    "SliceKey",
    "SliceSource",
    "ValueRun",
    "ValueRunJson",
    "align_bounds",
    "clock_for",
    "compute_cover",
    "compute_slice_cover",
    "cover_key",
    "coverage_metrics",
    "forget_requests",
    "forget_solved",
    "format_instant",
    "from_us",
    "missing_list",
    "prepare",
    "skipped_text",
    "slice_label",
    "slice_of",
    "slice_text",
    "status_line",
    "to_instant",
    "to_us",
    "zoned_instant",
]
