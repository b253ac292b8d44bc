"""Keeping stored timelines true: rebuild from the partition rows, reconcile, migrate.

Rebuild and migration swap timeline cells with check-and-put like every other writer, so they
are safe while registrations and drops go on. Rebuild (and so reconcile) also rebuilds the slice
timelines of a storage with declared dimensions (:mod:`.slices.build`); reconcile's report names
each one it rebuilt, and why (:mod:`.slices.repaired`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, NamedTuple

from airflow_partitions.catalog import writer
from airflow_partitions.catalog.bulk_specs import keyed_specs
from airflow_partitions.catalog.cache import TimelineKey
from airflow_partitions.catalog.decoded_cells import (
    SlicedStoreAllTimeline,
    decode_timeline,
    timeline_from_cell,
)
from airflow_partitions.catalog.definitions.json_types import (
    CorruptRowJson,
    ReconcileReportJson,
    TimelineDiffJson,
)
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.lineage import flag as lineage_flag
from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.layout import (
    DROPPING,
    MAX_SWAP_ATTEMPTS,
    STATE,
    TimelineCell,
    backoff,
    encode_timeline_cell,
    value_cell_column,
    value_column,
    value_ordinals,
)
from airflow_partitions.catalog.rows.scan import scan_row_cells
from airflow_partitions.catalog.slices import repaired as slice_repair
from airflow_partitions.catalog.slices.build import build_slices
from airflow_partitions.catalog.timeline_shape import shaped
from airflow_partitions.errors import ConcurrentUpdateError, CorruptTimeline, InvalidInput
from airflow_partitions.keys import KeyEncodingError, decode_key
from airflow_partitions.kv import Cells
from airflow_partitions.periods import UpdatePeriod, ordinal_values
from airflow_partitions.timelines import (
    OrdinalRange,
    PartitionTimeline,
    StoreAllTimeline,
    convert,
    difference_ranges,
    new_timeline,
    runs,
    storage_class_key,
    timeline_class,
)

if TYPE_CHECKING:
    from airflow_partitions.catalog.core import CatalogCore

log = logging.getLogger(__name__)

#: A rebuild's row scan logs its progress every this many rows.
PROGRESS_ROWS: Final = 1_000_000
#: At most this many values per list in a report's JSON; the counts and ranges are whole.
REPORT_VALUES: Final = 1000


@dataclass
class TimelineDiff:
    """How one stored timeline differed from the rebuild of its partition rows.

    The differences are kept as ordinal ranges (a stored timeline of 87.6 million hours
    that no row backs would otherwise make reconcile build a set and a string per hour and
    die of memory), so a report is O(ranges); the value lists are built only when asked.
    ``corruption`` says why a stored timeline could not be read at all; it was replaced by the
    rebuild, and its under- and over-reports are unknown (left empty).
    """

    storage: str
    period: UpdatePeriod
    column: str
    tz: str = "UTC"
    under_ranges: list[OrdinalRange] = field(default_factory=list)
    over_ranges: list[OrdinalRange] = field(default_factory=list)
    corruption: str | None = None

    @property
    def consistent(self) -> bool:
        return not self.under_ranges and not self.over_ranges and self.corruption is None

    @property
    def under_count(self) -> int:
        return sum(e - b for b, e in self.under_ranges)

    @property
    def over_count(self) -> int:
        return sum(e - b for b, e in self.over_ranges)

    @property
    def under_reported(self) -> list[str]:
        """Every under-reported value (O(values): prefer the ranges on large timelines)."""
        return self.values(self.under_ranges)

    @property
    def over_reported(self) -> list[str]:
        """Every over-reported value (O(values): prefer the ranges on large timelines)."""
        return self.values(self.over_ranges)

    def values(self, ranges: list[OrdinalRange], limit: int | None = None) -> list[str]:
        """The values of ``ranges`` in order, at most ``limit`` of them."""
        return ordinal_values(self.period, self.tz, ranges, limit)

    def _ranges_json(self, ranges: list[OrdinalRange]) -> list[list[str]]:
        fmt = self.period.format_ordinal
        return [[fmt(b, self.tz), fmt(e, self.tz)] for b, e in ranges]

    def to_json(self) -> TimelineDiffJson:
        out: TimelineDiffJson = {
            "storage": self.storage,
            "period": self.period.name,
            "column": self.column,
            "under_reported": self.values(self.under_ranges, REPORT_VALUES),
            "over_reported": self.values(self.over_ranges, REPORT_VALUES),
        }
        if self.under_count > REPORT_VALUES or self.over_count > REPORT_VALUES:
            out["under_reported_count"] = self.under_count
            out["over_reported_count"] = self.over_count
            out["under_reported_ranges"] = self._ranges_json(self.under_ranges)
            out["over_reported_ranges"] = self._ranges_json(self.over_ranges)
        if self.corruption is not None:  # only then, so sound reports keep their shape
            out["corruption"] = self.corruption
        return out


@dataclass
class CorruptRow:
    """A partition row that reconcile could not read; it is reported and left as it is."""

    storage: str
    period: UpdatePeriod
    values: dict[str, str]
    reason: str
    key: bytes = b""  # the row key (what ``--drop-corrupt`` deletes)
    dropped: bool = False  # deleted by ``reconcile --drop-corrupt``

    def to_json(self) -> CorruptRowJson:
        return {"storage": self.storage, "period": self.period.name,
                "values": dict(self.values), "reason": self.reason, "dropped": self.dropped}


@dataclass
class ReconcileReport:
    """The result of ``reconcile``: differences found (and repaired), corrupt timelines
    replaced, half-dropped rows removed, rows it could not read (kept untouched), and the
    slice timelines it rebuilt because their cells were wrong (``slice_repairs``)."""

    storage: str
    diffs: list[TimelineDiff]
    finished_drops: int
    corrupt_rows: list[CorruptRow] = field(default_factory=list)
    slice_repairs: list[slice_repair.SliceRepair] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        return (all(d.consistent for d in self.diffs) and not self.finished_drops
                and not self.corrupt_rows and not self.slice_repairs)

    @property
    def corrupt_timelines(self) -> list[TimelineDiff]:
        """The stored timelines that were corrupt, and were rebuilt from the rows."""
        return [d for d in self.diffs if d.corruption is not None]

    def to_json(self) -> ReconcileReportJson:
        out: ReconcileReportJson = {
            "storage": self.storage,
            "consistent": self.consistent,
            "finished_drops": self.finished_drops,
            "timelines": [d.to_json() for d in self.diffs],
        }
        if self.corrupt_rows:
            out["corrupt_rows"] = [r.to_json() for r in self.corrupt_rows]
        if self.slice_repairs:
            out["slice_timelines"] = [r.to_json(REPORT_VALUES) for r in self.slice_repairs]
        return out


@dataclass
class StoredTimeline:
    """One timeline as stored, read without trusting it: what repair replaces."""

    raw: bytes | None  # the cell's bytes: the check-and-put expectation
    values: Cells  # its StoreAll value columns, raw (leftovers too, whatever the kind)
    cell: TimelineCell | None = None  # None when the cell itself is corrupt
    timeline: PartitionTimeline | None = None  # None when corrupt
    corruption: str | None = None

    def version(self) -> int:
        """The stored version, or 0 when the cell is too broken to say."""
        if self.cell is not None:
            return self.cell.version
        try:
            version = json.loads(self.raw or b"{}").get("version", 0)
        except (ValueError, AttributeError):
            return 0
        return version if isinstance(version, int) and not isinstance(version, bool) else 0


class RowScan(NamedTuple):
    """The partition rows of a storage as repair sees them."""

    found: dict[TimelineKey, set[int]]  # time ordinals of the live rows
    dropping: list[tuple[UpdatePeriod, dict[str, str]]]  # rows whose drop was interrupted
    corrupt: list[CorruptRow]  # rows it cannot read: never counted, never touched


class RebuildResult(NamedTuple):
    """What ``rebuild`` read and what it stored (``[1]`` is the rebuilt timelines)."""

    before: dict[TimelineKey, StoredTimeline]
    after: dict[TimelineKey, PartitionTimeline]
    rows: RowScan


def read_stored(catalog: CatalogCore, sdef: StorageDef, period: UpdatePeriod,
                column: str) -> StoredTimeline:
    """One stored timeline, fully loaded, with what makes it corrupt if it is."""
    rows = catalog.rows
    stored = StoredTimeline(rows.read_raw_timeline_cell(sdef.name, period, column),
                            rows.read_value_columns(sdef.name, period, column))
    try:
        stored.cell = TimelineCell.decode(stored.raw)
        stored.cell.check(period, column)
    except CorruptTimeline as exc:
        stored.cell, stored.corruption = None, str(exc)
        return stored
    try:
        timeline = decode_timeline(rows, sdef, period, column, stored.cell)
        if isinstance(timeline, StoreAllTimeline):  # from the columns just read
            timeline = StoreAllTimeline(period, column, sdef.tz)
            timeline.add_ordinal_ranges(
                runs(value_ordinals(period, column, sdef.tz, stored.values)))
    except CorruptTimeline as exc:
        stored.corruption = str(exc)
        return stored
    stored.timeline = timeline
    return stored


def stored_timelines(
    catalog: CatalogCore, sdef: StorageDef
) -> dict[TimelineKey, StoredTimeline]:
    """Every stored timeline of a storage, read fresh and without trusting it."""
    return {
        (period, column): read_stored(catalog, sdef, period, column)
        for period in sdef.periods
        for column in sdef.time_columns
    }


def timelines_from_rows(catalog: CatalogCore, sdef: StorageDef) -> RowScan:
    """Time ordinals of every live row, the interrupted drops, and the unreadable rows.

    A row that is not whole (:mod:`.rows.check`: a state neither live nor dropping, no or an
    undecodable location, value cells that are not its key, a blob that does not decode),
    or whose time value does not parse, is corrupt: it is not counted (a timeline
    under-reports rather than advertise it) and it is kept (quarantined), for a person to
    look at or for ``reconcile --drop-corrupt`` to remove.
    """
    found: dict[TimelineKey, set[int]] = {
        (p, c): set() for p in sdef.periods for c in sdef.time_columns
    }
    scan = RowScan(found, [], [])
    for period in sdef.periods:
        decoder = PartitionDecoder(sdef, period)

        def damaged(key: bytes, reason: str, period: UpdatePeriod = period) -> None:
            scan.corrupt.append(CorruptRow(sdef.name, period, _key_values(sdef, key),
                                           reason, key))

        prefix = catalog.rows.period_prefix(sdef, period)
        for read, (key, cells) in enumerate(scan_row_cells(
                catalog.rows.partitions, prefix=prefix, on_damaged=damaged), 1):
            if not read % PROGRESS_ROWS:  # a long run says where it is
                log.info("reconcile %s: read %d %s rows", sdef.name, read, period.name)
            row = tuple(map(cells.get, decoder.columns))
            reason = decoder.check.damage(key, row)
            if reason is not None:
                damaged(key, reason)
                continue
            values = {c: cells[value_cell_column(c)].decode() for c in sdef.column_names}
            if cells.get(STATE) == DROPPING:
                scan.dropping.append((period, values))
                continue
            try:
                ordinals = {column: period.parse_ordinal(values[column], sdef.tz)
                            for column in sdef.time_columns}
            except ValueError as exc:  # InvalidPartitionValue
                damaged(key, str(exc))
                continue
            for column, ordinal in ordinals.items():
                found[(period, column)].add(ordinal)
    return scan


def _key_values(sdef: StorageDef, key: bytes) -> dict[str, str]:
    """The values a row key names (``{"key": <hex>}`` when it does not decode)."""
    try:
        _, _, typed = decode_key(sdef.key_schema, key)
    except KeyEncodingError:
        return {"key": key.hex()}
    return {c: "" if v is None else str(v) for c, v in zip(sdef.column_names, typed,
                                                           strict=True)}


def _kind_to_store(sdef: StorageDef, key: TimelineKey, stored: StoredTimeline) -> str:
    """The implementation a rebuilt timeline keeps: the stored one's, unless its cell is
    corrupt (then nothing in it is trusted, and the storage's configured one is used)."""
    period, column = key
    configured = sdef.timeline_kind(period, column)
    if stored.cell is None:
        return configured
    named = stored.cell.properties.get(storage_class_key(period.name, column))
    return timeline_class(stored.cell.kind or named or configured).kind


def seeded(sdef: StorageDef, key: TimelineKey, kind: str, ordinals: set[int],
           seed: PartitionTimeline | None) -> PartitionTimeline:
    """A timeline of ``kind`` holding the rows' ``ordinals`` and the seed's partitions."""
    period, column = key
    timeline = new_timeline(kind, period, column, sdef.tz)
    timeline.add_ordinal_ranges(runs(sorted(ordinals)))
    if seed is not None:
        timeline.add_ordinal_ranges(seed.ordinal_ranges())
    return timeline


def rebuild(catalog: CatalogCore, sdef: StorageDef, *,
            seed: Mapping[TimelineKey, PartitionTimeline] | None = None) -> RebuildResult:
    """Store timelines recomputed from the live partition rows, whatever the stored cells hold.

    The stored cells are read raw and never trusted: a corrupt one is replaced (and reported
    in the result and the log), not parsed on the way. Each cell is swapped with check-and-put
    against the bytes read before the rows were scanned, so a concurrent writer makes the
    rebuild retry instead of being overwritten.

    ``seed`` (a Lens import, :mod:`.lens_table`) adds partitions the rows may not have: each
    seeded timeline is stored in the seed's implementation, holding the seed's partitions
    plus the live rows' (a registered partition is never hidden).
    """
    rows = catalog.rows
    seed = seed or {}
    for attempt in range(MAX_SWAP_ATTEMPTS):
        stored = stored_timelines(catalog, sdef)
        scan = timelines_from_rows(catalog, sdef)
        rebuilt: dict[TimelineKey, PartitionTimeline] = {}
        ok = True
        for (period, column), ordinals in scan.found.items():
            before = stored[(period, column)]
            extra = seed.get((period, column))
            kind = extra.kind if extra is not None else \
                _kind_to_store(sdef, (period, column), before)
            timeline = seeded(sdef, (period, column), kind, ordinals, extra)
            if extra is None:  # a sparse default-shaped history is stored as Ranges here too
                timeline = shaped(rows.kv.url, sdef, period, column, timeline)
                kind = timeline.kind
            rebuilt[(period, column)] = timeline
            if isinstance(timeline, StoreAllTimeline):
                wanted = {value_column(period, column, o):
                          period.format_ordinal(o, sdef.tz).encode()
                          for b, e in timeline.ordinal_ranges() for o in range(b, e)}
                rows.mutate_value_columns(
                    sdef.name,
                    puts={c: v for c, v in wanted.items() if before.values.get(c) != v},
                    deletes=[c for c in before.values if c not in wanted],
                )
                properties: dict[str, str] = {}
            else:
                properties = timeline.to_properties()
            new = encode_timeline_cell(before.version() + 1, kind, properties)
            if not rows.swap_timeline_cell(sdef.name, period, column, before.raw, new):
                ok = False
                break
            if before.values and not isinstance(timeline, StoreAllTimeline):
                rows.mutate_value_columns(sdef.name, {}, before.values)  # leftovers
        if ok:
            rows.set_present(sdef.name, True)
            build_slices(rows, sdef, again=True)  # and each slice's, from the same rows
            rows.bump_generation(sdef.fact)
            catalog.cache.invalidate(sdef.fact)
            _log_corruption(sdef, stored, scan)
            return RebuildResult(stored, rebuilt, scan)
        backoff(attempt)
    raise ConcurrentUpdateError(f"timelines of {sdef.name!r} kept changing during rebuild")


def _log_corruption(sdef: StorageDef, stored: dict[TimelineKey, StoredTimeline],
                    scan: RowScan) -> None:
    for (period, column), before in stored.items():
        if before.corruption is not None:
            log.warning("replaced the corrupt %s %s timeline of storage %r (%s); rebuilt it "
                        "from the partition rows", period.name, column, sdef.name,
                        before.corruption)
    for row in scan.corrupt:
        log.warning("kept a %s partition row of storage %r that cannot be read, not counted "
                    "in its timelines: %s (%s)", row.period.name, sdef.name, row.values,
                    row.reason)


def reconcile(catalog: CatalogCore, sdef: StorageDef, *, drop_corrupt: bool = False
              ) -> ReconcileReport:
    """Rebuild, finish interrupted drops, and report what the stored timelines got wrong.

    Rebuild goes first, so a corrupt timeline is replaced before the drops update it. The
    rows reconcile cannot read (an unknown state, a time value that does not parse) are
    reported and kept: deleting them as if they were interrupted drops would lose data.
    ``drop_corrupt`` deletes them (they were never counted, so no timeline changes); the
    partition can then be registered again.
    """
    storage = sdef.name
    slices_before = slice_repair.read_slice_cells(catalog.rows, sdef)
    stored, rebuilt, scan = rebuild(catalog, sdef)
    lineage_flag.settle(catalog.rows, sdef)  # a storage from before the flag: set it once
    corrupt_rows = list(scan.corrupt)
    if drop_corrupt:
        for row in corrupt_rows:
            if row.key:
                catalog.rows.partitions.delete(row.key)
                row.dropped = True
    finished = 0
    for period, values in scan.dropping:  # drops are idempotent: running one again completes it
        try:
            writer.drop(catalog.rows, sdef, period, keyed_specs(sdef, period, [values]))
        except InvalidInput as exc:  # its values do not make a partition: report, keep
            corrupt_rows.append(CorruptRow(storage, period, values,
                                           f"a half-dropped row that cannot be dropped: {exc}"))
            continue
        finished += 1
    diffs = []
    for key, fresh in rebuilt.items():
        period, column = key
        before = stored[key]
        if before.corruption is not None:
            diffs.append(TimelineDiff(storage, period, column, sdef.tz,
                                      corruption=before.corruption))
            continue
        old = before.timeline.ordinal_ranges() if before.timeline is not None else []
        new = fresh.ordinal_ranges()
        diffs.append(TimelineDiff(
            storage, period, column, sdef.tz,
            under_ranges=difference_ranges(new, old), over_ranges=difference_ranges(old, new),
        ))
    slices = slice_repair.slice_repairs_of(catalog.rows, sdef, slices_before)
    return ReconcileReport(storage, diffs, finished, corrupt_rows, slices)


def migrate_timeline(catalog: CatalogCore, sdef: StorageDef, period: UpdatePeriod | str,
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
