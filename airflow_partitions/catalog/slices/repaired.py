"""What ``reconcile`` found wrong in a storage's slice timelines, and rebuilt.

Why: ``reconcile`` rebuilds every slice timeline from the partition rows (:mod:`.slices.build`),
whatever their cells held. Its report says, per (storage, period, column, slice), which slice
timeline it rebuilt and why: its cell was missing though the build marker named the timeline as
built, its cell was damaged or did not decode, the marker did not name it as built, or it held
other hours than the rows. So a person learns which slice a reader had been reading from the
rows, or which cell went wrong, instead of one line that says "repaired".

How: :func:`read_slice_cells` reads the storage row's ``t`` family raw (never trusted, damaged
cells flagged) before the rebuild and again after it; :func:`slice_repairs` compares the two.
Cost: two reads of one row's ``t`` cells (O(slices)), and O(ranges) per slice to compare; a
clean storage's report lists nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from airflow_partitions.catalog.definitions.json_types import SliceTimelineJson
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.layout import CatalogRows, CorruptTimelineCell, storage_row
from airflow_partitions.catalog.slices.cells import (
    MARKER,
    SliceMarker,
    parse_slice_cell,
    read_slice_cell,
    slice_columns,
    slice_key,
)
from airflow_partitions.cover import Slice
from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.kv import DamagedCells
from airflow_partitions.periods import UpdatePeriod, ordinal_values
from airflow_partitions.timelines import OrdinalRange, RangesTimeline, difference_ranges

#: (period, time column, slice) of one slice timeline.
SliceTimelineKey = tuple[UpdatePeriod, str, Slice]

MISSING = "its cell was missing, though the build marker named its timeline as built"
UNMARKED = "the build marker did not name its timeline as built (readers read the rows)"
DAMAGED = "its cell was damaged (its bytes do not match their checksum)"
DIFFERED = "it held other hours than the partition rows"


@dataclass(frozen=True)
class SliceCells:
    """A storage row's slice cells of its declared columns, raw, and its build marker."""

    cells: dict[SliceTimelineKey, bytes] = field(default_factory=dict)
    damaged: frozenset[SliceTimelineKey] = frozenset()
    marker: SliceMarker | None = None


def read_slice_cells(rows: CatalogRows, sdef: StorageDef) -> SliceCells:
    """The slice cells of ``sdef``'s periods, time columns and declared columns, read raw
    (a damaged cell is flagged, not used; a damaged marker reads as absent). One read."""
    columns = slice_columns(sdef)
    if not columns:
        return SliceCells()
    row = storage_row(sdef.name)
    damaged: dict[bytes, bytes] = {}
    try:
        found = rows.catalog.get(row, [b"t"])
    except DamagedCells as exc:
        found, damaged = exc.found.get(row, {}), exc.damaged.get(row, {})
    periods = {p.name: p for p in sdef.periods}
    cells: dict[SliceTimelineKey, bytes] = {}
    flagged: set[SliceTimelineKey] = set()
    for name, raw in {**found, **damaged}.items():
        parsed = parse_slice_cell(name)
        if parsed is None or parsed[0] not in periods or parsed[1] not in sdef.time_columns \
                or tuple(c for c, _ in parsed[2]) != columns:
            continue
        key = (periods[parsed[0]], parsed[1], parsed[2])
        cells[key] = raw
        if name in damaged:
            flagged.add(key)
    marker = None if MARKER in damaged else SliceMarker.decode(found.get(MARKER))
    return SliceCells(cells, frozenset(flagged), marker)


