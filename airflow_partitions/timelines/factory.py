"""Pick, load and convert timeline implementations by name (the ``storage.class`` property)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from airflow_partitions.errors import CorruptTimeline, InvalidInput
from airflow_partitions.periods import TzLike, UpdatePeriod
from airflow_partitions.timelines.base import PartitionTimeline
from airflow_partitions.timelines.ends_and_holes import EndsAndHolesTimeline
from airflow_partitions.timelines.properties import storage_class_key
from airflow_partitions.timelines.ranges import RangesTimeline
from airflow_partitions.timelines.store_all import StoreAllTimeline

DEFAULT_KIND: Final = "EndsAndHoles"
IMPLEMENTATIONS: Final[tuple[type[PartitionTimeline], ...]] = (
    StoreAllTimeline,
    EndsAndHolesTimeline,
    RangesTimeline,
)


class UnknownTimelineClass(InvalidInput):
    """A ``storage.class`` names no timeline implementation."""


def timeline_class(name: str | None) -> type[PartitionTimeline]:
    """The implementation for a short name, a Lens class name or a Python class name."""
    if name is None or not name.strip():
        return EndsAndHolesTimeline
    for cls in IMPLEMENTATIONS:
        if cls.names(name):
            return cls
    kinds = ", ".join(c.kind for c in IMPLEMENTATIONS)
    raise UnknownTimelineClass(f"unknown timeline class {name!r}; expected one of {kinds}")


def new_timeline(
    kind: str | None, period: UpdatePeriod | str, column: str = "dt", tz: TzLike = "UTC"
) -> PartitionTimeline:
    """An empty timeline of the named implementation (EndsAndHoles when ``None``)."""
    return timeline_class(kind)(period, column, tz)


def timeline_from_properties(
    props: Mapping[str, str],
    period: UpdatePeriod | str,
    column: str = "dt",
    tz: TzLike = "UTC",
) -> PartitionTimeline:
    """Load the timeline of (period, column) with the implementation its properties name."""
    period = UpdatePeriod.of(period)
    try:
        cls = timeline_class(props.get(storage_class_key(period.name, column)))
    except UnknownTimelineClass as exc:
        raise CorruptTimeline(str(exc)) from None
    return cls.from_properties(props, period, column, tz)


def convert(timeline: PartitionTimeline, kind: str) -> PartitionTimeline:
    """The same partitions in another implementation, through the common range model."""
    target = new_timeline(kind, timeline.period, timeline.column, timeline.tz)
    target.replace_ranges(timeline.ordinal_ranges())
    return target
