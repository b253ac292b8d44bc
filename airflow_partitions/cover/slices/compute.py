"""SLICE COVER: covers that see every declared dimension, not only time.

Pure: no store, no Airflow. The input is the fact-level required slices (each with the spans,
in microseconds, during which it is required) and the slice sources (a ``CoverSource`` plus the
dimension values its partitions carry); the output is a
:class:`~.slices.result.SliceCover`. See ``docs/dimensions.md``.

A source holds a slice when its ``fixed`` values agree with the slice on every column it fixes:
a rollup without the region column (``fixed=()``) holds every region at once.

Objective, compared lexicographically (extends :mod:`.compute`):

1. the uncovered length summed over slices (microseconds) -- as small as possible;
2. the number of **distinct** partitions overall -- as few as possible (a rollup partition
   read by many slices counts once);
3. the periods: more YEARLY partitions, then QUARTERLY, ... (ties go to coarser periods);
4. the storages: more partitions from the most preferred storage, then the next (priority,
   larger first, then name);
5. any remaining tie is broken deterministically.

Per slice the chosen partitions are disjoint and their union is the slice's required spans
minus its missing ranges. Required spans are widened outward to the finest usable period (in
the fact's zone) and clipped to the aligned request: a slice required from 12:30 with HOURLY
data needs the 12:00 partition (conservative: a cover never claims less than required).

Where the minimum is proven:

* **Nested periods** (every pair of usable periods nests): exact, by the DP of
  :mod:`.slices.solver` on the period tree, and exhaustive at every
  contested node with at most ``EXACT_LIMIT`` candidates. Slices are first grouped into
  *classes* (same spans, same shared sources, equal private availability), and some optimal
  cover gives all slices of a class the same layout: take an optimal cover, pick the class
  member with the fewest private partitions and give every other member the same layout with
  its own private sources; the shared partitions are already paid, the privates can only get
  fewer, and coverage is the same. The argument holds inside one node too, so classes alike
  inside a contested node are one candidate there (all of them or none): the candidate count
  is the number of distinct shared coverages plus distinct local pictures, not of slices.
  Beyond the limit a local search decides and ``SliceCover.proven_minimal`` is False.
* **WEEKLY with MONTHLY/QUARTERLY/YEARLY**: each class is covered exactly with
  ``compute_cover``; this is exact when no source is shared by two required slices, and
  otherwise rule 1 is still exact (it is a sum over slices) but rule 2 is a heuristic
  (``proven_minimal`` False), because a shared partition is then counted per slice when
  choosing.

Cost: each source's timeline is asked once (``ordinal_ranges``). Classes make homogeneous
slices cost one solve; the rest is O(slices + answer). Nested: runs of nodes where nothing
changes are decided at once, so a complete month is a handful of steps per period.
"""

from __future__ import annotations

from collections.abc import Sequence

from airflow_partitions.cover.clock import Clock, from_us
from airflow_partitions.cover.compute import compute_cover
from airflow_partitions.cover.request import CoverRequest
from airflow_partitions.cover.slices.missing import NeededIndex, merge_gaps
from airflow_partitions.cover.slices.ordinal_sets import OrdinalSet
from airflow_partitions.cover.slices.problem import SliceProblem, build_problem
from airflow_partitions.cover.slices.result import (
    RequiredSlice,
    Slice,
    SliceAnswer,
    SliceCover,
    SliceRun,
    SliceSource,
    Span,
)
from airflow_partitions.cover.slices.solver import (
    KEY_HEAD,
    PERIOD_SLOT,
    Gap,
    NestedSolver,
    Option,
    Use,
)
from airflow_partitions.cover.sources import CoverSource
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import new_timeline

__all__ = ["compute_slice_cover", "slice_cover_key"]


def compute_slice_cover(
    sources: Sequence[SliceSource],
    required: Sequence[RequiredSlice],
    request: CoverRequest,
    *,
    tz: str = "UTC",
) -> SliceCover:
    """The best cover of every required slice over its spans inside ``request``'s range.

    ``request`` is read as by ``compute_cover`` (bounds, ``align``, ``periods``, ``storages``).
    With one slice and only sources that hold it, the answer's one cover per span equals
    ``compute_cover``'s. See the module docstring for the objective.

    Cost: one ``ordinal_ranges`` per source, then O(classes x runs) for nested periods.
    """
    problem = build_problem(sources, required, request, tz=tz)
    if problem.nested:
        solver = NestedSolver(problem.clock, problem.chain, problem.options, problem.classes,
                              len(problem.storages))
        everything = frozenset(range(len(problem.classes)))
        pieces: Sequence[Use | Gap] = solver.solve(
            problem.start_us, problem.end_us, 0, everything
        ).pieces
        proven = solver.proven
    else:
        pieces, proven = _crossing(problem)
    return _assemble(problem, pieces, proven)


def slice_cover_key(cover: SliceCover, storages: Sequence[str]) -> tuple[int, ...]:
    """The objective vector of a slice cover (smaller is better), for tests and diagnostics.

    ``storages`` lists the storage names from most to least preferred.
    """
    rank = {name: i for i, name in enumerate(storages)}
    key = [0] * (KEY_HEAD + len(storages))
    key[0] = cover.uncovered_us
    for run in cover.runs:
        key[1] += run.count
        key[2 + PERIOD_SLOT[run.period]] -= run.count
        key[KEY_HEAD + rank[run.storage]] -= run.count
    return tuple(key)