@dataclass(frozen=True)
class SliceRepair:
    """One slice timeline ``reconcile`` rebuilt: why, and what its cell got wrong.

    ``under_ranges`` / ``over_ranges``: ordinals the rows have and the cell did not hold, and
    the reverse (both empty when the cell could not be read: then they are unknown).
    """

    storage: str
    period: UpdatePeriod
    column: str
    slice: Slice
    reason: str
    tz: str = "UTC"
    under_ranges: tuple[OrdinalRange, ...] = ()
    over_ranges: tuple[OrdinalRange, ...] = ()

    @property
    def under_count(self) -> int:
        return sum(e - b for b, e in self.under_ranges)

    @property
    def over_count(self) -> int:
        return sum(e - b for b, e in self.over_ranges)

    def values(self, ranges: tuple[OrdinalRange, ...], limit: int) -> list[str]:
        """The values of ``ranges`` in order, at most ``limit`` of them."""
        return ordinal_values(self.period, self.tz, ranges, limit)

    def to_json(self, limit: int) -> SliceTimelineJson:
        """At most ``limit`` values per list; the counts are whole."""
        return {"storage": self.storage, "period": self.period.name, "column": self.column,
                "slice": dict(self.slice), "reason": self.reason,
                "under_reported": self.values(self.under_ranges, limit),
                "over_reported": self.values(self.over_ranges, limit),
                "under_reported_count": self.under_count,
                "over_reported_count": self.over_count}

    def text(self, shown: int = 5) -> str:
        """One line for a person: which slice timeline, why, and the first values."""
        head = (f"rebuilt the {self.period.name} {self.column} slice timeline of "
                f"{slice_key(self.slice)} ({self.reason})")
        if not self.under_ranges and not self.over_ranges:
            return head
        parts = []
        for word, ranges, count in (("under-reported", self.under_ranges, self.under_count),
                                    ("over-reported", self.over_ranges, self.over_count)):
            sample = self.values(ranges, shown)
            more = f", ... {count - shown} more" if count > shown else ""
            parts.append(f"{count} {word}" + (f" ({', '.join(sample)}{more})" if sample else ""))
        return f"{head}: {', '.join(parts)}"


def slice_repairs(sdef: StorageDef, before: SliceCells, after: SliceCells) -> list[SliceRepair]:
    """The slice timelines whose cells before a rebuild differ from what it wrote, in order.

    ``after`` holds what the rebuild wrote from the rows (sound cells). A cell that was
    damaged or did not decode is listed with its finding; one of a timeline the marker did not
    name as built is listed as unmarked (with its differences); any other is listed only
    when its hours differ from the rows'. O(slices x ranges).
    """
    out = []
    for key in sorted(set(before.cells) | set(after.cells), key=_order):
        period, column, slice_ = key
        reason = None
        old: list[OrdinalRange] = []
        if key in before.damaged:
            reason = DAMAGED
        else:
            try:
                old = _ranges(sdef, key, before.cells.get(key))
            except CorruptTimelineCell as exc:
                reason = f"its cell did not decode: {exc.reason}"
        new = _ranges(sdef, key, after.cells.get(key))
        under = difference_ranges(new, old) if reason is None else []
        over = difference_ranges(old, new) if reason is None else []
        if reason is None:
            marked = before.marker is not None and before.marker.covers(sdef, period, column)
            if not marked and (key in before.cells or new):
                reason = UNMARKED
            elif under or over:
                reason = MISSING if key not in before.cells else DIFFERED
        if reason is not None:
            out.append(SliceRepair(sdef.name, period, column, slice_, reason, sdef.tz,
                                   tuple(under), tuple(over)))
    return out


def _ranges(sdef: StorageDef, key: SliceTimelineKey, raw: bytes | None) -> list[OrdinalRange]:
    """The ordinal ranges of a raw slice cell (none when absent); ``CorruptTimelineCell``."""
    period, column, slice_ = key
    if raw is None:
        return []
    cell = read_slice_cell(raw, sdef.name, period, column, slice_)
    try:
        timeline = RangesTimeline.from_properties(cell.properties, period, column, sdef.tz)
    except CorruptTimeline as exc:
        raise CorruptTimelineCell(sdef.name, period, column, str(exc)) from None
    return list(timeline.ordinal_ranges())


def _order(key: SliceTimelineKey) -> tuple[str, str, Slice]:
    return key[0].name, key[1], key[2]


def slice_repairs_of(rows: CatalogRows, sdef: StorageDef,
                     before: SliceCells) -> list[SliceRepair]:
    """:func:`slice_repairs` against the cells as stored now (after the rebuild)."""
    return slice_repairs(sdef, before, read_slice_cells(rows, sdef))


__all__ = [
    "DAMAGED",
    "DIFFERED",
    "MISSING",
    "UNMARKED",
    "SliceCells",
    "SliceRepair",
    "read_slice_cells",
    "slice_repairs",
    "slice_repairs_of",
]
