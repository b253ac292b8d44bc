"""The per-process timeline cache, made cheap on both the warm and the cold path.

* Warm: one small read of the fact's generation counter says whether anything changed.
* Cold (a reschedule-mode sensor is always cold): one read of the fact row, one batched read
  of its storage rows; never a scan of partition rows. StoreAll timelines, stored one column
  per value, are read lazily, a column-range slice at a time.
* Slice timelines (:mod:`.slices.cells`) live in the same storage row, so the cold read brings
  them at no extra round trip; they are decoded with the storage (O(slice cells)).
* After a write, every cell that comes back with the bytes decoded before keeps its timeline,
  and a changed EndsAndHoles cell is patched (:mod:`.decoded_cells`): a question after a
  registration decodes what the registration changed, not the history.
* Timelines that were never stored (or whose ``present`` flag is off) are rebuilt from the
  partition rows by the catalog and stored, once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Hashable
from dataclasses import dataclass, field

from airflow_partitions.arguments import shown
from airflow_partitions.catalog.decoded_cells import DecodedCells, SlicedStoreAllTimeline
from airflow_partitions.catalog.definitions.stored import decode_storage
from airflow_partitions.catalog.definitions.tables import FactDef, StorageDef
from airflow_partitions.catalog.lineage.flag import may_have_derived
from airflow_partitions.catalog.rows.layout import (
    DEF,
    PRESENT,
    CatalogRows,
    fact_of_row,
    fact_row,
    storage_row,
    timeline_column,
)
from airflow_partitions.catalog.slices.cells import (
    MARKER,
    SliceMarker,
    parse_slice_cell,
    slice_columns,
)
from airflow_partitions.cover import Slice
from airflow_partitions.errors import CorruptTimeline, InvalidInput
from airflow_partitions.kv import Cells
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline

TimelineKey = tuple[UpdatePeriod, str]
log = logging.getLogger(__name__)


class UnknownFact(InvalidInput):
    """The fact is not in the catalog."""


class UnknownStorage(InvalidInput):
    """The storage table is not in the catalog."""


@dataclass
class StorageState:
    """One storage table as the cache knows it."""

    definition: StorageDef
    present: bool
    timelines: dict[TimelineKey, PartitionTimeline] = field(default_factory=dict)
    #: Per (period, column), the stored slice timelines over the declared columns.
    slices: dict[TimelineKey, dict[Slice, PartitionTimeline]] = field(default_factory=dict)
    marker: SliceMarker | None = None
    #: Timelines with a corrupt slice cell: read from the rows until reconcile rebuilds them.
    broken: set[TimelineKey] = field(default_factory=set)
    #: False only when no row of the storage records inputs (:mod:`.lineage.flag`): a stale
    #: check then reads none of its rows.
    may_have_derived: bool = True
    #: The storage row's definition and timeline cells as read (families ``m`` and ``t``):
    #: what an answer resting on this state compares a later write with
    #: (:mod:`.covers.answer_basis`).
    cells: Cells = field(default_factory=dict)

    def slice_timelines(self, period: UpdatePeriod, column: str
                        ) -> dict[Slice, PartitionTimeline] | None:
        """The slice timelines of (period, column), or None when they are not built (never
        stored, or a build not finished): the reader then reads the rows instead."""
        sdef = self.definition
        if not sdef.dimensions or self.marker is None or not self.marker.covers(sdef, period,
                                                                                column) \
                or (period, column) in self.broken:
            return None
        return self.slices.get((period, column), {})


@dataclass
class FactState:
    """One fact as the cache knows it, valid while the stored generation is unchanged."""

    definition: FactDef
    generation: int
    storages: dict[str, StorageState]
    #: Where the catalog table's change feed stood before the storage rows were read (None:
    #: no feed, or a first load): the next load reads only the storage rows written since.
    feed: Hashable | None = None
    #: The fact row's cells as read.
    cells: Cells = field(default_factory=dict)


class TimelineCache:
    """Fact -> storages -> (period, column) -> timeline, refreshed by generation."""

    _per_store: dict[str, TimelineCache] = {}
    _registry_lock = threading.Lock()

    def __init__(self) -> None:
        self._facts: dict[str, FactState] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_store(cls, url: str) -> TimelineCache:
        """The process-wide cache of one store."""
        with cls._registry_lock:
            return cls._per_store.setdefault(url, cls())

    def invalidate(self, fact: str | None = None) -> None:
        with self._lock:
            if fact is None:
                self._facts.clear()
            else:
                self._facts.pop(fact, None)

    def fact(self, catalog_rows: CatalogRows, fact: str, *, refresh: bool = False,
             read: dict[bytes, Cells] | None = None) -> FactState:
        """The fact's timelines: one round trip when warm, two when cold or changed.

        The warm check reads the whole fact row (it costs what reading its generation alone
        does: one small row), so a moved generation needs no second read of it. ``read``:
        catalog rows just read by the caller, by row key (``{}`` for a row that is not there),
        used for the fact's row and every storage row it holds, instead of reading them."""
        with self._lock:
            cached = self._facts.get(fact)
        cells = None if read is None else read.get(fact_row(fact))
        if cached is not None and not refresh:
            if cells is None:
                cells = catalog_rows.catalog.get(fact_row(fact))
            if cells == cached.cells:  # the same definition, storages and generation
                return cached
        state = self._load(catalog_rows, fact, cells, None if refresh else cached, read)
        with self._lock:
            self._facts[fact] = state
        return state

    def _load(self, catalog_rows: CatalogRows, fact: str, fact_cells: Cells | None = None,
              previous: FactState | None = None,
              read: dict[bytes, Cells] | None = None) -> FactState:
        """Read the fact's storage rows and decode them. Reloading after a write (``previous``
        given), a storage row the catalog table's change feed names no write to since the last
        load keeps its state, so only the storages written since are read (a registration
        reads its own storage's row, not ten years of every rollup's holes). A first load, a
        ``refresh``, and HBase (no feed) read every storage row."""
        if fact_cells is None:
            fact_cells = catalog_rows.catalog.get(fact_row(fact))
        definition, generation, storages = fact_of_row(fact, fact_cells)
        if definition is None:
            raise UnknownFact(f"fact {shown(fact)} is not in the catalog")
        kept, feed = _unchanged_storages(catalog_rows, previous)
        wanted = [name for name in storages if name not in kept]
        given = read or {}
        rows = {name: given[storage_row(name)] for name in wanted if storage_row(name) in given}
        unread = [name for name in wanted if name not in rows]
        if unread:
            rows.update(catalog_rows.read_storage_rows(unread))
        decoded = DecodedCells.for_store(catalog_rows.kv.url)
        states: dict[str, StorageState] = {}
        for name in storages:
            if name in kept:
                states[name] = kept[name]
                continue
            cells = rows.get(name, {})
            if DEF not in cells:
                continue  # a storage still being created
            sdef = decode_storage(name, cells[DEF])
            state = StorageState(sdef, cells.get(PRESENT) == b"true",
                                 may_have_derived=may_have_derived(cells), cells=cells)
            states[name] = state
            if not state.present:
                continue  # rebuilt from the rows before use: its cells are not read
            for period in sdef.periods:
                for column in sdef.time_columns:
                    state.timelines[(period, column)] = decoded.timeline(
                        catalog_rows, sdef, period, column,
                        cells.get(timeline_column(period, column)))
            if sdef.dimensions:
                load_slices(state, cells, decoded)
        return FactState(definition, generation, states, feed, fact_cells)


