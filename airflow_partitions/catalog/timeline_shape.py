"""Which representation a stored timeline gets: the sparse-history switch, with its log lines.

A timeline on the default shape (EndsAndHoles) is written as Ranges once it turns sparse
(:func:`airflow_partitions.timelines.is_sparse`), with Ranges' Lens ``storage.class``, so no
registration pattern makes every reader parse one value per missing hour. A shape the user
chose (``--timeline-class``) is kept, with a warning once per process.
"""

from __future__ import annotations

import logging

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    EndsAndHolesTimeline,
    PartitionTimeline,
    RangesTimeline,
    convert,
    is_sparse,
)

log = logging.getLogger(__name__)
_warned: set[tuple[str, str, str, str]] = set()


def chosen_kind(sdef: StorageDef, period: UpdatePeriod, column: str) -> str | None:
    """The implementation the user named for this timeline, or ``None`` for the default."""
    classes = sdef.timeline_classes
    return classes.get(f"{period.name}.{column}", classes.get(period.name))


def shaped(
    store: str, sdef: StorageDef, period: UpdatePeriod, column: str, timeline: PartitionTimeline
) -> PartitionTimeline:
    """``timeline``, or the same partitions as Ranges if it is sparse and on the default shape.

    ``store`` (the store URL) only scopes the once-per-process warning.

    Only EndsAndHoles is ever switched, and only to Ranges (never back): Ranges is never
    larger than two values per run, so the switch cannot flap.
    """
    if not is_sparse(timeline):
        return timeline
    assert isinstance(timeline, EndsAndHolesTimeline)
    where = f"the {period.name} {column} timeline of {sdef.name!r}"
    if chosen_kind(sdef, period, column) is not None:
        key = (store, sdef.name, period.name, column)
        if key not in _warned:
            _warned.add(key)
            log.warning(
                "%s lists %d holes for %d ranges; EndsAndHoles was chosen explicitly, so it "
                "is kept, but every reader parses each hole (Ranges stores two values per "
                "range: 'airflow-partitions timeline migrate %s --period %s --to Ranges')",
                where, timeline.hole_count(), timeline.range_count(), sdef.name, period.name,
            )
        return timeline
    log.info(
        "%s has %d holes for %d ranges; storing it as Ranges (%s) from now on",
        where, timeline.hole_count(), timeline.range_count(), RangesTimeline.lens_class,
    )
    return convert(timeline, RangesTimeline.kind)
