"""Order-preserving row keys for partition rows (the Hive metastore's scheme on HBase).

A row key encodes ``(db, table, v0, v1, ...)`` so that an ordered key/value store can answer
partition filters with range scans. The layout is::

    key     = field(db) field(table) field(v0) ... field(vN-1) trailer
    field   = 0x00                                  NULL (never for db/table)
            | 0x01 payload                          a value
    trailer = offset(field 0) ... offset(field N+1) count     offsets: 2 bytes big-endian
                                                              count: 1 byte (= N + 2)

Payloads by column type:

* ``string``: UTF-8, each 0x00 byte escaped as ``00 FF``, then the terminator ``00 01``.
  UTF-8 byte order equals code-point order, which is Python's ``str`` order.
* ``int`` / ``bigint``: the two's-complement value with the sign bit flipped, big-endian,
  4 / 8 bytes (i.e. ``value + 2**31`` / ``value + 2**63`` unsigned).
* ``date``: days since 0001-01-01, 4 bytes big-endian.
* ``timestamp``: microseconds since 0001-01-01T00:00Z, 8 bytes big-endian. Aware datetimes
  are normalised to UTC (decoding returns UTC); naive ones are refused, because their instant
  is unknown.

Why the byte order of keys equals the value order: every field is self-delimiting and no field
encoding is a prefix of another of the same type (NULL and value differ in the tag, numbers
and dates have a fixed width, strings end in ``00 01`` which never occurs inside the escaped
body). So two keys of one schema first differ inside the first field where their values
differ, at a byte whose comparison agrees with the value order (NULL < anything). The trailer
is a function of the fields, so it only gets compared when all fields are equal, and then the
keys are equal.

Why filters can run on bytes: for one column, ``encode_value(t, a) < encode_value(t, b)`` iff
``a < b`` (NULL first) and equal bytes iff equal values, so a planner builds scan bounds from
:func:`key_prefix`, :func:`encode_value` and :func:`prefix_successor`, and a residual filter
compares :func:`field_bytes` of a row against ``encode_value`` of a literal without decoding.
:func:`field_bytes` uses only the trailer (property 3 in docs/keys.md), so it is O(1).

Keys are limited to 32767 bytes, HBase's maximum row length; that also keeps every offset in
two bytes. See docs/keys.md for a worked example.
"""

from __future__ import annotations

import enum
import functools
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from typing import Final

from airflow_partitions.arguments import shown
from airflow_partitions.errors import InvalidInput

#: HBase refuses row keys longer than ``Short.MAX_VALUE``; we refuse them when encoding.
MAX_KEY_LENGTH = 32767
#: Field index of the first partition value (field 0 is the db, field 1 the table).
FIRST_VALUE_FIELD = 2
#: At most 255 fields fit the 1-byte count; two of them are db and table.
MAX_COLUMNS = 255 - FIRST_VALUE_FIELD

#: What a partition value may be; ``datetime`` (a ``date`` subclass) is for TIMESTAMP columns.
PartitionValue = str | int | date | None

