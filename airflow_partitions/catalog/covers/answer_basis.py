"""What a verified answer rests on, and the proof in one read that a later write left it true.

Why: a sensor asks one small range again and again while producers register other partitions
of the same fact. Every registration moves the store's change stamp; working the answer out
again means reloading the fact's written rows, computing the cover and checking its rows
(about half a millisecond, most of it Python). On SQLite both catalog tables keep a change feed
(:mod:`airflow_partitions.kv.sqlite_feed`), so one read lists what was written since the
answer and brings the catalog rows written, as they are now. The answer stands when:

* no partition row that could take part in it was written: no key of the fact's storages,
  in any of their periods, within the key span of the partitions that overlap the range
  (any key of the period when the time column does not lead the key);
* every catalog row of the fact that was written holds the cells the answer came from, but
  for the fact's generation counter and EndsAndHoles timeline cells whose ends moved
  outwards without reaching the range
  (:meth:`~airflow_partitions.timelines.EndsAndHolesTimeline.ends_moved_to`).

Then the rows the answer was checked against are the rows now, and every timeline says
inside the range what it said: the cover worked out again is this one, checked against the
same rows (invariant 2 of docs/design.md holds as for the change stamp's memo). HBase keeps
no feed: there the fact's and its storages' catalog rows (:meth:`AnswerBasis.catalog_read`)
are read with the answer's partition rows, :meth:`AnswerBasis.holds` applies the second rule
to them, and the partition rows read stand for the first
(:mod:`~airflow_partitions.catalog.covers.read_again`). Anything else takes the
full path: a feed that cannot tell (trimmed or rebuilt), a fact with declared dimensions or a
StoreAll timeline, a ``fresh_only`` or ``where`` request, a timeline cell changed in any
other way.

Cost: one read (a SELECT, and the schema version after it); per catalog row of the fact
written since, a decode of its cells and a comparison; per changed timeline cell a match of
its bytes against the cell's bytes but its ends
(:mod:`~airflow_partitions.catalog.rows.timeline_ends`) and a parse of each end that moved,
or when they do not match a JSON parse and two value parses; per changed partition key, a
comparison with each of the fact's key spans.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from airflow_partitions.catalog.rows.layout import (
    CATALOG_TABLE,
    GEN,
    PARTITIONS_TABLE,
    CatalogRows,
    TimelineCell,
    fact_row,
    storage_row,
    timeline_column,
)
from airflow_partitions.catalog.rows.timeline_ends import EndsTemplate
from airflow_partitions.cover import Cover, CoverRequest
from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.keys import encode_value, prefix_successor
from airflow_partitions.kv import Cells, DamagedCells, KeyedRead, RowCells
from airflow_partitions.timelines import EndsAndHolesTimeline, RangeSetTimeline

if TYPE_CHECKING:
    from airflow_partitions.catalog.cache import FactState

_TICK = dt.timedelta(microseconds=1)


@dataclass(eq=False)
class TimelineBasis:
    """One EndsAndHoles timeline an answer came from: its properties but the ends, and the
    ordinals of its period the answer's range overlaps. Mutable in one place: :attr:`seen`,
    the ends the last proof found, which the next one compares with."""

    timeline: EndsAndHolesTimeline
    kind: str | None
    rest: dict[str, str]
    first: int
    last: int
    #: ``first`` and ``latest`` as the cell held them.
    stored_ends: tuple[str, str]
    #: The ends a cell was last found to have, as texts and ordinals: the stored ends and
    #: the timeline's, until a proof finds them moved outwards without reaching the range
    #: (then its content in the range is still the answer's). A producer appending hours
    #: moves ``latest`` by one each time: read against the one before, it is an hour of the
    #: same day (:func:`~airflow_partitions.periods.fast_ordinal_near`). None: empty.
    seen: tuple[tuple[str, str], tuple[int, int]] | None = field(init=False)

    def __post_init__(self) -> None:
        own = _own_ends(self.timeline)
        self.seen = None if own is None else (self.stored_ends, own)

    @functools.cached_property
    def template(self) -> EndsTemplate | None:
        """The cell's bytes but its ends and version (None: they cannot be cut, so a changed
        cell is decoded). Built by the first check of a changed cell, not with the answer:
        one encode of the cell (about 60 µs for ten years of daily holes)."""
        first_key, latest_key = self.timeline.end_keys()
        return EndsTemplate.of(self.kind, self.rest, first_key, latest_key)

    def same_in_range(self, raw: bytes | None) -> bool:
        """Whether the cell ``raw`` is this timeline with its ends moved outwards, no
        partition added inside the range. Cost: at most two parses, after a match of the bytes
        against :attr:`template` or, when they do not match it, a JSON parse and a dict
        comparison."""
        seen = self.seen
        if seen is None or raw is None:
            return False
        texts = None if self.template is None else self.template.ends(raw)
        try:
            before: tuple[int, int] | None
            if texts is not None:
                ends = self.timeline.outward_ends(texts[0], texts[1], *seen)
                before = seen[1]
            else:
                cell = TimelineCell.decode(raw)
                if cell.kind != self.kind:
                    return False
                ends = self.timeline.ends_moved_to(self.rest, cell.properties)
                before = _own_ends(self.timeline)  # the answer's own, as the cell is compared
        except CorruptTimeline:
            return False
        if ends is None or before is None:
            return False
        (lo, hi), (old_first, old_latest) = ends, before
        added_before = lo < old_first and lo <= self.last and old_first - 1 >= self.first
        added_after = hi > old_latest and old_latest + 1 <= self.last and hi >= self.first
        if added_before or added_after:
            return False
        if texts is not None and ends != before:
            self.seen = ((texts[0].strip(), texts[1].strip()), ends)
        return True


@dataclass(frozen=True)
class AnswerBasis:
    """What of the catalog an answer read: the rows and key spans a later write must leave
    alone for the answer to stand. Where the feeds stood is kept beside it by the caller
    (it moves with every proof; this does not)."""

    fact_row: bytes
    #: The fact row's cells as the answer read them, but the generation (which writes move).
    fact_cells: Cells
    #: Per storage row: its cells as the answer read them (families ``m`` and ``t``).
    storage_cells: dict[bytes, Cells]
    #: Per (storage row, timeline cell name): the timeline the answer came from.
    timelines: dict[tuple[bytes, bytes], TimelineBasis]
    #: The partitions table's key spans ``[low, high)`` a write in which may change it.
    spans: tuple[tuple[bytes, bytes | None], ...]

    @classmethod
    def of(cls, rows: CatalogRows, state: FactState, request: CoverRequest, column: str,
           cover: Cover) -> AnswerBasis | None:
        """The basis of an answer computed from ``state``; None when the answer is not one
        this module can prove again."""
        if not may_prove(request):
            return None
        start = min(request.start, cover.start)
        end = max(request.end, cover.end, start + _TICK)
        storage_cells: dict[bytes, Cells] = {}
        timelines: dict[tuple[bytes, bytes], TimelineBasis] = {}
        spans: list[tuple[bytes, bytes | None]] = []
        members = {k[len(b"m:s."):].decode() for k in state.cells if k.startswith(b"m:s.")}
        if members != state.storages.keys():
            return None  # a storage still being created: its first write would go unseen
        for name, storage in state.storages.items():
            sdef = storage.definition
            if sdef.dimensions or not storage.present or not storage.cells:
                return None
            row = storage_row(name)
            storage_cells[row] = storage.cells
            leading = sdef.column_names[0] == column
            for period in sdef.periods:
                first = period.ordinal(start, sdef.tz)
                last = period.ordinal(end - _TICK, sdef.tz)
                prefix = rows.period_prefix(sdef, period)
                if leading:
                    name0, ctype = sdef.columns[0]
                    low = prefix + encode_value(ctype, period.format_ordinal(first, sdef.tz),
                                                column=name0)
                    high = prefix_successor(
                        prefix + encode_value(ctype, period.format_ordinal(last, sdef.tz),
                                              column=name0))
                    spans.append((low, high))
                else:
                    spans.append((prefix, prefix_successor(prefix)))
                for time_column in sdef.time_columns:
                    cell = timeline_column(period, time_column)
                    timeline = storage.timelines.get((period, time_column))
                    raw = storage.cells.get(cell)
                    if not isinstance(timeline, RangeSetTimeline):
                        return None  # StoreAll: its values live in other cells
                    if raw is not None and isinstance(timeline, EndsAndHolesTimeline):
                        found = _timeline_basis(timeline, raw, first, last)
                        if found is None:
                            return None
                        timelines[(row, cell)] = found
                    # A cell never stored (an empty timeline), or another RangeSet kind
                    # (Ranges): any write to its cell takes the full path.
        fact_cells = dict(state.cells)
        fact_cells.pop(GEN, None)
        return cls(fact_row(state.definition.name), fact_cells, storage_cells, timelines,
                   tuple(spans))

    def recheck(self, rows: CatalogRows, since: tuple[Hashable, Hashable]
                ) -> tuple[bool, tuple[Hashable, Hashable]] | None:
        """Whether the answer still stands after every write the feeds list since ``since``
        (the catalog's and the partitions' positions), with the positions now (to prove from
        next, or to work the answer out from); None when the feeds cannot tell."""
        found = rows.kv.changed_rows(
            ((CATALOG_TABLE, since[0]), (PARTITIONS_TABLE, since[1])), with_rows=_WITH_ROWS)
        if found is None:
            return None
        catalog, partitions = found
        now = (catalog.position, partitions.position)
        for key in partitions.keys:
            for low, high in self.spans:
                if low <= key and (high is None or key < high):
                    return False, now
        for row, cells in (catalog.rows or {}).items():  # asked with rows: never None
            if not self._same(row, cells):
                return False, now
        return True, now

    def read_now(self, rows: CatalogRows) -> dict[bytes, Cells] | None:
        """The fact's row and its storages' rows as they are now (families ``m`` and ``t``),
        every key asked present (``{}``: no such row); None when a cell is damaged (the full
        path reads them, and says which cell). One round trip: on a store that keeps no
        change feed (HBase) the proof reads these, where SQLite's feeds bring those written."""
        read = self.catalog_read(rows)
        try:
            found = rows.catalog.get_many(read.keys, read.columns)
        except DamagedCells:
            return None
        return {row: found.get(row, {}) for row in read.keys}

    def catalog_read(self, rows: CatalogRows) -> KeyedRead:
        """What :meth:`read_now` reads, for a store that asks it together with other reads
        (:meth:`~airflow_partitions.kv.KVStore.reads_again`)."""
        return KeyedRead(rows.catalog.name, (self.fact_row, *self.storage_cells), _FAMILIES)

    def now_of(self, found: list[RowCells]) -> dict[bytes, Cells]:
        """:meth:`read_now`'s answer out of the rows :meth:`catalog_read` found."""
        cells = dict(found)
        return {row: cells.get(row, {}) for row in (self.fact_row, *self.storage_cells)}

    def holds(self, now: dict[bytes, Cells]) -> bool:
        """Whether the catalog rows :meth:`read_now` read leave the answer true; its caller
        then reads the answer's partition rows again itself (what the spans stand for on
        SQLite). Cost: per row what :meth:`recheck` does per catalog row written."""
        return all(self._same(row, cells) for row, cells in now.items())

    def _same(self, row: bytes, cells: Cells) -> bool:
        """Whether the catalog row ``row``, now holding ``cells``, leaves the answer true."""
        if row == self.fact_row:
            rest = dict(cells)
            rest.pop(GEN, None)
            return rest == self.fact_cells
        before = self.storage_cells.get(row)
        if before is None or cells == before:
            return True  # another fact's row, a storage not in this fact, or unchanged
        # A cell changed, or added in the families read, or deleted, must be an EndsAndHoles
        # timeline the answer came from whose ends only moved outwards, not into the range.
        timelines = self.timelines
        for name, now in cells.items():
            if now != before.get(name) and (name in before or name[:2] in _READ):
                timeline = timelines.get((row, name))
                if timeline is None or not timeline.same_in_range(now):
                    return False
        for name in before:
            if name not in cells:
                timeline = timelines.get((row, name))
                if timeline is None or not timeline.same_in_range(None):
                    return False
        return True


