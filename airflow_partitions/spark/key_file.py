"""The key file: the contract between the ``collect_keys`` Spark job and dynamic pruning.

Why one module: the job writes the file on the driver and the pruning operator reads it in
another process, often another machine; both sides (and the tests) go through these functions
so the format is written down once. Pure: no pyspark, no Airflow. The shape (version 1)::

    {"version": 1, "max_values": 10000,
     "sources": [{"name", "source", "kind", "format",
                  "columns": {col: {"type", "values", "distinct", "has_null", "overflow"}}}]}

``type`` is Spark's ``simpleString`` of the column; ``values`` are the distinct non-null values
as JSON (dates, timestamps and decimals as text, bytes as hex), empty when ``overflow``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Final, TypedDict, cast

from airflow_partitions.errors import InvalidInput
from airflow_partitions.json_value import JsonValue

VERSION: Final = 1


class ColumnEntryJson(TypedDict):
    """:func:`column_entry`: one key column of a small table."""

    type: str
    values: list[JsonValue]
    distinct: int
    has_null: bool
    overflow: bool


class SourceEntryJson(TypedDict):
    """:func:`source_entry`: one small table and its key columns."""

    name: str
    source: str
    kind: str
    format: str
    columns: dict[str, ColumnEntryJson]


class KeyDocumentJson(TypedDict):
    """:func:`key_document`: the whole key file."""

    version: int
    max_values: int
    sources: list[SourceEntryJson]


def encode_value(value: object) -> JsonValue:
    """A Spark value as JSON (naive datetimes are the session's UTC, so they are marked UTC)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.astimezone(dt.UTC)
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return cast(JsonValue, value)  # a Spark int, float, str or bool: JSON as it is


def column_entry(
    spark_type: str, values: Sequence[object], *, has_null: bool, overflow: bool
) -> ColumnEntryJson:
    """One column's entry; ``values`` are raw distinct non-null values (encoded here)."""
    return {
        "type": spark_type,
        "values": [] if overflow else sorted((encode_value(v) for v in values), key=repr),
        "distinct": len(values),
        "has_null": has_null,
        "overflow": overflow,
    }


def source_entry(
    name: str, columns: Mapping[str, ColumnEntryJson], *, source: str | None = None,
    kind: str = "path", file_format: str = "parquet",
) -> SourceEntryJson:
    """One small table's entry: its name (what join specs call it) and its columns."""
    return {"name": name, "source": source if source is not None else name, "kind": kind,
            "format": file_format,
            "columns": {column: cast(ColumnEntryJson, dict(entry))
                        for column, entry in columns.items()}}


def key_document(sources: Sequence[SourceEntryJson], max_values: int) -> KeyDocumentJson:
    """The whole file's content."""
    return {"version": VERSION, "max_values": max_values,
            "sources": [cast(SourceEntryJson, dict(s)) for s in sources]}


def write_key_file(document: Mapping[str, object], path: str) -> None:
    """Write atomically: the operator may be polling for the file."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)
    os.replace(tmp, path)


def read_key_file(path: str) -> JsonValue:
    """The parsed file; unreadable or non-JSON files are bad input, named with their path."""
    try:
        with open(path, encoding="utf-8") as f:
            document: JsonValue = json.load(f)
            return document
    except OSError as exc:
        raise InvalidInput(f"cannot read the key file {path!r}: {exc}") from exc
    except ValueError as exc:
        raise InvalidInput(f"key file {path!r} is not valid JSON: {exc}") from exc


def column_entries(
    document: object, where: str = "key sets"
) -> Iterator[tuple[str, str, Mapping[str, JsonValue]]]:
    """Every ``(source name, column, entry)``, after checking the shape."""
    if not isinstance(document, Mapping) or document.get("version") != VERSION:
        raise InvalidInput(f"{where}: expected a version {VERSION} object")
    for source in document.get("sources") or []:
        name = source.get("name") if isinstance(source, Mapping) else None
        columns = source.get("columns") if isinstance(source, Mapping) else None
        if not isinstance(name, str) or not isinstance(columns, Mapping):
            raise InvalidInput(f"{where}: every source needs a name and columns")
        for column, entry in columns.items():
            if not isinstance(entry, Mapping) or not isinstance(entry.get("values"), list):
                raise InvalidInput(f"{where}: {name}.{column} has no value list")
            yield name, str(column), entry


def decode_value(value: JsonValue, spark_type: JsonValue
                 ) -> JsonValue | dt.date | decimal.Decimal:
    """Undo :func:`encode_value` for dates and decimals; timestamps stay ISO text here (the
    reader parses them with its own, stricter rules)."""
    if not isinstance(value, str) or not isinstance(spark_type, str):
        return value
    if spark_type == "date":
        return dt.date.fromisoformat(value)
    if spark_type.startswith("decimal"):
        return decimal.Decimal(value)
    return value
