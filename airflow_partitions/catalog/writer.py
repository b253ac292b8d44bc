"""Register and drop: the write protocols that keep the timelines honest under concurrency.

They hold the invariants of docs/design.md (no lost update, crash safety) on any store with
one-row atomicity and single-cell check-and-put:

* register: write the partition rows, then add their time values to the timelines (CAS loop),
  then bump the fact's generation (always, so re-running an interrupted register reaches warm
  caches). A crash in between under-reports, never over-reports.
* drop: mark the rows ``dropping`` (so concurrent droppers of siblings do not count them; a
  partition stays registered until its row is deleted), settle the timelines (remove time
  values that no other live row still has, re-check, re-advertise what a concurrent register
  made live), bump the generation, then delete each row only if it still carries this drop's
  mark, and settle any of its values a timeline advertises again.
* Slice timelines (storages with declared dimensions, :mod:`.slices.writer`): the same steps
  per (time column, slice), right after the column's: advertised after the rows are written,
  settled against the slice's rows after a drop marks them.
* Same-partition races: whoever changes a timeline last checks the rows last. A register
  re-reads its rows after advertising and settles any a concurrent drop marked or deleted,
  unless each timeline cell it advertised in is the very cell it read before writing its rows:
  every drop writes each timeline after marking its rows, so an unchanged cell proves that no
  drop settled in between, and a drop settling later checks the rows itself. The skip needs a
  store whose later writes are never undone by earlier ones (``KVStore.writes_are_ordered``:
  SQLite). On HBase a drop's delete can remove or mask a put of the same millisecond, so
  there the register always re-reads its rows.

:data:`WRITE_STEPS` names the gaps between the steps; ``AIRFLOW_PARTITIONS_CRASH_AT=<step>``
kills the process there, which is how the crash-safety tests reach every gap;
``AIRFLOW_PARTITIONS_PAUSE_AT=<step>@<marker>`` holds one process there (:mod:`.pause_point`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from airflow_partitions.catalog.bulk_specs import KeyedSpec, Locate
from airflow_partitions.catalog.decoded_cells import DecodedCells
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.lineage import flag as lineage_flag
from airflow_partitions.catalog.pause_point import pause_point
from airflow_partitions.catalog.rows.check import names_damaged_rows
from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.layout import (
    DROPPING,
    INPUTS,
    LIVE,
    LOC,
    MAX_SWAP_ATTEMPTS,
    STAMP,
    STATE,
    VERSION,
    CatalogRows,
    TimelineCell,
    backoff,
    decode_version,
    encode_version,
    encoded_cell_column,
    value_cell_column,
)
from airflow_partitions.catalog.rows.scan import scan_row_cells
from airflow_partitions.catalog.rows.states import read_rows
from airflow_partitions.catalog.slices import writer as slice_writer
from airflow_partitions.catalog.timeline_shape import shaped
from airflow_partitions.errors import ConcurrentUpdateError, CorruptPartitionRow, InvalidInput
from airflow_partitions.keys import ColumnType, string_field, value_fields
from airflow_partitions.kv import Cells, SingleColumnValue
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import StoreAllTimeline, runs, timeline_class

CRASH_ENV: Final = "AIRFLOW_PARTITIONS_CRASH_AT"
#: Every gap between two steps of a write, in protocol order (the crash-safety tests use it).
REGISTER_STEPS: Final = (
    "register:before-rows",
    "register:after-rows",
    "register:after-timeline",
    "register:after-slice-timelines",
    "register:after-generation",
)
DROP_STEPS: Final = (
    "drop:after-mark",
    "drop:after-timeline",
    "drop:after-slice-timelines",
    "drop:after-generation",
    "drop:after-delete",
)
#: Building slice timelines from the rows (:mod:`.slices.build`): after a timeline's cells.
BUILD_STEPS: Final = ("build:after-slice-cells",)
WRITE_STEPS: Final = REGISTER_STEPS + DROP_STEPS + BUILD_STEPS
#: In-process observers of write steps, for tests that break the store at an exact step.
STEP_HOOKS: list[Callable[[str], None]] = []
#: Up to this many time values, finding which still have a live row is one small prefix scan
#: each; beyond it, one scan of the period is cheaper.
_PROBE_LIMIT: Final = 16

#: Partitions per run of the register protocol in a bulk call (rows, timelines, generation).
BULK_CHUNK: Final = 50_000
#: Above this many new ordinals a timeline takes them as runs, merged in one pass
#: (O(ranges + n)); below, one by one (O(n log ranges)).
_BULK_ADD: Final = 64
#: Rows per ``put_many`` round trip of a register.
PUT_BATCH: Final = 5_000



class PartitionConflict(InvalidInput):
    """A partition is registered with another location and ``overwrite`` was not given."""


@dataclass(frozen=True)
class WriteResult:
    """What a bulk register or drop did.

    ``restated`` holds the values of the partitions a register rewrote with a new version
    (``restate=True``, a moved location or different recorded inputs); they count as changed.
    """

    changed: int
    unchanged: int
    restated: tuple[Mapping[str, str], ...] = ()


def crash_point(step: str) -> None:
    """Test seam: ``AIRFLOW_PARTITIONS_CRASH_AT=<step>[,<step>...]`` kills the process here."""
    if step not in WRITE_STEPS:  # a typo here would silently leave a gap untested
        raise ValueError(f"unknown write step {step!r}")
    for hook in STEP_HOOKS:
        hook(step)
    pause_point(step)
    wanted = os.environ.get(CRASH_ENV)
    if wanted and step in wanted.split(","):
        os._exit(86)


@names_damaged_rows
def register(
    rows: CatalogRows,
    sdef: StorageDef,
    period: UpdatePeriod,
    specs: Sequence[KeyedSpec],
    locate: Locate,
    *,
    overwrite: bool,
    restate: bool = False,
    inputs: bytes | None = None,
) -> WriteResult:
    """Write the rows, advertise their time values, bump the generation; idempotent.

    ``inputs`` is the encoded lineage (``p:in``) to record, None to leave it as it is. A live
    row at the same location with the same lineage is left alone unless ``restate``; any other
    rewrite of an existing row bumps its version (``p:ver``) in the same row put.

    A bulk call runs the protocol once per chunk of :data:`BULK_CHUNK` partitions (rows, then
    one timeline update per time column, then the generation), so memory stays bounded by the
    chunk and every crash step keeps its meaning; conflicts are checked for every chunk first.
    """
    chunks = [specs[i : i + BULK_CHUNK] for i in range(0, len(specs), BULK_CHUNK)] or [specs]
    if inputs and specs:  # before any row records them: a stale check must read this storage
        lineage_flag.mark(rows, sdef.name)
    states: dict[bytes, Cells] | None = None
    if len(chunks) == 1:
        states = read_states(rows, [key for _, key in specs], [LOC, STATE, VERSION, INPUTS])
        _check_conflicts(sdef, specs, locate, states, overwrite)
    elif not overwrite:
        for chunk in chunks:
            _check_conflicts(sdef, chunk, locate,
                             read_states(rows, [key for _, key in chunk]), overwrite)
    changed, restated = 0, list[Mapping[str, str]]()
    for chunk in chunks:
        existing = states if states is not None else read_states(
            rows, [key for _, key in chunk], [LOC, STATE, VERSION, INPUTS])
        result = _register_chunk(rows, sdef, period, chunk, locate, existing,
                                 restate=restate, inputs=inputs)
        changed += result.changed
        restated += result.restated
    return WriteResult(changed, len(specs) - changed, tuple(restated))


def _check_conflicts(sdef: StorageDef, specs: Sequence[KeyedSpec], locate: Locate,
                     existing: Mapping[bytes, Cells], overwrite: bool) -> None:
    # A live row without a readable location is damaged, not registered elsewhere: a
    # register replaces it whole.
    conflicts = [
        f"{spec.value_map} at {loc!r}"
        for spec, key in specs
        if existing.get(key, {}).get(STATE) == LIVE
        and (loc := existing[key].get(LOC, b"").decode(errors="replace"))
        and "\ufffd" not in loc and loc != locate(spec)
    ]
    if conflicts and not overwrite:
        raise PartitionConflict(
            f"{len(conflicts)} partition(s) of {sdef.name!r} are registered elsewhere, e.g. "
            f"{conflicts[0]}; pass overwrite=True (--overwrite) to move them"
        )


def _register_chunk(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, specs: Sequence[KeyedSpec],
    locate: Locate, existing: Mapping[bytes, Cells], *, restate: bool,
    inputs: bytes | None,
) -> WriteResult:
    """The register protocol for one chunk: rows, timelines, generation (see the module)."""
    now = str(int(time.time())).encode()
    restated: list[Mapping[str, str]] = []
    all_text = all(ctype is ColumnType.STRING for _, ctype in sdef.columns)
    # Every row written gets the same cells (put_rows): location, state, time stamp, version,
    # the lineage when given, each value as text (p:v.*) and encoded (p:k.*).
    lineage: tuple[bytes, ...] = (inputs,) if inputs is not None else ()
    columns = (LOC, STATE, STAMP, VERSION, *(INPUTS for _ in lineage),
               *map(value_cell_column, sdef.column_names),
               *map(encoded_cell_column, sdef.column_names))
    first = encode_version(1)
    writes: list[tuple[bytes, tuple[bytes, ...]]] = []
    for spec, key in specs:
        location = locate(spec)
        old = existing.get(key)
        version = first
        if old is not None:
            same = (old.get(STATE) == LIVE and old.get(LOC, b"").decode() == location
                    and (inputs is None or old.get(INPUTS, b"") == inputs))
            if same and not restate:
                continue
            # A rewrite of an existing row (even one a drop marked) is new data: a new version.
            version = encode_version(_old_version(old) + 1)
            if old.get(STATE) == LIVE:
                restated.append(spec.value_map)
        texts = [text.encode() for _, text in spec.values]
        # The encoded values are the key's value fields; text ones are quick to build.
        fields = [string_field(raw) for raw in texts] if all_text else value_fields(key)
        writes.append((key, (location.encode(), LIVE, now, version,
                             *lineage, *texts, *fields)))
    before = [rows.read_raw_timeline_cell(sdef.name, period, c) for c in sdef.time_columns]
    sliced = slice_writer.spec_slices(sdef, period, specs)  # {} without dimensions
    before_slices = slice_writer.read_raw(rows, sdef.name,
                                          slice_writer.slice_names(period, sliced))
    crash_point("register:before-rows")
    if writes:
        rows.partitions.put_rows(columns, writes, batch_size=PUT_BATCH)
    crash_point("register:after-rows")
    quiet = True  # no timeline written by anyone else since ``before``: no drop came between
    for column, cell_before in zip(sdef.time_columns, before, strict=True):
        seen: list[bytes | None] = []
        update_timeline(rows, sdef, period, column, add=time_ordinals(sdef, period, column,
                                                                          specs), seen=seen)
        quiet &= seen == [cell_before]
        crash_point("register:after-timeline")
    for column in sdef.time_columns:  # each slice's timeline, as the column's (slice_writer)
        quiet &= slice_writer.advertise(rows, sdef, period, column, sliced, before_slices)
        crash_point("register:after-slice-timelines")
    if not (quiet and rows.kv.writes_are_ordered):
        withdraw_dropped(rows, sdef, period, specs)
    # Why unconditionally: a run killed after its timeline write but before this bump leaves a
    # re-run with nothing to change, and warm caches (poke-mode sensors, the triggerer) would
    # never learn of the partitions. One counter increment per register is the price.
    rows.bump_generation(sdef.fact)
    crash_point("register:after-generation")
    return WriteResult(len(writes), len(specs) - len(writes), tuple(restated))


@names_damaged_rows
def drop(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, specs: Sequence[KeyedSpec]
) -> WriteResult:
    """Un-advertise, then delete; dropping an absent partition is a no-op."""
    existing = read_states(rows, [key for _, key in specs])
    present = [(spec, key) for spec, key in specs if key in existing]
    if not present:
        return WriteResult(0, len(specs))
    marks = [(key, {STATE: DROPPING}) for _, key in present if existing[key].get(STATE) == LIVE]
    if marks:
        rows.partitions.put_many(marks)
    crash_point("drop:after-mark")
    values = {c: {spec.value_map[c] for spec, _ in present} for c in sdef.time_columns}
    for column in sdef.time_columns:
        if not settle(rows, sdef, period, column, values[column]):
            # Written even when unchanged: a register that read this cell before writing its
            # rows then knows a drop came in between (see the module docstring).
            update_timeline(rows, sdef, period, column, touch=True)
        crash_point("drop:after-timeline")
    sliced = slice_writer.spec_slices(sdef, period, present)
    for column in sdef.time_columns:
        slice_writer.drop_step(rows, sdef, period, column, sliced)
        crash_point("drop:after-slice-timelines")
    rows.bump_generation(sdef.fact)
    crash_point("drop:after-generation")
    for _, key in present:
        # Only the row this drop marked: a register that rewrote it since has won.
        rows.partitions.check_and_delete(key, STATE, DROPPING)
    # Why check again: on HBase the conditional delete also removes a rewrite that landed in
    # the same millisecond as the mark, after that register had verified its row.
    if _settle_advertised(rows, sdef, period, values) | slice_writer.settle_shown(
            rows, sdef, period, sliced):
        rows.bump_generation(sdef.fact)
    crash_point("drop:after-delete")
    return WriteResult(len(present), len(specs) - len(present))


def settle(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str, values: set[str]
) -> bool:
    """Make one timeline advertise exactly those of ``values`` that have a live row.

    Remove the unbacked ones, then re-check the removed ones and re-advertise any a concurrent
    register made live meanwhile; every re-advertisement is checked again, so the last word is
    always a check of the rows (invariant 4 for writers of the same partition). Returns whether
    the stored timeline changed.
    """
    changed = False
    pending = values
    for _ in range(MAX_SWAP_ATTEMPTS):
        gone, removed = unadvertise(rows, sdef, period, column, pending)
        changed |= removed
        texts = {period.format_ordinal(o, sdef.tz) for o in gone}
        back = live_time_values(rows, sdef, period, column, texts)
        if not back:
            return changed
        ordinals = {period.parse_ordinal(v, sdef.tz) for v in back}
        changed |= update_timeline(rows, sdef, period, column, add=ordinals)
        pending = back
    raise ConcurrentUpdateError(
        f"partitions of {sdef.name!r} kept being registered and dropped during "
        f"{MAX_SWAP_ATTEMPTS} attempts; run 'airflow-partitions reconcile {sdef.name}'"
    )


def withdraw_dropped(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, specs: Sequence[KeyedSpec]
) -> None:
    """After advertising: settle the values of rows a concurrent drop marked or deleted.

    Why: a drop may remove a value before this register advertises it and then delete the row;
    whoever advertises last must look at the rows last.
    """
    states = read_states(rows, [key for _, key in specs], [STATE])
    lost = [spec for spec, key in specs if states.get(key, {}).get(STATE) != LIVE]
    sliced = slice_writer.spec_slices(sdef, period, [(s, b"") for s in lost])
    for column in sdef.time_columns if lost else ():
        settle(rows, sdef, period, column, {spec.value_map[column] for spec in lost})
        slice_writer.settle_slices(rows, sdef, period, column,
                                   slice_writer.texts_by_slice(sdef, period, column, sliced))


def _settle_advertised(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, values: Mapping[str, set[str]]
) -> bool:
    """Settle those of a drop's values that a timeline advertises again (usually none)."""
    changed = False
    for column, texts in values.items():
        timeline = DecodedCells.for_store(rows.kv.url).timeline(
            rows, sdef, period, column, rows.read_raw_timeline_cell(sdef.name, period, column))
        shown = {v for v in texts if timeline.exists_ordinal(period.parse_ordinal(v, sdef.tz))}
        if shown:
            changed |= settle(rows, sdef, period, column, shown)
    return changed


