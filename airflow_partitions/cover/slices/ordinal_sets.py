"""Sorted disjoint ordinal ranges with the few questions a slice cover asks of them.

Why a separate value: a slice cover asks many small questions of one source's availability
(is ordinal ``o`` present, where does presence change inside ``[lo, hi)``, how many are
absent); each is a bisection, so the cost is O(log ranges), never O(partitions).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

from airflow_partitions.timelines import OrdinalRange

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison


class OrdinalSet:
    """Sorted, disjoint, non-adjacent half-open ordinal ranges (a timeline's answer).

    >>> s = OrdinalSet([(0, 3), (5, 6)])
    >>> s.contains(2), s.contains(3), s.count(1, 6), list(s.pieces(2, 9))
    (True, False, 3, [(2, 3), (5, 6)])
    """

    __slots__ = ("begins", "cumulative", "ends", "ranges")

    def __init__(self, ranges: Sequence[OrdinalRange]) -> None:
        merged: list[OrdinalRange] = []
        for b, e in sorted(ranges):
            if b >= e:
                continue
            if merged and merged[-1][1] >= b:
                merged[-1] = (merged[-1][0], max(merged[-1][1], e))
            else:
                merged.append((b, e))
        self.ranges: tuple[OrdinalRange, ...] = tuple(merged)
        self.begins = [b for b, _ in merged]
        self.ends = [e for _, e in merged]
        self.cumulative = [0]
        for b, e in merged:
            self.cumulative.append(self.cumulative[-1] + e - b)

    def contains(self, ordinal: int) -> bool:
        """Whether ``ordinal`` is present. O(log ranges)."""
        i = bisect_right(self.begins, ordinal) - 1
        return i >= 0 and ordinal < self.ends[i]

    def count(self, lo: int, hi: int) -> int:
        """How many ordinals of ``[lo, hi)`` are present. O(log ranges)."""
        i, j = bisect_right(self.ends, lo), bisect_left(self.begins, hi)
        if i >= j:
            return 0
        total = self.cumulative[j] - self.cumulative[i]
        return total - max(0, lo - self.begins[i]) - max(0, self.ends[j - 1] - hi)

    def any_in(self, lo: int, hi: int) -> bool:
        """Whether some ordinal of ``[lo, hi)`` is present. O(log ranges)."""
        i = bisect_right(self.ends, lo)
        return i < len(self.begins) and self.begins[i] < hi and lo < hi

    def pieces(self, lo: int, hi: int) -> Iterator[OrdinalRange]:
        """The present ranges clipped to ``[lo, hi)``, in order. O(log ranges + answer)."""
        i = bisect_right(self.ends, lo)
        while i < len(self.begins) and self.begins[i] < hi:
            yield max(self.begins[i], lo), min(self.ends[i], hi)
            i += 1

    def boundaries(self, lo: int, hi: int) -> Iterator[int]:
        """The ordinals strictly inside ``(lo, hi)`` where presence changes."""
        for b, e in self.pieces(lo, hi):
            if b > lo:
                yield b
            if e < hi:
                yield e

    def absent_runs(self, lo: int, hi: int, limit: int) -> list[OrdinalRange]:
        """The first ``limit`` maximal absent runs inside ``[lo, hi)``."""
        out: list[OrdinalRange] = []
        cursor = lo
        for b, e in self.pieces(lo, hi):
            if len(out) >= limit:
                return out
            if b > cursor:
                out.append((cursor, b))
            cursor = e
        if len(out) < limit and cursor < hi:
            out.append((cursor, hi))
        return out

    def union(self, other: OrdinalSet) -> OrdinalSet:
        """Both sets' ordinals."""
        return OrdinalSet([*self.ranges, *other.ranges])


def best_labelled(
    labelled: Sequence[tuple[tuple[int, int], OrdinalSet]], lo: int, hi: int
) -> list[tuple[int, int, tuple[int, int]]]:
    """``[lo, hi)``'s present stretches, each labelled with the smallest label holding it.

    ``labelled`` pairs a label (``(storage rank, option)``: smaller is preferred) with its set.
    A sweep over the range ends: O(pieces x log pieces).
    """
    return best_label_sweep([(label, list(ordinals.pieces(lo, hi)))
                             for label, ordinals in labelled])


L = TypeVar("L", bound="SupportsRichComparison")


def best_label_sweep(labelled: Sequence[tuple[L, Sequence[OrdinalRange]]]
                     ) -> list[tuple[int, int, L]]:
    """Merge several labelled range lists: each stretch any of them holds, with the smallest
    label holding it, adjacent stretches of one label joined. One sweep over the range ends:
    O(ranges x log ranges). Shared by the time-only cover and the slice cover.

    >>> best_label_sweep([(1, [(0, 4)]), (0, [(2, 6)])])
    [(0, 2, 1), (2, 6, 0)]
    """
    if len(labelled) == 1:
        label, ranges = labelled[0]
        return [(b, e, label) for b, e in ranges]
    events: dict[int, list[tuple[L, int]]] = {}
    for label, ranges in labelled:
        for b, e in ranges:
            events.setdefault(b, []).append((label, 1))
            events.setdefault(e, []).append((label, -1))
    points = sorted(events)
    active: dict[L, int] = {}
    out: list[tuple[int, int, L]] = []
    for i, pos in enumerate(points[:-1]):
        for label, delta in events[pos]:
            active[label] = active.get(label, 0) + delta
            if not active[label]:
                del active[label]
        if not active:
            continue
        best, nxt = min(active), points[i + 1]
        if out and out[-1][1] == pos and out[-1][2] == best:
            out[-1] = (out[-1][0], nxt, best)
        else:
            out.append((pos, nxt, best))
    return out
