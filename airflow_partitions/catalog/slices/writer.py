"""Writing slice timelines: the register and drop protocols' steps for each slice.

The per-slice steps are the per-column ones (:mod:`.writer`) with the rows restricted to the
slice's: a register advertises a slice's time values after its rows are written; a drop
un-advertises those no other live row *of the slice* backs, after marking its rows, then
re-checks and re-advertises what a concurrent register made live. Every change is a
check-and-put of one cell, retried on a lost race, so no update is lost (invariant 4); a step
sends all of its slices' swaps in one ``check_and_put_many``, one transaction on SQLite.

Same-partition races (see :mod:`.writer`): a drop writes (touches) each slice cell of the
slices it drops after marking its rows, even when nothing changes, so a register whose write
met the very slice cells it read before writing its rows knows no drop of those slices
settled in between.

Cost: per register, one read of the slice cells involved and one batch per time column; per
drop, one scan of the dropped time values' rows per time column (small prefix probes up to
16 values) and one or two batches per time column. A batch reads its cells once and, on
SQLite, writes the storage row once: O(slices) in time and memory, not O(slices^2) as one
row rewrite per slice would be. On HBase each changed cell is its own round trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from airflow_partitions.catalog.bulk_specs import KeyedSpec
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.decode import LIST_BATCH, PartitionDecoder
from airflow_partitions.catalog.rows.layout import (
    LIVE,
    MAX_SWAP_ATTEMPTS,
    CatalogRows,
    backoff,
    storage_row,
)
from airflow_partitions.catalog.slices.cells import (
    read_slice_cell,
    slice_cell,
    slice_columns,
    slice_key,
    slice_of_values,
)
from airflow_partitions.cover import Slice
from airflow_partitions.errors import ConcurrentUpdateError, CorruptTimeline
from airflow_partitions.kv import DamagedCells
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import RangesTimeline, runs

#: Up to this many time values, a drop finds their live slices with one prefix scan each.
PROBE_LIMIT: Final = 16

#: (time column, slice) -> time ordinals.
SliceOrdinals = dict[tuple[str, Slice], set[int]]


def spec_slices(sdef: StorageDef, period: UpdatePeriod,
                specs: Sequence[KeyedSpec]) -> SliceOrdinals:
    """Per (time column, slice), the time ordinals of ``specs`` (empty without dimensions)."""
    dims = slice_columns(sdef)
    if not dims:
        return {}
    out: SliceOrdinals = {}
    times = [(i, sdef.column_names.index(c), c) for i, c in enumerate(sdef.time_columns)]
    for spec, _ in specs:
        values = spec.value_map
        slice_ = slice_of_values(dims, values)
        for at, index, column in times:
            ordinal = (spec.ordinals[at] if spec.ordinals else
                       period.parse_ordinal(spec.values[index][1], sdef.tz))
            out.setdefault((column, slice_), set()).add(ordinal)
    return out


def slice_names(period: UpdatePeriod, keys: Iterable[tuple[str, Slice]]) -> list[bytes]:
    return [slice_cell(period, column, slice_) for column, slice_ in keys]


def damaged_slice_cells(storage: str, exc: DamagedCells) -> CorruptTimeline:
    """The error a write meets at a damaged slice cell: it names the cells and the repair (the
    cells are derived data, rebuilt from the rows); until then writes of those slices stop
    there, and every other slice is written as before."""
    cells = ", ".join(c.decode("utf-8", "replace") for c in exc.columns())
    return CorruptTimeline(
        f"the slice timeline cell(s) {cells} of {storage!r} are damaged (their bytes do not "
        f"match their checksum): run 'airflow-partitions reconcile {storage}' to rebuild them "
        "from the partition rows")


def read_raw(rows: CatalogRows, storage: str, names: Sequence[bytes]) -> dict[bytes, bytes]:
    """The raw bytes of these cells of a storage row, in one round trip (absent: missing)."""
    if not names:
        return {}
    try:
        return rows.catalog.get(storage_row(storage), list(names))
    except DamagedCells as exc:
        raise damaged_slice_cells(storage, exc) from exc


def update_slices(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
    add: Mapping[Slice, set[int]] | None = None, remove: Mapping[Slice, set[int]] | None = None,
    *, touch: Iterable[Slice] = (),
) -> tuple[dict[Slice, list[bytes | None]], set[Slice]]:
    """Apply adds/removes to many slice timelines of one (period, column).

    Every cell is its own check-and-put, as one call per slice would be (a lost race re-reads
    and retries that cell alone), but the batch's cells are read in one ``get`` and swapped in
    one ``check_and_put_many``, which SQLite runs as one transaction over the storage row.
    Returns each slice's cell bytes as read, attempt by attempt (a register's check that no
    drop came in between), and the slices whose timeline changed. ``touch`` slices are written
    even when nothing changes. Cost: two round trips per attempt on SQLite (one per changed
    cell more on HBase, whose Thrift1 checks one cell per call); O(slices) in memory.
    """
    add, remove = add or {}, remove or {}
    touched = set(touch)
    names = {slice_cell(period, column, s): s for s in {*add, *remove, *touched}}
    seen: dict[Slice, list[bytes | None]] = {s: [] for s in names.values()}
    changed: set[Slice] = set()
    pending, row = sorted(names), storage_row(sdef.name)
    for attempt in range(MAX_SWAP_ATTEMPTS):
        try:
            read = rows.catalog.get(row, pending) if pending else {}
        except DamagedCells as exc:
            raise damaged_slice_cells(sdef.name, exc) from exc
        swaps: list[tuple[bytes, bytes | None, bytes]] = []
        moved_by: dict[bytes, bool] = {}
        for name in pending:
            slice_, raw = names[name], read.get(name)
            seen[slice_].append(raw)
            cell = read_slice_cell(raw, sdef.name, period, column, slice_)
            more, less = add.get(slice_), remove.get(slice_)
            if raw is None and not less:  # a new cell: its hours are the adds, nothing to merge
                added = runs(sorted(more or ()))
                moved = bool(added)
                props = RangesTimeline.properties_of(period, column, sdef.tz, added)
            else:
                timeline = RangesTimeline.from_properties(cell.properties, period, column,
                                                          sdef.tz)
                moved = timeline.add_ordinal_ranges(runs(sorted(more))) if more else False
                for o in sorted(less or ()):
                    moved |= timeline.drop_ordinal(o)
                props = timeline.to_properties()
            if moved or slice_ in touched:
                swaps.append((name, raw, cell.encode_next(RangesTimeline.kind, props)))
                moved_by[name] = moved
        done = rows.catalog.check_and_put_many(row, swaps)
        pending = []
        for (name, _, _), ok in zip(swaps, done, strict=True):
            if not ok:
                pending.append(name)
            elif moved_by[name]:
                changed.add(names[name])
        if not pending:
            return seen, changed
        rows.kv.stats.note("swap_retry")
        backoff(attempt)
    raise ConcurrentUpdateError(
        f"the {period.name} {column} timelines of {len(pending)} slice(s) of {sdef.name!r} "
        f"(first {slice_key(names[pending[0]])}) kept changing during {MAX_SWAP_ATTEMPTS} "
        "attempts; the partition rows are safe, retry the operation"
    )


def update_slice(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str, slice_: Slice,
    add: set[int] | None = None, remove: set[int] | None = None, *, touch: bool = False,
) -> bool:
    """Apply adds/removes to one slice timeline (:func:`update_slices` of one slice)."""
    _, changed = update_slices(rows, sdef, period, column,
                               {slice_: add} if add else None,
                               {slice_: remove} if remove else None,
                               touch=(slice_,) if touch else ())
    return bool(changed)


def advertise(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
              wanted: SliceOrdinals, before: Mapping[bytes, bytes]) -> bool:
    """A register's step: add each slice's ordinals of ``column``; returns whether the write
    met every cell as read before the rows were written (see the module)."""
    adds = {s: ordinals for (col, s), ordinals in wanted.items() if col == column}
    seen, _ = update_slices(rows, sdef, period, column, adds)
    return all(seen[s] == [before.get(slice_cell(period, column, s))] for s in adds)


def live_slices(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
                values: set[str]) -> dict[str, set[Slice]]:
    """Per time value of ``values``, the slices that have a live, whole row there."""
    if not values:
        return {}
    decoder = PartitionDecoder(sdef, period)
    names = sdef.column_names
    at = 2 + names.index(column)
    dims = slice_columns(sdef)
    dim_at = [2 + names.index(c) for c in dims]
    if names[0] == column and len(values) <= PROBE_LIMIT:
        prefixes = [rows.period_prefix(sdef, period, (v,)) for v in sorted(values)]
    else:
        prefixes = [rows.period_prefix(sdef, period)]
    found: dict[str, set[Slice]] = {}
    for prefix in prefixes:
        for _, row in decoder.rows(rows.partitions, prefix=prefix, batch_size=LIST_BATCH):
            text = row[at]
            if row[-1] != LIVE or text is None:
                continue
            value = text.decode("utf-8", "replace")
            if value in values:
                found.setdefault(value, set()).add(tuple(
                    (c, (row[i] or b"").decode("utf-8", "replace"))
                    for c, i in zip(dims, dim_at, strict=True)))
    return found


def settle_slices(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
                  wanted: Mapping[Slice, set[str]], *, touch: bool = False) -> set[Slice]:
    """Make each slice timeline advertise exactly those of its ``wanted`` values that have a
    live row of the slice (remove, re-check, re-advertise, as :func:`.writer.settle`); each
    removal and each re-advertisement is one batch over all the slices. ``touch``: the first
    removal writes every ``wanted`` slice's cell, changed or not (a drop's step).

    Returns the slices whose stored timeline changed.
    """
    changed: set[Slice] = set()
    pending = {s: set(v) for s, v in wanted.items() if v}
    touched: Iterable[Slice] = tuple(wanted) if touch else ()
    for _ in range(MAX_SWAP_ATTEMPTS):
        if not pending and not touched:
            return changed
        live = live_slices(rows, sdef, period, column, set().union(*pending.values()))
        gone: dict[Slice, set[str]] = {}
        for slice_, texts in pending.items():
            lost = {v for v in texts if slice_ not in live.get(v, ())}
            if lost:
                gone[slice_] = lost
        removals = {s: {period.parse_ordinal(v, sdef.tz) for v in lost}
                    for s, lost in gone.items()}
        changed |= update_slices(rows, sdef, period, column, remove=removals,
                                 touch=touched)[1]
        touched = ()
        if not gone:
            return changed
        back = live_slices(rows, sdef, period, column, set().union(*gone.values()))
        pending = {}
        for slice_, texts in gone.items():
            again = {v for v in texts if slice_ in back.get(v, ())}
            if again:
                pending[slice_] = again
        changed |= update_slices(rows, sdef, period, column, add={
            s: {period.parse_ordinal(v, sdef.tz) for v in again}
            for s, again in pending.items()})[1]
    raise ConcurrentUpdateError(
        f"partitions of {sdef.name!r} kept being registered and dropped during "
        f"{MAX_SWAP_ATTEMPTS} attempts; run 'airflow-partitions reconcile {sdef.name}'"
    )


def texts_by_slice(sdef: StorageDef, period: UpdatePeriod, column: str,
                   wanted: SliceOrdinals) -> dict[Slice, set[str]]:
    """``wanted``'s slices of ``column`` with their ordinals as time values."""
    return {s: {period.format_ordinal(o, sdef.tz) for o in ordinals}
            for (col, s), ordinals in wanted.items() if col == column}


