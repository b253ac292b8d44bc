"""``plan(catalog, fact, start, end)``: the producer runs that make a range coverable.

Reads the fact's timelines once through the catalog's cache (each storage period asked once,
for the ordinals inside the range, like the cover), runs :mod:`.fill` on integers, then turns
its slots into :class:`PlannedRun` values and computes the cover the range would have with the
planned partitions added (the very ``compute_cover`` the catalog uses). See docs/backfill.md.

Slices: for a storage with declared dimensions, a time partition counts as present only when
every required slice has it (the catalog's own rule, :func:`.dimension_coverage.completeness`),
and a run planned for it names exactly the slices it lacks (or that are stale).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from airflow_partitions.arguments import shown
from airflow_partitions.catalog import (
    NothingSelected,
    SliceCompleteness,
    StorageDef,
    complete_sources,
    unselected_note,
)
from airflow_partitions.cover import (
    Clock,
    Cover,
    CoverRequest,
    CoverSource,
    PreparedCover,
    Slice,
    compute_cover,
    from_us,
    prepare,
    slice_of,
    to_us,
)
from airflow_partitions.defaults import MAX_RANGE_PARTITIONS
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod, nested_chain
from airflow_partitions.planning.fill import Filler, Level, Slot, SlotKey
from airflow_partitions.planning.planned_runs import PartitionRef, Plan, PlannedRun, Span
from airflow_partitions.planning.slices import run_groups
from airflow_partitions.timelines import (
    OrdinalRange,
    RangesTimeline,
    difference_ranges,
    runs,
    union_ranges,
)

if TYPE_CHECKING:
    from airflow_partitions.catalog import Catalog

StorageKey = tuple[str, UpdatePeriod]
#: A partition to re-make: (storage, period, time value), optionally with the stale slice.
RestateItem = (tuple[str, str, str]
               | tuple[str, str, str, Mapping[str, str] | Iterable[tuple[str, str]]])
#: Per (storage, period, ordinal) of a stale partition: its stale slices, None for all of them.
StaleSlices = dict[tuple[str, UpdatePeriod, int], set[Slice] | None]

#: A bound as callers give it: an aware datetime, or ISO-8601 text with an offset.
Instant = dt.datetime | str


def plan(catalog: Catalog, fact: str, start: Instant, end: Instant, *,
         restate: Iterable[RestateItem] = (), where: str | None = None) -> Plan:
    """The runs that make ``[start, end)`` of ``fact`` coverable with the fewest partitions.

    ``restate``: (storage, period name, time value) partitions that need a re-run (stale): they
    count as missing, and a run that re-makes one has kind ``restate``; a fourth item, the
    stale row's dimension values (a mapping or (column, value) pairs), narrows the re-run to
    that slice. ``where``: the slices required, as in :class:`CoverRequest` (default: every
    declared one). The bounds follow the cover's rules (aligned to the finest period, in the
    fact's zone; ``MisalignedBound`` otherwise). Cost: one timeline read per storage period
    (cached) with its slice timelines for declared dimensions (a scan of the rows in the range
    only where those are not built), O(levels x (ranges + missing slots)) on integers,
    then O(runs + cover) to build the answer.
    """
    request = CoverRequest.of(fact, start, end, where=where)
    state = catalog.fact_state(fact)
    fdef = state.definition
    column = fdef.time_columns[0]
    defs = {name: s.definition for name, s in state.storages.items()
            if column in s.definition.time_columns}
    note = unselected_note(defs.values(), request)
    if note is not None:
        raise NothingSelected(f"{fact}: {note}")
    sources, checks = complete_sources(catalog.rows, state, request, column)
    prepared = prepare(sources, request, tz=fdef.tz)
    stale, stale_slices = _restate_set(restate, defs, fdef.tz)
    return _Planner(prepared, defs, stale, column, _SliceBook(checks, stale_slices)).plan()


class _SliceBook:
    """Which slices a planned partition of a dimensioned (storage, period) must produce."""

    def __init__(self, checks: Mapping[StorageKey, SliceCompleteness],
                 stale: StaleSlices) -> None:
        self.checks, self.stale = checks, stale
        #: (storage, period) -> ordinal -> the slices lacking there (inverted once, O(lacking)).
        self.lacking: dict[StorageKey, dict[int, list[Slice]]] = {}
        for key, check in checks.items():
            by_ordinal: dict[int, list[Slice]] = {}
            for slice_, ordinals in sorted(check.lacking.items()):
                for ordinal in ordinals:
                    by_ordinal.setdefault(ordinal, []).append(slice_)
            self.lacking[key] = by_ordinal

    def slices(self, storage: str, period: UpdatePeriod, ordinal: int) -> tuple[Slice, ...]:
        """The slices lacking there, plus the stale ones (all required ones when the stale
        entry names none); () for a storage without dimensions."""
        check = self.checks.get((storage, period))
        if check is None:
            return ()
        out = set(self.lacking[(storage, period)].get(ordinal, ()))
        if (storage, period, ordinal) in self.stale:
            named = self.stale[(storage, period, ordinal)]
            out |= named if named is not None else {
                s for s, wanted in check.needs.items() if ordinal in wanted}
        return tuple(sorted(out))


def _restate_set(items: Iterable[RestateItem], defs: Mapping[str, StorageDef], tz: str
                 ) -> tuple[dict[StorageKey, set[int]], StaleSlices]:
    """Validate the restate partitions; (storage, period) -> ordinals, and the stale slices."""
    out: dict[StorageKey, set[int]] = {}
    slices: StaleSlices = {}
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise InvalidInput(f"restate must be (storage, period, value) triples, not {shown(items)}")
    for item in items:
        if not isinstance(item, tuple | list) or len(item) not in (3, 4):
            raise InvalidInput(f"restate entry {shown(item)} is not (storage, period, value)")
        storage, period_name, value = item[:3]
        sdef = defs.get(storage) if isinstance(storage, str) else None
        if sdef is None:
            raise InvalidInput(f"restate entry {shown(item)}: {shown(storage)} is not a storage "
                               f"of this fact ({', '.join(sorted(defs))})")
        period = UpdatePeriod.of(period_name)
        if period not in sdef.periods:
            raise InvalidInput(f"restate entry {shown(item)}: storage {storage!r} has no "
                               f"{period.name} partitions")
        ordinal = period.parse_ordinal(value, tz)
        out.setdefault((storage, period), set()).add(ordinal)
        key = (storage, period, ordinal)
        named = slice_of(item[3]) if len(item) == 4 and item[3] else None
        if named is None or (key in slices and slices[key] is None):
            slices[key] = None
        else:
            slices.setdefault(key, set()).add(named)  # type: ignore[union-attr]
    return out, slices


class _Planner:
    """One plan: availability per period, the fill, then the runs and the cover after."""

    def __init__(self, prepared: PreparedCover, defs: Mapping[str, StorageDef],
                 stale: dict[StorageKey, set[int]], column: str, book: _SliceBook) -> None:
        self.req, self.defs, self.stale, self.column = prepared, defs, stale, column
        self.book = book
        self.tz = prepared.tz
        self.clock = Clock(self.tz)
        #: (storage, period) -> fresh ordinal ranges inside the range, in rank order per period.
        self.fresh: dict[StorageKey, list[OrdinalRange]] = {}
        for period, timelines in prepared.by_period.items():
            lo = self.clock.ceil(period, prepared.start_us)
            hi = self.clock.floor(period, prepared.end_us)
            for rank, timeline in timelines:
                key = (prepared.storages[rank], period)
                have = timeline.ordinal_ranges(lo, hi) if lo < hi else []
                self.fresh[key] = difference_ranges(have, runs(sorted(stale.get(key, ()))))
        #: period -> storages naming a producer for it, most preferred first.
        self.makers = {
            period: [prepared.storages[r] for r, _ in timelines
                     if period.name in defs[prepared.storages[r]].producers]
            for period, timelines in prepared.by_period.items()
        }

    def plan(self) -> Plan:
        req = self.req
        if req.start_us == req.end_us or not req.by_period:
            gaps = [(req.start_us, req.end_us)] if req.start_us != req.end_us else []
            return self._answer([], gaps)
        levels = []
        for period in nested_chain(req.by_period):
            available: list[OrdinalRange] = []
            for name in req.storages:
                available = union_ranges(available, self.fresh.get((name, period), []))
            levels.append(Level(period, available, bool(self.makers[period])))
        result = Filler(self.clock, levels, MAX_RANGE_PARTITIONS).run(req.start_us, req.end_us)
        return self._answer(result.slots, result.gaps)

    def _storage_of(self, slot: Slot) -> str:
        """The stale copy's storage when it can re-make it, else the most preferred maker."""
        makers = self.makers[slot.period]
        for name in makers:
            if slot.ordinal in self.stale.get((name, slot.period), ()):
                return name
        return makers[0]

    def _answer(self, slots: list[Slot], gaps: list[tuple[int, int]]) -> Plan:
        chosen = {(s.period, s.ordinal): self._storage_of(s) for s in slots}
        ordered = sorted(slots, key=lambda s: (s.period, s.ordinal))
        planned = tuple(run for s in ordered for run in self._runs(s, chosen))
        cover = self._cover_after(chosen)
        refs: list[PartitionRef] = [
            (run.storage, run.period.name, run.period.format_ordinal(o, self.tz))
            for run in cover.runs for o in range(run.first, run.end)
        ]
        reasons = [(t0, t1, self._gap_reason()) for t0, t1 in gaps]
        unfillable: list[Span] = []
        for missing in cover.missing:
            lo, hi = missing.start, missing.end
            why = sorted({r for t0, t1, r in reasons if t0 < to_us(hi) and to_us(lo) < t1}) or [
                "registered and planned partitions overlap here (WEEKLY next to a calendar "
                "period), so no exact cover reaches it"]
            unfillable.append((lo, hi, "; ".join(why)))
        return Plan(self.req.fact or "", self.req.start, self.req.end, planned,
                    tuple(unfillable), tuple(refs))

    def _runs(self, slot: Slot, chosen: Mapping[SlotKey, str]) -> Sequence[PlannedRun]:
        """The runs producing one slot: one, or with slices one per group of slices the
        producer takes (all in one run with a ``slice_conf``, else one per slice)."""
        storage = chosen[(slot.period, slot.ordinal)]
        producer = self.defs[storage].producers[slot.period.name]
        slices = self.book.slices(storage, slot.period, slot.ordinal)
        value = slot.period.format_ordinal(slot.ordinal, self.tz)
        start = from_us(self.clock.start(slot.period, slot.ordinal), self.tz)
        end = from_us(self.clock.start(slot.period, slot.ordinal + 1), self.tz)
        restated = slot.ordinal in self.stale.get((storage, slot.period), ())
        enables = ""
        if slot.enables is not None:
            period, ordinal = slot.enables
            target = chosen[slot.enables]
            enables = (f"input of {target} {period.name} "
                       f"{period.format_ordinal(ordinal, self.tz)} "
                       f"({self.defs[target].producers[period.name].dag_id})")
        if restated:
            kind = "restate"
            reason = f"re-makes stale {storage} {slot.period.name} {value}" + (
                f"; {enables}" if enables else "")
        elif enables:
            kind, reason = "input", enables
        else:
            kind = "gap"
            reason = (f"fills {start.isoformat()}/{end.isoformat()}: no fresh "
                      f"{slot.period.name} {value} is registered")
        logical_date = producer.logical_date_of(slot.period, slot.ordinal, self.tz)
        return [PlannedRun(producer.dag_id, logical_date, storage, slot.period, value, start,
                           end, kind, reason, group, producer.slice_conf)
                for group in run_groups(slices, producer.slice_conf)]

    def _cover_after(self, chosen: Mapping[SlotKey, str]) -> Cover:
        """The cover with fresh and planned partitions only (stale ones not re-made are out)."""
        planned: dict[StorageKey, list[int]] = {}
        for (period, ordinal), storage in sorted(chosen.items()):
            planned.setdefault((storage, period), []).append(ordinal)
        sources = []
        for (storage, period), fresh in self.fresh.items():
            timeline = RangesTimeline(period, self.column, self.tz)
            timeline.replace_ranges(union_ranges(fresh, runs(planned.get((storage, period), []))))
            sources.append(CoverSource(storage, self.defs[storage].priority, period, timeline))
        request = CoverRequest(self.req.fact, self.req.start, self.req.end)
        return compute_cover(sources, request, tz=self.tz)

    def _gap_reason(self) -> str:
        """Why a stretch stays uncovered: which periods have no producer, which cannot be made."""
        lacking = [p.name for p in nested_chain(self.req.by_period) if not self.makers[p]]
        making = [p.name for p in nested_chain(self.req.by_period) if self.makers[p]]
        reason = "no fresh partition covers it and none can be produced"
        if lacking:
            reason += f": no producer for {', '.join(lacking)}"
        if making:
            reason += (f"{'; ' if lacking else ': '}the {', '.join(making)} producers need "
                       "finer inputs that cannot all exist")
        return reason
