"""The per-process timeline cache, made cheap on both the warm and the cold path.

* Warm: one small read of the fact's generation counter says whether anything changed.
* Cold (a reschedule-mode sensor is always cold): one read of the fact row, one batched read
  of its storage rows; never a scan of partition rows. StoreAll timelines, stored one column
  per value, are read lazily, a column-range slice at a time.
* Slice timelines (:mod:`.slices.cells`) live in the same storage row, so the cold read brings
  them at no extra round trip; they are decoded with the storage (O(slice cells)).
* Timelines that were never stored (or whose ``present`` flag is off) are rebuilt from the
  partition rows by the catalog and stored, once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from airflow_partitions.arguments import shown
from airflow_partitions.catalog.definitions.tables import FactDef, StorageDef
from airflow_partitions.catalog.lineage.flag import may_have_derived
from airflow_partitions.catalog.rows.layout import (
    DEF,
    PRESENT,
    CatalogRows,
    CorruptTimelineCell,
    TimelineCell,
    decode_storage,
    timeline_column,
)
from airflow_partitions.catalog.slices.cells import (
    MARKER,
    SliceMarker,
    parse_slice_cell,
    read_slice_cell,
    slice_columns,
)
from airflow_partitions.cover import Slice
from airflow_partitions.errors import CorruptTimeline, InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    OrdinalRange,
    PartitionTimeline,
    RangesTimeline,
    StoreAllTimeline,
    UnknownTimelineClass,
    new_timeline,
    runs,
    storage_class_key,
    timeline_class,
)

TimelineKey = tuple[UpdatePeriod, str]
log = logging.getLogger(__name__)


class UnknownFact(InvalidInput):
    """The fact is not in the catalog."""


class UnknownStorage(InvalidInput):
    """The storage table is not in the catalog."""


class SlicedStoreAllTimeline(StoreAllTimeline):
    """A StoreAll timeline that reads its values from the store only for the windows asked."""

    def __init__(self, period: UpdatePeriod, column: str, tz: str,
                 loader: Callable[[int | None, int | None], list[int]]):
        super().__init__(period, column, tz)
        self._loader = loader
        self._loaded: list[OrdinalRange] = []
        self._everything = False

    def _ensure(self, lo: int | None, hi: int | None) -> None:
        if self._everything:
            return
        if lo is not None and hi is not None and any(
            b <= lo and hi <= e for b, e in self._loaded
        ):
            return
        values = self._loader(lo, hi)
        self._values.update(values)
        if lo is None or hi is None:
            self._everything = True
        else:
            self._loaded.append((lo, hi))

    def ordinal_ranges(self, lo: int | None = None, hi: int | None = None) -> list[OrdinalRange]:
        self._ensure(lo, hi)
        return super().ordinal_ranges(lo, hi)

    def exists_ordinal(self, ordinal: int) -> bool:
        self._ensure(ordinal, ordinal + 1)
        return super().exists_ordinal(ordinal)

    def load_all(self) -> StoreAllTimeline:
        """A plain, fully loaded copy."""
        self._ensure(None, None)
        full = StoreAllTimeline(self.period, self.column, self.tz)
        full.add_ordinal_ranges(runs(self._values))
        return full

    def first_ordinal(self) -> int | None:
        self._ensure(None, None)
        return super().first_ordinal()

    def latest_ordinal(self) -> int | None:
        self._ensure(None, None)
        return super().latest_ordinal()

    def __len__(self) -> int:
        self._ensure(None, None)
        return super().__len__()


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

    def fact(self, catalog_rows: CatalogRows, fact: str, *, refresh: bool = False) -> FactState:
        """The fact's timelines: one round trip when warm, two plus slices when cold."""
        with self._lock:
            cached = self._facts.get(fact)
        if cached is not None and not refresh:
            if catalog_rows.read_generation(fact) == cached.generation:
                return cached
        state = self._load(catalog_rows, fact)
        with self._lock:
            self._facts[fact] = state
        return state

    def _load(self, catalog_rows: CatalogRows, fact: str) -> FactState:
        definition, generation, storages = catalog_rows.read_fact(fact)
        if definition is None:
            raise UnknownFact(f"fact {shown(fact)} is not in the catalog")
        rows = catalog_rows.read_storage_rows(storages) if storages else {}
        states: dict[str, StorageState] = {}
        for name in storages:
            cells = rows.get(name, {})
            if DEF not in cells:
                continue  # a storage still being created
            sdef = decode_storage(name, cells[DEF])
            state = StorageState(sdef, cells.get(PRESENT) == b"true",
                                 may_have_derived=may_have_derived(cells))
            states[name] = state
            if not state.present:
                continue  # rebuilt from the rows before use: its cells are not read
            for period in sdef.periods:
                for column in sdef.time_columns:
                    cell = TimelineCell.read(cells.get(timeline_column(period, column)),
                                             name, period, column)
                    state.timelines[(period, column)] = timeline_from_cell(
                        catalog_rows, sdef, period, column, cell
                    )
            if sdef.dimensions:
                load_slices(state, cells)
        return FactState(definition, generation, states)


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


def load_slices(state: StorageState, cells: dict[bytes, bytes]) -> None:
    """Decode the slice timelines of the storage's declared columns from its row's cells
    (cells of other columns, left by an earlier declaration, are ignored). O(slice cells)."""
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
            cell = read_slice_cell(raw, sdef.name, period, column, slice_)
            timeline = RangesTimeline.from_properties(cell.properties, period, column, sdef.tz)
        except CorruptTimeline as exc:  # never used: this timeline reads the rows instead
            log.warning("%s; reading the rows instead", exc)
            state.broken.add((period, column))
            continue
        state.slices.setdefault((period, column), {})[slice_] = timeline


def timeline_from_cell(
    catalog_rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
    cell: TimelineCell,
) -> PartitionTimeline:
    """Decode one checked timeline cell (StoreAll reads its value columns lazily).

    Corrupt content raises :class:`CorruptTimelineCell`, which names the timeline and says
    to run reconcile; nothing is ever half-used.
    """
    try:
        return decode_timeline(catalog_rows, sdef, period, column, cell)
    except CorruptTimelineCell:
        raise
    except CorruptTimeline as exc:
        raise CorruptTimelineCell(sdef.name, period, column, str(exc)) from None


def decode_timeline(
    catalog_rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, column: str,
    cell: TimelineCell,
) -> PartitionTimeline:
    """:func:`timeline_from_cell` with the bare ``CorruptTimeline`` of the content decoders."""
    named = cell.properties.get(storage_class_key(period.name, column))
    kind = cell.kind or named or sdef.timeline_kind(period, column)
    try:
        cls = timeline_class(kind)
    except UnknownTimelineClass as exc:
        raise CorruptTimeline(str(exc)) from None
    if cls is StoreAllTimeline:
        def loader(lo: int | None, hi: int | None) -> list[int]:
            return catalog_rows.read_values(sdef.name, period, column, lo, hi, sdef.tz)

        return SlicedStoreAllTimeline(period, column, sdef.tz, loader)
    if cell.raw is None:
        return new_timeline(kind, period, column, sdef.tz)
    return cls.from_properties(cell.properties, period, column, sdef.tz)