def drop_step(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
              wanted: SliceOrdinals) -> None:
    """A drop's step for one time column: settle each dropped slice, writing every one of
    their cells (so a register that read them before knows)."""
    settle_slices(rows, sdef, period, column, texts_by_slice(sdef, period, column, wanted),
                  touch=True)


def settle_shown(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod,
                 wanted: SliceOrdinals) -> bool:
    """Settle those of a drop's (slice, value) pairs a slice timeline advertises again."""
    if not wanted:
        return False
    keys = sorted(wanted)
    raw = read_raw(rows, sdef.name, slice_names(period, keys))
    changed = False
    for column in sdef.time_columns:
        shown: dict[Slice, set[str]] = {}
        for col, slice_ in keys:
            name = slice_cell(period, col, slice_)
            if col != column or name not in raw:
                continue
            cell = read_slice_cell(raw[name], sdef.name, period, column, slice_)
            timeline = RangesTimeline.from_properties(cell.properties, period, column, sdef.tz)
            hits = {o for o in wanted[(col, slice_)] if timeline.exists_ordinal(o)}
            if hits:
                shown[slice_] = {period.format_ordinal(o, sdef.tz) for o in hits}
        changed |= bool(settle_slices(rows, sdef, period, column, shown))
    return changed


__all__ = [
    "PROBE_LIMIT",
    "SliceOrdinals",
    "advertise",
    "drop_step",
    "live_slices",
    "read_raw",
    "settle_shown",
    "settle_slices",
    "slice_names",
    "spec_slices",
    "texts_by_slice",
    "update_slice",
    "update_slices",
]
