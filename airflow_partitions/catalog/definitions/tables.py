"""Definitions held by the catalog: facts, storage tables, partition specs and their locations.

Everything a user types (names, values, templates) is validated here, before any write, so a bad
bulk request fails as a whole with a message naming the bad value.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import posixpath
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from airflow_partitions.arguments import control_character, shown
from airflow_partitions.catalog.definitions.json_types import (
    FactDefJson,
    PartitionJson,
    StorageDefJson,
)
from airflow_partitions.catalog.definitions.locations import (
    InvalidPartitionSpec as InvalidPartitionSpec,
)
from airflow_partitions.catalog.definitions.locations import UnsafeLocation as UnsafeLocation
from airflow_partitions.catalog.definitions.locations import check_location as check_location
from airflow_partitions.catalog.definitions.producers import Producer, check_producers
from airflow_partitions.catalog.slices.dimensions import (
    Dimension,
    dimensions_from_json,
    dimensions_to_json,
)
from airflow_partitions.cover import to_instant
from airflow_partitions.defaults import MAX_RANGE_PARTITIONS
from airflow_partitions.errors import InvalidInput, InvalidPartitionValue, RangeTooLarge
from airflow_partitions.keys import ColumnType, KeySchema, PartitionValue, RowLayout
from airflow_partitions.periods import (
    TimePartition,
    TimePartitionRange,
    UpdatePeriod,
    zone,
    zone_name,
)
from airflow_partitions.timelines import DEFAULT_KIND, timeline_class

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_TEMPLATE_FIELDS: Final = frozenset({"fact", "storage", "period"})


#: A bound of a partition range: a partition value, or an aligned instant (a datetime, or ISO
#: text such as a rendered ``{{ data_interval_start }}``).
RangeBound = str | dt.datetime


class InvalidDefinition(InvalidInput):
    """A fact or storage definition is malformed."""


def check_name(kind: str, name: str) -> str:
    """Names become row keys and Lens property names, so keep them to identifiers."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidDefinition(
            f"{kind} name {name!r} is invalid: use letters, digits, _; no leading digit"
        )
    return name


@dataclass(frozen=True)
class FactDef:
    """A logical dataset; its storage tables share its time columns and zone."""

    name: str
    time_columns: tuple[str, ...] = ("dt",)
    tz: str = "UTC"

    def __post_init__(self) -> None:
        check_name("fact", self.name)
        if not self.time_columns:
            raise InvalidDefinition(f"fact {self.name!r} needs at least one time column")
        for col in self.time_columns:
            check_name("time column", col)
        object.__setattr__(self, "tz", zone_name(zone(self.tz)) or self.tz)

    def to_json(self) -> FactDefJson:
        return {"name": self.name, "time_columns": list(self.time_columns), "tz": self.tz}

    @classmethod
    def from_json(cls, data: FactDefJson) -> FactDef:
        return cls(data["name"], tuple(data["time_columns"]), data["tz"])


def check_dimensions(storage: str, columns: tuple[tuple[str, ColumnType], ...],
                     time_columns: tuple[str, ...], dimensions: tuple[Dimension, ...]) -> None:
    """A dimension must be a string partition column of the storage, not a time column, and
    declared once."""
    if not isinstance(dimensions, tuple) or not all(isinstance(d, Dimension)
                                                    for d in dimensions):
        raise InvalidDefinition(f"storage {storage!r}: dimensions must be a tuple of Dimension, "
                                f"not {shown(dimensions)}")
    kinds = dict(columns)
    seen: set[str] = set()
    for d in dimensions:
        if d.column in seen:
            raise InvalidDefinition(f"storage {storage!r} declares dimension {d.column!r} twice")
        seen.add(d.column)
        if d.column in time_columns:
            raise InvalidDefinition(f"{d.column!r} is a time column of {storage!r}; a dimension "
                                    "is a non-time partition column")
        if kinds.get(d.column) is not ColumnType.STRING:
            known = ", ".join(c for c, t in columns if c not in time_columns
                              and t is ColumnType.STRING) or "none"
            raise InvalidDefinition(
                f"dimension {d.column!r} is not a string partition column of {storage!r} "
                f"(its non-time string columns: {known})")


