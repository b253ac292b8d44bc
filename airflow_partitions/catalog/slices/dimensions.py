"""Declared dimensions: the values of a non-time partition column that must all be present.

Pure: no store access. A storage definition carries these values as JSON (``to_json``); the
cover reads them through :func:`required_slices`.

Spelling (the CLI's ``--dimension`` and ``storage set-dimension``; one column per spec,
repeatable)::

    region=eu,us                                   required always
    region=apac@2025-06-01T00:00:00Z               required from an instant
    region=apac@2025-06-01T00:00:00Z..2026-01-01T00:00:00Z   from one instant until another
    region=apac@..2026-01-01T00:00:00Z             retired from an instant (required before)

Spans are half-open, ``[since, until)``; instants need an offset (``Z`` or ``+02:00``). A value
may appear twice only with spans that do not overlap (retired, then launched again).
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypedDict

from airflow_partitions.arguments import control_character, shown
from airflow_partitions.cover import RequiredSlice, Slice, to_us
from airflow_partitions.errors import InvalidInput
from airflow_partitions.filters import Binder, ast, parse_filter
from airflow_partitions.keys import ColumnType

#: Characters a value cannot hold, because the spelling uses them.
RESERVED_CHARACTERS: Final = frozenset(",=@")
_COLUMN: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class DimensionError(InvalidInput):
    """A dimension declaration is malformed; the message names the spec and the reason."""


class NaiveDomainInstant(DimensionError):
    """A domain value's ``since`` or ``until`` has no UTC offset."""


class OverlappingDomainValue(DimensionError):
    """One value is declared twice with spans that overlap."""


class NotADimension(DimensionError):
    """A slice filter names a column that is not a declared dimension."""


class UndeclaredValue(DimensionError):
    """A value to retire is not in the domain: retiring it would declare it required since
    the beginning of time, so every past range would lack it."""


class DomainValueJson(TypedDict):
    value: str
    since: str | None
    until: str | None


class DimensionJson(TypedDict):
    column: str
    values: list[DomainValueJson]


def _instant(text: object, what: str) -> dt.datetime:
    if not isinstance(text, str):
        raise DimensionError(f"{what} must be ISO-8601 text, not {shown(text)}")
    try:
        parsed = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise DimensionError(f"{what} {shown(text)} is not an ISO-8601 instant") from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise NaiveDomainInstant(f"{what} {shown(text)} has no UTC offset; add Z or +HH:MM")
    return parsed


def _iso(instant: dt.datetime | None) -> str:
    return "" if instant is None else instant.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class DomainValue:
    """A value required during ``[since, until)`` (None: unbounded on that side)."""

    value: str
    since: dt.datetime | None = None
    until: dt.datetime | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.value, str) or not self.value.strip():
            raise DimensionError(f"a domain value must be non-empty text, not {shown(self.value)}")
        bad = control_character(self.value)
        if bad is not None:
            raise DimensionError(f"domain value {shown(self.value)} holds control character {bad}")
        if RESERVED_CHARACTERS & set(self.value) or self.value != self.value.strip():
            raise DimensionError(
                f"domain value {shown(self.value)} may not hold ',', '=', '@' or edge spaces")
        for name in ("since", "until"):
            instant = getattr(self, name)
            if instant is not None and (not isinstance(instant, dt.datetime)
                                        or instant.utcoffset() is None):
                raise NaiveDomainInstant(
                    f"domain value {self.value}: {name} must be an aware datetime, "
                    f"not {shown(instant)}")
        if self.since is not None and self.until is not None and self.until <= self.since:
            raise DimensionError(f"domain value {self.value}: until {_iso(self.until)} is not "
                                 f"after since {_iso(self.since)}")

    def span_us(self, start: int, end: int) -> tuple[int, int]:
        """The span in microseconds clipped to ``[start, end)`` (may be empty: a >= b)."""
        lo = start if self.since is None else max(start, to_us(self.since))
        hi = end if self.until is None else min(end, to_us(self.until))
        return lo, hi

    def text(self) -> str:
        """``eu``, ``apac@2025-06-01T00:00:00Z``, ``apac@..2026-01-01T00:00:00Z``, ..."""
        if self.since is None and self.until is None:
            return self.value
        if self.until is None:
            return f"{self.value}@{_iso(self.since)}"
        return f"{self.value}@{_iso(self.since)}..{_iso(self.until)}"

    def to_json(self) -> DomainValueJson:
        """``{"value", "since", "until"}``, instants as ISO-8601 or null."""
        return {"value": self.value, "since": _iso(self.since) or None,
                "until": _iso(self.until) or None}