def _unchanged_storages(catalog_rows: CatalogRows, previous: FactState | None
                        ) -> tuple[dict[str, StorageState], Hashable | None]:
    """The storages of ``previous`` whose rows nobody wrote since it was loaded, and the
    catalog feed's position to load from next (taken before the rows are read: a write after
    it is named next time). Nothing kept on a first load or when the feed cannot tell (HBase,
    a trimmed feed). Cost: one small SELECT on SQLite, nothing on HBase."""
    table = catalog_rows.catalog
    if previous is not None and previous.feed is not None:
        changed = table.changes_since(previous.feed)
        if changed is not None:
            position, keys = changed
            written = set(keys)
            return ({name: state for name, state in previous.storages.items()
                     if storage_row(name) not in written}, position)
    return {}, table.feed_position()


def loaded_timelines(state: FactState, storage: str) -> dict[TimelineKey, PartitionTimeline]:
    """One storage's timelines from the fact's cached state, every StoreAll one loaded whole
    (Lens export and callers that iterate them). ``UnknownStorage`` when the storage is not a
    member of the fact. O(values of the StoreAll timelines), no read for the others."""
    found = state.storages.get(storage)
    if found is None:
        raise UnknownStorage(f"storage {storage!r} is not a member of fact "
                             f"{state.definition.name!r}")
    return {key: timeline.load_all() if isinstance(timeline, SlicedStoreAllTimeline)
            else timeline for key, timeline in found.timelines.items()}


def load_slices(state: StorageState, cells: dict[bytes, bytes], decoded: DecodedCells) -> None:
    """Decode the slice timelines of the storage's declared columns from its row's cells
    (cells of other columns, left by an earlier declaration, are ignored). O(slice cells),
    each a bytes comparison when it is the cell decoded before (:mod:`.decoded_cells`)."""
    sdef = state.definition
    state.marker = SliceMarker.decode(cells.get(MARKER))
    columns = slice_columns(sdef)
    wanted = {(p.name, c): p for p in sdef.periods for c in sdef.time_columns}
    for name, raw in cells.items():
        parsed = parse_slice_cell(name)
        if parsed is None or (parsed[0], parsed[1]) not in wanted:
            continue
        period_name, column, slice_ = parsed
        if tuple(c for c, _ in slice_) != columns:
            continue
        period = wanted[(period_name, column)]
        try:
            timeline = decoded.slice_timeline(sdef, period, column, slice_, raw)
        except CorruptTimeline as exc:  # never used: this timeline reads the rows instead
            log.warning("%s; reading the rows instead", exc)
            state.broken.add((period, column))
            continue
        state.slices.setdefault((period, column), {})[slice_] = timeline
