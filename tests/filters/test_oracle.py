"""The correctness oracle: on each backend, a plan's result equals brute-force evaluation.

Random partition sets over mixed-type columns (string time column, string, int, date) and random
filters from the whole grammar (generated as trees, printed, re-parsed): the result of
``get_partitions_by_filter`` must equal evaluating the filter on every registered partition,
with no duplicates, for several DNF bounds (so the fallback path is exercised too).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, get_partitions_by_filter
from airflow_partitions.filters import QueryStats, ast
from airflow_partitions.filters.parser import parse_filter
from airflow_partitions.filters.types import Binder, typed_from_text
from tests.filters.strategies import COLUMNS, mixed_filters, partition_values
from tests.helpers import unique
from tests.hypothesis_budget import examples

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


def brute_force(catalog: Catalog, storage: str, expr: ast.Expr) -> list[tuple[str, str, str]]:
    """Evaluate the filter on every registered partition (independent of the planner)."""
    sdef = catalog.get_storage(storage)
    predicate = Binder(sdef.columns).compile(expr)
    out = []
    for part in catalog.list_partitions(storage):
        row = {c: typed_from_text(t, part.values[c]) for c, t in sdef.columns}
        if predicate(row) is True:
            out.append(_ident(part))
    return sorted(out)


def _ident(part: Any) -> tuple[str, str, str]:
    return (part.period.name, repr(sorted(part.values.items())), part.location)


def _check(catalog: Catalog, storage: str, expr: ast.Expr, bound: int) -> None:
    text = str(expr)
    assert parse_filter(text) == expr
    stats = QueryStats()
    got = get_partitions_by_filter(catalog, storage, text, stats=stats, max_disjuncts=bound)
    idents = [_ident(p) for p in got]
    assert len(idents) == len(set(idents)), f"duplicates for {text}"
    assert sorted(idents) == brute_force(catalog, storage, expr), text
    assert stats.rows_returned == len(got)
    assert stats.rows_fetched >= len(got)


@st.composite
def partition_sets(draw: Any) -> dict[str, list[dict[str, str]]]:
    return {
        "DAILY": draw(st.lists(partition_values("DAILY"), max_size=25)),
        "MONTHLY": draw(st.lists(partition_values("MONTHLY"), max_size=8)),
    }


@settings(max_examples=examples(25), deadline=None, suppress_health_check=_HEALTH)
@given(data=partition_sets(), exprs=st.lists(mixed_filters(), min_size=1, max_size=4),
       bound=st.sampled_from([1, 3, 64]))
def test_random_partitions_and_filters(catalog: Catalog, data: Any, exprs: list[ast.Expr],
                                       bound: int) -> None:
    storage = unique("s")
    catalog.create_storage("ev", storage, ["DAILY", "MONTHLY"], columns=COLUMNS)
    for period, values in data.items():
        if values:
            catalog.register(storage, period, values)
    for expr in exprs:
        _check(catalog, storage, expr, bound)


_FIXED: dict[int, str] = {}


def _fixed_storage(catalog: Catalog) -> str:
    """One storage with 150 partitions per catalog, built once."""
    if id(catalog) not in _FIXED:
        import random

        rng = random.Random(7)
        storage = unique("fixed")
        catalog.create_storage("ev", storage, ["DAILY", "MONTHLY"], columns=COLUMNS)
        from tests.filters.strategies import DAY2, DAYS, MONTHS, REGIONS, SHOPS

        for period, times, n in (("DAILY", DAYS, 120), ("MONTHLY", MONTHS, 30)):
            catalog.register(storage, period, [
                {"dt": rng.choice(times), "region": rng.choice(REGIONS),
                 "shop": str(rng.choice(SHOPS)), "day2": rng.choice(DAY2).isoformat()}
                for _ in range(n)
            ])
        _FIXED[id(catalog)] = storage
    return _FIXED[id(catalog)]


@settings(max_examples=examples(150), deadline=None, suppress_health_check=_HEALTH)
@given(expr=mixed_filters(max_leaves=10), bound=st.sampled_from([2, 64]))
def test_many_filters_on_a_fixed_table(catalog: Catalog, expr: ast.Expr, bound: int) -> None:
    _check(catalog, _fixed_storage(catalog), expr, bound)