def _overlap(a: DomainValue, b: DomainValue) -> bool:
    lo_a = a.since or dt.datetime.min.replace(tzinfo=dt.UTC)
    lo_b = b.since or dt.datetime.min.replace(tzinfo=dt.UTC)
    hi_a = a.until or dt.datetime.max.replace(tzinfo=dt.UTC)
    hi_b = b.until or dt.datetime.max.replace(tzinfo=dt.UTC)
    return lo_a < hi_b and lo_b < hi_a


@dataclass(frozen=True)
class Dimension:
    """A declared dimension: a partition column and its domain (values in declaration order).

    >>> parse_dimension("region=eu,us").text()
    'region=eu,us'
    """

    column: str
    values: tuple[DomainValue, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.column, str) or not _COLUMN.fullmatch(self.column):
            raise DimensionError(f"a dimension column must be an identifier, not "
                                 f"{shown(self.column)}")
        if not isinstance(self.values, tuple) or not all(
                isinstance(v, DomainValue) for v in self.values):
            raise DimensionError(f"dimension {self.column}: values must be a tuple of "
                                 f"DomainValue, not {shown(self.values)}")
        if not self.values:
            raise DimensionError(f"dimension {self.column} declares no value")
        for a, b in itertools.combinations(self.values, 2):
            if a.value == b.value and _overlap(a, b):
                raise OverlappingDomainValue(
                    f"dimension {self.column}: value {a.value} is declared twice with "
                    f"overlapping spans ({a.text()} and {b.text()})")

    def text(self) -> str:
        """The spec that :func:`parse_dimension` reads back."""
        return f"{self.column}=" + ",".join(v.text() for v in self.values)

    def with_value(self, value: DomainValue) -> Dimension:
        """A copy with ``value`` added (``storage set-dimension S region=apac@INSTANT``)."""
        return Dimension(self.column, (*self.values, value))

    def retired(self, value: str, at: dt.datetime) -> Dimension:
        """A copy where ``value`` is no longer required from ``at`` on: every span of it
        that is open at ``at`` ends there; spans starting at or after ``at`` are dropped."""
        if not isinstance(at, dt.datetime) or at.utcoffset() is None:
            raise NaiveDomainInstant(f"retire {value} at: an aware datetime, not {shown(at)}")
        instant = at
        if not any(v.value == value for v in self.values):
            raise UndeclaredValue(
                f"dimension {self.column} has no value {shown(value)} to retire (declared: "
                f"{', '.join(self.value_names())}); a new value with an end needs its start: "
                f"{value}@SINCE..UNTIL")
        kept = []
        for v in self.values:
            if v.value != value or (v.until is not None and v.until <= instant):
                kept.append(v)
            elif v.since is None or v.since < instant:
                kept.append(DomainValue(v.value, v.since, instant))
        return Dimension(self.column, tuple(kept))

    def value_names(self) -> list[str]:
        """The distinct values of the domain, in declaration order."""
        return list(dict.fromkeys(v.value for v in self.values))

    def to_json(self) -> DimensionJson:
        """``{"column", "values": [...]}``."""
        return {"column": self.column, "values": [v.to_json() for v in self.values]}


