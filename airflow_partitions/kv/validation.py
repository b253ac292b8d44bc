"""Argument checks and key arithmetic shared by both backends.

Both backends call these first, so a bad argument raises the same ``InvalidArgument`` on SQLite
and on HBase instead of whatever each backend happens to do with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from airflow_partitions.kv.errors import InvalidArgument, InvalidScan

# HBase allows [A-Za-z0-9_.-] in table qualifiers; the first character may not be '.' or '-'.
_TABLE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_FAMILY = re.compile(rb"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")

#: Inclusive bounds of HBase's signed 64-bit counters.
LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1


def check_table_name(name: object) -> str:
    """A table name safe as an HBase qualifier and as a quoted SQLite identifier."""
    if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
        raise InvalidArgument(
            f"invalid table name {name!r}: use 1-128 characters [A-Za-z0-9_.-], "
            "not starting with '.' or '-'"
        )
    return name


def check_families(families: Iterable[str]) -> tuple[str, ...]:
    """Column family names, without the trailing colon."""
    if isinstance(families, str):
        families = (families,)
    result = tuple(families)
    if not result:
        raise InvalidArgument("a table needs at least one column family")
    for family in result:
        if not isinstance(family, str) or not _FAMILY.fullmatch(family.encode("utf-8", "replace")):
            raise InvalidArgument(f"invalid column family {family!r}: use [A-Za-z0-9_.-]")
    if len(set(result)) != len(result):
        raise InvalidArgument(f"duplicate column family in {result!r}")
    return result


def check_row(row: object) -> bytes:
    """Row keys are non-empty bytes (HBase rejects empty row keys on write)."""
    if not isinstance(row, bytes):
        raise InvalidArgument(f"row key must be bytes, got {type(row).__name__}")
    if not row:
        raise InvalidArgument("row key must not be empty")
    return row


def check_column(column: object) -> bytes:
    """A full column ``b"family:qualifier"`` (the qualifier may be empty)."""
    if not isinstance(column, bytes):
        raise InvalidArgument(f"column must be bytes, got {type(column).__name__}")
    family, sep, _ = column.partition(b":")
    if not sep or not _FAMILY.fullmatch(family):
        raise InvalidArgument(f"column must look like b'family:qualifier', got {column!r}")
    return column


def check_column_spec(spec: object) -> bytes:
    """A read/delete column spec: ``b"family:qualifier"`` or a whole family ``b"family"``."""
    if not isinstance(spec, bytes):
        raise InvalidArgument(f"column must be bytes, got {type(spec).__name__}")
    if b":" in spec:
        return check_column(spec)
    if not _FAMILY.fullmatch(spec):
        raise InvalidArgument(f"invalid column family {spec!r}")
    return spec


def check_column_specs(columns: Iterable[bytes] | None) -> tuple[bytes, ...] | None:
    """``None`` (all columns) or a non-empty, de-duplicated tuple of column specs."""
    if columns is None:
        return None
    if isinstance(columns, bytes):
        raise InvalidArgument("columns must be an iterable of bytes, not a single bytes value")
    specs = tuple(dict.fromkeys(check_column_spec(c) for c in columns))
    if not specs:
        raise InvalidArgument("columns must not be empty; pass None for all columns")
    return specs


#: Column names already checked (bytes are immutable, so a good name stays good); bounded.
_GOOD_COLUMNS: set[bytes] = set()
_GOOD_COLUMNS_MAX = 65_536
_BYTES_ONLY: frozenset[type] = frozenset({bytes})


def check_cells(cells: Mapping[bytes, bytes]) -> dict[bytes, bytes]:
    """Cells to write: ``{b"family:qualifier": value}``."""
    if (type(cells) is dict and _GOOD_COLUMNS.issuperset(cells)
            and set(map(type, cells.values())) <= _BYTES_ONLY):
        return cells.copy()  # the bulk case: known columns, plain bytes; a few C-level passes
    if not isinstance(cells, Mapping):
        raise InvalidArgument(f"cells must be a mapping, got {type(cells).__name__}")
    checked: dict[bytes, bytes] = {}
    for column, value in cells.items():
        if column not in _GOOD_COLUMNS:  # bulk writes repeat a few column names a million times
            check_column(column)
            if len(_GOOD_COLUMNS) < _GOOD_COLUMNS_MAX:
                _GOOD_COLUMNS.add(column)
        if not isinstance(value, bytes):
            raise InvalidArgument(f"value of {column!r} must be bytes, got {type(value).__name__}")
        checked[column] = value
    return checked


def check_swap(column: object, expected: object, value: object) -> None:
    """One compare-and-swap's arguments: a cell name, the bytes expected (None: absent), the
    bytes to write."""
    check_swaps([(column, expected, value)])


def check_swaps(swaps: Sequence[tuple[object, object, object]]) -> None:
    """Compare-and-swaps' arguments, checked as one batch of cells (one pass of
    :func:`check_cells` over all of them, whose column checks are cached)."""
    for _, expected, _ in swaps:
        if expected is not None and not isinstance(expected, bytes):
            raise InvalidArgument(
                f"expected must be bytes or None, got {type(expected).__name__}")
    check_cells({column: value for column, _, value in swaps})  # type: ignore[misc]


def check_row_columns(columns: object) -> tuple[bytes, ...]:
    """The columns of a ``put_rows``: a non-empty sequence of distinct full columns."""
    if isinstance(columns, bytes | str) or not isinstance(columns, Sequence) or not columns:
        raise InvalidArgument(f"columns must be a non-empty sequence of bytes, got {columns!r}")
    names = tuple(check_column(c) for c in columns)
    if len(set(names)) != len(names):
        raise InvalidArgument(f"columns must be distinct, got {columns!r}")
    return names


def check_row_values(columns: tuple[bytes, ...], values: object) -> Sequence[bytes]:
    """One row of a ``put_rows``: one bytes value per column, in the columns' order."""
    if (not isinstance(values, Sequence) or isinstance(values, bytes | str)
            or len(values) != len(columns)):
        raise InvalidArgument(f"a row must give {len(columns)} values (one per column "
                              f"{', '.join(map(repr, columns))}), got {values!r}")
    if not set(map(type, values)) <= _BYTES_ONLY:
        for column, value in zip(columns, values, strict=True):
            if not isinstance(value, bytes):
                raise InvalidArgument(f"value of {column!r} must be bytes, "
                                      f"got {type(value).__name__}")
    return values