@dataclass(frozen=True)
class StorageDef:
    """A storage table of a fact: partition columns, update periods, location template."""

    name: str
    fact: str
    columns: tuple[tuple[str, ColumnType], ...]
    time_columns: tuple[str, ...]
    periods: tuple[UpdatePeriod, ...]
    location: str
    tz: str = "UTC"
    priority: int = 0
    timeline_classes: Mapping[str, str] = field(default_factory=dict)
    #: period name -> the DAG that produces its partitions (docs/backfill.md, "Producers").
    producers: Mapping[str, Producer] = field(default_factory=dict)
    #: Declared dimensions: non-time partition columns whose domain values must all be
    #: present for a time partition to count (docs/dimensions.md). Undeclared columns: any
    #: value counts.
    dimensions: tuple[Dimension, ...] = ()

    def __post_init__(self) -> None:
        check_name("storage", self.name)
        check_name("fact", self.fact)
        if not self.periods:
            raise InvalidDefinition(f"storage {self.name!r} needs at least one update period")
        names = [c for c, _ in self.columns]
        if len(set(names)) != len(names):
            raise InvalidDefinition(f"storage {self.name!r} repeats a partition column: {names}")
        for col, ctype in self.columns:
            check_name("partition column", col)
            if col in self.time_columns and ctype is not ColumnType.STRING:
                raise InvalidDefinition(f"time column {col!r} must be a string column")
        for col in self.time_columns:
            if col not in names:
                raise InvalidDefinition(
                    f"time column {col!r} is not a partition column of {self.name!r} ({names})"
                )
        for key, kind in self.timeline_classes.items():
            period_name, _, col = key.partition(".")
            UpdatePeriod.of(period_name)
            if col and col not in self.time_columns:
                raise InvalidDefinition(f"--timeline-class {key}: {col!r} is not a time column")
            timeline_class(kind)
        check_template(self.location, names)
        object.__setattr__(self, "producers",
                           check_producers(self.name, self.periods, self.producers))
        check_dimensions(self.name, self.columns, self.time_columns, self.dimensions)

    # Cached (definitions are immutable): every partition of a bulk register asks for them.
    @functools.cached_property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns)

    @functools.cached_property
    def key_schema(self) -> KeySchema:
        return KeySchema(self.columns)

    @property
    def row_layout(self) -> RowLayout:
        """How this storage's partition rows look on the store (what filters plan over)."""
        return RowLayout(self.name, self.columns)

    def timeline_kind(self, period: UpdatePeriod, column: str) -> str:
        """The configured implementation of one timeline (EndsAndHoles by default)."""
        return self.timeline_classes.get(
            f"{period.name}.{column}", self.timeline_classes.get(period.name, DEFAULT_KIND)
        )

    def to_json(self) -> StorageDefJson:
        out: StorageDefJson = {
            "name": self.name,
            "fact": self.fact,
            "columns": [[c, t.value] for c, t in self.columns],
            "time_columns": list(self.time_columns),
            "periods": [p.name for p in self.periods],
            "location": self.location,
            "tz": self.tz,
            "priority": self.priority,
            "timeline_classes": dict(self.timeline_classes),
        }
        # Only when set: definitions without producers keep their stored bytes.
        if self.producers:
            out["producers"] = {k: p.to_json() for k, p in self.producers.items()}
        if self.dimensions:
            out["dimensions"] = dimensions_to_json(self.dimensions)
        return out

    @classmethod
    def from_json(cls, data: StorageDefJson) -> StorageDef:
        return cls(
            name=data["name"],
            fact=data["fact"],
            columns=tuple((c, ColumnType.parse(t)) for c, t in data["columns"]),
            time_columns=tuple(data["time_columns"]),
            periods=tuple(UpdatePeriod.of(p) for p in data["periods"]),
            location=data["location"],
            tz=data["tz"],
            priority=int(data["priority"]),
            timeline_classes=dict(data["timeline_classes"]),
            producers={k: Producer.from_json(v) for k, v in data.get("producers", {}).items()},
            dimensions=dimensions_from_json(data.get("dimensions", [])),
        )

    @property
    def undeclared_columns(self) -> tuple[str, ...]:
        """Non-time partition columns that are not dimensions: any of their values counts."""
        declared = {d.column for d in self.dimensions}
        return tuple(c for c in self.column_names
                     if c not in self.time_columns and c not in declared)