def parse_domain_value(text: str, what: str = "domain value") -> DomainValue:
    """``eu``, ``eu@SINCE``, ``eu@SINCE..UNTIL`` or ``eu@..UNTIL``."""
    value, at, span = text.partition("@")
    if not at:
        return DomainValue(value.strip())
    since_text, dots, until_text = span.partition("..")
    since = _instant(since_text, f"{what} {value} since") if since_text.strip() else None
    until = _instant(until_text, f"{what} {value} until") if dots and until_text.strip() else None
    if since is None and until is None:
        raise DimensionError(f"{what} {shown(text)}: give an instant after '@'")
    return DomainValue(value.strip(), since, until)


def parse_dimension(spec: str) -> Dimension:
    """One ``--dimension`` spec: ``column=value[,value...]`` (see the module docstring).

    Cost: O(len(spec)).

    >>> parse_dimension("region=eu,apac@2025-06-01T00:00:00Z").values[1].text()
    'apac@2025-06-01T00:00:00Z'
    """
    if not isinstance(spec, str):
        raise DimensionError(f"a dimension spec must be text, not {shown(spec)}")
    bad = control_character(spec)
    if bad is not None:
        raise DimensionError(f"dimension spec {shown(spec)} holds control character {bad}")
    column, eq, rest = spec.partition("=")
    if not eq:
        raise DimensionError(f"dimension spec {shown(spec)}: expected column=value[,value...]")
    items = rest.split(",")
    if any(not item.strip() for item in items):
        raise DimensionError(f"dimension spec {shown(spec)} has an empty value")
    return Dimension(column.strip(), tuple(parse_domain_value(item) for item in items))


def parse_dimensions(specs: Iterable[str]) -> tuple[Dimension, ...]:
    """Every ``--dimension`` given; specs of one column are merged in order."""
    merged: dict[str, list[DomainValue]] = {}
    for spec in specs:
        dimension = parse_dimension(spec)
        merged.setdefault(dimension.column, []).extend(dimension.values)
    return tuple(Dimension(column, tuple(values)) for column, values in merged.items())


def dimensions_to_json(dimensions: Sequence[Dimension]) -> list[DimensionJson]:
    """The JSON kept in a storage definition."""
    return [d.to_json() for d in dimensions]


def dimensions_from_json(data: object) -> tuple[Dimension, ...]:
    """Read :func:`dimensions_to_json` back, validating it like any other input."""
    if not isinstance(data, list):
        raise DimensionError(f"dimensions JSON must be a list, not {shown(data)}")
    out = []
    for item in data:
        if not isinstance(item, Mapping) or not isinstance(item.get("values"), list):
            raise DimensionError(f"bad dimension JSON {shown(item)}")
        values = []
        for v in item["values"]:
            if not isinstance(v, Mapping):
                raise DimensionError(f"bad domain value JSON {shown(v)}")
            since, until = v.get("since"), v.get("until")
            values.append(DomainValue(
                v.get("value"),  # type: ignore[arg-type]  # checked by DomainValue
                _instant(since, "since") if since is not None else None,
                _instant(until, "until") if until is not None else None))
        out.append(Dimension(item.get("column"), tuple(values)))  # type: ignore[arg-type]
    return tuple(out)


# -- slices -------------------------------------------------------------------------------------


