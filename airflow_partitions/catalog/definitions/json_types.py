"""The JSON the catalog's definitions and repairs write, typed (docs/architecture.md, "Typed
JSON contracts"): a fact or storage definition as stored, a listed partition, a reconcile report
and the slice timelines it rebuilt.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from airflow_partitions.catalog.definitions.producers import ProducerJson
from airflow_partitions.catalog.slices.dimensions import DimensionJson


class FactDefJson(TypedDict):
    """A fact definition as stored (cell ``m:def``)."""

    name: str
    time_columns: list[str]
    tz: str


class StorageDefJson(TypedDict):
    """A storage definition as stored (cell ``m:def``); ``producers`` and ``dimensions`` only
    when set."""

    name: str
    fact: str
    columns: list[list[str]]
    time_columns: list[str]
    periods: list[str]
    location: str
    tz: str
    priority: int
    timeline_classes: dict[str, str]
    producers: NotRequired[dict[str, ProducerJson]]
    dimensions: NotRequired[list[DimensionJson]]


class PartitionJson(TypedDict):
    """A partition as ``partition list --json`` prints it."""

    storage: str
    period: str
    values: dict[str, str]
    location: str
    version: int


class TimelineDiffJson(TypedDict):
    """One timeline's differences in ``reconcile --json``; the counts and ranges only when
    either side has more than ``REPORT_VALUES``, ``corruption`` only when it was corrupt."""

    storage: str
    period: str
    column: str
    under_reported: list[str]
    over_reported: list[str]
    under_reported_count: NotRequired[int]
    over_reported_count: NotRequired[int]
    under_reported_ranges: NotRequired[list[list[str]]]
    over_reported_ranges: NotRequired[list[list[str]]]
    corruption: NotRequired[str]


class CorruptRowJson(TypedDict):
    """A row reconcile could not read, in ``reconcile --json``."""

    storage: str
    period: str
    values: dict[str, str]
    reason: str
    dropped: bool


class SliceTimelineJson(TypedDict):
    """One slice timeline ``reconcile`` rebuilt, in ``reconcile --json``: which (``slice``:
    column -> value), why (``reason``), and the hours its cell lacked or held without a row
    (at most ``REPORT_VALUES`` per list; the counts are whole)."""

    storage: str
    period: str
    column: str
    slice: dict[str, str]
    reason: str
    under_reported: list[str]
    over_reported: list[str]
    under_reported_count: int
    over_reported_count: int


class ReconcileReportJson(TypedDict):
    """``reconcile --json``; ``corrupt_rows`` and ``slice_timelines`` only when there are
    some."""

    storage: str
    consistent: bool
    finished_drops: int
    timelines: list[TimelineDiffJson]
    corrupt_rows: NotRequired[list[CorruptRowJson]]
    slice_timelines: NotRequired[list[SliceTimelineJson]]