def unadvertise(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str, values: set[str]
) -> tuple[set[int], bool]:
    """Remove from one timeline the values no live row backs any more.

    Shared by drop and by the reader that finds a timeline over-reporting. Returns the ordinals
    that no live row backs and whether the stored timeline changed (the caller bumps the
    generation once for all its timelines).
    """
    still = live_time_values(rows, sdef, period, column, values)
    gone = {period.parse_ordinal(v, sdef.tz) for v in values - still}
    return gone, update_timeline(rows, sdef, period, column, remove=gone)


def _old_version(old: Cells) -> int:
    """The version of a row being rewritten; a damaged version cell counts as 0."""
    try:
        return decode_version(old.get(VERSION))
    except CorruptPartitionRow:
        return 0


def read_states(rows: CatalogRows, keys: list[bytes],
                columns: Sequence[bytes] = (LOC, STATE)) -> dict[bytes, Cells]:
    """Location and state (or ``columns``) of each existing row (see :mod:`.rows.states`)."""
    return read_rows(rows.partitions, keys, columns)


def time_ordinals(sdef: StorageDef, period: UpdatePeriod, column: str,
                  specs: Sequence[KeyedSpec]) -> set[int]:
    """The ordinals of one time column, as validation found them (parsed only if unknown)."""
    at = sdef.time_columns.index(column)
    index = sdef.column_names.index(column)
    return {spec.ordinals[at] if spec.ordinals else
            period.parse_ordinal(spec.values[index][1], sdef.tz) for spec, _ in specs}


