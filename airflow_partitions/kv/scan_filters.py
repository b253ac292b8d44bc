"""Server-side scan filters: small frozen values, rendered for HBase and evaluated in Python.

One description, two evaluators: ``render_hbase`` produces the HBase filter language (what a
Thrift server parses), ``apply_filter`` evaluates the same filter in Python (what the SQLite
backend uses). Both follow these semantics, which are HBase's:

* ``PrefixFilter`` and ``RowRange`` look at the row key only; they keep or drop the whole row.
* ``ColumnRange`` keeps the cells whose *qualifier* (any family) is in range; a row with no
  such cell is dropped. ``None`` or ``b""`` as a bound means unbounded.
* ``SingleColumnValue`` keeps or drops the whole row by one cell's value. A row without that
  cell passes unless ``filter_if_missing``. It sees only the cells the scan reads (after the
  scan's ``columns`` projection), as in HBase.
* ``FilterList("AND")`` keeps a row when every member keeps it, with the cells every member
  kept; ``"OR"`` keeps it when any member does, with the union of their cells.

Known HBase divergence: inside one AND list, HBase lets a ``ColumnRange`` seek past cells, so a
``SingleColumnValue`` whose column lies outside that range may see the column as missing. Test
the value in an outer AND around a separate scan, or keep the column inside the range.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from airflow_partitions.kv.errors import InvalidScan

CompareOp: TypeAlias = Literal["<", "<=", "=", "!=", ">", ">="]
Comparator: TypeAlias = Literal["binary", "binaryprefix", "regexstring", "substring"]
ListOp: TypeAlias = Literal["AND", "OR"]

_COMPARE_OPS: frozenset[str] = frozenset({"<", "<=", "=", "!=", ">", ">="})
_COMPARATORS: frozenset[str] = frozenset({"binary", "binaryprefix", "regexstring", "substring"})


def _require_bytes(name: str, value: object, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, bytes):
        raise InvalidScan(f"{name} must be bytes, got {type(value).__name__}")


def _require_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise InvalidScan(f"{name} must be a bool, got {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class PrefixFilter:
    """Rows whose key starts with ``prefix``."""

    prefix: bytes

    def __post_init__(self) -> None:
        _require_bytes("PrefixFilter.prefix", self.prefix)


@dataclass(frozen=True, slots=True)
class RowRange:
    """Rows between ``start`` and ``stop`` (``None`` = unbounded), each end in- or exclusive."""

    start: bytes | None = None
    start_inclusive: bool = True
    stop: bytes | None = None
    stop_inclusive: bool = False

    def __post_init__(self) -> None:
        _require_bytes("RowRange.start", self.start, optional=True)
        _require_bytes("RowRange.stop", self.stop, optional=True)
        _require_bool("RowRange.start_inclusive", self.start_inclusive)
        _require_bool("RowRange.stop_inclusive", self.stop_inclusive)


@dataclass(frozen=True, slots=True)
class ColumnRange:
    """Cells whose qualifier lies between ``min`` and ``max`` (slices a wide row)."""

    min: bytes | None = None
    min_inclusive: bool = True
    max: bytes | None = None
    max_inclusive: bool = False

    def __post_init__(self) -> None:
        _require_bytes("ColumnRange.min", self.min, optional=True)
        _require_bytes("ColumnRange.max", self.max, optional=True)
        _require_bool("ColumnRange.min_inclusive", self.min_inclusive)
        _require_bool("ColumnRange.max_inclusive", self.max_inclusive)


@dataclass(frozen=True, slots=True)
class SingleColumnValue:
    """Rows whose ``column`` value compares ``op`` to ``value`` (cell value on the left)."""

    column: bytes
    op: CompareOp
    value: bytes
    comparator: Comparator = "binary"
    filter_if_missing: bool = False

    def __post_init__(self) -> None:
        _require_bytes("SingleColumnValue.column", self.column)
        _require_bytes("SingleColumnValue.value", self.value)
        _require_bool("SingleColumnValue.filter_if_missing", self.filter_if_missing)
        if b":" not in self.column:
            raise InvalidScan(
                f"SingleColumnValue.column must be b'family:qualifier', got {self.column!r}"
            )
        if self.op not in _COMPARE_OPS:
            raise InvalidScan(
                f"unknown comparison operator {self.op!r}; use one of {sorted(_COMPARE_OPS)}"
            )
        if self.comparator not in _COMPARATORS:
            raise InvalidScan(
                f"unknown comparator {self.comparator!r}; use one of {sorted(_COMPARATORS)}"
            )
        if self.comparator in ("regexstring", "substring") and self.op not in ("=", "!="):
            raise InvalidScan(f"comparator {self.comparator!r} supports only '=' and '!='")
        if self.comparator == "regexstring":
            _compile_regex(self.value)


@dataclass(frozen=True, slots=True)
class FilterList:
    """AND / OR of filters; a list (or any iterable) of members is stored as a tuple."""

    op: ListOp
    filters: tuple[ScanFilter, ...]

    def __post_init__(self) -> None:
        if self.op not in ("AND", "OR"):
            raise InvalidScan(f"FilterList.op must be 'AND' or 'OR', got {self.op!r}")
        members = tuple(self.filters)
        if not members:
            raise InvalidScan("FilterList needs at least one filter")
        for member in members:
            if not isinstance(member, FILTER_TYPES):
                raise InvalidScan(f"not a scan filter: {member!r}")
        object.__setattr__(self, "filters", members)


ScanFilter: TypeAlias = PrefixFilter | RowRange | ColumnRange | SingleColumnValue | FilterList
#: The filter classes, for isinstance checks.
FILTER_TYPES = (PrefixFilter, RowRange, ColumnRange, SingleColumnValue, FilterList)


def all_of(*filters: ScanFilter) -> FilterList:
    """``FilterList("AND", filters)``."""
    return FilterList("AND", filters)


def any_of(*filters: ScanFilter) -> FilterList:
    """``FilterList("OR", filters)``."""
    return FilterList("OR", filters)


# ---------------------------------------------------------------------------------------------
# HBase filter language
# ---------------------------------------------------------------------------------------------


def _quote(value: bytes) -> bytes:
    """Single-quote a value, doubling quotes: the only escape the filter language has."""
    return b"'" + value.replace(b"'", b"''") + b"'"


def _bool(value: bool) -> bytes:
    return b"true" if value else b"false"


def render_hbase_bytes(f: ScanFilter) -> bytes:
    """The filter as HBase filter-language bytes, exactly what goes over Thrift.

    Values are arbitrary bytes: every one is quoted, so no value can change the structure.
    """
    if isinstance(f, PrefixFilter):
        return b"PrefixFilter (" + _quote(f.prefix) + b")"
    if isinstance(f, RowRange):
        parts: list[bytes] = []
        if f.start is not None:
            op = b">=" if f.start_inclusive else b">"
            parts.append(b"RowFilter (" + op + b", " + _quote(b"binary:" + f.start) + b")")
        if f.stop is not None:
            op = b"<=" if f.stop_inclusive else b"<"
            parts.append(b"RowFilter (" + op + b", " + _quote(b"binary:" + f.stop) + b")")
        if not parts:
            return b"RowFilter (>=, 'binary:')"
        if len(parts) == 1:
            return parts[0]
        return b"(" + b" AND ".join(parts) + b")"
    if isinstance(f, ColumnRange):
        return (
            b"ColumnRangeFilter ("
            + _quote(f.min or b"")
            + b", "
            + _bool(f.min_inclusive)
            + b", "
            + _quote(f.max or b"")
            + b", "
            + _bool(f.max_inclusive)
            + b")"
        )
    if isinstance(f, SingleColumnValue):
        family, _, qualifier = f.column.partition(b":")
        args = [
            _quote(family),
            _quote(qualifier),
            f.op.encode("ascii"),
            _quote(f.comparator.encode("ascii") + b":" + f.value),
        ]
        if f.filter_if_missing:
            args += [b"true", b"true"]
        return b"SingleColumnValueFilter (" + b", ".join(args) + b")"
    if isinstance(f, FilterList):
        rendered = [render_hbase_bytes(member) for member in f.filters]
        if len(rendered) == 1:
            return rendered[0]
        joiner = b" AND " if f.op == "AND" else b" OR "
        return b"(" + joiner.join(rendered) + b")"
    raise InvalidScan(f"not a scan filter: {f!r}")


def render_hbase(f: ScanFilter) -> str:
    """The filter language as text, one character per byte (Latin-1), for logs and tests.

    Send ``render_hbase_bytes(f)`` (equal to ``render_hbase(f).encode("latin-1")``) to a
    server: HBase parses the filter string as bytes, and a UTF-8 encoding of this text would
    change any value byte >= 0x80.
    """
    return render_hbase_bytes(f).decode("latin-1")


# ---------------------------------------------------------------------------------------------
# Python evaluation (the SQLite backend, and the model the tests compare against)
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _compile_regex(pattern: bytes) -> re.Pattern[bytes]:
    """HBase's RegexStringComparator uses DOTALL and ``find()``: ``re.search`` with DOTALL."""
    try:
        return re.compile(pattern, re.DOTALL)
    except re.error as exc:
        raise InvalidScan(f"invalid regexstring pattern {pattern!r}: {exc}") from exc


