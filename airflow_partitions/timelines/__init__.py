"""Partition timelines: StoreAll, EndsAndHoles (default) and Ranges, their Lens properties codec."""

from airflow_partitions.timelines.base import (
    OrdinalRange,
    PartitionTimeline,
    difference_ranges,
    runs,
    union_ranges,
)
from airflow_partitions.timelines.ends_and_holes import EndsAndHolesTimeline
from airflow_partitions.timelines.factory import (
    DEFAULT_KIND,
    IMPLEMENTATIONS,
    UnknownTimelineClass,
    convert,
    new_timeline,
    timeline_class,
    timeline_from_properties,
)
from airflow_partitions.timelines.lens import (
    WEEKLY_REASON,
    LensParameterError,
    LensTable,
    lens_properties,
    lens_table_parameters,
    read_lens_table,
)
from airflow_partitions.timelines.properties import (
    PRESENT_KEY,
    check_chunk_counts,
    storage_class_key,
    timeline_prefix,
)
from airflow_partitions.timelines.range_set import RangeSetTimeline
from airflow_partitions.timelines.ranges import RangesTimeline
from airflow_partitions.timelines.shape import is_sparse
from airflow_partitions.timelines.store_all import StoreAllTimeline

__all__ = [
    "DEFAULT_KIND",
    "IMPLEMENTATIONS",
    "PRESENT_KEY",
    "WEEKLY_REASON",
    "EndsAndHolesTimeline",
    "LensParameterError",
    "LensTable",
    "OrdinalRange",
    "PartitionTimeline",
    "RangeSetTimeline",
    "RangesTimeline",
    "StoreAllTimeline",
    "UnknownTimelineClass",
    "check_chunk_counts",
    "convert",
    "difference_ranges",
    "is_sparse",
    "lens_properties",
    "lens_table_parameters",
    "new_timeline",
    "read_lens_table",
    "runs",
    "storage_class_key",
    "timeline_class",
    "timeline_from_properties",
    "timeline_prefix",
    "union_ranges",
]
