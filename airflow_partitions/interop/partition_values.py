"""Partition values as operators take them, and the asset partition keys they emit. Pure.

``values`` is one of:

* a mapping ``{"dt": "2024-01-01-05", "region": "eu"}``; a list value expands to one partition
  per item (``{"dt": ..., "region": ["eu", "us"]}`` is two partitions);
* a list of such mappings;
* a range ``{"range": [a, b], "region": "eu"}``: every partition of the period in ``[a, b)`` of
  the storage's time column (``"range_column"`` names it when the storage has several). ``a``
  and ``b`` are partition values (``2024-01-01-00``) or aligned instants (datetimes, or ISO text
  such as a rendered ``{{ data_interval_start }}``), in the storage's zone;
* JSON text of any of these (a rendered template).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, TypedDict

from airflow_partitions.catalog import StorageDef, range_values
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod

#: Asset partition key styles (see docs/airflow.md, "Asset partition keys").
KEY_STYLES: Final = ("start", "value", "columns", "composite")
MAX_KEY_LENGTH: Final = 250
#: The delimiter of Airflow 3.3's composite keys (``ProductMapper``'s default).
COMPOSITE_DELIMITER: Final = "|"


def _texts(column: str, value: Any) -> list[str]:
    items = value if isinstance(value, list | tuple) else [value]
    out = []
    for item in items:
        if item is None or isinstance(item, dict | list | tuple):
            raise InvalidInput(f"value of column {column!r} must be text, got {item!r}")
        out.append(str(item))
    return out


def _expand_one(item: Mapping[str, Any], sdef: StorageDef, period: UpdatePeriod) -> list[
        dict[str, str]]:
    item = dict(item)
    columns: dict[str, list[str]] = {}
    if "range" in item:
        bounds = item.pop("range")
        column = item.pop("range_column", None)
        if column is None:
            if len(sdef.time_columns) != 1:
                raise InvalidInput(
                    f"storage {sdef.name!r} has time columns {list(sdef.time_columns)}: "
                    "say which one the range is of with 'range_column'"
                )
            column = sdef.time_columns[0]
        if not isinstance(bounds, list | tuple) or len(bounds) != 2:
            raise InvalidInput(f"'range' must be [start, end), got {bounds!r}")
        columns[column] = range_values(
            sdef, period, bounds[0], bounds[1], column, option="range_column"
        )
    for column, value in item.items():
        columns[str(column)] = _texts(str(column), value)
    names = list(columns)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(
        *(columns[n] for n in names))]


def expand_values(values: object, sdef: StorageDef, period: UpdatePeriod | str) -> list[
        dict[str, str]]:
    """Every partition (column -> text) that ``values`` names, in order, without duplicates."""
    period = UpdatePeriod.of(period)
    if isinstance(values, str):
        try:
            values = json.loads(values)
        except ValueError:
            raise InvalidInput(f"values {values!r} is not a mapping, a list or JSON") from None
    if isinstance(values, Mapping):
        batch: Iterable[object] = [values]
    elif isinstance(values, list | tuple):
        batch = values
    else:
        raise InvalidInput(f"values must be a mapping or a list of mappings, not {values!r}")
    out: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
    for item in batch:
        if not isinstance(item, Mapping):
            raise InvalidInput(f"each partition must be a mapping, not {item!r}")
        for part in _expand_one(item, sdef, period):
            out.setdefault(tuple(sorted(part.items())), part)
    return list(out.values())


class KeyFactsJson(TypedDict):
    """What one asset partition key stands for (an asset event's extra): its time value, the
    period's bounds (ISO instants) and how many partitions it names."""

    value: str
    start: str
    end: str
    partitions: int


def composite_segments(sdef: StorageDef, segments: Sequence[str] | None = None
                       ) -> tuple[str, ...]:
    """The columns of a ``composite`` key, in order: ``segments`` as given, or by default the
    storage's non-time partition columns in column order, then its (first) time column:
    ``region|dt``, the order of Airflow's own example (``ProductMapper(IdentityMapper(),
    StartOfDayMapper())`` over ``us|2026-06-14T03:00:00``). A consumer's ``ProductMapper``
    must list one mapper per segment in this order."""
    time_column = sdef.time_columns[0]
    chosen = tuple(segments) if segments is not None else (
        *(c for c in sdef.column_names if c not in sdef.time_columns), time_column)
    unknown = [c for c in chosen if c not in sdef.column_names]
    if unknown or len(set(chosen)) != len(chosen):
        raise InvalidInput(f"key_segments {list(chosen)!r} must name distinct partition columns "
                           f"of storage {sdef.name!r} ({', '.join(sdef.column_names)})")
    if time_column not in chosen:
        raise InvalidInput(f"key_segments {list(chosen)!r} must include the time column "
                           f"{time_column!r}: a key names one time partition")
    if len(chosen) < 2:
        raise InvalidInput(f"a composite key of storage {sdef.name!r} needs two segments or "
                           "more (ProductMapper takes two mappers or more): the storage has no "
                           "other partition column; use partition_key='start'")
    return chosen


def partition_key(part: Mapping[str, str], sdef: StorageDef, period: UpdatePeriod,
                  style: str, segments: Sequence[str] | None = None) -> str:
    """The asset partition key of one partition.

    * ``start``: the time partition's start in the storage's zone, ``%Y-%m-%dT%H:%M:%S``
      (what Airflow's temporal partition mappers parse by default);
    * ``value``: the time partition value (``2024-01-01-05``);
    * ``columns``: every partition column, ``dt=2024-01-01-05,region=eu`` in column order;
    * ``composite``: Airflow 3.3's composite form for ``ProductMapper``, the segments
      (:func:`composite_segments`) joined by ``|``, the time column as its start:
      ``eu|2024-01-01T05:00:00``. A value holding ``|`` is refused (it would split).
    """
    column = sdef.time_columns[0]
    if style == "start":
        return period.parse(part[column], sdef.tz).strftime("%Y-%m-%dT%H:%M:%S")
    if style == "value":
        return part[column]
    if style == "columns":
        return ",".join(f"{c}={part[c]}" for c in sdef.column_names if c in part)
    if style == "composite":
        texts = []
        for c in composite_segments(sdef, segments):
            if c not in part:
                raise InvalidInput(f"partition {dict(part)!r} lacks {c!r}, a key segment")
            text = (period.parse(part[c], sdef.tz).strftime("%Y-%m-%dT%H:%M:%S")
                    if c == column else part[c])
            if COMPOSITE_DELIMITER in text:
                raise InvalidInput(f"{c} value {text!r} holds {COMPOSITE_DELIMITER!r}, the "
                                   "composite key's delimiter: use partition_key='columns'")
            texts.append(text)
        return COMPOSITE_DELIMITER.join(texts)
    raise InvalidInput(f"partition key style {style!r} is not one of {', '.join(KEY_STYLES)}")


def partition_keys(parts: Iterable[Mapping[str, str]], sdef: StorageDef,
                   period: UpdatePeriod | str, style: str,
                   segments: Sequence[str] | None = None) -> list[str]:
    """Distinct keys in time order; each checked against Airflow's 250-character limit."""
    return list(key_facts(parts, sdef, period, style, segments))


def key_facts(parts: Iterable[Mapping[str, str]], sdef: StorageDef,
              period: UpdatePeriod | str, style: str,
              segments: Sequence[str] | None = None) -> dict[str, KeyFactsJson]:
    """Each distinct asset partition key, in time order, with what it stands for.

    A key may stand for several partitions (``start`` keys collapse regions), so its facts are
    its time value, the period's bounds and how many partitions it names. Time order is
    the order of the first partition's start, then the key: the order downstream DAGs should
    see the events in, whatever order ``values`` listed them.

    O(n log n) for n partitions.

    >>> from airflow_partitions.keys import ColumnType
    >>> sdef = StorageDef("raw", "events", (("dt", ColumnType.STRING), ("region",
    ...     ColumnType.STRING)), ("dt",), (UpdatePeriod.HOURLY,), "/data/{dt}/{region}")
    >>> facts = key_facts([{"dt": "2024-01-01-05", "region": "eu"},
    ...     {"dt": "2024-01-01-04", "region": "eu"}, {"dt": "2024-01-01-05", "region": "us"}],
    ...     sdef, "HOURLY", "start")
    >>> list(facts)
    ['2024-01-01T04:00:00', '2024-01-01T05:00:00']
    >>> facts['2024-01-01T05:00:00']['value'], facts['2024-01-01T05:00:00']['partitions']
    ('2024-01-01-05', 2)
    >>> facts['2024-01-01T05:00:00']['end']
    '2024-01-01T06:00:00+00:00'
    """
    period = UpdatePeriod.of(period)
    column = sdef.time_columns[0]
    # A key is derived from one time value (its text or its start), so it names one value.
    spans: dict[str, tuple[dt.datetime, str, int]] = {}
    for part in parts:
        key = partition_key(part, sdef, period, style, segments)
        if len(key) > MAX_KEY_LENGTH:
            raise InvalidInput(
                f"asset partition key {key[:60]!r}... is {len(key)} characters; Airflow allows "
                f"{MAX_KEY_LENGTH}: use partition_key='start' or 'value'"
            )
        if key in spans:
            start, value, count = spans[key]
            spans[key] = (start, value, count + 1)
        else:
            spans[key] = (period.parse(part[column], sdef.tz), part[column], 1)
    ordered = sorted(spans.items(), key=lambda item: (item[1][0], item[0]))
    return {key: {"value": value, "start": start.isoformat(),
                  "end": period.next(start, sdef.tz).isoformat(), "partitions": count}
            for key, (start, value, count) in ordered}