def _compare(a: bytes, b: bytes) -> int:
    return (a > b) - (a < b)


def _value_matches(f: SingleColumnValue, cell: bytes) -> bool:
    if f.comparator == "binary":
        sign = _compare(cell, f.value)
    elif f.comparator == "binaryprefix":
        sign = _compare(cell[: len(f.value)], f.value)
    elif f.comparator == "regexstring":
        sign = 0 if _compile_regex(f.value).search(cell) else 1
    else:  # substring: case-insensitive, on UTF-8 text (HBase's SubstringComparator)
        needle = f.value.decode("utf-8", "replace").lower()
        sign = 0 if needle in cell.decode("utf-8", "replace").lower() else 1
    if f.op == "=":
        return sign == 0
    if f.op == "!=":
        return sign != 0
    if f.op == "<":
        return sign < 0
    if f.op == "<=":
        return sign <= 0
    if f.op == ">":
        return sign > 0
    return sign >= 0


def _in_row_range(f: RowRange, row: bytes) -> bool:
    if f.start is not None and (row < f.start or (row == f.start and not f.start_inclusive)):
        return False
    return not (f.stop is not None and (row > f.stop or (row == f.stop and not f.stop_inclusive)))


def qualifier_in_range(f: ColumnRange, qualifier: bytes) -> bool:
    """Whether a qualifier (without family) is inside a ``ColumnRange``."""
    if f.min and (qualifier < f.min or (qualifier == f.min and not f.min_inclusive)):
        return False
    return not (f.max and (qualifier > f.max or (qualifier == f.max and not f.max_inclusive)))


