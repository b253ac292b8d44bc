"""The exact slice cover for nested periods: a DP over the period tree, on intervals.

The input is already reduced to *classes* of slices (slices with the same required spans, the
same shared sources and equal private availability; see :mod:`.slices.compute`
for why one layout per class loses nothing). ``solve(u, v, level, need)`` returns the best plan
for the classes ``need`` on ``[u, v)`` using periods ``chain[level:]`` (nested, coarsest first).

At each period the whole partitions inside ``[u, v)`` are cut into runs where nothing changes
(no source's presence, no class's requirement), and each run is decided:

* no candidate partition at this period: recurse on the whole run (one call, not one per node);
* one existing partition holds every needed class at once: take it on the whole run (cost 1
  per node; any alternative needs at least one partition too, and ties go to coarser periods);
* no shared source (one whose partition serves several slices) exists inside the run at this
  period or finer: the classes are independent, each is filled greedily as ``compute_cover``
  does (largest first, best storage);
* otherwise the node is *contested*: every subset of the candidates is tried (a subset with a
  redundant member is skipped: it costs more and covers nothing more), each with the children
  solved for what the subset leaves; up to :data:`EXACT_LIMIT` candidates this is exhaustive.
  A candidate is one shared source (the best-ranked per distinct coverage) or the private
  sources of a group of classes alike inside the node (all or none). Beyond the limit a local
  search from "all" and from "none" (toggle one candidate while the vector improves) decides,
  and the answer is marked not proven minimal.

Plans are compared by the objective vector of :mod:`.slices.compute`.
Results are memoised on ``(u, v, level, need)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from airflow_partitions.cover.clock import Clock
from airflow_partitions.cover.slices.ordinal_sets import OrdinalSet, best_labelled
from airflow_partitions.periods import UpdatePeriod

#: Contested nodes with at most this many candidate partitions are decided exhaustively.
EXACT_LIMIT: Final = 10
#: Position of each period in the objective vector, coarsest first (tie rule 3).
PERIOD_SLOT: Final = {p: i for i, p in enumerate(sorted(UpdatePeriod, reverse=True))}
KEY_HEAD: Final = 2 + len(PERIOD_SLOT)


@dataclass(frozen=True, slots=True)
class Option:
    """A way to cover classes with partitions of one period.

    Shared: one source whose one partition per node serves every class in ``classes``.
    Private: one source per member slice of the single class in ``classes`` (equal
    availability, by construction of the class), so one node costs ``weight`` partitions.
    """

    index: int
    period: UpdatePeriod
    rank: int
    ordinals: OrdinalSet
    classes: frozenset[int]
    shared: bool


@dataclass(frozen=True, slots=True)
class SliceClass:
    """Slices answered alike: ``weight`` members, their spans, and their private options."""

    index: int
    weight: int
    spans: tuple[tuple[int, int], ...]
    private: tuple[int, ...]

    def required_in(self, u: int, v: int) -> bool:
        """Whether some span meets ``[u, v)``."""
        return any(a < v and u < b for a, b in self.spans)

    def holds(self, u: int, v: int) -> bool:
        """Whether one span contains all of ``[u, v)``."""
        return any(a <= u and v <= b for a, b in self.spans)

    def clipped(self, u: int, v: int) -> list[tuple[int, int]]:
        """The spans cut to ``[u, v)``."""
        return [(max(a, u), min(b, v)) for a, b in self.spans if a < v and u < b]


@dataclass(frozen=True, slots=True)
class Use:
    """Class ``cls`` reads option ``option``'s partitions ``[first, end)``."""

    cls: int
    option: int
    first: int
    end: int


@dataclass(frozen=True, slots=True)
class Gap:
    """Class ``cls`` misses ``[t0, t1)`` (microseconds)."""

    cls: int
    t0: int
    t1: int


Piece = Use | Gap


@dataclass(frozen=True, slots=True)
class Plan:
    """An objective vector and the pieces that achieve it (in time order per class)."""

    key: tuple[int, ...]
    pieces: tuple[Piece, ...]


@dataclass(frozen=True, slots=True)
class _Candidate:
    """Partitions of one node chosen together: one shared source, or the private sources of a
    group of locally alike classes (all of them or none, see :meth:`NestedSolver.candidates`).
    ``parts`` pairs each option with the classes it serves; ``order`` ranks candidates."""

    parts: tuple[tuple[Option, frozenset[int]], ...]
    covers: frozenset[int]
    partitions: int
    order: tuple[int, int]


