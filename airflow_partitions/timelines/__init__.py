"""Partition timelines: StoreAll, EndsAndHoles (default) and Ranges, their Lens properties codec."""

from airflow_partitions.timelines.base import (
    OrdinalRange,
    PartitionTimeline,
    difference_ranges,
    runs,
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
    LensParameterError,
    LensTable,
    lens_properties,
    lens_table_parameters,
    read_lens_table,
)
from airflow_partitions.timelines.properties import PRESENT_KEY, storage_class_key
from airflow_partitions.timelines.ranges import RangesTimeline
from airflow_partitions.timelines.shape import is_sparse
from airflow_partitions.timelines.store_all import StoreAllTimeline

__all__ = [
    "DEFAULT_KIND",
    "IMPLEMENTATIONS",
    "PRESENT_KEY",
    "EndsAndHolesTimeline",
    "LensParameterError",
    "LensTable",
    "OrdinalRange",
    "PartitionTimeline",
    "RangesTimeline",
    "StoreAllTimeline",
    "UnknownTimelineClass",
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
]
