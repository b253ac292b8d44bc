"""Partition filters: filter string -> expression -> store reads, plus pushed/residual split.

See docs/filters.md. Modules: ``lexer`` and ``parser`` (text -> :mod:`.ast`), ``types``
(typing and client evaluation), ``like`` (SQL LIKE), ``normalise`` (NNF, DNF), ``planner``
(scans and gets per period), ``decompose`` (seed 001), ``execute`` (the catalog API).

Nothing here imports ``airflow``; ``execute`` needs a :class:`~airflow_partitions.catalog.Catalog`
only at call time, so the catalog can delegate to it without an import cycle.
"""

from airflow_partitions.filters.ast import Expr
from airflow_partitions.filters.decompose import decompose
from airflow_partitions.filters.errors import (
    FilterError,
    FilterSyntaxError,
    FilterTypeError,
    UnknownColumnError,
)
from airflow_partitions.filters.execute import (
    Explain,
    FilterPlan,
    QueryStats,
    execute_plan,
    explain,
    explain_plan,
    get_partitions_by_filter,
    plan_filter,
)
from airflow_partitions.filters.normalise import DEFAULT_MAX_DISJUNCTS
from airflow_partitions.filters.parser import parse_filter

__all__ = [
    "DEFAULT_MAX_DISJUNCTS",
    "Explain",
    "Expr",
    "FilterError",
    "FilterPlan",
    "FilterSyntaxError",
    "FilterTypeError",
    "QueryStats",
    "UnknownColumnError",
    "decompose",
    "execute_plan",
    "explain",
    "explain_plan",
    "get_partitions_by_filter",
    "parse_filter",
    "plan_filter",
]