def required_slices(dimensions: Sequence[Dimension], start: dt.datetime,
                    end: dt.datetime) -> list[RequiredSlice]:
    """Every slice (the cartesian product of the columns' values) required somewhere in
    ``[start, end)``, with the spans (microseconds) where all its values are required: the
    intersection of each value's span, clipped to the range. No dimension: the one slice
    ``()`` over the whole range.

    Spans are exact here; the cover widens their edges outward to whole partitions of its
    finest period (``docs/dimensions.md``). Cost: O(product of the domain sizes x spans).

    >>> import pendulum
    >>> [r.slice for r in required_slices([parse_dimension("region=eu,us")],
    ...     pendulum.datetime(2025, 1, 1), pendulum.datetime(2025, 1, 2))]
    [(('region', 'eu'),), (('region', 'us'),)]
    """
    for name, instant in (("start", start), ("end", end)):
        if not isinstance(instant, dt.datetime) or instant.utcoffset() is None:
            raise NaiveDomainInstant(f"slices {name} must be an aware datetime, "
                                     f"not {shown(instant)}")
    lo, hi = to_us(start), to_us(end)
    columns = [d.column for d in dimensions]
    if len(set(columns)) != len(columns):
        raise DimensionError(f"a column is declared twice: {columns}")
    per_column = []
    for d in dimensions:
        spans: dict[str, list[tuple[int, int]]] = {}
        for v in d.values:
            a, b = v.span_us(lo, hi)
            if a < b:
                spans.setdefault(v.value, []).append((a, b))
        per_column.append([(d.column, value, sorted(s)) for value, s in spans.items()])
    out = []
    for combo in itertools.product(*per_column):
        spans_of_slice = [(lo, hi)] if lo < hi else []
        for _, _, spans_of_value in combo:
            spans_of_slice = _intersect(spans_of_slice, spans_of_value)
        if spans_of_slice:
            slice_ = tuple(sorted((column, value) for column, value, _ in combo))
            out.append(RequiredSlice(slice_, tuple(spans_of_slice)))
    return sorted(out, key=lambda r: r.slice)


def _intersect(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for x0, x1 in a:
        for y0, y1 in b:
            lo, hi = max(x0, y0), min(x1, y1)
            if lo < hi:
                out.append((lo, hi))
    return sorted(out)


def select_slices(required: Sequence[RequiredSlice], dimensions: Sequence[Dimension],
                  where: str | None) -> list[RequiredSlice]:
    """The slices a filter over dimension columns keeps (``region IN ('eu','us')``).

    The filter language is ``airflow_partitions.filters`` (parsed, never evaluated as code);
    only dimension columns may appear in it, else :class:`NotADimension`. None keeps all.
    Cost: one parse, then O(slices x filter size).
    """
    if where is None or not where.strip():
        return list(required)
    expr = parse_filter(where)
    declared = [d.column for d in dimensions]
    named = sorted(_columns(expr))
    unknown = [c for c in named if c not in {d.lower() for d in declared}]
    if unknown:
        listed = ", ".join(declared) or "none"
        raise NotADimension(
            f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a declared "
            f"dimension; a slice filter may name only dimension columns (declared: {listed})")
    binder = Binder([(c, ColumnType.STRING) for c in declared])
    binder.check(expr)
    keep = binder.compile(expr)
    return [r for r in required if keep(dict(r.slice)) is True]


def _columns(node: ast.Expr | ast.Value) -> set[str]:
    """Every column name in a filter tree."""
    if isinstance(node, ast.Column):
        return {node.name}
    if isinstance(node, ast.Const):
        return set()
    if isinstance(node, ast.Call):
        return set().union(*(_columns(a) for a in node.args))
    if isinstance(node, ast.Cast):
        return _columns(node.arg)
    if isinstance(node, ast.Compare):
        return _columns(node.left) | _columns(node.right)
    if isinstance(node, ast.And | ast.Or):
        return set().union(*(_columns(i) for i in node.items))
    return _columns(node.operand)  # Like, In, Between, IsNull, Not


def undeclared_notes(columns: Iterable[str], dimensions: Sequence[Dimension],
                     time_columns: Iterable[str] = ()) -> list[str]:
    """One note per non-time partition column that is not a dimension, so answers never hide
    the old behaviour: ``['source: not a dimension, any value counts']``."""
    declared = {d.column for d in dimensions} | set(time_columns)
    return [f"{c}: not a dimension, any value counts" for c in columns if c not in declared]


def slice_matches(slice_: Slice, values: Mapping[str, str]) -> bool:
    """Whether partition values (one row's) belong to ``slice_``."""
    return all(values.get(column) == value for column, value in slice_)
