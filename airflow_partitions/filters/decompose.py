"""Pushed/residual decomposition (Hive's ``decomposePredicate``).

``decompose`` is the generic, storage-neutral analyzer: top-level ``AND`` terms made only of
``column op literal`` on allowed columns and operators are pushed; everything else is residual.
``pushed AND residual`` is always the original filter.

``split_for_storage`` is what the planner uses: per top-level term, the store-evaluable part in
negation normal form, and the terms the client must check. A residual term still contributes
its *relaxation* (its store-evaluable consequences, e.g. the literal prefix of ``LIKE 'a%b'``)
to the pushed side, so ``pushed AND residual`` stays equal to the filter while the scan narrows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from airflow_partitions.filters import ast
from airflow_partitions.filters.normalise import Node, all_of, has_opaque, relax, to_nnf
from airflow_partitions.filters.types import Binder

#: Operator names ``decompose`` understands in ``allowed_ops``.
ALL_OPS: Final = frozenset(
    {"=", "!=", "<", "<=", ">", ">=", "LIKE", "IN", "BETWEEN", "IS NULL", "NOT", "OR"}
)


def decompose(
    expr: ast.Expr,
    allowed_columns: Iterable[str] | None = None,
    allowed_ops: Iterable[str] | None = None,
) -> tuple[ast.Expr | None, ast.Expr | None]:
    """``(pushed, residual)``: each an expression or ``None`` (nothing on that side).

    ``allowed_columns`` (case-insensitive; ``None`` = any) and ``allowed_ops`` (names from
    :data:`ALL_OPS`; ``None`` = all) say what the storage can evaluate. A top-level term is
    pushed when every comparison in it is ``column op literal`` (either side) on an allowed
    column with an allowed operator; ``NOT`` and ``OR`` inside a term need ``"NOT"``/``"OR"``.
    """
    columns = None if allowed_columns is None else {c.lower() for c in allowed_columns}
    ops = ALL_OPS if allowed_ops is None else {o.upper() for o in allowed_ops}
    pushed: list[ast.Expr] = []
    residual: list[ast.Expr] = []
    for term in ast.conjuncts(expr):
        (pushed if _pushable(term, columns, ops) else residual).append(term)
    return ast.all_of(pushed), ast.all_of(residual)


def _pushable(expr: ast.Expr, columns: set[str] | None, ops: set[str] | frozenset[str]) -> bool:
    def column_ok(value: ast.Value) -> bool:
        return isinstance(value, ast.Column) and (columns is None or value.name in columns)

    if isinstance(expr, ast.Not):
        return "NOT" in ops and _pushable(expr.operand, columns, ops)
    if isinstance(expr, ast.Or):
        return "OR" in ops and all(_pushable(i, columns, ops) for i in expr.items)
    if isinstance(expr, ast.And):
        return all(_pushable(i, columns, ops) for i in expr.items)
    if isinstance(expr, ast.Compare):
        sides = (expr.left, expr.right)
        return expr.op in ops and any(
            column_ok(a) and isinstance(b, ast.Const) for a, b in (sides, sides[::-1])
        )
    name = {ast.Like: "LIKE", ast.In: "IN", ast.Between: "BETWEEN", ast.IsNull: "IS NULL"}
    return name[type(expr)] in ops and column_ok(expr.operand)


@dataclass(frozen=True)
class StorageSplit:
    """``pushed``: what the store evaluates (NNF, relaxed); ``residual``: client terms."""

    pushed: Node
    residual: ast.Expr | None
    residual_node: Node  # the residual terms in NNF, for client evaluation
    unknown_columns: frozenset[str]


def split_for_storage(expr: ast.Expr, binder: Binder) -> StorageSplit:
    binder.check(expr)
    pushed: list[Node] = []
    residual: list[ast.Expr] = []
    residual_nodes: list[Node] = []
    for term in ast.conjuncts(expr):
        node = to_nnf(term, binder)
        if has_opaque(node):
            residual.append(term)
            residual_nodes.append(node)
            pushed.append(relax(node))
        else:
            pushed.append(node)
    unknown = frozenset(c for c in ast.columns_of(expr) if binder.column(c) is None)
    return StorageSplit(all_of(pushed), ast.all_of(residual), all_of(residual_nodes), unknown)
