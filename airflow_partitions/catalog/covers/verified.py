"""Covers drawn from the catalog's cached timelines, verified against the partition rows.

Invariant 2 of docs/design.md (never advertise a partition that is not whole): a cover is checked
against the partition rows in one batched read before anyone acts on it. A value the cache
advertises but no row backs means the cache is stale (then it is refreshed) or the stored timeline
over-reports (then it is repaired, the first reader that sees it fixes it); either way the cover is
recomputed, never returned wrong.

A fact with a storage that declares dimensions gets one minimal cover per slice
(:mod:`.covers.per_slice`, the same loop); the time-only path below serves facts without
dimensions, and a dimensioned fact when no slice is required in the range. A ``where`` that
selects no declared slice at all never reaches it: the slice round answers that cover.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from airflow_partitions.catalog.covers.answer_basis import (
    AnswerBasis,
    feed_positions,
    may_prove,
)
from airflow_partitions.catalog.covers.fresh import fresh_sources
from airflow_partitions.catalog.covers.per_slice import slice_round, uses_slices
from airflow_partitions.catalog.covers.read_again import (
    ReadAgain,
    ReadNow,
    RowsByKeys,
    asked_again,
)
from airflow_partitions.catalog.covers.unadvertise import (
    settle_slice_timelines,
    unadvertise_timelines,
)
from airflow_partitions.catalog.definitions.tables import Partition, StorageDef
from airflow_partitions.catalog.rows.runs import RunRows, read_runs, run_locator, same_runs
from airflow_partitions.catalog.slices.completeness import (
    SliceCompleteness,
    complete_sources,
    incomplete_in,
    with_slices,
)
from airflow_partitions.catalog.slices.notes import cover_notes
from airflow_partitions.cover import (
    Cover,
    CoverRequest,
    CoverRun,
    CoverSource,
    SkippedPartition,
    compute_cover,
)
from airflow_partitions.errors import InvalidInput, PartitionsError
from airflow_partitions.kv import MAX_ROWS, Cells, LatestMemo
from airflow_partitions.periods import UpdatePeriod

if TYPE_CHECKING:
    from airflow_partitions.catalog.cache import FactState
    from airflow_partitions.catalog.core import CatalogCore

log = logging.getLogger(__name__)
#: Reads, computes and checks before giving up; from the third on, each waits a little longer
#: before it (jittered, about 0.13 s in all): the disagreement a concurrent drop leaves between
#: marking its rows and updating its timeline lasts milliseconds.
MAX_VERIFY_ROUNDS = 8


class CoverVerificationError(PartitionsError):
    """The cached timelines and the partition rows kept disagreeing: writers changing the
    range faster than it could be checked (transient: sensors ask again at their next poke),
    or timelines that repair cannot settle."""


class VerifiedCover:
    """A cover plus every registered partition row behind it, in cover order.

    The rows are kept as read (:class:`.rows.runs.RunRows`); :attr:`partitions` decodes them on
    first access, O(rows), so a caller that only needs the cover (a sensor, a status line)
    never pays for one object per partition.
    """

    __slots__ = ("_built", "_runs", "cover")

    def __init__(self, cover: Cover, partitions: Iterable[Partition] | None = None, *,
                 runs: Sequence[RunRows] = ()) -> None:
        self.cover = cover
        self._runs = tuple(runs)
        self._built = None if partitions is None else tuple(partitions)

    @property
    def partitions(self) -> tuple[Partition, ...]:
        """Every registered row behind the cover, in cover order (built once, O(rows))."""
        if self._built is None:
            self._built = tuple(p for rows in self._runs for p in rows.partitions())
        return self._built

    def __repr__(self) -> str:
        return f"VerifiedCover({self.cover!r}, rows={sum(len(r.rows) for r in self._runs)})"


def verified_cover(
    catalog: CatalogCore, request: CoverRequest, *, verify: bool = True
) -> VerifiedCover:
    """The best cover of the request from every storage of its fact, checked against the rows.

    Cost: one generation read when the cache is warm, the cover itself (O(runs)), and one
    projected scan of each run's rows, checked in O(rows) with no object per partition
    (:mod:`.rows.runs`); ``verify=False`` skips the read, for diagnostics only. A
    ``fresh_only`` request also reads the lineage in the range (:mod:`.covers.fresh`).

    A store that proves it unchanged since this request was last answered (SQLite's change
    stamp, :meth:`KVStore.change_stamp`: one ``pread`` of the WAL-index header) gets that
    answer again: its rows are the rows checked then, byte for byte. When the stamp moved,
    SQLite's change feeds may still prove it true in one read: no row it rests on was
    written, and no timeline changed inside its range (:mod:`.covers.answer_basis`). HBase
    can prove neither, so it reads the rows.
    """
    if not verify or MAX_ROWS == 0:
        return _verified_cover(catalog, request, verify=verify)[0]
    stamp = catalog.rows.kv.change_stamp()
    key = (request, request.start.tzinfo, request.end.tzinfo, catalog.rows.kv.url)
    if stamp is None:
        return _read_again(catalog, request, key)
    kept = _ANSWERED.get(key)
    basis: AnswerBasis | str | None = None
    since: tuple[Hashable, Hashable] | None = None
    if kept is not None:
        if kept.stamp == stamp:
            return kept.answer
        basis = kept.basis
        if isinstance(basis, AnswerBasis) and kept.since is not None:
            checked = basis.recheck(catalog.rows, kept.since)
            if checked is not None:
                stands, since = checked
                if stands:  # the writes since left it true
                    kept.stamp, kept.since = stamp, since
                    return kept.answer
    if since is None and basis is not UNPROVABLE and may_prove(request):
        since = feed_positions(catalog.rows)
    answer, state, column = _verified_cover(catalog, request, verify=True)
    # Stamped before the reads (and the feed positions read before them): a write during
    # them (ours, a repair, or anyone's) moved the stamp and is listed by the next recheck,
    # so this answer is never handed out for a store that changed without being proven.
    found: AnswerBasis | str | None = None  # None: the feeds could not tell, ask them again
    if since is not None:
        found = UNPROVABLE
        if state is not None and column is not None:
            found = AnswerBasis.of(catalog.rows, state, request, column,
                                   answer.cover) or UNPROVABLE
    _ANSWERED.remember(key, _Answered(stamp, answer, found, since))
    return answer


def _read_again(catalog: CatalogCore, request: CoverRequest, key: _AnswerKey) -> VerifiedCover:
    """:func:`verified_cover` on a store without a change stamp or feeds (HBase), whose every
    answer reads its partition rows again.

    The last answer to the request is given again when what it rests on, read now, leaves it
    true (:mod:`.covers.read_again`: one write on HBase, replies compared as bytes).
    Otherwise it is worked out from the rows just read (the catalog rows, and the partition
    rows when the cover reads the same keys), and kept with a new basis: nothing is read
    twice. Cost: one exchange of two requests; working the answer out again also decodes the
    changed timelines and computes the cover.
    """
    kept = _READ_AGAIN.get(key)
    read = ReadNow(None, None, None)
    if kept is not None:
        found = asked_again(catalog.rows, kept)
        if found is None:
            return kept.answer
        read = found
    answer, state, column = _verified_cover(catalog, request, verify=True,
                                            catalog_read=read.catalog, rows_read=read.runs,
                                            rows=read.rows)
    basis = None if state is None or column is None else AnswerBasis.of(
        catalog.rows, state, request, column, answer.cover)
    if basis is None or state is None or column is None:
        _READ_AGAIN.pop(key, None)
    else:
        _READ_AGAIN.remember(key, ReadAgain.of(catalog.rows, basis, state, column, answer,
                                               tuple(answer.cover.runs), answer._runs))
    return answer


def _verified_cover(
    catalog: CatalogCore, request: CoverRequest, *, verify: bool,
    catalog_read: dict[bytes, Cells] | None = None,
    rows_read: tuple[tuple[CoverRun, ...], list[RunRows]] | None = None,
    rows: RowsByKeys | None = None,
) -> tuple[VerifiedCover, FactState | None, str | None]:
    """:func:`verified_cover`, computed and checked; with the fact's state and the time column
    when the answer is a time-only cover computed from that state alone. ``catalog_read``: the
    fact's and storages' catalog rows just read (:meth:`AnswerBasis.read_now`), which the
    first round's state is loaded from instead of reading them again; ``rows_read``: runs and
    their rows just read, which the first round checks when its cover has those runs;
    ``rows``: partition rows just read by key, which the first round checks instead of
    reading the same keys again."""
    fact = request.require_fact()
    refresh = False
    sliced: VerifiedCover | None = None
    for round_ in range(MAX_VERIFY_ROUNDS):
        if round_ >= 2:  # writers are changing this range: let the one in progress finish
            time.sleep(0.002 * 2 ** (round_ - 2) * (0.5 + random.random()))  # noqa: S311
        sliced = None
        state = catalog.fact_state(fact, refresh=refresh,
                                   read=catalog_read if round_ == 0 else None)
        column = request.time_column or state.definition.time_columns[0]
        if column not in state.definition.time_columns:
            raise InvalidInput(
                f"{column!r} is not a time column of fact {fact!r} "
                f"({', '.join(state.definition.time_columns)})"
            )
        if uses_slices(state, request, column):  # declared dimensions: a cover per slice
            found = slice_round(catalog, state, request, column, refresh=refresh,
                                verify=verify)
            if found is not None:
                if found.cover is None:
                    refresh = True
                    continue
                # Every slice required over the whole range: every partition in it was the
                # slice cover's to choose, so it covers each slice at least as far as the
                # complete-partition cover and with no more partitions; coverable or not,
                # it is the answer (and says per slice what is missing).
                if not found.partial or not verify:
                    return VerifiedCover(found.cover, runs=found.runs), None, None
                # A partition reaching past a slice's required span (a DAILY rollup over a
                # day a region joins at 01:00) is not in the slice cover: the complete-
                # partition cover may cover the range, or with fewer partitions.
                sliced = VerifiedCover(found.cover, runs=found.runs)
        sources, checks, cover, defs, notes = _computed(catalog, state, request, column)
        if not verify:
            return VerifiedCover(cover.with_notes(notes), ()), None, None
        if rows_read is not None and round_ == 0 and tuple(cover.runs) == rows_read[0]:
            runs = rows_read[1]
        else:
            runs = read_runs(catalog.rows, defs, cover.runs, column,
                             merge=not request.fresh_only, read=rows if round_ == 0 else None)
        key = _request_key(request, column)
        kept = _VERIFIED.get(key)
        if kept is not None and kept[0] is cover and sliced is None and same_runs(kept[1], runs):
            return kept[2], state, column  # the same cover over the same checked rows
        unbacked = [(rows.run, ordinal) for rows in runs for ordinal in rows.missing]
        incomplete = _incomplete(runs, defs, checks)
        if not unbacked and not incomplete:
            if sliced is not None and not _better(cover, checks, sliced.cover):
                return sliced, None, None  # its missing ranges say per slice what each lacks
            located = Cover(cover.start, cover.end, cover.runs,
                            with_slices(cover.missing, list(checks.values()), cover.tz or "UTC",
                                        _sliced(sources, checks)),
                            tz=cover.tz, fact=cover.fact, skipped=cover.skipped,
                            locator=run_locator(runs), notes=notes)
            verified = VerifiedCover(located, runs=runs)
            if sliced is None and not checks and not request.fresh_only:
                _VERIFIED.remember(key, (cover, tuple(runs), verified))
                return verified, state, column
            return verified, None, None
        if not unbacked:  # a slice's row went away since the completeness check: read again
            if refresh:  # fresh slice timelines still advertise it: settle them (repair)
                _repair_slices(catalog, defs, column, incomplete, checks)
            refresh = True
            continue
        if refresh:  # fresh timelines still advertise them: repair the over-report
            _repair(catalog, defs, column, unbacked)
        run, ordinal = unbacked[0]
        log.warning(
            "cover of %s: %d partition(s) advertised without a registered row (e.g. %s %s %s); "
            "%s and recomputing",
            fact, len(unbacked), run.storage, run.period.name,
            run.period.format_ordinal(ordinal, defs[run.storage].tz),
            "repairing the timeline" if refresh else "refreshing the cache",
        )
        refresh = True
    raise CoverVerificationError(
        f"the timelines of {fact!r} and its partition rows kept disagreeing over "
        f"{MAX_VERIFY_ROUNDS} reads: writers were changing the range (ask again), or, if none "
        "was, run `airflow-partitions reconcile` on its storages"
    )


_Computed = tuple[Sequence[CoverSource], dict[tuple[str, UpdatePeriod], SliceCompleteness],
                  Cover, dict[str, StorageDef], tuple[str, ...]]
#: The last time-only covers computed, by request: (the fact's state they came from, the
#: sources, the slice checks, the cover, the definitions, the notes).
_RequestKey = tuple[CoverRequest, object, object, str]
_COMPUTED: LatestMemo[_RequestKey, tuple[FactState, _Computed]] = LatestMemo()
#: The verified cover last answered for a request: the computed cover it came from (kept
#: there, so compared by identity), the checked rows it was located with, the answer.
_VERIFIED: LatestMemo[_RequestKey, tuple[Cover, tuple[RunRows, ...], VerifiedCover]] = (
    LatestMemo())


@dataclass(slots=True)
class _Answered:
    """The answer last given to a request on a store, with the store's change stamp before it
    was computed or last proven (:func:`verified_cover`) and what it rests on: its
    :class:`.answer_basis.AnswerBasis`, :data:`UNPROVABLE`, or None (the feeds could not
    tell: positions are read again at its next computation), and where both feeds stood
    then. Mutable: a proof moves the stamp and the positions in place, without hashing the
    request again to store them."""

    stamp: Hashable
    answer: VerifiedCover
    basis: AnswerBasis | str | None
    #: The catalog's and the partitions' feed positions the basis was last proven at.
    since: tuple[Hashable, Hashable] | None


_AnswerKey = tuple[CoverRequest, object, object, str]
#: Per request and store, the :class:`_Answered` last.
_ANSWERED: LatestMemo[_AnswerKey, _Answered] = LatestMemo()


#: The answer last given to a request on a store without a change stamp (HBase).
_READ_AGAIN: LatestMemo[_AnswerKey, ReadAgain[VerifiedCover]] = LatestMemo()
#: What :data:`_ANSWERED` keeps instead of a basis for an answer that this module cannot
#: prove again (dimensions, StoreAll, a slice cover): its request reads no feed positions.
UNPROVABLE: Final = "unprovable"


def _computed(catalog: CatalogCore, state: FactState, request: CoverRequest,
              column: str) -> _Computed:
    """The unverified time-only cover of ``request`` from ``state``, with what it came from.

    A pure function of the cached state (which is replaced, never changed, when the fact's
    generation moves) and the request, so a sensor's repeated request is computed once per
    generation; not kept when it read the store (a ``fresh_only`` request's lineage, slice
    checks read from the rows). Cost: O(runs) when computed, one dict lookup when kept.
    """
    key = _request_key(request, column)
    hit = _COMPUTED.get(key)
    if hit is not None and hit[0] is state:
        return hit[1]
    sources, checks = complete_sources(catalog.rows, state, request, column)
    skipped: tuple[SkippedPartition, ...] = ()
    if request.fresh_only:
        sources, skipped = fresh_sources(catalog, request, column, state.definition.tz,
                                         sources)
    cover = compute_cover(sources, request, tz=state.definition.tz)
    if skipped:
        cover = cover.with_skipped(skipped)
    defs = {name: s.definition for name, s in state.storages.items()}
    notes = tuple(cover_notes(defs.values(), request, column))  # undeclared columns, said
    computed = (sources, checks, cover, defs, notes)
    if not checks and not request.fresh_only:
        _COMPUTED.remember(key, (state, computed))
    return computed


def _request_key(request: CoverRequest, column: str) -> _RequestKey:
    """A request as a key: equal requests in other zones print other instants."""
    return request, request.start.tzinfo, request.end.tzinfo, column


def _better(cover: Cover, checks: dict[tuple[str, UpdatePeriod], SliceCompleteness],
            sliced: Cover) -> bool:
    """Whether the complete-partition ``cover`` beats the slice cover: coverable where it is
    not, or both coverable and it has fewer partitions counted per slice (an hour of a
    dimensioned storage is one partition for each slice that reads it), as the slice cover
    counts them. Neither coverable: the slice cover (it covers each slice at least as far, and
    says per slice what is missing). Cost: O(partitions x slices) of the complete cover, on
    this rare path only."""
    if cover.coverable != sliced.coverable or not cover.coverable:
        return cover.coverable
    count = 0
    for run in cover.runs:
        check = checks.get((run.storage, run.period))
        count += run.count if check is None else sum(
            1 for o in range(run.first, run.end) for need in check.needs.values() if o in need)
    return count < len(sliced)


def _sliced(sources: Sequence[CoverSource],
            checks: dict[tuple[str, UpdatePeriod], SliceCompleteness]) -> set[UpdatePeriod]:
    """The periods whose every source is checked per slice."""
    periods = {s.period for s in sources}
    return {p for p in periods if all((s.storage, p) in checks for s in sources
                                       if s.period is p)}


def _incomplete(runs: Sequence[RunRows], defs: dict[str, StorageDef],
                checks: dict[tuple[str, UpdatePeriod], SliceCompleteness]
                ) -> list[tuple[CoverRun, list[int]]]:
    """The ordinals of each run of a dimensioned storage that lack a required slice's row
    (the rows just read for verification, against what the completeness check required)."""
    out = []
    for rows in runs:
        check = checks.get((rows.run.storage, rows.run.period))
        if check is not None:
            lost = incomplete_in(rows.by_ordinal(), defs[rows.run.storage], check)
            if lost:
                out.append((rows.run, lost))
    return out


def _repair_slices(catalog: CatalogCore, defs: dict[str, StorageDef], column: str,
                   incomplete: list[tuple[CoverRun, list[int]]],
                   checks: dict[tuple[str, UpdatePeriod], SliceCompleteness]) -> None:
    """Settle the required slices' timelines at ordinals their rows do not back: a slice
    timeline over-reported (e.g. a drop by a process holding a definition from before the
    dimension was declared). Cost: one scan of those time values' rows."""
    for run, ordinals in incomplete:
        sdef, check = defs[run.storage], checks[(run.storage, run.period)]
        wanted = {s: {run.period.format_ordinal(o, sdef.tz) for o in ordinals if o in needed}
                  for s, needed in check.needs.items()}
        settle_slice_timelines(catalog, sdef, run.period, column, wanted)


def _repair(catalog: CatalogCore, defs: dict[str, StorageDef], column: str,
            unbacked: list[tuple[CoverRun, int]]) -> None:
    """Un-advertise values that no row backs (the stored timeline over-reported)."""
    by_timeline: dict[tuple[str, UpdatePeriod], set[int]] = {}
    for run, ordinal in unbacked:
        by_timeline.setdefault((run.storage, run.period), set()).add(ordinal)
    unadvertise_timelines(catalog, defs, column, by_timeline)
