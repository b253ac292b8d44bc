"""The filter expression tree and its canonical text form.

Nodes are frozen dataclasses, so two parses of the same filter compare equal. ``str(node)``
prints the canonical filter string: keywords upper case, strings in single quotes with
backslash escapes, every nested ``AND``/``OR`` in parentheses. Parsing that string gives back
an equal tree (the parser never flattens a parenthesised group), which is what lets the Spark
operator hand a residual to a job as text.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

CompareOp: TypeAlias = Literal["=", "!=", "<", "<=", ">", ">="]
COMPARE_OPS: Final = ("=", "!=", "<", "<=", ">", ">=")
#: ``a op b`` is ``b FLIP[op] a``.
FLIP: Final[dict[str, CompareOp]] = {
    "=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=",
}
#: ``NOT (a op b)`` is ``a NEGATE[op] b`` (also under SQL's three-valued logic).
NEGATE: Final[dict[str, CompareOp]] = {
    "=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<",
}

#: Words that cannot be bare column names (quote such a column with backticks).
RESERVED: Final = frozenset(
    {"and", "or", "not", "like", "in", "between", "is", "null", "escape", "date", "cast", "as"}
)
#: Functions evaluated on the client only (never pushed to the store).
FUNCTIONS: Final = frozenset({"upper", "lower", "length", "substr", "concat"})
CAST_TYPES: Final = ("int", "string", "date")

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES: Final = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def quote_string(text: str) -> str:
    """Single-quoted literal with backslash escapes; other non-printables as ``\\uXXXX``."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif not ch.isprintable():
            code = ord(ch)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def quote_name(name: str) -> str:
    """A column name as written: bare when it is a plain, non-reserved identifier."""
    if _IDENT.fullmatch(name) and name not in RESERVED:
        return name
    return "`" + name.replace("`", "``") + "`"


# ------------------------------------------------------------------------------------- values
@dataclass(frozen=True)
class Column:
    """A reference to a partition column; ``name`` is lower case (names are case-insensitive)."""

    name: str

    def __str__(self) -> str:
        return quote_name(self.name)


@dataclass(frozen=True)
class Const:
    """A literal: ``str``, ``int`` or ``datetime.date``."""

    value: str | int | dt.date

    def __str__(self) -> str:
        if isinstance(self.value, str):
            return quote_string(self.value)
        if isinstance(self.value, dt.date):
            return f"DATE '{self.value.isoformat()}'"
        return str(self.value)


@dataclass(frozen=True)
class Call:
    """``upper(x)``, ``substr(x, 2, 3)``, ...: a function from :data:`FUNCTIONS`."""

    name: str
    args: tuple[Value, ...]

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class Cast:
    """``cast(x AS int|string|date)``."""

    arg: Value
    type: str

    def __str__(self) -> str:
        return f"cast({self.arg} AS {self.type})"


Value: TypeAlias = Column | Const | Call | Cast


# --------------------------------------------------------------------------------- predicates
@dataclass(frozen=True)
class Compare:
    left: Value
    op: CompareOp
    right: Value

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class Like:
    """SQL ``LIKE``: ``%`` any run, ``_`` one character, ``escape`` makes the next one literal."""

    operand: Value
    pattern: str
    escape: str | None = None
    negated: bool = False

    def __str__(self) -> str:
        text = f"{self.operand} {'NOT ' if self.negated else ''}LIKE {quote_string(self.pattern)}"
        if self.escape is not None:
            text += f" ESCAPE {quote_string(self.escape)}"
        return text


@dataclass(frozen=True)
class In:
    operand: Value
    items: tuple[Const, ...]
    negated: bool = False

    def __str__(self) -> str:
        items = ", ".join(str(i) for i in self.items)
        return f"{self.operand} {'NOT ' if self.negated else ''}IN ({items})"


@dataclass(frozen=True)
class Between:
    operand: Value
    low: Const
    high: Const
    negated: bool = False

    def __str__(self) -> str:
        word = "NOT BETWEEN" if self.negated else "BETWEEN"
        return f"{self.operand} {word} {self.low} AND {self.high}"


@dataclass(frozen=True)
class IsNull:
    operand: Value
    negated: bool = False

    def __str__(self) -> str:
        return f"{self.operand} IS {'NOT ' if self.negated else ''}NULL"


@dataclass(frozen=True)
class Not:
    operand: Expr

    def __str__(self) -> str:
        return f"NOT {_group(self.operand)}"


@dataclass(frozen=True)
class And:
    items: tuple[Expr, ...]

    def __str__(self) -> str:
        return " AND ".join(_group(i) for i in self.items)


@dataclass(frozen=True)
class Or:
    items: tuple[Expr, ...]

    def __str__(self) -> str:
        return " OR ".join(_group(i) for i in self.items)


Expr: TypeAlias = Compare | Like | In | Between | IsNull | Not | And | Or


def _group(expr: Expr) -> str:
    return f"({expr})" if isinstance(expr, And | Or) else str(expr)


def conjuncts(expr: Expr) -> list[Expr]:
    """The top-level ``AND`` operands (nested ``AND`` groups included), in order."""
    if isinstance(expr, And):
        return [c for item in expr.items for c in conjuncts(item)]
    return [expr]


def all_of(items: list[Expr]) -> Expr | None:
    """``AND`` of the items (the item itself for one, ``None`` for none)."""
    if not items:
        return None
    return items[0] if len(items) == 1 else And(tuple(items))


def columns_of(node: Expr | Value) -> set[str]:
    """Every column name a node mentions."""
    if isinstance(node, Column):
        return {node.name}
    if isinstance(node, Const):
        return set()
    if isinstance(node, Call):
        return set().union(*(columns_of(a) for a in node.args))
    if isinstance(node, Cast):
        return columns_of(node.arg)
    if isinstance(node, Compare):
        return columns_of(node.left) | columns_of(node.right)
    if isinstance(node, Like | In | Between | IsNull):
        return columns_of(node.operand)
    if isinstance(node, Not):
        return columns_of(node.operand)
    return set().union(*(columns_of(i) for i in node.items))
