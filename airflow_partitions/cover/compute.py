"""COVER: the fewest existing partitions whose disjoint union is exactly a requested time range.

Pure: no Airflow, no store access. The input is the fact's timelines (one per storage table and
period); the output is a :class:`~.result.Cover`. See ``docs/cover.md``.

Objective, compared lexicographically (the chosen cover is the unique minimum, up to the last,
deterministic rule):

1. the uncovered length (microseconds) -- as small as possible;
2. the number of partitions -- as few as possible;
3. the periods: more YEARLY partitions, then more QUARTERLY, MONTHLY, WEEKLY, DAILY, ... (ties
   go to coarser periods);
4. the storages: more partitions from the most preferred storage, then the next, ... where
   storages are ranked by ``priority`` (a larger number is preferred), then by name;
5. any remaining tie (e.g. equal-cost layouts of weeks) is broken deterministically.

``missing`` is the requested range minus the chosen cover's union, as maximal sub-ranges. With
nested periods (every pair nests, e.g. HOURLY in DAILY in MONTHLY) it is exactly the set of
points that no usable partition contains. With WEEKLY next to MONTHLY/QUARTERLY/YEARLY a point
can lie in a usable partition and still be missing, because every partition that contains it
overlaps a partition the cover needs more (rule 1 decides). A partition that sticks out of the
requested range is never usable.

Cost: every source's timeline is asked once, for the ordinal ranges that fit in the range
(``ordinal_ranges``), and never per slot. Nested period sets are filled greedily, coarsest
first, on intervals: O(levels x (ranges + holes inside)). When WEEKLY meets a coarser calendar
period, a shortest path runs over the boundaries of the usable WEEKLY-and-coarser partitions
(few: at most one per week of the range); the stretches between adjacent boundaries are filled
greedily with DAILY and finer periods, which all nest in days. The answer is kept as runs of
consecutive ordinals; expanding it into partitions is O(answer).
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final

from airflow_partitions.cover.clock import clock_for, from_us, to_us
from airflow_partitions.cover.request import CoverRequest
from airflow_partitions.cover.result import (
    MAX_NEEDED_RUNS,
    Cover,
    CoverRun,
    MissingRange,
    NeededPartitions,
    ValueRun,
)
from airflow_partitions.cover.slices.ordinal_sets import best_label_sweep
from airflow_partitions.cover.sources import CoverSource, PreparedCover, prepare
from airflow_partitions.periods import STRADDLING, UpdatePeriod
from airflow_partitions.timelines import OrdinalRange

__all__ = ["compute_cover", "cover_key", "forget_solved"]

#: Position of each period in the cost key, coarsest first (tie rule 3).
_PERIOD_SLOT: Final = {p: i for i, p in enumerate(sorted(UpdatePeriod, reverse=True))}
_KEY_HEAD: Final = 2 + len(_PERIOD_SLOT)

Key = tuple[int, ...]


def compute_cover(
    sources: Sequence[CoverSource], request: CoverRequest, *, tz: str = "UTC"
) -> Cover:
    """The best cover of ``request``'s ``[start, end)`` by the partitions the ``sources`` hold.

    ``tz`` is the fact's zone (every timeline must be in it). The request's ``periods`` and
    ``storages`` restrict the usable sources (its ``time_column`` was used to pick them). The
    bounds must start partitions of the finest usable period, else :class:`MisalignedBound`;
    ``align="outer"`` widens them to that period's boundaries and ``"inner"`` narrows them (to
    an empty range if no whole partition is left). ``start == end`` gives an empty, coverable
    cover. See the module docstring for the objective and ``missing``.

    Cost: O(levels x (ranges + holes inside the range)), plus O(weeks) with WEEKLY. A
    request whose sources hold, inside its range, the very ranges of one answered before gets
    that answer again (the same object) for the cost of reading those ranges: after a write
    elsewhere in the history a one-day question is not solved again.
    """
    prepared = prepare(sources, request, tz=tz)
    if prepared.start_us == prepared.end_us:
        return Cover(prepared.start, prepared.end, tz=prepared.tz, fact=request.fact)
    planner = _Planner(prepared)
    with _SOLVED_LOCK:
        kept = _SOLVED.get(planner.inputs)
    if kept is not None:
        return kept
    cover = planner.cover()
    with _SOLVED_LOCK:
        _SOLVED[planner.inputs] = cover
        while len(_SOLVED) > _SOLVED_KEPT:
            del _SOLVED[next(iter(_SOLVED))]
    return cover


def forget_solved() -> None:
    """Forget every solved cover (the next request is solved again)."""
    with _SOLVED_LOCK:
        _SOLVED.clear()


#: Covers solved, by everything a solution depends on (:attr:`_Planner.inputs`): a pure
#: function's answers, the oldest dropped first.
_SOLVED: dict[tuple[object, ...], Cover] = {}
_SOLVED_LOCK = threading.Lock()
_SOLVED_KEPT: Final = 256


def cover_key(cover: Cover, storages: Sequence[str]) -> Key:
    """The objective vector of a cover (smaller is better), for tests and diagnostics.

    ``storages`` lists the storage names from most to least preferred.
    """
    rank = {name: i for i, name in enumerate(storages)}
    key = [0] * (_KEY_HEAD + len(storages))
    key[0] = sum(to_us(m.end) - to_us(m.start) for m in cover.missing)
    for run in cover.runs:
        _count_run(key, run.period, rank[run.storage], run.count)
    return tuple(key)


def _count_run(key: list[int], period: UpdatePeriod, rank: int, n: int) -> None:
    key[1] += n
    key[2 + _PERIOD_SLOT[period]] -= n
    key[_KEY_HEAD + rank] -= n


# -- per-period availability ------------------------------------------------------------------


class _PeriodAvailability:
    """The usable partitions of one period: disjoint ordinal segments labelled with the best
    storage rank holding them, plus their union (for counting what is absent)."""

    def __init__(self, labelled: list[tuple[int, int, int]]) -> None:
        self.begins = [b for b, _, _ in labelled]
        self.ends = [e for _, e, _ in labelled]
        self.ranks = [r for _, _, r in labelled]
        union: list[OrdinalRange] = []
        for b, e, _ in labelled:
            if union and union[-1][1] == b:
                union[-1] = (union[-1][0], e)
            else:
                union.append((b, e))
        self.ubegins = [b for b, _ in union]
        self.uends = [e for _, e in union]
        self.ucum = [0]
        for b, e in union:
            self.ucum.append(self.ucum[-1] + e - b)

    def segments(self, lo: int, hi: int) -> Iterator[tuple[int, int, int]]:
        """Labelled segments clipped to ``[lo, hi)``, in order."""
        i = bisect_right(self.ends, lo)
        while i < len(self.begins) and self.begins[i] < hi:
            yield max(self.begins[i], lo), min(self.ends[i], hi), self.ranks[i]
            i += 1

    def count(self, lo: int, hi: int) -> int:
        """How many ordinals of ``[lo, hi)`` exist."""
        i, j = bisect_right(self.uends, lo), bisect_left(self.ubegins, hi)
        if i >= j:
            return 0
        total = self.ucum[j] - self.ucum[i]
        return total - max(0, lo - self.ubegins[i]) - max(0, self.uends[j - 1] - hi)

    def absent_runs(self, lo: int, hi: int, limit: int) -> list[OrdinalRange]:
        """The first ``limit`` maximal absent runs inside ``[lo, hi)``."""
        out: list[OrdinalRange] = []
        cursor = lo
        i = bisect_right(self.uends, lo)
        while i < len(self.ubegins) and self.ubegins[i] < hi and len(out) < limit:
            if self.ubegins[i] > cursor:
                out.append((cursor, self.ubegins[i]))
            cursor = max(cursor, self.uends[i])
            i += 1
        if len(out) < limit and cursor < hi:
            out.append((cursor, hi))
        return out


def _label(per_rank: list[tuple[int, list[OrdinalRange]]]) -> list[tuple[int, int, int]]:
    """Merge several storages' ranges of one period; each piece keeps the best rank holding it."""
    return best_label_sweep(per_rank)