class NestedSolver:
    """One slice cover over nested periods (``chain`` coarsest first)."""

    def __init__(self, clock: Clock, chain: Sequence[UpdatePeriod], options: Sequence[Option],
                 classes: Sequence[SliceClass], storages: int) -> None:
        self.clock, self.chain = clock, list(chain)
        self.options, self.classes = list(options), list(classes)
        self.width = KEY_HEAD + storages
        self.zero = Plan((0,) * self.width, ())
        self.shared = [o for o in options if o.shared]
        self.memo: dict[tuple[int, int, int, frozenset[int]], Plan] = {}
        #: False once a contested node was decided by the local search.
        self.proven = True

    # -- plans ----------------------------------------------------------------------------------

    def combine(self, plans: Iterable[Plan]) -> Plan:
        """The sum of plans on disjoint stretches (or disjoint classes)."""
        key = [0] * self.width
        pieces: list[Piece] = []
        for plan in plans:
            for i, x in enumerate(plan.key):
                if x:
                    key[i] += x
            pieces.extend(plan.pieces)
        return Plan(tuple(key), tuple(pieces))

    def take(self, option: Option, first: int, end: int, classes: Iterable[int]) -> Plan:
        """Option's partitions ``[first, end)`` read by ``classes``; the cost is the option's
        (one partition per node if shared, one per member slice if private)."""
        pieces = tuple(Use(k, option.index, first, end) for k in sorted(classes))
        per_node = 1 if option.shared else sum(self.classes[k].weight for k in option.classes)
        n = (end - first) * per_node
        key = [0] * self.width
        key[1] = n
        key[2 + PERIOD_SLOT[option.period]] = -n
        key[KEY_HEAD + option.rank] = -n
        return Plan(tuple(key), pieces)

    def gaps(self, u: int, v: int, need: Iterable[int]) -> Plan:
        """Nothing finer is left: the needed classes miss their spans inside ``[u, v)``."""
        pieces: list[Piece] = []
        total = 0
        for k in sorted(need):
            cls = self.classes[k]
            for a, b in cls.clipped(u, v):
                pieces.append(Gap(k, a, b))
                total += (b - a) * cls.weight
        key = [0] * self.width
        key[0] = total
        return Plan(tuple(key), tuple(pieces))

    # -- the recursion --------------------------------------------------------------------------

    def solve(self, u: int, v: int, level: int, need: frozenset[int]) -> Plan:
        """The best plan for ``need`` on ``[u, v)`` with ``chain[level:]``."""
        need = frozenset(k for k in need if self.classes[k].required_in(u, v))
        if not need or u >= v:
            return self.zero
        memo_key = (u, v, level, need)
        found = self.memo.get(memo_key)
        if found is not None:
            return found
        if level == len(self.chain):
            plan = self.gaps(u, v, need)
        elif not self.shared_inside(u, v, level, need):
            plan = self.combine(self.single(u, v, level, k) for k in sorted(need))
        else:
            plan = self.level(u, v, level, need)
        self.memo[memo_key] = plan
        return plan

    def level(self, u: int, v: int, level: int, need: frozenset[int]) -> Plan:
        period, clock = self.chain[level], self.clock
        lo, hi = clock.ceil(period, u), clock.floor(period, v)
        if lo >= hi:
            return self.solve(u, v, level + 1, need)
        parts = [self.solve(u, clock.start(period, lo), level + 1, need)]
        for a, b in self.runs(period, lo, hi, need):
            parts.append(self.run(period, level, a, b, need))
        parts.append(self.solve(clock.start(period, hi), v, level + 1, need))
        return self.combine(parts)

    def shared_inside(self, u: int, v: int, level: int, need: frozenset[int]) -> bool:
        """Whether a shared source for ``need`` has a whole partition inside ``[u, v)`` at
        ``chain[level:]``. O(shared sources x log ranges)."""
        finer = set(self.chain[level:])
        for option in self.shared:
            if option.period in finer and option.classes & need:
                lo, hi = self.clock.ceil(option.period, u), self.clock.floor(option.period, v)
                if option.ordinals.any_in(lo, hi):
                    return True
        return False

    def relevant(self, period: UpdatePeriod, need: frozenset[int]) -> list[Option]:
        """The options of ``period`` that serve some class of ``need``."""
        out = [o for o in self.shared if o.period is period and o.classes & need]
        for k in sorted(need):
            out += [self.options[i] for i in self.classes[k].private
                    if self.options[i].period is period]
        return out

    def runs(self, period: UpdatePeriod, lo: int, hi: int,
             need: frozenset[int]) -> list[tuple[int, int]]:
        """``[lo, hi)`` cut where a source's presence or a class's requirement changes; a node
        that a span edge cuts is a run of its own."""
        clock = self.clock
        points = {lo, hi}
        for option in self.relevant(period, need):
            points.update(option.ordinals.boundaries(lo, hi))
        t_lo, t_hi = clock.start(period, lo), clock.start(period, hi)
        for k in need:
            for edge in (x for span in self.classes[k].spans for x in span):
                if t_lo < edge < t_hi:
                    points.update((clock.floor(period, edge), clock.ceil(period, edge)))
        ordered = sorted(points)
        return list(pairwise(ordered))

    def candidates(self, level: int, ordinal: int, full: frozenset[int]) -> list[_Candidate]:
        """Partitions of node ``ordinal`` that hold some class required on all of it: the
        best-ranked shared source per distinct coverage, and per group of *locally alike*
        classes (same spans, shared sources and private availability inside the node) their
        best private sources, all together.

        Why together: inside the node the exchange argument of
        :mod:`.slices.compute` applies to locally alike classes, so some
        optimal plan gives them one layout; a thousand slices alike inside the node are one
        candidate, not a thousand.
        """
        period = self.chain[level]
        by_cover: dict[frozenset[int], Option] = {}
        for option in self.shared:
            covers = option.classes & full
            if option.period is period and covers and option.ordinals.contains(ordinal):
                known = by_cover.get(covers)
                if known is None or (option.rank, option.index) < (known.rank, known.index):
                    by_cover[covers] = option
        out = [_Candidate(((o, c),), c, 1, (o.rank, o.index)) for c, o in by_cover.items()]
        groups: dict[tuple[object, ...], list[tuple[Option, int]]] = {}
        for k in sorted(full):
            present = [o for i in self.classes[k].private
                       if (o := self.options[i]).period is period and o.ordinals.contains(ordinal)]
            if present:
                best = min(present, key=lambda o: (o.rank, o.index))
                groups.setdefault(self.local_signature(k, level, ordinal), []).append((best, k))
        for group in groups.values():
            parts = tuple((o, frozenset({k})) for o, k in group)
            weight = sum(self.classes[k].weight for _, k in group)
            best_rank = min((o.rank, o.index) for o, _ in group)
            out.append(_Candidate(parts, frozenset(k for _, k in group), weight, best_rank))
        return sorted(out, key=lambda c: (c.order, sorted(c.covers)))

    def local_signature(self, k: int, level: int, ordinal: int) -> tuple[object, ...]:
        """What class ``k`` looks like inside node ``ordinal`` of ``chain[level]``."""
        clock, cls = self.clock, self.classes[k]
        u = clock.start(self.chain[level], ordinal)
        v = clock.start(self.chain[level], ordinal + 1)
        finer = self.chain[level:]
        privates = []
        for i in cls.private:
            option = self.options[i]
            if option.period in finer:
                lo, hi = clock.ceil(option.period, u), clock.floor(option.period, v)
                privates.append((option.period, option.rank, tuple(option.ordinals.pieces(lo, hi))))
        shared = tuple(o.index for o in self.shared if k in o.classes)
        return tuple(cls.clipped(u, v)), shared, tuple(privates)

    def take_candidate(self, cand: _Candidate, first: int, end: int,
                       classes: frozenset[int]) -> Plan:
        """A candidate's partitions ``[first, end)``, read by those of ``classes`` it holds."""
        return self.combine(self.take(o, first, end, served & classes) for o, served in cand.parts)

    def run(self, period: UpdatePeriod, level: int, a: int, b: int,
            need: frozenset[int]) -> Plan:
        """Decide the nodes ``[a, b)``, alike by construction of the runs."""
        clock = self.clock
        n0, n1 = clock.start(period, a), clock.start(period, a + 1)
        t0, t1 = n0, clock.start(period, b)
        live = frozenset(k for k in need if self.classes[k].required_in(n0, n1))
        full = frozenset(k for k in live if self.classes[k].holds(n0, n1))
        cands = self.candidates(level, a, full) if full else []
        if not cands:
            return self.solve(t0, t1, level + 1, live)
        whole = [c for c in cands if c.covers == live and c.partitions == 1]
        if whole:
            best = min(whole, key=lambda c: c.order)
            return self.take_candidate(best, a, b, live)
        if not self.shared_inside(t0, t1, level, live):
            return self.combine(self.single(t0, t1, level, k) for k in sorted(live))
        return self.combine(self.node(period, level, o, live, cands) for o in range(a, b))

    def node(self, period: UpdatePeriod, level: int, ordinal: int, live: frozenset[int],
             cands: list[_Candidate]) -> Plan:
        """A contested node: the best subset of candidates, the children doing the rest."""
        u, v = self.clock.start(period, ordinal), self.clock.start(period, ordinal + 1)

        def evaluate(chosen: Sequence[_Candidate]) -> Plan:
            # A class two chosen partitions hold reads the first (best-ranked) one.
            covered: frozenset[int] = frozenset()
            parts = []
            for c in chosen:
                parts.append(self.take_candidate(c, ordinal, ordinal + 1, c.covers - covered))
                covered |= c.covers
            parts.append(self.solve(u, v, level + 1, live - covered))
            return self.combine(parts)

        if len(cands) <= EXACT_LIMIT:
            best: Plan | None = None
            for mask in range(1 << len(cands)):
                chosen = [c for i, c in enumerate(cands) if mask >> i & 1]
                if _redundant(chosen):
                    continue
                plan = evaluate(chosen)
                if best is None or plan.key < best.key:
                    best = plan
            assert best is not None
            return best
        self.proven = False
        return min((_local_search(cands, True, evaluate), _local_search(cands, False, evaluate)),
                   key=lambda p: p.key)

    # -- one class alone: compute_cover's greedy ------------------------------------------------

    def single(self, u: int, v: int, level: int, k: int) -> Plan:
        """Class ``k`` alone on ``[u, v)``: largest partitions first, best storage first."""
        parts: list[Plan] = []
        for a, b in self.classes[k].clipped(u, v):
            self.fill(a, b, level, k, parts)
        return self.combine(parts)

    def fill(self, u: int, v: int, level: int, k: int, out: list[Plan]) -> None:
        if u >= v:
            return
        if level == len(self.chain):
            out.append(self.gaps(u, v, (k,)))
            return
        period, clock = self.chain[level], self.clock
        lo, hi = clock.ceil(period, u), clock.floor(period, v)
        cursor = u
        labelled = [((o.rank, o.index), o.ordinals) for i in self.classes[k].private
                    if (o := self.options[i]).period is period]
        if lo < hi and labelled:
            for b, e, (_, index) in best_labelled(labelled, lo, hi):
                t0 = clock.start(period, b)
                self.fill(cursor, t0, level + 1, k, out)
                cursor = clock.start(period, e)
                out.append(self.take(self.options[index], b, e, (k,)))
        self.fill(cursor, v, level + 1, k, out)


def _redundant(chosen: Sequence[_Candidate]) -> bool:
    """Whether some chosen candidate holds nothing the others do not (dominated subset)."""
    for i, c in enumerate(chosen):
        others = frozenset().union(*(d.covers for j, d in enumerate(chosen) if j != i))
        if c.covers <= others:
            return True
    return False


def _local_search(cands: Sequence[_Candidate], start_with_all: bool,
                  evaluate: Callable[[Sequence[_Candidate]], Plan]) -> Plan:
    """From all candidates (or none), toggle one at a time while the vector improves.

    Each accepted move improves the vector, so it ends; each round costs len(cands) plans.
    """
    chosen = [start_with_all] * len(cands)
    best = evaluate([c for c, on in zip(cands, chosen, strict=True) if on])
    improved = True
    while improved:
        improved = False
        for i in range(len(cands)):
            trial = chosen.copy()
            trial[i] = not trial[i]
            plan = evaluate([c for c, on in zip(cands, trial, strict=True) if on])
            if plan.key < best.key:
                chosen, best, improved = trial, plan, True
                break
    return best