def live_time_values(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str, values: set[str]
) -> set[str]:
    """Which of these time values still have a live partition row (any other columns)."""
    if not values:
        return set()
    live = SingleColumnValue(STATE, "=", LIVE, filter_if_missing=True)
    decoder = PartitionDecoder(sdef, period)  # a damaged row is not live (rows/check.py)
    columns = decoder.columns
    at = 2 + sdef.column_names.index(column)
    found: set[str] = set()
    if sdef.column_names[0] == column and len(values) <= _PROBE_LIMIT:
        for value in values:
            prefix = rows.period_prefix(sdef, period, (value,))
            for key, cells in scan_row_cells(rows.partitions, prefix=prefix, columns=columns,
                                             filter=live, on_damaged=decoder.check.skip):
                if decoder.check.damage(key, tuple(map(cells.get, columns))) is None:
                    found.add(value)
                    break
        return found
    prefix = rows.period_prefix(sdef, period)
    for key, cells in scan_row_cells(rows.partitions, prefix=prefix, columns=columns,
                                     filter=live, on_damaged=decoder.check.skip):
        row = tuple(map(cells.get, columns))
        text = row[at]
        if text is not None and text.decode(errors="replace") in values \
                and decoder.check.damage(key, row) is None:
            found.add(text.decode())
    return found