# -- the planner ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Run:
    """Partitions ``[first, end)`` of one period from one storage rank, spanning [t0, t1)."""

    period: UpdatePeriod
    rank: int
    first: int
    end: int
    t0: int
    t1: int


@dataclass(frozen=True, slots=True)
class _Gap:
    """An uncovered stretch ``[t0, t1)`` (microseconds)."""

    t0: int
    t1: int


_Piece = _Run | _Gap


class _Planner:
    """One cover computation: availability, the choice of partitions, and the result."""

    def __init__(self, request: PreparedCover) -> None:
        self.req = request
        self.clock = clock_for(request.tz)
        self.start_us, self.end_us = request.start_us, request.end_us
        self.width = _KEY_HEAD + len(request.storages)
        self.inside: dict[UpdatePeriod, tuple[int, int]] = {}
        self.avail: dict[UpdatePeriod, _PeriodAvailability] = {}
        held: list[object] = []
        for period, timelines in request.by_period.items():
            lo, hi = self.clock.ceil(period, self.start_us), self.clock.floor(period, self.end_us)
            self.inside[period] = (lo, hi)
            per_rank = [
                (rank, tl.ordinal_ranges(lo, hi) if lo < hi else []) for rank, tl in timelines
            ]
            held.append((period, tuple((rank, tuple(ranges)) for rank, ranges in per_rank)))
            self.avail[period] = _PeriodAvailability(_label(per_rank))
        #: Everything the cover depends on: the request's bounds, zone, fact and storage
        #: ranking, and per period what each ranked storage holds inside the range.
        self.inputs: tuple[object, ...] = (
            request.tz, request.start, request.end, self.start_us, self.end_us,
            request.fact, request.storages, tuple(held))

    def cover(self) -> Cover:
        """Choose the pieces, then build the runs and the missing ranges."""
        chain = sorted(self.avail, reverse=True)
        nested = all(f.nests_in(c) for f, c in combinations(sorted(self.avail), 2))
        if nested:
            pieces: list[_Piece] = []
            self._fill(self.start_us, self.end_us, chain, 0, pieces)
        else:
            pieces = self._shortest_path(chain)
        return self._result(pieces)

    # -- nested periods: greedy on intervals ----------------------------------------------------

    def _fill(
        self, u: int, v: int, chain: Sequence[UpdatePeriod], level: int, out: list[_Piece]
    ) -> None:
        """Cover ``[u, v)`` with ``chain[level:]`` (nested, coarsest first), coarsest first.

        Why it is optimal: in a nested family every usable partition that is not inside a
        larger usable one must be used (its region needs at least one piece), and using the
        maximal ones leaves only points that no usable partition holds.
        """
        if u >= v:
            return
        if level == len(chain):
            out.append(_Gap(u, v))
            return
        period, clock = chain[level], self.clock
        lo, hi = clock.ceil(period, u), clock.floor(period, v)
        cursor = u
        if lo < hi:
            for b, e, rank in self.avail[period].segments(lo, hi):
                t0 = clock.start(period, b)
                self._fill(cursor, t0, chain, level + 1, out)
                cursor = clock.start(period, e)
                out.append(_Run(period, rank, b, e, t0, cursor))
        self._fill(cursor, v, chain, level + 1, out)

    # -- WEEKLY with coarser calendar periods: shortest path ------------------------------------

    def _shortest_path(self, chain: Sequence[UpdatePeriod]) -> list[_Piece]:
        """Exact minimum over the boundaries of the usable WEEKLY-and-coarser partitions.

        Edges: one coarse partition each, and the stretch between two adjacent boundaries filled
        greedily by the finer periods (they nest in days, and every boundary is a day boundary,
        so a fine cover splits there at no cost). Costs are the lexicographic key vectors.
        """
        coarse = [p for p in chain if p in STRADDLING]  # WEEKLY and the calendar months
        fine = [p for p in chain if p not in STRADDLING]
        assert all(f.nests_in(c) for f in fine for c in coarse)
        edges: dict[int, list[_Run]] = {}
        for period in coarse:
            for b, e, rank in self.avail[period].segments(*self.inside[period]):
                for o in range(b, e):
                    t0, t1 = self.clock.start(period, o), self.clock.start(period, o + 1)
                    edges.setdefault(t0, []).append(_Run(period, rank, o, o + 1, t0, t1))
        ends = (r.t1 for rs in edges.values() for r in rs)
        nodes = sorted({self.start_us, self.end_us, *edges, *ends})
        zero: Key = (0,) * self.width
        best: dict[int, tuple[Key, int, list[_Piece]]] = {self.start_us: (zero, self.start_us, [])}
        for i, u in enumerate(nodes[:-1]):
            key_u = best[u][0]
            stretch: list[_Piece] = []
            self._fill(u, nodes[i + 1], fine, 0, stretch)
            self._relax(best, nodes[i + 1], key_u, u, stretch)
            for run in edges.get(u, ()):
                self._relax(best, run.t1, key_u, u, [run])
        path: list[list[_Piece]] = []
        node = self.end_us
        while node != self.start_us:
            _, prev, pieces = best[node]
            path.append(pieces)
            node = prev
        return [piece for pieces in reversed(path) for piece in pieces]

    def _relax(
        self,
        best: dict[int, tuple[Key, int, list[_Piece]]],
        v: int,
        key_u: Key,
        u: int,
        pieces: list[_Piece],
    ) -> None:
        key = list(key_u)
        for piece in pieces:
            if isinstance(piece, _Gap):
                key[0] += piece.t1 - piece.t0
            else:
                _count_run(key, piece.period, piece.rank, piece.end - piece.first)
        candidate = tuple(key)
        if v not in best or candidate < best[v][0]:
            best[v] = (candidate, u, pieces)

    # -- result ---------------------------------------------------------------------------------

    def _result(self, pieces: list[_Piece]) -> Cover:
        runs: list[CoverRun] = []
        gaps: list[tuple[int, int]] = []
        names = self.req.storages
        for piece in pieces:
            if isinstance(piece, _Gap):
                if gaps and gaps[-1][1] == piece.t0:
                    gaps[-1] = (gaps[-1][0], piece.t1)
                else:
                    gaps.append((piece.t0, piece.t1))
                continue
            storage = names[piece.rank]
            last = runs[-1] if runs else None
            if last and (last.storage, last.period, last.end) == (
                storage,
                piece.period,
                piece.first,
            ):
                runs[-1] = CoverRun(storage, piece.period, last.first, piece.end)
            else:
                runs.append(CoverRun(storage, piece.period, piece.first, piece.end))
        missing = [self._missing(t0, t1) for t0, t1 in gaps]
        return Cover(
            self.req.start, self.req.end, runs, missing, tz=self.req.tz, fact=self.req.fact
        )

    def _missing(self, t0: int, t1: int) -> MissingRange:
        """A gap with, per period (finest first), the absent partitions that could fill it."""
        needed = []
        for period in sorted(self.avail):
            inside_lo, inside_hi = self.inside[period]
            lo = max(self.clock.floor(period, t0), inside_lo)
            hi = min(self.clock.ceil(period, t1), inside_hi)
            if lo >= hi:
                continue
            avail = self.avail[period]
            total = hi - lo - avail.count(lo, hi)
            if not total:
                continue
            runs = tuple(
                ValueRun(
                    period.format_ordinal(b, self.req.tz),
                    period.format_ordinal(e - 1, self.req.tz),
                    e - b,
                )
                for b, e in avail.absent_runs(lo, hi, MAX_NEEDED_RUNS)
            )
            needed.append(NeededPartitions(period, runs, total))
        tz = self.req.tz
        return MissingRange(from_us(t0, tz), from_us(t1, tz), tuple(needed))
