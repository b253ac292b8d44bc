"""A filter planned for one storage: the per-period reads, the residual, and what running it cost.

Pure (no store access), so plans are cheap to inspect. The storage is seen only through its
:class:`~airflow_partitions.keys.RowLayout` and its update periods; running a plan against the
catalog is :mod:`airflow_partitions.catalog.query`'s job, which fills in a :class:`QueryStats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from airflow_partitions.errors import InvalidInput
from airflow_partitions.filters import ast
from airflow_partitions.filters.decompose import StorageSplit, split_for_storage
from airflow_partitions.filters.normalise import DEFAULT_MAX_DNF_DISJUNCTS
from airflow_partitions.filters.parser import parse_filter
from airflow_partitions.filters.planner import PeriodPlan, plan_period
from airflow_partitions.filters.types import Binder
from airflow_partitions.keys import RowLayout
from airflow_partitions.periods import UpdatePeriod


class QueryStatsJson(TypedDict):
    """:meth:`QueryStats.to_json`: what a filtered read cost."""

    rows_fetched: int
    rows_returned: int
    round_trips: int
    scans: int
    gets: int
    full_scan: bool


@dataclass
class QueryStats:
    """What a query cost: rows the store sent back vs rows returned, and round trips.

    ``rows_fetched`` counts rows after the server-side filter (what crossed the wire); the rows a
    region server reads are those in the scanned key ranges (``explain`` shows them).
    """

    rows_fetched: int = 0
    rows_returned: int = 0
    round_trips: int = 0
    scans: int = 0
    gets: int = 0
    full_scan: bool = False

    @property
    def ratio(self) -> float:
        """Rows fetched per row returned (1.0 is the physical limit)."""
        if self.rows_returned:
            return self.rows_fetched / self.rows_returned
        return float("inf") if self.rows_fetched else 1.0

    def to_json(self) -> QueryStatsJson:
        return {
            "rows_fetched": self.rows_fetched,
            "rows_returned": self.rows_returned,
            "round_trips": self.round_trips,
            "scans": self.scans,
            "gets": self.gets,
            "full_scan": self.full_scan,
        }


@dataclass(frozen=True)
class FilterPlan:
    """A parsed, typed filter with its per-period reads and its client-side residual."""

    layout: RowLayout
    expr: ast.Expr
    split: StorageSplit
    periods: tuple[PeriodPlan, ...]
    binder: Binder = field(compare=False)

    @property
    def residual(self) -> ast.Expr | None:
        return self.split.residual

    @property
    def full_scan(self) -> bool:
        return any(p.full_scan for p in self.periods)


def plan_filter(
    layout: RowLayout,
    periods: Sequence[UpdatePeriod],
    filter: str | ast.Expr,
    period: UpdatePeriod | str | None = None,
    *,
    allow_unknown: bool = False,
    max_disjuncts: int = DEFAULT_MAX_DNF_DISJUNCTS,
) -> FilterPlan:
    """Plan ``filter`` on a storage laid out as ``layout`` with update ``periods`` (in the
    storage's order): one plan per period, or only ``period``'s."""
    if max_disjuncts < 1:
        raise InvalidInput(f"max_disjuncts must be at least 1, got {max_disjuncts}")
    expr = parse_filter(filter) if isinstance(filter, str) else filter
    binder = Binder(layout.columns, allow_unknown=allow_unknown)
    split = split_for_storage(expr, binder)
    chosen = _periods(layout, periods, period)
    plans = tuple(plan_period(layout, p, split.pushed, max_disjuncts) for p in chosen)
    return FilterPlan(layout, expr, split, plans, binder)


def _periods(
    layout: RowLayout, periods: Sequence[UpdatePeriod], period: UpdatePeriod | str | None
) -> list[UpdatePeriod]:
    if period is None:
        return list(periods)
    wanted = UpdatePeriod.of(period)
    if wanted not in periods:
        raise InvalidInput(
            f"storage {layout.storage!r} has no {wanted.name} partitions "
            f"(its periods: {', '.join(p.name for p in periods)})"
        )
    return [wanted]
