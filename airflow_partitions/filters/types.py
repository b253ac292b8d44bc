"""Typing and client-side evaluation of filter expressions against a storage's columns.

Comparisons are typed by the column: strings as strings, ints as ints, dates as dates. A
literal is converted to the type of the other side once, at bind time; one that does not fit
(``year = 'abc'`` on an int column, ``region = 5``) is a :class:`FilterTypeError`, never a
silent string comparison. Time columns are string columns holding period text, so a date
literal compared with them stands for its ``yyyy-mm-dd`` text.

Evaluation follows SQL's three-valued logic (``None`` is unknown): a failed ``cast`` is NULL,
and a row matches only when the filter is true.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from airflow_partitions.arguments import shown
from airflow_partitions.filters import ast
from airflow_partitions.filters.errors import FilterTypeError, UnknownColumnError
from airflow_partitions.filters.like import parse_like
from airflow_partitions.keys import INT_RANGES, ColumnType

#: A typed value: a literal, or a stored one (``dt.datetime`` is a ``dt.date``: timestamps too).
PyValue: TypeAlias = str | int | dt.date
#: A row of typed values, by column (a value is None when NULL or unreadable).
Row: TypeAlias = Mapping[str, object]
#: A compiled value expression: what it gives is only compared or passed on.
ValueFn: TypeAlias = Callable[[Row], object]
PredFn: TypeAlias = Callable[[Row], bool | None]

_INT_TEXT: Final = re.compile(r"-?[0-9]{1,40}")
_DATE_TEXT: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class SqlType(enum.Enum):
    STRING = "string"
    INT = "int"
    DATE = "date"
    TIMESTAMP = "timestamp"
    UNKNOWN = "unknown"  # a column the storage does not have (only when allowed)


def sql_type(ctype: ColumnType) -> SqlType:
    if ctype in (ColumnType.INT, ColumnType.BIGINT):
        return SqlType.INT
    return SqlType(ctype.value)


def parse_date(text: str) -> dt.date | None:
    if not _DATE_TEXT.fullmatch(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def parse_timestamp(text: str) -> dt.datetime | None:
    """ISO-8601; a value without an offset is taken as UTC (the catalog normalises to UTC)."""
    try:
        stamp = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=dt.UTC)


def typed_from_text(ctype: ColumnType, text: str) -> PyValue | None:
    """A stored value text (``p:v.<col>``) as its typed value; unreadable text is NULL."""
    if ctype is ColumnType.STRING:
        return text
    if ctype in (ColumnType.INT, ColumnType.BIGINT):
        return int(text) if _INT_TEXT.fullmatch(text) else None
    if ctype is ColumnType.DATE:
        return parse_date(text)
    return parse_timestamp(text)


class Binder:
    """Resolves column names (case-insensitively) and types; converts literals once."""

    def __init__(
        self, columns: Sequence[tuple[str, ColumnType]], *, allow_unknown: bool = False
    ) -> None:
        self.allow_unknown = allow_unknown
        self._columns: dict[str, tuple[str, ColumnType] | None] = {}
        for name, ctype in columns:
            key = name.lower()
            # Two columns equal but for case cannot be named unambiguously: refuse both.
            self._columns[key] = None if key in self._columns else (name, ctype)
        self.names = [name for name, _ in columns]

    def column(self, name: str) -> tuple[str, ColumnType] | None:
        """``(real name, type)``; ``None`` for an allowed unknown column."""
        if name not in self._columns:
            if self.allow_unknown:
                return None
            raise UnknownColumnError(
                f"unknown column {shown(name)}; the storage's columns are {', '.join(self.names)}"
            )
        found = self._columns[name]
        if found is None:
            raise FilterTypeError(f"column name {name!r} is ambiguous (columns differ by case)")
        return found

    def is_known_column(self, value: ast.Value) -> bool:
        return isinstance(value, ast.Column) and self.column(value.name) is not None

    # -- types --------------------------------------------------------------------------------
    def type_of(self, value: ast.Value) -> SqlType:
        if isinstance(value, ast.Column):
            found = self.column(value.name)
            return SqlType.UNKNOWN if found is None else sql_type(found[1])
        if isinstance(value, ast.Const):
            if isinstance(value.value, str):
                return SqlType.STRING
            return SqlType.DATE if isinstance(value.value, dt.date) else SqlType.INT
        if isinstance(value, ast.Cast):
            self.type_of(value.arg)
            return SqlType(value.type)
        return self._call_type(value)

    def _call_type(self, call: ast.Call) -> SqlType:
        name, args = call.name, call.args
        arity = {"upper": (1, 1), "lower": (1, 1), "length": (1, 1), "substr": (2, 3)}
        low, high = arity.get(name, (1, 10_000))
        if not low <= len(args) <= high:
            raise FilterTypeError(f"{name}() takes {low}..{high} arguments: {call}")
        for arg in args if name == "concat" else args[:1]:
            self._need(self.type_of(arg), SqlType.STRING, f"{name}() argument {arg}")
        if name == "substr":
            for arg, least in zip(args[1:], (1, 0), strict=False):
                if not (isinstance(arg, ast.Const) and type(arg.value) is int
                        and arg.value >= least):
                    raise FilterTypeError(
                        f"substr() position and length must be integer literals (position >= 1,"
                        f" length >= 0): {call}"
                    )
        return SqlType.INT if name == "length" else SqlType.STRING

    @staticmethod
    def _need(got: SqlType, want: SqlType, what: str) -> None:
        if got not in (want, SqlType.UNKNOWN):
            raise FilterTypeError(
                f"{what} is {got.value}, needs {want.value} (convert with cast(x AS {want.value}))"
            )

    def coerce(self, const: ast.Const, other: ast.Value) -> PyValue:
        """The literal as a value of ``other``'s type (a column's range is checked too)."""
        target = self.type_of(other)
        value = const.value
        where = f"literal {const} compared with {other} ({target.value})"
        if target is SqlType.UNKNOWN:
            return value
        if target is SqlType.STRING:
            if isinstance(value, str):
                return value
            if isinstance(value, dt.date):
                return value.isoformat()
            raise FilterTypeError(f"{where}: quote it to compare as a string")
        if target is SqlType.INT:
            number = value if type(value) is int else None
            if isinstance(value, str) and _INT_TEXT.fullmatch(value):
                number = int(value)
            if number is None:
                raise FilterTypeError(f"{where}: not an integer")
            found = self.column(other.name) if isinstance(other, ast.Column) else None
            if found is not None and found[1] in INT_RANGES:
                low, high = INT_RANGES[found[1]]
                if not low <= number <= high:
                    raise FilterTypeError(f"{where}: out of the {found[1].value} range")
            return number
        if target is SqlType.DATE:
            if isinstance(value, dt.date):
                return value
            day = parse_date(value) if isinstance(value, str) else None
            if day is None:
                raise FilterTypeError(f"{where}: not a yyyy-mm-dd date")
            return day
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
        stamp = parse_timestamp(value) if isinstance(value, str) else None
        if stamp is None:
            raise FilterTypeError(f"{where}: not an ISO-8601 timestamp")
        return stamp

    # -- whole predicates ---------------------------------------------------------------------
    def check(self, expr: ast.Expr) -> None:
        """Raise the first type error in ``expr`` (so a bad filter fails before any read)."""
        if isinstance(expr, ast.Not):
            self.check(expr.operand)
        elif isinstance(expr, ast.And | ast.Or):
            for item in expr.items:
                self.check(item)
        elif isinstance(expr, ast.Compare):
            self.compare_values(expr)
        else:
            operand = expr.operand
            if isinstance(operand, ast.Const):
                raise FilterTypeError(f"{expr}: the left side must be a column or a function")
            kind = self.type_of(operand)
            if isinstance(expr, ast.Like):
                self._need(kind, SqlType.STRING, f"LIKE operand {operand}")
                parse_like(expr.pattern, expr.escape)
            elif isinstance(expr, ast.In):
                for const in expr.items:
                    self.coerce(const, operand)
            elif isinstance(expr, ast.Between):
                self.coerce(expr.low, operand)
                self.coerce(expr.high, operand)

    def compare_values(self, cmp: ast.Compare) -> tuple[ast.Value | PyValue, ast.Value | PyValue]:
        """Both sides of a comparison: literals converted, other sides left as nodes."""
        left, right = cmp.left, cmp.right
        if isinstance(left, ast.Const) and isinstance(right, ast.Const):
            raise FilterTypeError(f"{cmp}: compares two literals; one side must be a column")
        if isinstance(right, ast.Const):
            return left, self.coerce(right, left)
        if isinstance(left, ast.Const):
            return self.coerce(left, right), right
        lt, rt = self.type_of(left), self.type_of(right)
        if SqlType.UNKNOWN not in (lt, rt) and lt is not rt:
            raise FilterTypeError(f"{cmp}: compares {lt.value} with {rt.value}")
        return left, right

    # -- compilation to closures (no eval: plain Python functions) ----------------------------
    def compile_value(self, value: ast.Value) -> ValueFn:
        if isinstance(value, ast.Column):
            found = self.column(value.name)
            name = found[0] if found is not None else value.name
            return lambda row: row.get(name)
        if isinstance(value, ast.Const):
            const = value.value
            return lambda row: const
        if isinstance(value, ast.Cast):
            inner = self.compile_value(value.arg)
            convert = _CASTS[value.type]
            return lambda row: _null_or(inner(row), convert)
        args = [self.compile_value(a) for a in value.args]
        if value.name == "upper":
            return lambda row: _null_or(args[0](row), str.upper)
        if value.name == "lower":
            return lambda row: _null_or(args[0](row), str.lower)
        if value.name == "length":
            return lambda row: _null_or(args[0](row), len)
        if value.name == "substr":
            start = _int_const(value.args[1]) - 1
            length = _int_const(value.args[2]) if len(value.args) == 3 else None
            stop = None if length is None else start + length
            return lambda row: _null_or(args[0](row), lambda s: s[start:stop])
        return lambda row: _concat([a(row) for a in args])

    def compile(self, expr: ast.Expr) -> PredFn:
        """``expr`` as a function of a row of typed values: True, False or None (unknown)."""
        if isinstance(expr, ast.Not):
            inner = self.compile(expr.operand)
            return lambda row: _not(inner(row))
        if isinstance(expr, ast.And):
            parts = [self.compile(i) for i in expr.items]
            return lambda row: _and(p(row) for p in parts)
        if isinstance(expr, ast.Or):
            parts = [self.compile(i) for i in expr.items]
            return lambda row: _not(_and(_not(p(row)) for p in parts))
        if isinstance(expr, ast.Compare):
            left, right = self.compile_values(expr)
            test = _COMPARE[expr.op]
            return lambda row: _cmp(test, left(row), right(row))
        operand = self.compile_value(expr.operand)
        flip = expr.negated
        if isinstance(expr, ast.IsNull):
            return lambda row: (operand(row) is None) != flip
        if isinstance(expr, ast.Like):
            pattern = parse_like(expr.pattern, expr.escape)
            return lambda row: _flip(_null_or(operand(row), pattern.matches), flip)
        if isinstance(expr, ast.In):
            items = {self.coerce(i, expr.operand) for i in expr.items}
            return lambda row: _flip(_null_or(operand(row), items.__contains__), flip)
        low = self.coerce(expr.low, expr.operand)
        high = self.coerce(expr.high, expr.operand)
        return lambda row: _flip(_null_or(operand(row), lambda v: low <= v <= high), flip)

    def compile_values(self, cmp: ast.Compare) -> tuple[ValueFn, ValueFn]:
        """Both sides as functions; a converted literal becomes a constant function."""
        return tuple(  # type: ignore[return-value]
            self.compile_value(side) if isinstance(side, _NODES) else _constant(side)
            for side in self.compare_values(cmp)
        )


_NODES: Final = (ast.Column, ast.Const, ast.Call, ast.Cast)


def _constant(value: object) -> ValueFn:
    return lambda row: value


def _int_const(value: ast.Value) -> int:
    assert isinstance(value, ast.Const) and isinstance(value.value, int)
    return value.value


def _null_or(value: Any, fn: Callable[[Any], Any]) -> Any:
    return None if value is None else fn(value)


def _flip(value: bool | None, flip: bool) -> bool | None:
    return None if value is None else value != flip


def _not(value: bool | None) -> bool | None:
    return None if value is None else not value


def _and(values: Any) -> bool | None:
    """Kleene AND: False wins, then unknown, then True."""
    result: bool | None = True
    for v in values:
        if v is False:
            return False
        if v is None:
            result = None
    return result


def _cmp(test: Callable[[Any, Any], bool], a: Any, b: Any) -> bool | None:
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        return None  # only with unknown columns: no cross-type comparison
    return test(a, b)


def _concat(parts: list[Any]) -> str | None:
    return None if any(p is None for p in parts) else "".join(parts)


def _to_int(v: Any) -> int | None:
    if type(v) is int:
        return v
    if isinstance(v, str):
        text = v.strip()
        return int(text) if _INT_TEXT.fullmatch(text) else None
    return None


def _to_string(v: Any) -> str:
    return v.isoformat() if isinstance(v, dt.date) else str(v)


def _to_date(v: Any) -> dt.date | None:
    if isinstance(v, dt.datetime):
        return v.astimezone(dt.UTC).date()
    if isinstance(v, dt.date):
        return v
    return parse_date(v.strip()) if isinstance(v, str) else None


_CASTS: Final[dict[str, Callable[[Any], Any]]] = {
    "int": _to_int, "string": _to_string, "date": _to_date,
}
_COMPARE: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