def update_timeline(
    rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
    add: set[int] | None = None, remove: set[int] | None = None, *, touch: bool = False,
    seen: list[bytes | None] | None = None,
) -> bool:
    """Apply adds/removes to one stored timeline with check-and-put; returns if it changed.

    A lost race re-reads the cell and retries (with jitter), so concurrent writers of distinct
    partitions never lose each other's updates (invariant 4). A default-shaped timeline that
    turns sparse is written as Ranges (:mod:`.timeline_shape`).

    ``touch`` writes the cell (its version bumped) even when nothing changes: a drop does so
    after marking its rows (see the module docstring). ``seen`` receives the bytes of each
    cell read, so a register knows whether its check-and-put met the cell it read before.
    """
    add, remove = add or set(), remove or set()
    if not add and not remove and not touch:
        return False
    decoded = DecodedCells.for_store(rows.kv.url)
    for attempt in range(MAX_SWAP_ATTEMPTS):
        cell = rows.read_timeline_cell(sdef.name, period, column)
        if seen is not None:
            seen.append(cell.raw)
        kind = cell.kind or sdef.timeline_kind(period, column)
        if timeline_class(kind) is StoreAllTimeline:
            formatted = {o: period.format_ordinal(o, sdef.tz) for o in add}
            if add or remove:
                rows.write_values(sdef.name, period, column, add, remove, formatted)
            new = cell.encode_next(kind, {})
            changed = bool(add or remove)
            written = None
        else:
            timeline = decoded.writable(rows, sdef, period, column, cell)
            changed = False
            if len(add) > _BULK_ADD:
                changed = timeline.add_ordinal_ranges(runs(sorted(add)))
            else:
                for o in sorted(add):
                    changed |= timeline.add_ordinal(o)
            for o in sorted(remove):
                changed |= timeline.drop_ordinal(o)
            if not changed and not touch:
                return False
            timeline = shaped(rows.kv.url, sdef, period, column, timeline)
            kind = timeline.kind
            properties = timeline.to_properties()
            new = cell.encode_next(kind, properties)
            written = (TimelineCell(new, cell.version + 1, kind, properties), timeline)
        if rows.swap_timeline_cell(sdef.name, period, column, cell, new):
            if written is not None:  # what it wrote: a reader in this process decodes nothing
                decoded.remember(sdef, period, column, *written)
            return changed
        rows.kv.stats.note("swap_retry")
        backoff(attempt)
    raise ConcurrentUpdateError(
        f"the {period.name} {column} timeline of {sdef.name!r} kept changing during "
        f"{MAX_SWAP_ATTEMPTS} attempts; the partition rows are safe, retry the operation"
    )