def may_prove(request: CoverRequest) -> bool:
    """Whether an answer to ``request`` can have a basis at all: a ``fresh_only`` request also
    rests on lineage, and a ``where`` on declared dimensions, which a basis does not follow."""
    return not request.fresh_only and request.where is None


#: The catalog table, whose changed rows a recheck reads with their keys.
_WITH_ROWS = (CATALOG_TABLE,)
#: The column families of a storage row an answer reads (``m``: definition, ``t``: timelines).
_FAMILIES = (b"m", b"t")
_READ = (b"m:", b"t:")


def _own_ends(timeline: EndsAndHolesTimeline) -> tuple[int, int] | None:
    """The timeline's first and latest ordinals; None when it is empty."""
    first, latest = timeline.first_ordinal(), timeline.latest_ordinal()
    return None if first is None or latest is None else (first, latest)


def _timeline_basis(timeline: EndsAndHolesTimeline, raw: bytes, first: int, last: int
                    ) -> TimelineBasis | None:
    """The basis of one EndsAndHoles timeline decoded from ``raw``; None when the cell does
    not decode (the answer then has no basis)."""
    try:
        cell = TimelineCell.decode(raw)
    except CorruptTimeline:
        return None
    first_key, latest_key = timeline.end_keys()
    return TimelineBasis(timeline, cell.kind, timeline.properties_but_ends(cell.properties),
                         first, last, (cell.properties.get(first_key, "").strip(),
                                       cell.properties.get(latest_key, "").strip()))


def feed_positions(rows: CatalogRows) -> tuple[Hashable, Hashable] | None:
    """Where both catalog tables' feeds stand now (two statements), None when either keeps
    none. Taken before an answer's reads: a write in between is listed by the next check."""
    catalog = rows.catalog.feed_position()
    partitions = rows.partitions.feed_position() if catalog is not None else None
    return None if partitions is None else (catalog, partitions)

__all__ = ["AnswerBasis", "feed_positions", "may_prove"]