def encode_json(data: Mapping[str, object]) -> bytes:
    """Stable JSON bytes, so equal definitions compare equal as cells (check-and-put)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def check_template(template: str, columns: Iterable[str]) -> None:
    """A location template may use {fact}, {storage}, {period} and partition columns only."""
    allowed = _TEMPLATE_FIELDS | set(columns)
    if not template:
        raise InvalidDefinition("the location template is empty")
    control = control_character(template)
    if control is not None:
        raise InvalidDefinition(f"location template {shown(template)} holds the control "
                                f"character {control}")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise InvalidDefinition(f"location template {template!r} is malformed: {exc}") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in allowed or spec or conversion:
            raise InvalidDefinition(
                f"location template {template!r} uses {{{name}}}; allowed: "
                + ", ".join(f"{{{a}}}" for a in sorted(allowed))
            )
    if ".." in template.split("/"):
        raise InvalidDefinition(f"location template {template!r} contains '..'")


def template_root(template: str) -> str:
    """The fixed part of a template before its first placeholder: the table's root."""
    head = template.split("{", 1)[0]
    return head.rsplit("/", 1)[0] if "{" in template else head


def check_safe_value(column: str, value: str) -> None:
    """A value lands in a path segment, so it must not name a directory or a parent."""
    if (value in ("", ".", "..") or any(ch in value for ch in "/\\") or value.startswith("~")
            or control_character(value) is not None):
        raise UnsafeLocation(
            f"value {shown(value)} of column {column!r} is not allowed in a location: "
            "no '/', '\\', control characters (NUL, newline, ...), '.', '..', leading '~' "
            "or empty values"
        )


def render_location(
    template: str, fact: str, storage: str, period: UpdatePeriod, values: Mapping[str, str]
) -> str:
    """Fill the template, then prove the result stays under the template's root."""
    for column, value in values.items():
        check_safe_value(column, value)
    return render_safe_location(template, fact, storage, period, values)


def render_safe_location(
    template: str, fact: str, storage: str, period: UpdatePeriod, values: Mapping[str, str]
) -> str:
    """:func:`render_location` for values already through :func:`check_safe_value` (every
    validated :class:`PartitionSpec`'s are); the root check stays."""
    rendered = template.format(fact=fact, storage=storage, period=period.name, **values)
    return check_under_root(rendered, template)


def check_under_root(rendered: str, template: str) -> str:
    """``rendered`` if it stays under the template's root, else :class:`UnsafeLocation`."""
    root = _normal_root(template)
    if root and not (posixpath.normpath(rendered) + "/").startswith(root):
        raise UnsafeLocation(
            f"location {rendered!r} escapes the table root {template_root(template)!r}")
    return rendered


@functools.lru_cache(maxsize=256)
def _normal_root(template: str) -> str:
    """The template's root, normalised, with one trailing slash ("" when it has none)."""
    root = template_root(template)
    return posixpath.normpath(root).rstrip("/") + "/" if root else ""


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """One partition of a storage table and period: typed values in column order."""

    storage: str
    period: UpdatePeriod
    values: tuple[tuple[str, str], ...]  # (column, canonical value text)
    #: The time columns' ordinals in the storage's ``time_columns`` order, found while
    #: validating, so a writer need not parse the values again; () when not known.
    ordinals: tuple[int, ...] = field(default=(), compare=False, repr=False)

    @property
    def value_map(self) -> dict[str, str]:
        return dict(self.values)


def typed_value(column: str, ctype: ColumnType, text: str) -> PartitionValue:
    """Convert a value's text to its column type, with a readable error."""
    try:
        if ctype is ColumnType.STRING:
            return text
        if ctype in (ColumnType.INT, ColumnType.BIGINT):
            if not re.fullmatch(r"-?\d+", text):
                raise ValueError("not an integer")
            return int(text)
        if ctype is ColumnType.DATE:
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidPartitionSpec(
            f"value {shown(text)} of column {column!r} is not a valid {ctype.value}: {exc}"
        ) from None


