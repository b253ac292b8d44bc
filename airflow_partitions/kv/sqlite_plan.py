"""Split a scan filter into what SQLite can evaluate in SQL and what Python must check.

Row-key bounds (prefix, row ranges) always go into SQL: they keep or drop whole rows, so
enforcing them in the WHERE clause is exact. Column ranges go into SQL only when nothing left
over needs to see the other cells of the row (a ``SingleColumnValue`` does); the rest is
evaluated per row with ``scan_filters.apply_filter``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from airflow_partitions.kv.scan_filters import (
    ColumnRange,
    FilterList,
    PrefixFilter,
    RowRange,
    ScanFilter,
)
from airflow_partitions.kv.validation import column_selected, prefix_successor

Bound = tuple[bytes, bool]  # (key, inclusive)

# The qualifier of a ``family:qualifier`` BLOB: everything after the first ':' (byte 0x3A).
_QUALIFIER_SQL = "substr(col, instr(col, X'3A') + 1)"


@dataclass
class ScanPlan:
    """SQL conditions (with parameters) plus the residual filter for Python."""

    lower: list[Bound] = field(default_factory=list)
    upper: list[Bound] = field(default_factory=list)
    column_ranges: list[ColumnRange] = field(default_factory=list)
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

    def column_sql(self, columns: tuple[bytes, ...] | None) -> tuple[list[str], list[bytes]]:
        clauses, params = columns_sql(columns)
        for column_range in self.column_ranges:
            if column_range.min:
                clauses.append(f"{_QUALIFIER_SQL} {'>=' if column_range.min_inclusive else '>'} ?")
                params.append(column_range.min)
            if column_range.max:
                clauses.append(f"{_QUALIFIER_SQL} {'<=' if column_range.max_inclusive else '<'} ?")
                params.append(column_range.max)
        return clauses, params


def _tightest(bounds: list[Bound], *, lower: bool) -> Bound | None:
    """The most restrictive bound: the largest lower (the smallest upper); at equal keys an
    exclusive bound is tighter than an inclusive one."""
    if not bounds:
        return None
    if lower:
        return max(bounds, key=lambda b: (b[0], not b[1]))
    return min(bounds, key=lambda b: (b[0], b[1]))


def columns_sql(columns: tuple[bytes, ...] | None) -> tuple[list[str], list[bytes]]:
    """``col`` conditions for a column projection (a family spec becomes a key range)."""
    if columns is None:
        return [], []
    alternatives: list[str] = []
    params: list[bytes] = []
    for spec in columns:
        if b":" in spec:
            if column_selected(spec, tuple(c for c in columns if b":" not in c)):
                continue  # already covered by its family
            alternatives.append("col = ?")
            params.append(spec)
        else:
            alternatives.append("(col >= ? AND col < ?)")
            params += [spec + b":", spec + b";"]
    return ["(" + " OR ".join(alternatives) + ")"], params


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
    ranges: list[ColumnRange] = []
    for member in _flatten_and(members):
        if isinstance(member, PrefixFilter | RowRange):
            lower, upper = _row_bounds(member)
            plan.lower += lower
            plan.upper += upper
        elif isinstance(member, ColumnRange):
            ranges.append(member)
        else:
            rest.append(member)
    if rest:
        # Something left needs the whole row: keep the column ranges in Python too.
        rest += ranges
        plan.residual = rest[0] if len(rest) == 1 else FilterList("AND", tuple(rest))
    else:
        plan.column_ranges = ranges
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
