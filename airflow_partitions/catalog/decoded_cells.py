"""Timeline cells decoded, and the last decode of each kept by the cell's bytes.

Why: after any write the fact's generation moves and :mod:`.cache` reads its storage rows
again. Nearly all of their cells come back byte for byte as they were (a registration changes
one timeline of one storage, or one slice cell among many), yet decoding each again costs a
parse per hole of its whole history: ten years of daily holes is thousands of parses for a
one-day question. Here a cell whose bytes equal the ones decoded before gets that timeline
(no JSON, no parse: a ``memcmp``); an EndsAndHoles or Ranges cell (slice cells included) that
changed is patched from the previous decode (``patched``: a list copy, a comparison of the
listed values in C and a parse per changed hole or range); anything else (StoreAll, a changed
kind, a first read) is decoded in full. A writer hands over
what it wrote (:meth:`DecodedCells.remember`), so a reader in the same process decodes
nothing after it; a writer starts from a private copy of the kept decode
(:meth:`DecodedCells.writable`).

Timelines handed out are shared by every reader of the process: nobody changes them.
Memory: per timeline and slice cell of the store, its bytes, its properties and its timeline
(the last two held by :mod:`.cache` anyway), at most :data:`MAX_ENTRIES`, oldest dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, NamedTuple

from airflow_partitions.catalog.definitions.stored import forget_definitions
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.layout import CatalogRows, CorruptTimelineCell, TimelineCell
from airflow_partitions.catalog.slices.cells import read_slice_cell
from airflow_partitions.cover import Slice, forget_requests, forget_solved
from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.kv import forget_all
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    EndsAndHolesTimeline,
    OrdinalRange,
    PartitionTimeline,
    RangeSetTimeline,
    RangesTimeline,
    StoreAllTimeline,
    UnknownTimelineClass,
    new_timeline,
    runs,
    storage_class_key,
    timeline_class,
)

#: Decodes kept per store: every timeline cell and slice cell of a large catalog fits.
MAX_ENTRIES: Final = 200_000


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


class _Kept(NamedTuple):
    raw: bytes
    properties: dict[str, str]
    timeline: PartitionTimeline


#: (storage, period, column, slice, zone, default kind): what a cell's bytes decode against.
_Key = tuple[str, str, str, Slice, str, str]


def forget_kept() -> None:
    """Forget every decode and answer the process kept (decoded cells, definitions, solved
    covers, validated requests, :func:`airflow_partitions.kv.forget_all`'s memos; the
    timeline caches are the caller's: :meth:`.cache.TimelineCache.invalidate`): the next
    question decodes everything again. For tests and benchmarks that compare with them gone,
    and a process that wants the memory back."""
    with DecodedCells._registry_lock:
        for kept in DecodedCells._per_store.values():
            kept.clear()
    forget_definitions()
    forget_solved()
    forget_requests()
    forget_all()


class DecodedCells:
    """The last decode of each timeline and slice cell of one store, by the cell's bytes."""

    _per_store: dict[str, DecodedCells] = {}
    _registry_lock = threading.Lock()

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._kept: OrderedDict[_Key, _Kept] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()

    @classmethod
    def for_store(cls, url: str) -> DecodedCells:
        """The process-wide decodes of one store."""
        with cls._registry_lock:
            return cls._per_store.setdefault(url, cls())

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def timeline(self, catalog_rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod,
                 column: str, raw: bytes | None) -> PartitionTimeline:
        """The (shared) timeline of the cell ``raw`` of (storage, period, column).

        Cost: a bytes comparison when the cell is the one decoded before; a patch when an
        EndsAndHoles or Ranges cell changed; else a full decode. A corrupt cell raises
        :class:`CorruptTimelineCell` as :func:`timeline_from_cell` does.
        """
        key = _key(sdef, period, column, ())
        kept = self._get(key)
        if kept is not None and raw is not None and kept.raw == raw:
            return kept.timeline
        cell = TimelineCell.read(raw, sdef.name, period, column)
        timeline: PartitionTimeline | None = None
        if kept is not None and isinstance(kept.timeline, (EndsAndHolesTimeline, RangesTimeline)) \
                and _kind(sdef, period, column, cell) is type(kept.timeline):
            timeline = kept.timeline.patched(kept.properties, cell.properties)
        if timeline is None:
            timeline = timeline_from_cell(catalog_rows, sdef, period, column, cell)
        self.remember(sdef, period, column, cell, timeline)
        return timeline

    def writable(self, catalog_rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod,
                 column: str, cell: TimelineCell) -> PartitionTimeline:
        """A private timeline of a checked cell, for a writer to change: a copy of the kept
        decode (O(ranges), ``memcpy``), or a full decode."""
        shared = self.timeline(catalog_rows, sdef, period, column, cell.raw)
        if isinstance(shared, RangeSetTimeline):
            return shared.copy()
        return timeline_from_cell(catalog_rows, sdef, period, column, cell)

    def remember(self, sdef: StorageDef, period: UpdatePeriod, column: str,
                 cell: TimelineCell, timeline: PartitionTimeline) -> None:
        """Keep ``timeline`` as the decode of ``cell`` (a writer: the cell it just wrote;
        nobody may change ``timeline`` afterwards). StoreAll timelines, whose values live in
        other cells, and absent cells are not kept."""
        if cell.raw is None or not isinstance(timeline, RangeSetTimeline):
            return
        self._put(_key(sdef, period, column, ()), _Kept(cell.raw, cell.properties, timeline))

    def slice_timeline(self, sdef: StorageDef, period: UpdatePeriod, column: str,
                       slice_: Slice, raw: bytes) -> PartitionTimeline:
        """The (shared) Ranges timeline of one slice cell: a bytes comparison when it is the
        cell decoded before, a patch when it changed (:meth:`RangesTimeline.patched`), else a
        full decode. A corrupt one raises ``CorruptTimeline``."""
        key = _key(sdef, period, column, slice_)
        kept = self._get(key)
        if kept is not None and kept.raw == raw:
            return kept.timeline
        cell = read_slice_cell(raw, sdef.name, period, column, slice_)
        timeline: PartitionTimeline | None = None
        if kept is not None and isinstance(kept.timeline, RangesTimeline):
            timeline = kept.timeline.patched(kept.properties, cell.properties)
        if timeline is None:
            timeline = RangesTimeline.from_properties(cell.properties, period, column, sdef.tz)
        self._put(key, _Kept(raw, cell.properties, timeline))
        return timeline

    def _get(self, key: _Key) -> _Kept | None:
        with self._lock:
            return self._kept.get(key)

    def _put(self, key: _Key, kept: _Kept) -> None:
        with self._lock:
            self._kept[key] = kept
            self._kept.move_to_end(key)
            while len(self._kept) > self._max:
                self._kept.popitem(last=False)


def _key(sdef: StorageDef, period: UpdatePeriod, column: str, slice_: Slice) -> _Key:
    return (sdef.name, period.name, column, slice_, sdef.tz,
            sdef.timeline_kind(period, column))


def _kind(sdef: StorageDef, period: UpdatePeriod, column: str,
          cell: TimelineCell) -> type[PartitionTimeline] | None:
    """The implementation a checked cell decodes as, or None when it names none."""
    named = cell.properties.get(storage_class_key(period.name, column))
    try:
        return timeline_class(cell.kind or named or sdef.timeline_kind(period, column))
    except UnknownTimelineClass:
        return None


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
