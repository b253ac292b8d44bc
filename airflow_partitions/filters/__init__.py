"""Partition filters: filter string -> expression -> store reads, plus pushed/residual split.

See docs/filters.md. Modules: ``lexer`` and ``parser`` (text -> :mod:`.ast`), ``types`` (typing
and client evaluation), ``like`` (SQL LIKE), ``normalise`` (NNF, DNF), ``planner`` (scans and
gets per period), ``decompose`` (pushed/residual split), ``query_plan`` (a filter planned for
one storage, :class:`QueryStats`), ``explanation`` (a plan as data and text).

Everything here is pure: a storage is seen only through its
:class:`~airflow_partitions.keys.RowLayout` and its update periods. Nothing here imports
``airflow`` or the catalog; running a plan against the catalog is
:mod:`airflow_partitions.catalog.query`.
"""

from airflow_partitions.filters import ast  # the node types, as a namespace: ast.Column, ...
from airflow_partitions.filters.ast import Expr
from airflow_partitions.filters.decompose import decompose
from airflow_partitions.filters.errors import (
    FilterError,
    FilterSyntaxError,
    FilterTypeError,
    UnknownColumnError,
)
from airflow_partitions.filters.explanation import (
    Explain,
    ExplainJson,
    ExplainScanJson,
    PeriodExplainJson,
    explain_plan,
)
from airflow_partitions.filters.normalise import DEFAULT_MAX_DNF_DISJUNCTS, compile_node
from airflow_partitions.filters.parser import parse_filter
from airflow_partitions.filters.planner import PeriodPlan
from airflow_partitions.filters.query_plan import (
    FilterPlan,
    QueryStats,
    QueryStatsJson,
    plan_filter,
)
from airflow_partitions.filters.types import Binder, PyValue, Row, typed_from_text

__all__ = [
    "DEFAULT_MAX_DNF_DISJUNCTS",
    "Binder",
    "Explain",
    "ExplainJson",
    "ExplainScanJson",
    "Expr",
    "FilterError",
    "FilterPlan",
    "FilterSyntaxError",
    "FilterTypeError",
    "PeriodExplainJson",
    "PeriodPlan",
    "PyValue",
    "QueryStats",
    "QueryStatsJson",
    "Row",
    "UnknownColumnError",
    "ast",
    "compile_node",
    "decompose",
    "explain_plan",
    "parse_filter",
    "plan_filter",
    "typed_from_text",
]
