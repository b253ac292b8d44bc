"""Building slice timelines from the partition rows: declaring a dimension, migration, repair.

A storage created with dimensions has its slice timelines from its first row (the marker is
written with the storage). A storage that gets a new dimension column later (``set_dimension``
on a storage with rows), a catalog written before slice timelines existed, and ``rebuild`` /
``reconcile`` build them here:

1. per (period, time column) not yet built: read the stored slice cells, scan the period's
   live rows once (progress logged every :data:`PROGRESS_ROWS` rows), and write each slice's
   cell with check-and-put against the bytes read *before* the scan. A writer that changed a
   cell meanwhile makes the build retry that timeline (its rows were written before its
   cell, so a re-scan sees them); a writer that changes it afterwards applies its change on
   top. So a built slice timeline never holds a time value no live row of the slice had;
2. then add the timeline to the marker (``t:slices``, :mod:`.slices.cells`), check-and-put.

Crash safety: until step 2, readers do not use that timeline's slice cells (they read the
rows, as before slice timelines), so a crash anywhere leaves them unused, never
over-reporting; running the build again (``set-dimension`` again, ``reconcile``) skips the
timelines already built: it resumes. Cost: one scan of the storage's rows per period, plus a
check-and-put per slice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from airflow_partitions.catalog.definitions import update as definition_update
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.decode import LIST_BATCH, PartitionDecoder
from airflow_partitions.catalog.rows.layout import (
    LIVE,
    MAX_SWAP_ATTEMPTS,
    CatalogRows,
    TimelineCell,
    backoff,
    encode_timeline_cell,
    storage_row,
)
from airflow_partitions.catalog.slices.cells import (
    MARKER,
    SliceMarker,
    created_marker,
    parse_slice_cell,
    slice_cell,
    slice_cell_prefix,
    slice_columns,
    timeline_name,
)
from airflow_partitions.catalog.slices.dimensions import parse_dimension
from airflow_partitions.catalog.writer import crash_point
from airflow_partitions.cover import Slice
from airflow_partitions.errors import ConcurrentUpdateError, CorruptTimeline, InvalidInput
from airflow_partitions.keys import prefix_successor
from airflow_partitions.kv import ColumnRange, DamagedCells
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import RangesTimeline, runs

log = logging.getLogger(__name__)

#: A build logs its progress every this many rows.
PROGRESS_ROWS: Final = 100_000

Progress = Callable[[str], None]


def declare_dimension(rows: CatalogRows, storage: str, spec: str,
                      progress: Progress | None = None) -> StorageDef:
    """``set_dimension``, then build the slice timelines the new definition lacks (none when
    only a value was added to a column already declared and built). Resumable: running it
    again after a crash (the values are declared already, so the definition is left as it
    is) finishes the build, skipping the timelines already built."""
    current = rows.read_storage_def(storage)
    change = parse_dimension(spec)
    declared = {d.column: d for d in current.dimensions} if current is not None else {}
    if change.column in declared and set(change.values) <= set(declared[change.column].values):
        sdef = current  # declared already (a re-run after a crash): only resume the build
    else:
        sdef = definition_update.set_dimension(rows, storage, spec)
    assert sdef is not None  # set_dimension raises UnknownStorage
    build_slices(rows, sdef, progress=progress)
    return sdef


def build_slices(rows: CatalogRows, sdef: StorageDef, *, again: bool = False,
                 progress: Progress | None = None) -> int:
    """Build the slice timelines of every (period, time column) the marker does not name as
    built (``again``: all of them, a rebuild); returns how many were built."""
    columns = slice_columns(sdef)
    if not columns:
        return 0
    row = storage_row(sdef.name)
    marker = SliceMarker.decode(rows.catalog.get(row, [MARKER]).get(MARKER))
    built = marker.built if marker is not None and marker.columns == columns and not again \
        else frozenset()
    done = 0
    for period in sdef.periods:
        for column in sdef.time_columns:
            if timeline_name(period, column) in built:
                continue
            count = build_timeline(rows, sdef, period, column, progress)
            crash_point("build:after-slice-cells")
            _mark_built(rows, sdef, timeline_name(period, column), reset=not built and not done)
            done += 1
            _say(progress, f"{sdef.name}: built the {period.name} {column} slice timelines "
                           f"({count} slices of {', '.join(columns)})")
    if done:
        rows.bump_generation(sdef.fact)
    return done


def build_timeline(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
                   progress: Progress | None = None) -> int:
    """Store the slice timelines of (period, column) recomputed from the live rows; returns
    how many slices there are. Cells of slices with no live row are emptied."""
    columns = slice_columns(sdef)
    row = storage_row(sdef.name)
    for attempt in range(MAX_SWAP_ATTEMPTS):
        stored = _stored(rows, sdef.name, period, column)
        found = _scan(rows, sdef, period, column, progress)
        ok = True
        current = {s for s in stored if tuple(c for c, _ in s) == columns}
        for slice_ in sorted(set(found) | current):
            raw = stored.get(slice_)
            timeline = RangesTimeline(period, column, sdef.tz)
            timeline.add_ordinal_ranges(runs(sorted(found.get(slice_, ()))))
            new = encode_timeline_cell(_version(raw) + 1, RangesTimeline.kind,
                                       timeline.to_properties())
            if not rows.catalog.check_and_put(row, slice_cell(period, column, slice_), raw,
                                              new):
                ok = False
                break
        if ok:
            others = [slice_cell(period, column, s) for s in stored if s not in current]
            if others:  # an earlier declaration's slices: no reader uses them
                rows.catalog.delete(row, others)
            return len(found)
        backoff(attempt)
    raise ConcurrentUpdateError(
        f"the {period.name} {column} slice timelines of {sdef.name!r} kept changing during "
        f"{MAX_SWAP_ATTEMPTS} attempts; run 'airflow-partitions reconcile {sdef.name}' again")


def _stored(rows: CatalogRows, storage: str, period: UpdatePeriod,
            column: str) -> dict[Slice, bytes]:
    """The raw slice cells of (period, column), of any declaration: one column-range read."""
    row = storage_row(storage)
    low = slice_cell_prefix(period, column)[2:]  # the qualifier, without ``t:``
    out: dict[Slice, bytes] = {}
    try:
        found = [cells for _, cells in rows.catalog.scan(
            start=row, stop=row + b"\x00", columns=[b"t"],
            filter=ColumnRange(low, True, prefix_successor(low), False))]
    except DamagedCells as exc:  # damaged cells: their stored bytes, what the swap replaces
        found = [{**exc.found.get(row, {}), **exc.damaged.get(row, {})}]
    for cells in found:
        for name, raw in cells.items():
            parsed = parse_slice_cell(name)
            if parsed is not None and parsed[:2] == (period.name, column):
                out[parsed[2]] = raw
    return out


def _scan(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
          progress: Progress | None) -> dict[Slice, set[int]]:
    """Per slice, the time ordinals of the period's live, whole rows (damaged rows and time
    values that do not parse are not counted: under-report, never over-report)."""
    decoder = PartitionDecoder(sdef, period)
    names = sdef.column_names
    at = 2 + names.index(column)
    dims = slice_columns(sdef)
    dim_at = [2 + names.index(c) for c in dims]
    found: dict[Slice, set[int]] = {}
    ordinal_of: dict[bytes, int | None] = {}
    prefix = rows.period_prefix(sdef, period)
    for read, (_, row) in enumerate(decoder.rows(rows.partitions, prefix=prefix,
                                                 batch_size=LIST_BATCH), 1):
        if not read % PROGRESS_ROWS:
            _say(progress, f"{sdef.name}: read {read:,} {period.name} rows")
        text = row[at]
        if row[-1] != LIVE or text is None:
            continue
        ordinal = ordinal_of.get(text, -1)
        if ordinal == -1:
            ordinal = ordinal_of[text] = _ordinal(period, text, sdef.tz)
        if ordinal is None:
            continue
        slice_ = tuple((c, (row[i] or b"").decode("utf-8", "replace"))
                       for c, i in zip(dims, dim_at, strict=True))
        found.setdefault(slice_, set()).add(ordinal)
    return found


def _ordinal(period: UpdatePeriod, text: bytes, tz: str) -> int | None:
    try:
        return period.parse_ordinal(text.decode("utf-8"), tz)
    except (InvalidInput, UnicodeDecodeError, ValueError):
        return None


def _version(raw: bytes | None) -> int:
    """The stored version (0 when absent or too broken to say: the cell is replaced)."""
    try:
        return TimelineCell.decode(raw).version
    except CorruptTimeline:
        return 0


def _mark_built(rows: CatalogRows, sdef: StorageDef, name: str, *, reset: bool) -> None:
    """Add ``name`` to the marker with check-and-put (``reset``: drop what a marker of other
    columns, or a rebuild's older marker, named)."""
    columns = slice_columns(sdef)
    row = storage_row(sdef.name)
    for attempt in range(MAX_SWAP_ATTEMPTS):
        raw = rows.catalog.get(row, [MARKER]).get(MARKER)
        marker = SliceMarker.decode(raw)
        built = marker.built if marker is not None and marker.columns == columns and not reset \
            else frozenset()
        new = SliceMarker(columns, built | {name}).encode()
        if raw == new or rows.catalog.check_and_put(row, MARKER, raw, new):
            return
        backoff(attempt)
    raise ConcurrentUpdateError(f"the slice marker of {sdef.name!r} kept changing")


def _say(progress: Progress | None, text: str) -> None:
    log.info("%s", text)
    if progress is not None:
        progress(text)


__all__ = ["PROGRESS_ROWS", "build_slices", "build_timeline", "created_marker",
           "declare_dimension"]