def apply_filter(
    f: ScanFilter, row: bytes, cells: Mapping[bytes, bytes]
) -> dict[bytes, bytes] | None:
    """The cells of ``row`` that ``f`` keeps, or ``None`` when it drops the row."""
    kept = _apply(f, row, cells)
    if kept is None or not kept:
        return None
    return kept


def matches(f: ScanFilter, row: bytes, cells: Mapping[bytes, bytes]) -> bool:
    """Whether a scan with filter ``f`` returns ``row`` (with at least one cell)."""
    return apply_filter(f, row, cells) is not None


def _apply(f: ScanFilter, row: bytes, cells: Mapping[bytes, bytes]) -> dict[bytes, bytes] | None:
    if isinstance(f, PrefixFilter):
        return dict(cells) if row.startswith(f.prefix) else None
    if isinstance(f, RowRange):
        return dict(cells) if _in_row_range(f, row) else None
    if isinstance(f, ColumnRange):
        kept = {c: v for c, v in cells.items() if qualifier_in_range(f, c.partition(b":")[2])}
        return kept or None
    if isinstance(f, SingleColumnValue):
        value = cells.get(f.column)
        if value is None:
            return None if f.filter_if_missing else dict(cells)
        return dict(cells) if _value_matches(f, value) else None
    if isinstance(f, FilterList):
        results = [_apply(member, row, cells) for member in f.filters]
        if f.op == "AND":
            if any(member_kept is None for member_kept in results):
                return None
            keys = set(cells)
            for member_kept in results:
                keys &= set(member_kept or ())
            return {c: cells[c] for c in cells if c in keys} or None
        union: set[bytes] = set()
        for member_kept in results:
            if member_kept is not None:
                union |= set(member_kept)
        return {c: cells[c] for c in cells if c in union} or None
    raise InvalidScan(f"not a scan filter: {f!r}")
