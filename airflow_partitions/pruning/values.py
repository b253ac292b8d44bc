"""Value sets of small-table join keys, typed as the big table's partition column.

SQL semantics: ``NULL = x`` is never true, so NULL keys are dropped (and counted); they can
never select a partition. A value that does not convert to the column's type raises
:class:`JoinKeyTypeError` rather than being dropped: a dropped value could hide a real match
(Spark casts ``'05'`` to ``5`` when a string key meets an int column), so we refuse to guess.

Conversions (small-side value -> big column type):

* ``string``: ``str`` only (an int key against a string column is refused: Spark would compare
  them as numbers, so ``'05'`` would match ``5``);
* ``int``/``bigint``: ``int`` (not bool), digit text (``'05'`` -> 5, as Spark casts), or a
  ``decimal(p,0)``; the value must fit the column;
* ``date``: ``datetime.date`` or ``yyyy-mm-dd`` text;
* ``timestamp``: an aware ``datetime`` or ISO-8601 text with an offset (UTC when absent).

Pure: no airflow, no pyspark.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, cast

from airflow_partitions.errors import InvalidInput
from airflow_partitions.json_value import JsonValue
from airflow_partitions.keys import INT_RANGES, ColumnType
from airflow_partitions.spark import column_entries, decode_value, read_key_file

DEFAULT_MAX_VALUES: Final = 10_000
_INT_TEXT: Final = re.compile(r"\s*[-+]?\d{1,40}\s*")
_DATE_TEXT: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
Typed = str | int | dt.date | dt.datetime


class JoinKeyTypeError(InvalidInput):
    """A small-table key value does not convert to the big table's column type."""


@dataclass(frozen=True)
class KeyValues:
    """The distinct values of one small-table key column, as collected.

    ``overflow`` means the collector stopped after more than its limit of distinct values, so
    ``values`` is incomplete and must not prune. ``nulls`` is how many NULL keys were seen
    (the collector reports 0 or 1: whether NULL was among the distinct values).
    """

    small: str
    column: str
    values: tuple[object, ...]
    nulls: int = 0
    overflow: bool = False
    spark_type: str | None = None

    @classmethod
    def of(cls, small: str, column: str, values: Iterable[object] | KeyValues) -> KeyValues:
        if isinstance(values, KeyValues):
            return values
        if isinstance(values, str | bytes):
            raise InvalidInput(f"values of {small}.{column} must be a collection, not text")
        items = list(values)
        present = tuple(v for v in items if v is not None)
        return cls(small, column, present, len(items) - len(present))


ValueSets = Mapping[str, Mapping[str, Iterable[object] | KeyValues]]


def find_values(value_sets: ValueSets, small: str, column: str) -> KeyValues | None:
    """The collected values of ``small.column`` (column names match case-insensitively)."""
    table = value_sets.get(small)
    if table is None:
        return None
    if column in table:
        return KeyValues.of(small, column, table[column])
    for name, values in table.items():
        if name.lower() == column.lower():
            return KeyValues.of(small, name, values)
    return None


@dataclass
class TypedSet:
    """One key's values converted to the big column's type."""

    values: set[Typed] = field(default_factory=set)
    nulls: int = 0


def convert_value(value: object, ctype: ColumnType, where: str) -> Typed:
    """One small-side value as the big column's type, or :class:`JoinKeyTypeError`."""
    if isinstance(value, bool):
        raise JoinKeyTypeError(f"{where}: boolean {value!r} cannot match a {ctype.value} column")
    if ctype is ColumnType.STRING:
        if isinstance(value, str):
            return value
        raise JoinKeyTypeError(
            f"{where}: {type(value).__name__} {value!r} against a string partition column; "
            "cast the small-table key to string in the source so both sides agree")
    if ctype in INT_RANGES:
        number = _to_int(value)
        if number is None:
            raise JoinKeyTypeError(f"{where}: {value!r} is not an integer ({ctype.value})")
        low, high = INT_RANGES[ctype]
        if not low <= number <= high:
            raise JoinKeyTypeError(f"{where}: {number} is out of the {ctype.value} range")
        return number
    if ctype is ColumnType.DATE:
        if isinstance(value, dt.datetime):
            raise JoinKeyTypeError(f"{where}: timestamp {value!r} against a date column")
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str) and _DATE_TEXT.fullmatch(value.strip()):
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                pass
        raise JoinKeyTypeError(f"{where}: {value!r} is not a yyyy-mm-dd date")
    stamp = _to_timestamp(value)
    if stamp is None:
        raise JoinKeyTypeError(f"{where}: {value!r} is not an ISO-8601 timestamp")
    return stamp


def _to_int(value: object) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT_TEXT.fullmatch(value):
        return int(value)
    if isinstance(value, decimal.Decimal) and value.is_finite() and value == value.to_integral():
        return int(value)
    return None


def _to_timestamp(value: object) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        stamp = value
    elif isinstance(value, str):
        try:
            stamp = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.UTC)
    return stamp.astimezone(dt.UTC)


def typed_set(key: KeyValues, ctype: ColumnType, big_column: str) -> TypedSet:
    """Convert every value; NULLs are dropped and counted, duplicates collapse."""
    out = TypedSet(nulls=key.nulls)
    where = f"join key {key.small}.{key.column} -> {big_column} ({ctype.value})"
    for value in key.values:
        if value is None:
            out.nulls += 1
            continue
        out.values.add(convert_value(value, ctype, where))
    return out


def partition_value(ctype: ColumnType, text: str) -> Typed | None:
    """A partition's stored text as a typed value (``None`` when unreadable: matches nothing)."""
    try:
        if ctype is ColumnType.STRING:
            return text
        if ctype in INT_RANGES:
            return int(text) if _INT_TEXT.fullmatch(text) else None
        if ctype is ColumnType.DATE:
            return dt.date.fromisoformat(text)
        return _to_timestamp(text)
    except ValueError:
        return None


def sort_key(value: Typed) -> float | str | int | dt.date:
    """Sort values of one column type (for stable records and IN lists)."""
    if isinstance(value, dt.datetime):
        return value.timestamp()
    return value


def json_value(value: Typed) -> str | int:
    """A typed value as JSON (dates and timestamps in ISO-8601)."""
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def load_key_file(path: str) -> dict[str, dict[str, KeyValues]]:
    """Read a ``collect_keys`` output file (:mod:`airflow_partitions.spark.key_file`)."""
    return key_sets_from_json(read_key_file(path), where=f"key file {path!r}")


def key_sets_from_json(data: object, where: str = "key sets") -> dict[str, dict[str, KeyValues]]:
    """A key file's content -> small table -> column -> :class:`KeyValues`."""
    out: dict[str, dict[str, KeyValues]] = {}
    for name, column, entry in column_entries(data, where):
        spark_type = entry.get("type")
        values = cast("list[JsonValue]", entry["values"])  # column_entries checked it
        out.setdefault(name, {})[column] = KeyValues(
            name, column,
            tuple(_from_json(v, spark_type) for v in values if v is not None),
            int(bool(entry.get("has_null"))), bool(entry.get("overflow")),
            cast("str | None", spark_type))  # the file's, as written
    return out


def _from_json(value: JsonValue, spark_type: JsonValue) -> object:
    """Undo the collector's JSON encoding; timestamps get this module's aware parsing."""
    if isinstance(value, str) and isinstance(spark_type, str) and spark_type.startswith(
            "timestamp"):
        return _to_timestamp(value)
    return decode_value(value, spark_type)