_NULL = b"\x00"
_VALUE = b"\x01"
_STR_END = b"\x00\x01"
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EPOCH = datetime(1, 1, 1, tzinfo=UTC)
_MAX_MICROS = (datetime.max.replace(tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)
_MAX_DAYS = date.max.toordinal() - 1
_U16 = struct.Struct(">H")


# --------------------------------------------------------------------------------------- errors
class KeyEncodingError(InvalidInput):
    """Base of every error raised by this module; a ``ValueError``."""


class SchemaError(KeyEncodingError):
    """A key schema is malformed (unknown type name, duplicate or too many columns)."""


class ValueTypeError(KeyEncodingError, TypeError):
    """A value has the wrong Python type for its column (``bool`` is not an int)."""


class ValueOutOfRangeError(KeyEncodingError):
    """An int does not fit its column, or a timestamp leaves the datetime range in UTC."""


class NaiveTimestampError(KeyEncodingError):
    """A timestamp has no UTC offset, so the instant it names is unknown."""


class InvalidStringError(KeyEncodingError):
    """A string cannot be encoded as UTF-8 (it holds a lone surrogate)."""


class ArityError(KeyEncodingError):
    """The number of values does not match the schema."""


class KeyTooLongError(KeyEncodingError):
    """The encoded key would exceed :data:`MAX_KEY_LENGTH` bytes."""


class FieldIndexError(KeyEncodingError):
    """A field index is outside the fields a key holds."""


class CorruptKeyError(KeyEncodingError):
    """Bytes are not a key (or value) this codec produced."""


# --------------------------------------------------------------------------------------- schema
class ColumnType(enum.Enum):
    """Partition column types the codec orders correctly (Hive type names)."""

    STRING = "string"
    INT = "int"
    BIGINT = "bigint"
    DATE = "date"
    TIMESTAMP = "timestamp"

    @classmethod
    def parse(cls, name: str | ColumnType) -> ColumnType:
        """Read a Hive type name case-insensitively; unknown names raise :class:`SchemaError`."""
        if isinstance(name, ColumnType):
            return name
        if not isinstance(name, str):
            raise SchemaError(f"column type must be a string, got {name!r}")
        try:
            return cls(name.strip().lower())
        except ValueError:
            allowed = ", ".join(t.value for t in cls)
            raise SchemaError(f"unknown column type {name!r}; expected one of {allowed}") from None



#: The values each integer column type holds: what the codec encodes, and what a filter literal
#: or a pruning value set of that type may be.
INT_RANGES: Final[dict[ColumnType, tuple[int, int]]] = {
    ColumnType.INT: (_INT32_MIN, _INT32_MAX),
    ColumnType.BIGINT: (_INT64_MIN, _INT64_MAX),
}

@dataclass(frozen=True)
class KeySchema:
    """The partition columns of one table, in key order."""

    columns: tuple[tuple[str, ColumnType], ...]

    def __post_init__(self) -> None:
        if not isinstance(self.columns, tuple):
            raise SchemaError(
                f"columns must be a tuple of (name, ColumnType), got {self.columns!r}"
            )
        if len(self.columns) > MAX_COLUMNS:
            raise SchemaError(f"{len(self.columns)} partition columns; at most {MAX_COLUMNS} fit")
        seen: set[str] = set()
        for column in self.columns:
            if (
                not isinstance(column, tuple)
                or len(column) != 2
                or not isinstance(column[0], str)
                or not isinstance(column[1], ColumnType)
            ):
                raise SchemaError(f"column must be (name: str, type: ColumnType), got {column!r}")
            name = column[0]
            if not name:
                raise SchemaError("column names must not be empty")
            if name in seen:
                raise SchemaError(f"duplicate column name {name!r}")
            seen.add(name)

    @classmethod
    def of(cls, columns: Iterable[tuple[str, str | ColumnType]]) -> KeySchema:
        """Build a schema from ``(name, type)`` pairs where types may be Hive type names."""
        return cls(tuple((name, ColumnType.parse(ctype)) for name, ctype in columns))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    @property
    def types(self) -> tuple[ColumnType, ...]:
        return tuple(ctype for _, ctype in self.columns)


# ----------------------------------------------------------------------------------- one value
def encode_value(ctype: ColumnType, value: PartitionValue, *, column: str = "value") -> bytes:
    """Encode one field (tag + payload); byte order of results equals value order, NULL first.

    ``column`` only names the value in error messages.
    """
    _check_type(ctype, column)
    if value is None:
        return _NULL
    if ctype is ColumnType.STRING:
        if not isinstance(value, str):
            raise _type_error(column, ctype, value, "str")
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidStringError(
                f"column {column!r}: string {value!r} is not valid UTF-8 (lone surrogate)"
            ) from None
        return _VALUE + raw.replace(b"\x00", b"\x00\xff") + _STR_END
    if ctype is ColumnType.INT or ctype is ColumnType.BIGINT:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _type_error(column, ctype, value, "int")
        bits = 32 if ctype is ColumnType.INT else 64
        low, high = (_INT32_MIN, _INT32_MAX) if bits == 32 else (_INT64_MIN, _INT64_MAX)
        if not low <= value <= high:
            raise ValueOutOfRangeError(
                f"column {column!r}: {value!r} does not fit a {bits}-bit signed {ctype.value}"
            )
        return _VALUE + (int(value) - low).to_bytes(bits // 8, "big")
    if ctype is ColumnType.DATE:
        if not isinstance(value, date) or isinstance(value, datetime):
            raise _type_error(column, ctype, value, "datetime.date (not datetime)")
        return _VALUE + (value.toordinal() - 1).to_bytes(4, "big")
    if ctype is ColumnType.TIMESTAMP:
        if not isinstance(value, datetime):
            raise _type_error(column, ctype, value, "aware datetime.datetime")
        offset = value.utcoffset()
        if offset is None:
            raise NaiveTimestampError(
                f"column {column!r}: timestamp {value!r} is naive; give it a time zone"
            )
        # Plain arithmetic, not ``value - _EPOCH``: no overflow near the ends of the range, and
        # datetime subclasses (pendulum) cannot change the result type.
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        micros = ((value.toordinal() - 1) * 86400 + seconds) * 1_000_000 + value.microsecond
        micros -= offset // timedelta(microseconds=1)
        if not 0 <= micros <= _MAX_MICROS:
            raise ValueOutOfRangeError(
                f"column {column!r}: timestamp {value!r} is outside the datetime range in UTC"
            )
        return _VALUE + micros.to_bytes(8, "big")
    raise AssertionError(f"unhandled column type {ctype!r}")  # pragma: no cover


def _check_type(ctype: object, column: str) -> None:
    if not isinstance(ctype, ColumnType):
        raise SchemaError(f"column {column!r}: {ctype!r} is not a ColumnType")


def decode_value(ctype: ColumnType, data: bytes) -> PartitionValue:
    """Decode exactly one field produced by :func:`encode_value`."""
    _check_type(ctype, "value")
    data = _as_bytes(data)
    value, end = _read_field(ctype, data, 0, "value")
    if end != len(data):
        raise CorruptKeyError(f"{len(data) - end} trailing byte(s) after a {ctype.value} field")
    return value


def _type_error(column: str, ctype: ColumnType, value: object, wanted: str) -> ValueTypeError:
    return ValueTypeError(
        f"column {column!r} ({ctype.value}) needs {wanted}, got {type(value).__name__} {value!r}"
    )


def _read_field(
    ctype: ColumnType, data: bytes, pos: int, column: str
) -> tuple[PartitionValue, int]:
    """Parse the field starting at ``pos``; return the value and the position after it."""
    if pos >= len(data):
        raise CorruptKeyError(f"column {column!r}: key ends before the field")
    tag = data[pos]
    pos += 1
    if tag == 0x00:
        return None, pos
    if tag != 0x01:
        raise CorruptKeyError(f"column {column!r}: bad tag byte 0x{tag:02x} at {pos - 1}")
    if ctype is ColumnType.STRING:
        return _read_string(data, pos, column)
    width = 4 if ctype in (ColumnType.INT, ColumnType.DATE) else 8
    end = pos + width
    if end > len(data):
        raise CorruptKeyError(f"column {column!r}: {ctype.value} field cut short at {len(data)}")
    number = int.from_bytes(data[pos:end], "big")
    if ctype is ColumnType.INT:
        return number + _INT32_MIN, end
    if ctype is ColumnType.BIGINT:
        return number + _INT64_MIN, end
    if ctype is ColumnType.DATE:
        if number > _MAX_DAYS:
            raise CorruptKeyError(f"column {column!r}: day number {number} is past date.max")
        return date.fromordinal(number + 1), end
    if number > _MAX_MICROS:
        raise CorruptKeyError(f"column {column!r}: microsecond count {number} is past datetime.max")
    return _EPOCH + timedelta(microseconds=number), end


def _read_string(data: bytes, pos: int, column: str) -> tuple[str, int]:
    start = pos
    while True:
        nul = data.find(b"\x00", pos)
        if nul < 0 or nul + 1 >= len(data):
            raise CorruptKeyError(f"column {column!r}: unterminated string at {start}")
        follower = data[nul + 1]
        if follower == 0x01:
            break
        if follower != 0xFF:
            raise CorruptKeyError(f"column {column!r}: bad escape 00 {follower:02x} at {nul}")
        pos = nul + 2
    try:
        text = data[start:nul].replace(b"\x00\xff", b"\x00").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptKeyError(f"column {column!r}: string is not UTF-8 ({exc.reason})") from None
    return text, nul + 2


# ------------------------------------------------------------------------------------ whole key
def table_prefix(db: str, table: str) -> bytes:
    """The bytes every key of ``db.table`` starts with (``X`` in docs/keys.md)."""
    return _encode_name("db", db) + _encode_name("table", table)


def key_prefix(
    schema: KeySchema, db: str, table: str, leading_values: Sequence[PartitionValue]
) -> bytes:
    """Bytes that start exactly the keys whose first ``len(leading_values)`` values are these."""
    _check_sequence(leading_values)
    if len(leading_values) > len(schema.columns):
        raise ArityError(
            f"{len(leading_values)} leading values for {len(schema.columns)} partition columns "
            f"{list(schema.names)}"
        )
    parts = [table_prefix(db, table)]
    for (name, ctype), value in zip(schema.columns, leading_values, strict=False):
        parts.append(encode_value(ctype, value, column=name))
    return b"".join(parts)


def encode_key(schema: KeySchema, db: str, table: str, values: Sequence[PartitionValue]) -> bytes:
    """Encode a partition row key: fields, then the offset trailer."""
    _check_sequence(values)
    if len(values) != len(schema.columns):
        raise ArityError(
            f"{len(values)} values for {len(schema.columns)} partition columns "
            f"{list(schema.names)}: {list(values)!r}"
        )
    fields = [_encode_name("db", db), _encode_name("table", table)]
    fields += [
        encode_value(ctype, value, column=name)
        for (name, ctype), value in zip(schema.columns, values, strict=True)
    ]
    length = sum(len(f) for f in fields) + 2 * len(fields) + 1
    if length > MAX_KEY_LENGTH:
        raise KeyTooLongError(
            f"key for {db!r}.{table!r} {shown(list(values), 120)} would be {length} bytes; "
            f"the limit is {MAX_KEY_LENGTH}"
        )
    offsets = []
    offset = 0
    for field in fields:
        offsets.append(_U16.pack(offset))
        offset += len(field)
    return b"".join(fields) + b"".join(offsets) + bytes([len(fields)])


def decode_key(schema: KeySchema, key: bytes) -> tuple[str, str, tuple[PartitionValue, ...]]:
    """Decode ``(db, table, values)``; bytes this codec did not produce raise CorruptKeyError."""
    key = _as_bytes(key)
    count = len(schema.columns) + FIRST_VALUE_FIELD
    body_end = _trailer_start(key)
    body = key[:body_end]
    if key[-1] != count:
        raise CorruptKeyError(f"key holds {key[-1]} fields; the schema needs {count}")
    names = ("db", "table", *schema.names)
    types = (ColumnType.STRING, ColumnType.STRING, *schema.types)
    decoded: list[PartitionValue] = []
    pos = 0
    for index, (name, ctype) in enumerate(zip(names, types, strict=True)):
        if _U16.unpack_from(key, body_end + 2 * index)[0] != pos:
            raise CorruptKeyError(f"trailer offset of field {index} ({name!r}) is wrong")
        value, pos = _read_field(ctype, body, pos, name)
        if index < FIRST_VALUE_FIELD and value is None:
            raise CorruptKeyError(f"{name} is NULL")
        decoded.append(value)
    if pos != body_end:
        raise CorruptKeyError(f"{body_end - pos} stray byte(s) between the fields and the trailer")
    db, table = decoded[0], decoded[1]
    assert isinstance(db, str) and isinstance(table, str)
    return db, table, tuple(decoded[FIRST_VALUE_FIELD:])


def field_span(key: bytes, index: int) -> tuple[int, int]:
    """``(start, end)`` of field ``index`` (0 db, 1 table, 2+ values), from the trailer only."""
    key = _as_bytes(key)
    body_end = _trailer_start(key)
    count = key[-1]
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
        raise FieldIndexError(f"field index {index!r} is outside the key's {count} fields")
    start = _U16.unpack_from(key, body_end + 2 * index)[0]
    end = _U16.unpack_from(key, body_end + 2 * index + 2)[0] if index + 1 < count else body_end
    if not start < end <= body_end:
        raise CorruptKeyError(f"trailer gives field {index} the span [{start}, {end})")
    return start, end


def field_bytes(key: bytes, index: int) -> bytes:
    """The encoded bytes of field ``index``, equal to ``encode_value`` of its value."""
    start, end = field_span(key, index)
    return bytes(key[start:end])


def string_field(raw: bytes) -> bytes:
    """:func:`encode_value` of a ``STRING`` whose UTF-8 bytes are ``raw`` (already encoded).

    >>> string_field(b"eu") == encode_value(ColumnType.STRING, "eu")
    True
    """
    return _VALUE + raw.replace(b"\x00", b"\x00\xff") + _STR_END


def value_fields(key: bytes) -> list[bytes]:
    """The encoded bytes of every value field (2 onwards), reading the trailer once.

    Why: a bulk register cuts each row's ``p:k.<col>`` cells from its key; one unpack of the
    trailer beats a :func:`field_span` per field. Checked like :func:`field_span`.

    >>> key = encode_key(KeySchema.of([("dt", "string")]), "db", "t", ["2015"])
    >>> value_fields(key)
    [b'\\x012015\\x00\\x01']
    """
    key = _as_bytes(key)
    body_end = _trailer_start(key)
    starts = _trailer(key[-1]).unpack_from(key, body_end)
    bounds = (*starts, body_end)
    if starts[0] or list(bounds) != sorted(set(bounds)):  # strictly increasing from 0
        raise CorruptKeyError(f"trailer gives the fields the starts {list(starts)}")
    return [key[start:end] for start, end in pairwise(bounds[2:])]


@functools.lru_cache(maxsize=256)
def _trailer(count: int) -> struct.Struct:
    """The trailer's layout for ``count`` fields: one u16 start offset each."""
    return struct.Struct(f">{count}H")


def prefix_successor(prefix: bytes) -> bytes | None:
    """The smallest byte string above every string starting with ``prefix`` (``X+`` in
    docs/keys.md).

    ``None`` when there is none (``prefix`` is empty or all 0xFF): scan to the end of the table.
    """
    stripped = bytes(prefix).rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


def _encode_name(what: str, name: str) -> bytes:
    if not isinstance(name, str):
        raise ValueTypeError(f"{what} name must be str, got {type(name).__name__} {name!r}")
    return _encoded_name(what, name)


@functools.lru_cache(maxsize=1024)
def _encoded_name(what: str, name: str) -> bytes:
    """Cached: every key of a bulk write repeats the same storage and period names."""
    return encode_value(ColumnType.STRING, name, column=what)


def _check_sequence(values: object) -> None:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise ValueTypeError(
            f"partition values must be a sequence (list or tuple), got {type(values).__name__}"
        )


def _as_bytes(key: object) -> bytes:
    if not isinstance(key, bytes | bytearray | memoryview):
        raise ValueTypeError(f"key must be bytes, got {type(key).__name__} {key!r}")
    return bytes(key)


def _trailer_start(key: bytes) -> int:
    """Where the trailer begins, checked against the key's length."""
    if not key:
        raise CorruptKeyError("empty key")
    body_end = len(key) - 1 - 2 * key[-1]
    if body_end < key[-1]:  # every field is at least one byte
        raise CorruptKeyError(f"key of {len(key)} bytes cannot hold {key[-1]} fields and a trailer")
    return body_end
