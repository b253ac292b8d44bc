"""Split a scan filter into what SQLite can evaluate in SQL and what Python must check.

Row-key bounds (prefix, row ranges) go into SQL: they keep or drop whole rows, so enforcing
them in the WHERE clause is exact, and they are what the primary key can search on. A row's
cells live in one blob (``kv.cell_blob``), so everything else (column ranges, value tests) is
evaluated per decoded row with ``scan_filters.apply_filter``: the residual.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from airflow_partitions.kv.scan_filters import (
    FilterList,
    PrefixFilter,
    RowRange,
    ScanFilter,
)
from airflow_partitions.kv.validation import ScanRange, prefix_successor

Bound = tuple[bytes, bool]  # (key, inclusive)


@dataclass
class ScanPlan:
    """Row-key bounds for SQL plus the residual filter for Python."""

    lower: list[Bound] = field(default_factory=list)
    upper: list[Bound] = field(default_factory=list)
    residual: ScanFilter | None = None

    def row_sql(self, after: Bound | None = None, before: Bound | None = None
                ) -> tuple[list[str], list[bytes]]:
        """At most one lower and one upper ``row`` bound: the tightest of each.

        SQLite ranges its primary-key search on one bound per side and merely checks any
        other, so two lower bounds (a scan's start and a page's resume point) would make every
        page search from the start: quadratic scans. ``after``/``before`` add a page's resume
        point on the scan's direction.
        """
        clauses: list[str] = []
        params: list[bytes] = []
        lower = _tightest([*self.lower, *([after] if after else [])], lower=True)
        upper = _tightest([*self.upper, *([before] if before else [])], lower=False)
        if lower is not None:
            clauses.append("row >= ?" if lower[1] else "row > ?")
            params.append(lower[0])
        if upper is not None:
            clauses.append("row <= ?" if upper[1] else "row < ?")
            params.append(upper[0])
        return clauses, params


def _tightest(bounds: list[Bound], *, lower: bool) -> Bound | None:
    """The most restrictive bound: the largest lower (the smallest upper); at equal keys an
    exclusive bound is tighter than an inclusive one."""
    if not bounds:
        return None
    if lower:
        return max(bounds, key=lambda b: (b[0], not b[1]))
    return min(bounds, key=lambda b: (b[0], b[1]))


def _row_bounds(row_filter: PrefixFilter | RowRange) -> tuple[list[Bound], list[Bound]]:
    if isinstance(row_filter, PrefixFilter):
        successor = prefix_successor(row_filter.prefix)
        return [(row_filter.prefix, True)], ([(successor, False)] if successor is not None else [])
    lower = [(row_filter.start, row_filter.start_inclusive)] if row_filter.start is not None else []
    upper = [(row_filter.stop, row_filter.stop_inclusive)] if row_filter.stop is not None else []
    return lower, upper


def plan_scan(scan_filter: ScanFilter | None) -> ScanPlan:
    """Decompose ``scan_filter`` (see the module docstring)."""
    plan = ScanPlan()
    if scan_filter is None:
        return plan
    members: tuple[ScanFilter, ...] = (scan_filter,)
    if isinstance(scan_filter, FilterList) and scan_filter.op == "AND":
        members = scan_filter.filters
    rest: list[ScanFilter] = []
    for member in _flatten_and(members):
        if isinstance(member, PrefixFilter | RowRange):
            lower, upper = _row_bounds(member)
            plan.lower += lower
            plan.upper += upper
        else:
            rest.append(member)
    if rest:
        plan.residual = rest[0] if len(rest) == 1 else FilterList("AND", tuple(rest))
    return plan


def _flatten_and(members: tuple[ScanFilter, ...]) -> list[ScanFilter]:
    flat: list[ScanFilter] = []
    for member in members:
        if isinstance(member, FilterList) and member.op == "AND":
            flat += _flatten_and(member.filters)
        elif isinstance(member, FilterList) and len(member.filters) == 1:
            flat += _flatten_and(member.filters)
        else:
            flat.append(member)
    return flat


def ranged_plan(plan: ScanPlan, scan_range: ScanRange) -> ScanPlan:
    """``plan`` with the scan's own start and stop added to its row bounds."""
    if scan_range.start is not None:
        plan.lower.append((scan_range.start, True))
    if scan_range.stop is not None:
        plan.upper.append((scan_range.stop, False))
    return plan
