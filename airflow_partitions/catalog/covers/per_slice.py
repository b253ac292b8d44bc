"""Verified covers of facts with declared dimensions: each slice its own minimal cover.

Why: before this, a time partition of a dimensioned storage counted only when *every*
required slice had its row there, then the time-only cover ran. With eu's DAILY and us's 24
HOURS of a day, each period of the storage was incomplete and the day was called missing,
though each region could be covered. Here the catalog feeds the pure slice cover
(:func:`airflow_partitions.cover.slices.compute.compute_slice_cover`, proven minimal against a
brute-force oracle): per slice the fewest partitions, a rollup shared by many slices counted
once (docs/dimensions.md, "What is chosen").

The answer is a :class:`~airflow_partitions.cover.Cover` whose runs carry their slice
(``CoverRun.dimensions``: eu's DAILY, us's 24 hours; a rollup's run carries ``()``), whose
``missing`` names per slice what it lacks (``NeededPartitions.dimensions``), and which is
coverable only when every required slice is. Verification (invariant 2) reads exactly the
chosen runs' rows *of their slice* (:mod:`.slices.sliced_runs`), so the manifest lists exactly the
chosen partitions. A run a row does not back makes the caller read again with a refreshed
cache; if fresh timelines still advertise it, they are repaired first (the per-column timeline
with :func:`.writer.unadvertise`, a slice timeline with :func:`.slices.writer.settle_slices`):
the loop of :mod:`.covers.verified`, whose rounds this module computes.

Facts without declared dimensions never come here (:func:`uses_slices`), so they keep the
time-only path and its cost exactly. Cost otherwise: the sources (:mod:`.slices.sources`: no
read when the slice timelines are built), the slice cover (linear in slices for alike slices),
and one projected scan per (storage, period) of the chosen runs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pendulum

from airflow_partitions.catalog.covers.fresh import fresh_sources
from airflow_partitions.catalog.covers.unadvertise import (
    settle_slice_timelines,
    unadvertise_timelines,
)
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.runs import RunRows, run_locator
from airflow_partitions.catalog.slices.notes import cover_notes, unselected_note
from airflow_partitions.catalog.slices.sliced_runs import read_slice_runs
from airflow_partitions.catalog.slices.sources import (
    StorageInput,
    fact_required,
    slice_sources,
)
from airflow_partitions.cover import (
    Cover,
    CoverRequest,
    CoverRun,
    CoverSource,
    MissingRange,
    NeededPartitions,
    RunLocator,
    SkippedPartition,
    SliceCover,
    SliceSource,
    compute_slice_cover,
    from_us,
    to_us,
)
from airflow_partitions.periods import UpdatePeriod

if TYPE_CHECKING:
    from airflow_partitions.catalog.cache import FactState
    from airflow_partitions.catalog.core import CatalogCore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SliceRound:
    """One round of a verified slice cover: the verified ``cover`` and its rows, or
    ``cover`` None when rows did not back it (read again with a refreshed cache)."""

    cover: Cover | None
    runs: tuple[RunRows, ...] = ()
    #: Some required slice is not required over the whole range (a region that joins or
    #: leaves inside it): a partition reaching past its span is not in this cover, so the
    #: complete-partition cover may be smaller (docs/dimensions.md).
    partial: bool = False


def uses_slices(state: FactState, request: CoverRequest, column: str) -> bool:
    """Whether a storage the request may read (it has ``column``, ``request.storages`` allows
    it) declares a dimension: then the cover is computed per slice. O(storages)."""
    return any(s.definition.dimensions and column in s.definition.time_columns
               and (request.storages is None or name in request.storages)
               for name, s in state.storages.items())


def slice_round(catalog: CatalogCore, state: FactState, request: CoverRequest, column: str, *,
                refresh: bool, verify: bool = True) -> SliceRound | None:
    """Compute the slice cover of ``request`` from ``state`` and verify it against the rows.

    None when no slice is required in the range (every declared value's span lies outside it,
    or ``where`` keeps none of them there): then nothing but time is asked, and the caller
    takes the time-only path. A ``where`` that selects no declared slice at all (a value no
    domain has) instead gets a cover that says so and is never coverable
    (:func:`.slices.notes.unselected_note`). ``refresh``: the state was just read from the
    store, so a run the rows do not back means a stored timeline over-reports; it is
    repaired before the next round.
    """
    fdef = state.definition
    tz = fdef.tz
    inputs = [StorageInput(s.definition,
                           {p: s.timelines[(p, column)] for p in s.definition.periods},
                           {p: s.slice_timelines(p, column) for p in s.definition.periods})
              for _, s in sorted(state.storages.items())
              if column in s.definition.time_columns]
    readable = [i.definition for i in inputs
                if request.storages is None or i.definition.name in request.storages]
    required = fact_required(readable, request)
    if not required:
        note = unselected_note(readable, request)
        if note is None:
            return None
        notes = (*cover_notes([i.definition for i in inputs], request, column), note)
        return SliceRound(Cover(from_us(to_us(request.start), tz), from_us(to_us(request.end), tz),
                                tz=tz, fact=fdef.name, notes=notes, unselected=note))
    found = slice_sources(catalog.rows, inputs, request, column, required)
    sources: Sequence[SliceSource] = found.sources
    skipped: tuple[SkippedPartition, ...] = ()
    if request.fresh_only:
        sources, skipped = _fresh(catalog, request, column, tz, sources)
    solved = compute_slice_cover(sources, found.required, request, tz=tz)
    defs = {i.definition.name: i.definition for i in inputs}
    notes = cover_notes(defs.values(), request, column)
    cover = as_cover(solved, {s.period for s in sources if s.fixed}, skipped=skipped,
                     notes=notes)
    if not verify:
        return SliceRound(cover)
    runs = read_slice_runs(catalog.rows, defs, cover.runs, column,
                           merge=not request.fresh_only)
    unbacked = [(rows.run, ordinal) for rows in runs for ordinal in rows.missing]
    if not unbacked:
        whole = (to_us(request.start), to_us(request.end))
        partial = any(r.spans != (whole,) for r in found.required)
        return SliceRound(as_cover(solved, {s.period for s in sources if s.fixed},
                                   skipped=skipped, notes=notes, locator=run_locator(runs)),
                          tuple(runs), partial)
    if refresh:  # fresh timelines still advertise them: repair the over-report
        _repair(catalog, defs, column, unbacked, found.stored)
    run, ordinal = unbacked[0]
    log.warning(
        "cover of %s: %d partition(s) advertised without a registered row of their slice "
        "(e.g. %s %s %s%s); %s and recomputing", fdef.name, len(unbacked), run.storage,
        run.period.name, run.period.format_ordinal(ordinal, defs[run.storage].tz),
        "".join(f" {c}={v}" for c, v in run.dimensions),
        "repairing the timeline" if refresh else "refreshing the cache")
    return SliceRound(None)


def as_cover(solved: SliceCover, sliced: set[UpdatePeriod], *,
             skipped: Sequence[SkippedPartition] = (), notes: Sequence[str] = (),
             locator: RunLocator | None = None) -> Cover:
    """The slice cover as the :class:`Cover` callers use.

    Runs are the distinct partitions read, each with its slice (``()`` for one that holds
    every slice). A missing range is a maximal stretch where some slice lacks something; it
    names per slice what that slice lacks in the ``sliced`` periods (those with a per-slice
    source), and once, without a slice, what the periods that only rollups serve lack.
    Cost: O(runs + missing entries).
    """
    tz = solved.tz
    runs = [CoverRun(r.storage, r.period, r.first, r.end, r.fixed) for r in solved.runs]
    entries: list[tuple[pendulum.DateTime, pendulum.DateTime, tuple[NeededPartitions, ...]]] = []
    for answer in solved.answers:
        for m in answer.missing:
            needed = tuple(replace(n, dimensions=answer.slice) if n.period in sliced else n
                           for n in m.needed)
            entries.append((m.start, m.end, needed))
    entries.sort(key=lambda e: e[0])
    merged: list[tuple[pendulum.DateTime, pendulum.DateTime, list[NeededPartitions]]] = []
    for start, end, needed in entries:
        if merged and start <= merged[-1][1]:
            lo, hi, have = merged[-1]
            merged[-1] = (lo, max(hi, end), have)
        else:
            have = []
            merged.append((start, end, have))
        have.extend(n for n in needed if n.dimensions or n not in have)
    missing = [MissingRange(a, b, tuple(sorted(n, key=lambda x: x.dimensions)))
               for a, b, n in merged]
    return Cover(from_us(solved.start_us, tz), from_us(solved.end_us, tz), runs, missing,
                 tz=tz, fact=solved.fact, skipped=skipped, locator=locator, notes=notes)


def _fresh(catalog: CatalogCore, request: CoverRequest, column: str, tz: str,
           sources: Sequence[SliceSource],
           ) -> tuple[list[SliceSource], tuple[SkippedPartition, ...]]:
    """The sources without their stale time values (:mod:`.covers.fresh`), each keeping its
    slice; a stale partition is reported once however many slice sources it masked."""
    plain = [CoverSource(s.storage, s.priority, s.period, s.timeline) for s in sources]
    masked, skipped = fresh_sources(catalog, request, column, tz, plain)
    out = [SliceSource(m.storage, m.priority, m.period, m.timeline, s.fixed)
           for s, m in zip(sources, masked, strict=True)]
    return out, tuple(dict.fromkeys(skipped))


def _repair(catalog: CatalogCore, defs: dict[str, StorageDef], column: str,
            unbacked: list[tuple[CoverRun, int]],
            stored: frozenset[tuple[str, UpdatePeriod]]) -> None:
    """Un-advertise what no row backs: a plain run's values from the per-column timeline, a
    sliced run's from its slice timeline (only a stored one: a slice read from the rows has
    nothing to repair). Cost: one settle per timeline touched."""
    plain: dict[tuple[str, UpdatePeriod], set[int]] = {}
    sliced: dict[tuple[str, UpdatePeriod], dict[tuple[tuple[str, str], ...], set[str]]] = {}
    for run, ordinal in unbacked:
        key = (run.storage, run.period)
        if not run.dimensions:
            plain.setdefault(key, set()).add(ordinal)
        elif key in stored:
            value = run.period.format_ordinal(ordinal, defs[run.storage].tz)
            sliced.setdefault(key, {}).setdefault(run.dimensions, set()).add(value)
    unadvertise_timelines(catalog, defs, column, plain)
    for (storage, period), wanted in sliced.items():
        settle_slice_timelines(catalog, defs[storage], period, column, wanted)


__all__ = ["SliceRound", "as_cover", "slice_round", "uses_slices"]
