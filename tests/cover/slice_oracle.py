"""A brute-force slice cover, for tests only: every subset of existing partitions, node by node.

For nested periods every set of chosen partitions splits into one subset per node of the
period tree (a partition is chosen at its own node), and the subsets of disjoint nodes are
independent given which slices are left to cover. So the optimum is: at each node, the best
over *every* subset of the partitions that exist there (``exists_ordinal``, no ranges, no
classes, no shortcuts) of its cost plus its children's optimum for the slices it leaves. A
chosen partition serves a slice when it holds the slice and the slice is required on the whole
node. The vector is the objective of :mod:`airflow_partitions.cover.slices.compute`.

Partition bounds come from ``tests.cover.naive_cover.WallClock`` (``datetime`` and ``zoneinfo``
only), never from the package's arithmetic, so a bug there cannot hide in the check.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from airflow_partitions.cover import RequiredSlice, SliceSource
from tests.cover.naive_cover import COARSEST_FIRST, Slot, WallClock, coarseness

Key = tuple[int, ...]
Slice = tuple[tuple[str, str], ...]


def holds(fixed: Slice, slice_: Slice) -> bool:
    """Whether a source fixing ``fixed`` dimension values holds ``slice_`` (a rollup, fixing
    nothing, holds every slice)."""
    return set(fixed) <= set(slice_)


def ranked(sources: Sequence[SliceSource]) -> list[str]:
    """Storage names, most preferred first (priority, larger first, then name)."""
    priority = {s.storage: s.priority for s in sources}
    return sorted(priority, key=lambda name: (-priority[name], name))


class SliceOracle:
    """The optimum objective vector of a nested-period slice cover, by exhaustion."""

    def __init__(self, sources: Sequence[SliceSource], required: Sequence[RequiredSlice],
                 tz: str) -> None:
        self.clock = WallClock(tz)
        self.sources = list(sources)
        self.required = list(required)
        self.chain = sorted({s.period for s in sources}, key=coarseness)
        self.ranks = {name: i for i, name in enumerate(ranked(sources))}
        self.width = 2 + len(COARSEST_FIRST) + len(self.ranks)
        self.memo: dict[tuple[int, int, int, frozenset[int]], Key] = {}

    def best(self, start: int, end: int) -> Key:
        """The optimum over ``[start, end)`` for every required slice."""
        return self.interval(start, end, 0, frozenset(range(len(self.required))))

    def add(self, a: Key, b: Key) -> Key:
        return tuple(x + y for x, y in zip(a, b, strict=True))

    def interval(self, u: int, v: int, level: int, need: frozenset[int]) -> Key:
        if u >= v or not need:
            return (0,) * self.width
        if level == len(self.chain):
            missing = [0] * self.width
            for i in need:
                for a, b in self.required[i].spans:
                    missing[0] += max(0, min(b, v) - max(a, u))
            return tuple(missing)
        slots = self.clock.slots(self.chain[level], u, v)
        if not slots:
            return self.interval(u, v, level + 1, need)
        total = self.interval(u, slots[0].start, level + 1, need)
        for slot in slots:
            total = self.add(total, self.node(level, slot, need))
        return self.add(total, self.interval(slots[-1].end, v, level + 1, need))

    def node(self, level: int, slot: Slot, need: frozenset[int]) -> Key:
        memo_key = (level, slot.ordinal, 0, need)
        if memo_key in self.memo:
            return self.memo[memo_key]
        period, (o, u, v) = self.chain[level], slot
        here = [s for s in self.sources if s.period is period and s.timeline.exists_ordinal(o)]
        full = {i for i in need
                if any(a <= u and v <= b for a, b in self.required[i].spans)}
        best: Key | None = None
        for size in range(len(here) + 1):
            for chosen in combinations(here, size):
                served = {i for i in full
                          if any(holds(s.fixed, self.required[i].slice) for s in chosen)}
                cost = [0] * self.width
                for s in chosen:
                    cost[1] += 1
                    cost[2 + coarseness(s.period)] -= 1
                    cost[2 + len(COARSEST_FIRST) + self.ranks[s.storage]] -= 1
                rest = self.interval(u, v, level + 1, need - served)
                candidate = self.add(tuple(cost), rest)
                if best is None or candidate < best:
                    best = candidate
        assert best is not None
        self.memo[memo_key] = best
        return best