# -- WEEKLY with coarser calendar periods -------------------------------------------------------


def _crossing(problem: SliceProblem) -> tuple[list[Use | Gap], bool]:
    """Each class alone with ``compute_cover`` (exact per slice), span by span."""
    pieces: list[Use | Gap] = []
    tz = problem.clock.tz
    for cls in problem.classes:
        options = [problem.options[i] for i in problem.class_options[cls.index]]
        plain = [CoverSource(problem.storages[o.rank], -o.rank, o.period,
                             problem.timeline_of(o.index).timeline) for o in options]
        for a, b in cls.spans:
            request = CoverRequest(None, from_us(a, tz), from_us(b, tz), align="inner")
            cover = compute_cover(_distinct(plain), request, tz=tz)
            used: list[Span] = []
            mine: list[Use] = []
            for run in cover.runs:
                same = [o for o in options
                        if problem.storages[o.rank] == run.storage and o.period is run.period]
                for o, first, end in _split(same, run.first, run.end):
                    mine.append(Use(cls.index, o.index, first, end))
                used.append((problem.clock.start(run.period, run.first),
                             problem.clock.start(run.period, run.end)))
            mine.sort(key=lambda p: problem.clock.start(problem.options[p.option].period,
                                                        p.first))
            pieces += mine
            cursor = a
            for t0, t1 in sorted(used):
                if t0 > cursor:
                    pieces.append(Gap(cls.index, cursor, t0))
                cursor = t1
            if cursor < b:
                pieces.append(Gap(cls.index, cursor, b))
    proven = not any(o.shared for o in problem.options)
    return pieces, proven


def _distinct(sources: list[CoverSource]) -> list[CoverSource]:
    """One source per (storage, period): ``compute_cover`` merges them anyway, and a storage
    may hold a slice through two timelines (a rollup's and a per-slice one)."""
    seen: dict[tuple[str, UpdatePeriod], CoverSource] = {}
    for source in sources:
        key = (source.storage, source.period)
        if key in seen:
            merged = new_timeline("Ranges", source.period, tz=source.timeline.tz)
            merged.add_ordinal_ranges(seen[key].timeline.ordinal_ranges())
            merged.add_ordinal_ranges(source.timeline.ordinal_ranges())
            source = CoverSource(source.storage, source.priority, source.period, merged)
        seen[key] = source
    return list(seen.values())


def _split(options: Sequence[Option], first: int, end: int) -> list[tuple[Option, int, int]]:
    """``[first, end)`` of one storage and period, cut by which option holds each part (the
    lowest option first when two do)."""
    out: list[tuple[Option, int, int]] = []
    cursor = first
    while cursor < end:
        holder = next(o for o in sorted(options, key=lambda o: o.index)
                      if o.ordinals.contains(cursor))
        stop = next(e for b, e in holder.ordinals.pieces(cursor, end) if b == cursor)
        out.append((holder, cursor, stop))
        cursor = stop
    return out


# -- the answer ---------------------------------------------------------------------------------


def _assemble(problem: SliceProblem, pieces: Sequence[Use | Gap], proven: bool) -> SliceCover:
    """Per slice runs and missing ranges, and the distinct runs overall."""
    by_class: dict[int, list[Use | Gap]] = {}
    for piece in pieces:
        by_class.setdefault(piece.cls, []).append(piece)
    answers: list[SliceAnswer] = []
    distinct: dict[tuple[str, UpdatePeriod, Slice], list[tuple[int, int]]] = {}
    tz = problem.clock.tz
    for cls in problem.classes:
        mine = by_class.get(cls.index, [])  # in time order: the solvers emit them so
        gaps = merge_gaps([(p.t0, p.t1) for p in mine if isinstance(p, Gap)])
        needed = NeededIndex(problem.clock, tuple(sorted(problem.availability(cls.index).items())))
        for member in problem.members[cls.index]:
            runs: list[SliceRun] = []
            for piece in mine:
                if not isinstance(piece, Use):
                    continue
                source = problem.source_for(piece.option, member)
                run = SliceRun(source.storage, source.period, piece.first, piece.end,
                               source.fixed)
                last = runs[-1] if runs else None
                if last and (last.storage, last.period, last.fixed, last.end) == (
                        run.storage, run.period, run.fixed, run.first):
                    runs[-1] = SliceRun(run.storage, run.period, last.first, run.end, run.fixed)
                else:
                    runs.append(run)
                distinct.setdefault((run.storage, run.period, run.fixed), []).append(
                    (piece.first, piece.end))
            answers.append(SliceAnswer(problem.slices[member], cls.spans, tuple(runs),
                                       gaps, needed))
    answers.sort(key=lambda a: a.slice)
    return SliceCover(problem.start_us, problem.end_us, tz, tuple(answers),
                      _distinct_runs(problem.clock, distinct), proven, problem.fact)


def _distinct_runs(clock: Clock,
                   distinct: dict[tuple[str, UpdatePeriod, Slice], list[tuple[int, int]]],
                   ) -> tuple[SliceRun, ...]:
    """Every partition read, once, as maximal runs in time order."""
    runs: list[tuple[int, SliceRun]] = []
    for (storage, period, fixed), ranges in distinct.items():
        for first, end in OrdinalSet(ranges).ranges:
            run = SliceRun(storage, period, first, end, fixed)
            runs.append((clock.start(period, first), run))
    runs.sort(key=lambda x: (x[0], x[1].storage, x[1].period, x[1].fixed))
    return tuple(run for _, run in runs)
