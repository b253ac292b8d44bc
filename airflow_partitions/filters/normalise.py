"""Normal forms for planning: NOT pushed to the leaves, IN/BETWEEN expanded, then DNF.

A leaf ("atom") is one of

* :class:`ColCmp`: ``column op value`` on a known column with a typed value; the store can
  evaluate it exactly (key ranges, or a binary comparison of the ``p:k.<col>`` cell);
* :class:`ColPrefix`: ``column [NOT] LIKE 'prefix%'``: exact as a key range or a
  ``binaryprefix`` comparison of the ``p:v.<col>`` text cell;
* :class:`Opaque`: anything else (functions, inexact LIKE, unknown columns), evaluated on the
  client. ``relaxed`` is a weaker atom the store *can* evaluate (``TRUE`` or a LIKE's literal
  prefix), so the scan can still narrow the rows.

Pushing NOT down is sound under SQL's three-valued logic because every atom carries its own
negation (``NOT a < 1`` is ``a >= 1``, both unknown on NULL), and a formula in negation normal
form is true exactly when its true atoms make it true, so the client may treat "unknown" atoms
as false.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, cast

from airflow_partitions.filters import ast
from airflow_partitions.filters.like import parse_like
from airflow_partitions.filters.types import Binder, PredFn, PyValue, Row
from airflow_partitions.keys import ColumnType

#: How many conjuncts a filter's DNF may have before the planner stops reading one range per
#: conjunct and falls back to one scan carrying the whole filter tree (``max_disjuncts``).
DEFAULT_MAX_DNF_DISJUNCTS: Final = 64


@dataclass(frozen=True)
class Bool:
    value: bool

    def __str__(self) -> str:
        return "TRUE" if self.value else "FALSE"


TRUE: Final = Bool(True)
FALSE: Final = Bool(False)


@dataclass(frozen=True)
class ColCmp:
    column: str
    ctype: ColumnType
    op: ast.CompareOp
    value: PyValue

    def __str__(self) -> str:
        return f"{ast.quote_name(self.column)} {self.op} {_literal(self.value)}"


@dataclass(frozen=True)
class ColPrefix:
    column: str
    prefix: str
    negated: bool = False

    def __str__(self) -> str:
        pattern = "".join("\\" + c if c in "%_\\" else c for c in self.prefix) + "%"
        return (f"{ast.quote_name(self.column)} {'NOT ' if self.negated else ''}LIKE "
                f"{ast.quote_string(pattern)} ESCAPE '\\\\'")


@dataclass(frozen=True)
class Opaque:
    expr: ast.Expr
    relaxed: Node
    unknown: bool = False

    def __str__(self) -> str:
        return str(self.expr)


@dataclass(frozen=True)
class NAnd:
    items: tuple[Node, ...]

    def __str__(self) -> str:
        return " AND ".join(_group(i) for i in self.items)


@dataclass(frozen=True)
class NOr:
    items: tuple[Node, ...]

    def __str__(self) -> str:
        return " OR ".join(_group(i) for i in self.items)


Atom: TypeAlias = ColCmp | ColPrefix | Opaque | Bool
Node: TypeAlias = ColCmp | ColPrefix | Opaque | Bool | NAnd | NOr
Conjunct: TypeAlias = tuple[Atom, ...]


def _group(node: Node) -> str:
    return f"({node})" if isinstance(node, NAnd | NOr) else str(node)


def _literal(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return ast.quote_string(value.isoformat())
    return str(ast.Const(value))


def all_of(items: Iterable[Node]) -> Node:
    """AND with constants folded and nested ANDs flattened."""
    out: list[Node] = []
    for item in items:
        if item == TRUE:
            continue
        if item == FALSE:
            return FALSE
        out.extend(item.items if isinstance(item, NAnd) else (item,))
    out = list(dict.fromkeys(out))
    return TRUE if not out else out[0] if len(out) == 1 else NAnd(tuple(out))


def any_of(items: Iterable[Node]) -> Node:
    """OR with constants folded and nested ORs flattened."""
    out: list[Node] = []
    for item in items:
        if item == FALSE:
            continue
        if item == TRUE:
            return TRUE
        out.extend(item.items if isinstance(item, NOr) else (item,))
    out = list(dict.fromkeys(out))
    return FALSE if not out else out[0] if len(out) == 1 else NOr(tuple(out))


# ------------------------------------------------------------------------------------- NNF
def to_nnf(expr: ast.Expr, binder: Binder, negate: bool = False) -> Node:
    """Negation normal form over atoms; ``binder`` types literals (and raises type errors)."""
    if isinstance(expr, ast.Not):
        return to_nnf(expr.operand, binder, not negate)
    if isinstance(expr, ast.And | ast.Or):
        parts = [to_nnf(i, binder, negate) for i in expr.items]
        return all_of(parts) if isinstance(expr, ast.And) != negate else any_of(parts)
    if isinstance(expr, ast.Compare):
        return _compare(expr, binder, negate)
    neg = expr.negated != negate
    operand = expr.operand
    if not binder.is_known_column(operand):
        binder.check(expr)
        return _opaque(expr, neg, binder)
    assert isinstance(operand, ast.Column)
    found = binder.column(operand.name)
    assert found is not None
    name, ctype = found
    if isinstance(expr, ast.IsNull):
        return Bool(neg)  # partition values are never NULL
    if isinstance(expr, ast.Like):
        binder.check(expr)
        return _like(expr, name, ctype, neg, binder)
    if isinstance(expr, ast.In):
        values = [binder.coerce(item, operand) for item in expr.items]
        atoms: list[Node] = [ColCmp(name, ctype, "!=" if neg else "=", v) for v in values]
        return all_of(atoms) if neg else any_of(atoms)
    low = binder.coerce(expr.low, operand)
    high = binder.coerce(expr.high, operand)
    if neg:
        return any_of([ColCmp(name, ctype, "<", low), ColCmp(name, ctype, ">", high)])
    return all_of([ColCmp(name, ctype, ">=", low), ColCmp(name, ctype, "<=", high)])


def _compare(expr: ast.Compare, binder: Binder, negate: bool) -> Node:
    op = ast.NEGATE[expr.op] if negate else expr.op
    left, right = binder.compare_values(expr)
    for column, value, this_op in ((left, right, op), (right, left, ast.FLIP[op])):
        if isinstance(column, ast.Column) and not isinstance(value, ast.Column | ast.Const
                                                             | ast.Call | ast.Cast):
            found = binder.column(column.name)
            if found is not None:
                return ColCmp(found[0], found[1], this_op, value)
    return _opaque(ast.Compare(expr.left, op, expr.right), False, binder)


def _like(expr: ast.Like, name: str, ctype: ColumnType, neg: bool, binder: Binder) -> Node:
    pattern = parse_like(expr.pattern, expr.escape)
    kind = pattern.kind
    if kind == "exact":
        return ColCmp(name, ctype, "!=" if neg else "=", pattern.prefix)
    if kind == "all":
        return Bool(not neg)
    if kind == "prefix":
        return ColPrefix(name, pattern.prefix, neg)
    return _opaque(expr, neg, binder)


def _opaque(expr: ast.Expr, neg: bool, binder: Binder) -> Opaque:
    """A client-only atom; ``neg`` is folded into the node so it prints and evaluates alone."""
    if isinstance(expr, ast.Like | ast.In | ast.Between | ast.IsNull):
        leaf: ast.Expr = dataclasses.replace(expr, negated=neg)
    else:
        leaf = expr
    unknown = any(binder.column(c) is None for c in ast.columns_of(leaf))
    relaxed: Node = TRUE
    if isinstance(leaf, ast.Like) and not neg and not unknown and isinstance(
        leaf.operand, ast.Column
    ):
        prefix = parse_like(leaf.pattern, leaf.escape).prefix
        found = binder.column(leaf.operand.name)
        if prefix and found is not None:
            relaxed = ColPrefix(found[0], prefix)
    return Opaque(leaf, relaxed, unknown)


# ----------------------------------------------------------------------- relax, DNF, compile
def has_opaque(node: Node) -> bool:
    if isinstance(node, NAnd | NOr):
        return any(has_opaque(i) for i in node.items)
    return isinstance(node, Opaque)


def relax(node: Node, keep: Callable[[Opaque], bool] = lambda o: False) -> Node:
    """Replace client-only atoms by what the store can check (a weaker condition)."""
    if isinstance(node, NAnd):
        return all_of(relax(i, keep) for i in node.items)
    if isinstance(node, NOr):
        return any_of(relax(i, keep) for i in node.items)
    if isinstance(node, Opaque) and not keep(node):
        return node.relaxed
    return node


class TooManyDisjuncts(Exception):
    """The DNF would exceed the bound; the planner falls back to one filtered scan."""


def to_dnf(node: Node, max_disjuncts: int = DEFAULT_MAX_DNF_DISJUNCTS) -> list[Conjunct]:
    """Disjunctive normal form as a list of conjuncts (atoms, no duplicates)."""
    if isinstance(node, Bool):
        return [()] if node.value else []
    if isinstance(node, NOr):
        out: list[Conjunct] = []
        for item in node.items:
            out.extend(to_dnf(item, max_disjuncts))
            if len(out) > max_disjuncts:
                raise TooManyDisjuncts(len(out))
        return list(dict.fromkeys(out))
    if isinstance(node, NAnd):
        acc: list[Conjunct] = [()]
        for item in node.items:
            part = to_dnf(item, max_disjuncts)
            if len(acc) * len(part) > max_disjuncts:
                raise TooManyDisjuncts(len(acc) * len(part))
            acc = [tuple(dict.fromkeys(a + b)) for a in acc for b in part]
        return list(dict.fromkeys(acc))
    return [(node,)]


def compile_node(node: Node, binder: Binder) -> Callable[[Row], bool]:
    """An NNF node as a two-valued row predicate (true atoms decide; unknown counts as false).

    Unknown-column atoms evaluate as true: the caller (a Spark job) applies them, we cannot.
    """
    if isinstance(node, Bool):
        value = node.value
        return lambda row: value
    if isinstance(node, NAnd):
        parts = [compile_node(i, binder) for i in node.items]
        return lambda row: all(p(row) for p in parts)
    if isinstance(node, NOr):
        parts = [compile_node(i, binder) for i in node.items]
        return lambda row: any(p(row) for p in parts)
    if isinstance(node, ColPrefix):
        column, prefix, negated = node.column, node.prefix, node.negated
        return lambda row: (row.get(column) is not None  # a string column's value: a str
                            and cast(str, row[column]).startswith(prefix) != negated)
    if isinstance(node, ColCmp):
        return _compile_cmp(node)
    if node.unknown:
        return lambda row: True
    fn: PredFn = binder.compile(node.expr)
    return lambda row: fn(row) is True


def _compile_cmp(node: ColCmp) -> Callable[[Row], bool]:
    column, value = node.column, node.value
    ops: dict[str, Callable[[Any], bool]] = {
        "=": lambda v: v == value, "!=": lambda v: v != value, "<": lambda v: v < value,
        "<=": lambda v: v <= value, ">": lambda v: v > value, ">=": lambda v: v >= value,
    }
    test = ops[node.op]

    def check(row: Row) -> bool:
        v = row.get(column)
        return v is not None and test(v)

    return check
