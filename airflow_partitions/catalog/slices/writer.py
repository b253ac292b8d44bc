"""Writing slice timelines: the register and drop protocols' steps for each slice.

The per-slice steps are the per-column ones (:mod:`.writer`) with the rows restricted to the
slice's: a register advertises a slice's time values after its rows are written; a drop
un-advertises those no other live row *of the slice* backs, after marking its rows, then
re-checks and re-advertises what a concurrent register made live; every change is a
check-and-put of one cell, retried on a lost race (invariant 4), so no update is lost.

Same-partition races (see :mod:`.writer`): a drop writes (touches) each slice cell of the
slices it drops after marking its rows, even when nothing changes, so a register whose
check-and-put met the very slice cell it read before writing its rows knows no drop of that
slice settled in between.

Cost: per register, one read of the slice cells involved (one round trip) and one read plus
one check-and-put per (time column, slice) touched; per drop, one scan of the dropped time
values' rows per time column (small prefix probes up to 16 values) and one check-and-put per
slice touched.
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
from airflow_partitions.errors import ConcurrentUpdateError
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


def read_raw(rows: CatalogRows, storage: str, names: Sequence[bytes]) -> dict[bytes, bytes]:
    """The raw bytes of these cells of a storage row, in one round trip (absent: missing)."""
    if not names:
        return {}
    return rows.catalog.get(storage_row(storage), list(names))


def update_slice(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str, slice_: Slice,
    add: set[int] | None = None, remove: set[int] | None = None, *, touch: bool = False,
    seen: list[bytes | None] | None = None,
) -> bool:
    """Apply adds/removes to one slice timeline with check-and-put; returns if it changed.

    As :func:`.writer.update_timeline`: a lost race re-reads and retries; ``touch`` writes the
    cell even when nothing changes; ``seen`` receives the bytes of each cell read.
    """
    add, remove = add or set(), remove or set()
    if not add and not remove and not touch:
        return False
    name, row = slice_cell(period, column, slice_), storage_row(sdef.name)
    for attempt in range(MAX_SWAP_ATTEMPTS):
        raw = rows.catalog.get(row, [name]).get(name)
        if seen is not None:
            seen.append(raw)
        cell = read_slice_cell(raw, sdef.name, period, column, slice_)
        timeline = (RangesTimeline.from_properties(cell.properties, period, column, sdef.tz)
                    if raw is not None else RangesTimeline(period, column, sdef.tz))
        changed = timeline.add_ordinal_ranges(runs(sorted(add))) if add else False
        for o in sorted(remove):
            changed |= timeline.drop_ordinal(o)
        if not changed and not touch:
            return False
        new = cell.encode_next(RangesTimeline.kind, timeline.to_properties())
        if rows.catalog.check_and_put(row, name, raw, new):
            return changed
        rows.kv.stats.note("swap_retry")
        backoff(attempt)
    raise ConcurrentUpdateError(
        f"the {period.name} {column} timeline of slice {slice_key(slice_)} of {sdef.name!r} "
        f"kept changing during {MAX_SWAP_ATTEMPTS} attempts; the partition rows are safe, "
        "retry the operation"
    )


def advertise(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
              wanted: SliceOrdinals, before: Mapping[bytes, bytes]) -> bool:
    """A register's step: add each slice's ordinals of ``column``; returns whether every
    check-and-put met the cell read before the rows were written (see the module)."""
    quiet = True
    for (col, slice_), ordinals in sorted(wanted.items()):
        if col != column:
            continue
        seen: list[bytes | None] = []
        update_slice(rows, sdef, period, column, slice_, add=ordinals, seen=seen)
        quiet &= seen == [before.get(slice_cell(period, column, slice_))]
    return quiet


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
                  wanted: Mapping[Slice, set[str]]) -> set[Slice]:
    """Make each slice timeline advertise exactly those of its ``wanted`` values that have a
    live row of the slice (remove, re-check, re-advertise, as :func:`.writer.settle`).

    Returns the slices whose stored timeline changed.
    """
    changed: set[Slice] = set()
    pending = {s: set(v) for s, v in wanted.items() if v}
    for _ in range(MAX_SWAP_ATTEMPTS):
        if not pending:
            return changed
        live = live_slices(rows, sdef, period, column, set().union(*pending.values()))
        gone: dict[Slice, set[str]] = {}
        for slice_, texts in pending.items():
            lost = {v for v in texts if slice_ not in live.get(v, ())}
            if lost and update_slice(rows, sdef, period, column, slice_,
                                     remove={period.parse_ordinal(v, sdef.tz) for v in lost}):
                changed.add(slice_)
            if lost:
                gone[slice_] = lost
        if not gone:
            return changed
        back = live_slices(rows, sdef, period, column, set().union(*gone.values()))
        pending = {}
        for slice_, texts in gone.items():
            again = {v for v in texts if slice_ in back.get(v, ())}
            if again:
                if update_slice(rows, sdef, period, column, slice_,
                                add={period.parse_ordinal(v, sdef.tz) for v in again}):
                    changed.add(slice_)
                pending[slice_] = again
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
    """A drop's step for one time column: settle each dropped slice, and touch the cells of
    the slices that did not change (so a register that read them before knows)."""
    by_slice = texts_by_slice(sdef, period, column, wanted)
    changed = settle_slices(rows, sdef, period, column, by_slice)
    for slice_ in sorted(set(by_slice) - changed):
        update_slice(rows, sdef, period, column, slice_, touch=True)


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
]