def column_selected(column: bytes, specs: tuple[bytes, ...] | None) -> bool:
    """Whether a full column is covered by the specs (a family spec covers all its columns)."""
    if specs is None:
        return True
    family = column.partition(b":")[0]
    return column in specs or family in specs


def family_of(spec: bytes) -> str:
    return spec.partition(b":")[0].decode("ascii")


def check_amount(amount: object) -> int:
    if not isinstance(amount, int) or isinstance(amount, bool):
        raise InvalidArgument(f"increment amount must be an int, got {type(amount).__name__}")
    if not LONG_MIN <= amount <= LONG_MAX:
        raise InvalidArgument(f"increment amount {amount} does not fit a signed 64-bit long")
    return amount


def wrap_long(value: int) -> int:
    """Java ``long`` overflow: what HBase does when a counter passes 2**63 - 1."""
    return (value - LONG_MIN) % 2**64 + LONG_MIN


def prefix_successor(prefix: bytes) -> bytes | None:
    """The smallest key greater than every key starting with ``prefix``; ``None`` = no bound."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


@dataclass(frozen=True, slots=True)
class ScanRange:
    """A validated scan: rows in ``[start, stop)``, ``None`` meaning unbounded."""

    start: bytes | None
    stop: bytes | None
    limit: int | None
    batch_size: int

    @property
    def empty(self) -> bool:
        return self.start is not None and self.stop is not None and self.start >= self.stop


def check_scan(
    start: bytes | None,
    stop: bytes | None,
    prefix: bytes | None,
    limit: int | None,
    batch_size: int,
) -> ScanRange:
    """Turn ``start``/``stop``/``prefix`` into one half-open range, or raise ``InvalidScan``."""
    for name, value in (("start", start), ("stop", stop), ("prefix", prefix)):
        if value is not None and not isinstance(value, bytes):
            raise InvalidScan(f"scan {name} must be bytes or None, got {type(value).__name__}")
    if prefix is not None:
        if start is not None or stop is not None:
            raise InvalidScan("scan prefix cannot be combined with start or stop")
        start, stop = (prefix or None), prefix_successor(prefix)
    if start == b"":
        start = None
    if stop == b"":
        stop = None
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise InvalidScan(f"scan limit must be a non-negative int or None, got {limit!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise InvalidScan(f"scan batch_size must be a positive int, got {batch_size!r}")
    return ScanRange(start=start, stop=stop, limit=limit, batch_size=batch_size)


def check_mutation(
    puts: Mapping[bytes, bytes] | None, deletes: Iterable[bytes] | None
) -> tuple[dict[bytes, bytes], tuple[bytes, ...]]:
    """Puts and deletes for one row; a delete may not cover a column that is also put.

    HBase applies a Thrift row mutation as a delete then a put with the same millisecond
    timestamp, so an overlapping delete would mask the put. Overlap is always a caller bug.
    """
    checked_puts = check_cells(puts or {})
    delete_list = list(deletes) if deletes is not None else []
    checked_deletes = check_column_specs(delete_list) if delete_list else ()
    for spec in checked_deletes or ():
        for column in checked_puts:
            if column_selected(column, (spec,)):
                raise InvalidArgument(
                    f"mutate_row deletes {spec!r} and puts {column!r}: a put already replaces it"
                )
    return checked_puts, checked_deletes or ()
