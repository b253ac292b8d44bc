"""Keeping stored timelines true: rebuild from the partition rows, reconcile, migrate.

Rebuild and migration swap timeline cells with check-and-put like every other writer, so they
are safe while registrations and drops go on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_partitions.catalog.cache import (
    SlicedStoreAllTimeline,
    TimelineKey,
    timeline_from_cell,
)
from airflow_partitions.catalog.model import StorageDef
from airflow_partitions.catalog.rows import (
    LIVE,
    MAX_SWAP_ATTEMPTS,
    STATE,
    TimelineCell,
    backoff,
    partition_from_cells,
    value_cell_column,
)
from airflow_partitions.errors import ConcurrentUpdateError, InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    PartitionTimeline,
    StoreAllTimeline,
    convert,
    new_timeline,
    runs,
    timeline_class,
)

if TYPE_CHECKING:
    from airflow_partitions.catalog.facade import Catalog
    from airflow_partitions.catalog.model import Partition

@dataclass
class TimelineDiff:
    """How one stored timeline differed from the rebuild of its partition rows."""

    storage: str
    period: UpdatePeriod
    column: str
    under_reported: list[str] = field(default_factory=list)
    over_reported: list[str] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        return not self.under_reported and not self.over_reported

    def to_json(self) -> dict[str, Any]:
        return {
            "storage": self.storage,
            "period": self.period.name,
            "column": self.column,
            "under_reported": self.under_reported,
            "over_reported": self.over_reported,
        }


@dataclass
class ReconcileReport:
    """The result of ``reconcile``: differences found (and repaired), half-dropped rows removed."""

    storage: str
    diffs: list[TimelineDiff]
    finished_drops: int

    @property
    def consistent(self) -> bool:
        return all(d.consistent for d in self.diffs) and not self.finished_drops

    def to_json(self) -> dict[str, Any]:
        return {
            "storage": self.storage,
            "consistent": self.consistent,
            "finished_drops": self.finished_drops,
            "timelines": [d.to_json() for d in self.diffs],
        }


def stored_timelines(
    catalog: Catalog, sdef: StorageDef
) -> tuple[dict[TimelineKey, TimelineCell], dict[TimelineKey, PartitionTimeline]]:
    """The raw timeline cells and their decoded timelines, read fresh from the store."""
    cells: dict[TimelineKey, TimelineCell] = {}
    timelines: dict[TimelineKey, PartitionTimeline] = {}
    for period in sdef.periods:
        for column in sdef.time_columns:
            cell = catalog.rows.read_timeline_cell(sdef.name, period, column)
            timeline = timeline_from_cell(catalog.rows, sdef, period, column, cell)
            if isinstance(timeline, SlicedStoreAllTimeline):
                timeline = timeline.load_all()
            cells[(period, column)] = cell
            timelines[(period, column)] = timeline
    return cells, timelines

def timelines_from_rows(catalog: Catalog, sdef: StorageDef) -> tuple[
        dict[TimelineKey, set[int]], list[Partition]]:
    """Time ordinals of every live row, and the partitions whose drop was interrupted."""
    found: dict[TimelineKey, set[int]] = {
        (p, c): set() for p in sdef.periods for c in sdef.time_columns
    }
    dropping: list[Partition] = []
    for period in sdef.periods:
        prefix = catalog.rows.period_prefix(sdef, period)
        for _, cells in catalog.rows.partitions.scan(prefix=prefix):
            if cells.get(STATE) != LIVE:
                dropping.append(partition_from_cells(sdef, period, cells))
                continue
            for column in sdef.time_columns:
                text = cells[value_cell_column(column)].decode()
                found[(period, column)].add(period.parse_ordinal(text, sdef.tz))
    return found, dropping


def rebuild(catalog: Catalog, sdef: StorageDef) -> tuple[
    dict[TimelineKey, PartitionTimeline], dict[TimelineKey, PartitionTimeline]
]:
    """Store timelines recomputed from the live partition rows; returns (before, after).

    Each timeline cell is swapped only if it is unchanged since it was read, before the rows
    were scanned, so a concurrent writer makes the rebuild retry instead of being overwritten.
    """
    for attempt in range(MAX_SWAP_ATTEMPTS):
        cells, stored = stored_timelines(catalog, sdef)
        found, _ = timelines_from_rows(catalog, sdef)
        rebuilt: dict[TimelineKey, PartitionTimeline] = {}
        ok = True
        for (period, column), ordinals in found.items():
            kind = cells[(period, column)].kind or sdef.timeline_kind(period, column)
            timeline = new_timeline(kind, period, column, sdef.tz)
            timeline.add_ordinal_ranges(runs(sorted(ordinals)))
            rebuilt[(period, column)] = timeline
            cell = cells[(period, column)]
            if isinstance(timeline, StoreAllTimeline):
                old = set(o for b, e in stored[(period, column)].ordinal_ranges()
                          for o in range(b, e))
                formatted = {o: period.format_ordinal(o, sdef.tz) for o in ordinals - old}
                catalog.rows.write_values(sdef.name, period, column, ordinals - old,
                                     old - ordinals, formatted)
                new = cell.encode_next(kind, {})
            else:
                new = cell.encode_next(kind, timeline.to_properties())
            if not catalog.rows.swap_timeline_cell(sdef.name, period, column, cell, new):
                ok = False
                break
        if ok:
            catalog.rows.set_present(sdef.name, True)
            catalog.rows.bump_generation(sdef.fact)
            catalog.cache.invalidate(sdef.fact)
            return stored, rebuilt
        backoff(attempt)
    raise ConcurrentUpdateError(f"timelines of {sdef.name!r} kept changing during rebuild")


def reconcile(catalog: Catalog, sdef: StorageDef) -> ReconcileReport:
    """Finish interrupted drops, rebuild, and report what the stored timelines got wrong."""
    storage = sdef.name
    _, dropping = timelines_from_rows(catalog, sdef)
    for part in dropping:  # drops are idempotent: running one again completes it
        catalog.drop(storage, part.period, part.values)
    stored, rebuilt = rebuild(catalog, sdef)
    diffs = []
    for key, fresh in rebuilt.items():
        period, column = key
        old = {o for b, e in stored[key].ordinal_ranges() for o in range(b, e)}
        new = {o for b, e in fresh.ordinal_ranges() for o in range(b, e)}
        diffs.append(TimelineDiff(
            storage, period, column,
            under_reported=[period.format_ordinal(o, sdef.tz) for o in sorted(new - old)],
            over_reported=[period.format_ordinal(o, sdef.tz) for o in sorted(old - new)],
        ))
    return ReconcileReport(storage, diffs, len(dropping))


def migrate_timeline(catalog: Catalog, sdef: StorageDef, period: UpdatePeriod | str,
                     column: str | None, to: str) -> PartitionTimeline:
    """Switch one timeline's implementation without reading the partitions (LENS-489)."""
    storage = sdef.name
    period_ = UpdatePeriod.of(period)
    column = column or sdef.time_columns[0]
    if column not in sdef.time_columns or period_ not in sdef.periods:
        raise InvalidInput(f"storage {storage!r} has no {period_.name} timeline for {column!r}")
    target_kind = timeline_class(to).kind
    for attempt in range(MAX_SWAP_ATTEMPTS):
        cell = catalog.rows.read_timeline_cell(sdef.name, period_, column)
        current = timeline_from_cell(catalog.rows, sdef, period_, column, cell)
        if isinstance(current, SlicedStoreAllTimeline):
            current = current.load_all()
        target = convert(current, target_kind)
        all_values = {o for b, e in current.ordinal_ranges() for o in range(b, e)}
        if isinstance(target, StoreAllTimeline):
            formatted = {o: period_.format_ordinal(o, sdef.tz) for o in all_values}
            catalog.rows.write_values(sdef.name, period_, column, all_values, (), formatted)
            new = cell.encode_next(target_kind, {})
        else:
            new = cell.encode_next(target_kind, target.to_properties())
        if catalog.rows.swap_timeline_cell(sdef.name, period_, column, cell, new):
            if isinstance(current, StoreAllTimeline) and not isinstance(
                    target, StoreAllTimeline):
                catalog.rows.write_values(sdef.name, period_, column, (), all_values, {})
            catalog.rows.bump_generation(sdef.fact)
            catalog.cache.invalidate(sdef.fact)
            return target
        backoff(attempt)
    raise ConcurrentUpdateError(f"the timeline of {storage!r} kept changing during migration")