def canonical_text(ctype: ColumnType, value: PartitionValue) -> str:
    """The one text form of a typed value (so equal partitions render equal locations)."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def make_spec(storage: StorageDef, period: UpdatePeriod | str,
              values: Mapping[str, str]) -> tuple[PartitionSpec, tuple[PartitionValue, ...]]:
    """Validate one partition's values against its storage; return the spec and typed values."""
    period = UpdatePeriod.of(period)
    if period not in storage.periods:
        raise InvalidPartitionSpec(
            f"storage {storage.name!r} has no {period.name} partitions "
            f"(its periods: {', '.join(p.name for p in storage.periods)})"
        )
    unknown = sorted(shown(c, 40) if isinstance(c, str) and len(c) > 40 else str(c)
                     for c in set(values) - set(storage.column_names))
    missing = [c for c in storage.column_names if c not in values]
    if unknown or missing:
        raise InvalidPartitionSpec(
            f"partition of {storage.name!r} must give exactly {', '.join(storage.column_names)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    texts: list[tuple[str, str]] = []
    typed: list[PartitionValue] = []
    ordinals: dict[str, int] = {}
    for column, ctype in storage.columns:
        text = values[column]
        if not isinstance(text, str):
            raise InvalidPartitionSpec(f"value of column {column!r} must be text, got "
                                       f"{shown(text)}")
        if column in storage.time_columns:
            ordinal = period.parse_ordinal(text, storage.tz)  # strict, canonical
            if ordinal == period.end_ordinal(storage.tz):
                raise InvalidPartitionValue(
                    f"{text!r} of column {column!r} is the end of the calendar, not a "
                    f"{period.name} partition: it can only end a range (partitions run to "
                    f"{period.format_ordinal(ordinal - 1, storage.tz)})"
                )
            ordinals[column] = ordinal
            value: PartitionValue = text
        else:
            value = typed_value(column, ctype, text)
            text = canonical_text(ctype, value)
        check_safe_value(column, text)
        texts.append((column, text))
        typed.append(value)
    spec = PartitionSpec(storage.name, period, tuple(texts),
                         tuple(ordinals[c] for c in storage.time_columns))
    return spec, tuple(typed)


@dataclass(frozen=True, slots=True)
class Partition:
    """A registered partition as listed by the catalog."""

    storage: str
    period: UpdatePeriod
    values: dict[str, str]
    location: str
    #: Bumped by each restatement or overwrite (docs/catalog.md, "Versions, lineage and
    #: staleness"); rows written before versions existed read as 1.
    version: int = 1

    def to_json(self) -> PartitionJson:
        return {
            "storage": self.storage,
            "period": self.period.name,
            "values": dict(self.values),
            "location": self.location,
            "version": self.version,
        }


def partition_range(
    sdef: StorageDef, period: UpdatePeriod, begin: RangeBound, end: RangeBound, column: str, *,
    option: str = "column", limit: int = MAX_RANGE_PARTITIONS,
    raise_limit: str = "split the range",
) -> TimePartitionRange:
    """The partitions of ``period`` in ``[begin, end)`` of a time column of ``sdef``, counted
    before any is listed: a range holding more than ``limit`` is a :class:`RangeTooLarge`
    whose message says how many it holds and ``raise_limit`` (how to allow more).

    ``begin`` and ``end`` are partition values (``2024-01-01-00``) or aligned instants
    (datetimes, or ISO text such as a rendered ``{{ data_interval_start }}``) in the storage's
    zone. ``option`` names the argument that chose ``column``, for the error. O(1): the count is
    the difference of two ordinals.
    """
    if column not in sdef.time_columns:
        raise InvalidInput(
            f"{option} {shown(column)} is not a time column of {sdef.name!r} "
            f"({', '.join(sdef.time_columns)})"
        )
    first = _range_bound(period, begin, sdef.tz, "range start")
    last = _range_bound(period, end, sdef.tz, "range end")
    span = TimePartitionRange(first, last)
    if len(span) > limit:
        raise RangeTooLarge(
            f"the range {span} holds {len(span):,} {period.name} partitions, more than the "
            f"limit of {limit:,}; {raise_limit}"
        )
    return span


def range_values(
    sdef: StorageDef, period: UpdatePeriod, begin: RangeBound, end: RangeBound, column: str, *,
    option: str = "column", limit: int = MAX_RANGE_PARTITIONS,
) -> list[str]:
    """Every value of :func:`partition_range`, as a list: the one expansion of a partition
    range shared by the register/drop operators (the CLI streams the range instead)."""
    span = partition_range(sdef, period, begin, end, column, option=option, limit=limit)
    return [p.value for p in span]


def _range_bound(period: UpdatePeriod, value: RangeBound, tz: str, what: str) -> TimePartition:
    """A partition value, else an aligned instant (a rendered template is either)."""
    if isinstance(value, dt.datetime):
        return TimePartition.of(period, to_instant(value, what), tz)
    text = str(value).strip()
    try:
        return TimePartition.of(period, text, tz)
    except InvalidInput as as_value:
        try:
            instant = to_instant(text, what)
        except InvalidInput:
            raise as_value from None
        return TimePartition.of(period, instant, tz)
