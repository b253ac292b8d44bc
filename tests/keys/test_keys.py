"""Row-key codec: byte order = value order, round trips, O(1) field access, prefixes, errors."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import (
    FIRST_VALUE_FIELD,
    LOCATION_CELL,
    MAX_KEY_LENGTH,
    ArityError,
    ColumnType,
    CorruptKeyError,
    FieldIndexError,
    InvalidStringError,
    KeyEncodingError,
    KeySchema,
    KeyTooLongError,
    NaiveTimestampError,
    RowLayout,
    SchemaError,
    ValueOutOfRangeError,
    ValueTypeError,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    encoded_cell_column,
    field_bytes,
    field_span,
    key_prefix,
    prefix_successor,
    table_prefix,
    value_cell_column,
)

# Hypothesis' deadline is a wall-clock check; we assert behaviour only.
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)

# ------------------------------------------------------------------------------------ strategies
TRICKY_CHARS = ["\x00", "\x01", "\x02", "\x7f", "\x80", "\xfe", "\xff", "\u0100", "é", "\uffff"]
TRICKY_CHARS += ["\U0001f600", "\U0010ffff", "a", "b"]
chars = st.characters(codec="utf-8") | st.sampled_from(TRICKY_CHARS)  # utf-8: no surrogates
texts = st.text(alphabet=chars, max_size=12)


def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [low, low + 1, -1, 0, 1, high - 1, high]
    return st.sampled_from(edges) | st.integers(low, high) | st.integers(-300, 300)


fixed_offsets = st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-1439, 1439))
zones: st.SearchStrategy[tzinfo] = st.just(UTC) | fixed_offsets | st.timezones()
timestamps = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=zones
) | st.sampled_from(
    [
        datetime.min.replace(tzinfo=UTC),
        datetime.max.replace(tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    ]
)
dates = st.dates() | st.sampled_from([date.min, date.max, date(1969, 12, 31), date(1970, 1, 1)])

VALUES: dict[ColumnType, st.SearchStrategy[Any]] = {
    ColumnType.STRING: texts,
    ColumnType.INT: _ints(*INT32),
    ColumnType.BIGINT: _ints(*INT64),
    ColumnType.DATE: dates,
    ColumnType.TIMESTAMP: timestamps,
}
column_types = st.sampled_from(list(ColumnType))


def nullable(ctype: ColumnType) -> st.SearchStrategy[Any]:
    return st.none() | VALUES[ctype]


def canon(value: Any) -> Any:
    """Aware datetimes as UTC: ``==`` across zones is False inside a DST fold (PEP 495)."""
    return value.astimezone(UTC) if isinstance(value, datetime) else value


def order_key(value: Any) -> tuple[bool, Any]:
    """Value order with NULL first, timestamps as instants."""
    return (value is not None, canon(value))


def row_order(row: tuple[str, str, Sequence[Any]]) -> tuple[Any, ...]:
    db, table, values = row
    return (db, table, *(order_key(v) for v in values))


@st.composite
def schemas(draw: st.DrawFn, min_size: int = 0, max_size: int = 4) -> KeySchema:
    types = draw(st.lists(column_types, min_size=min_size, max_size=max_size))
    return KeySchema(tuple((f"c{i}", t) for i, t in enumerate(types)))


@st.composite
def schema_and_rows(
    draw: st.DrawFn, min_size: int = 0, max_size: int = 4
) -> tuple[KeySchema, list[tuple[str, str, tuple[Any, ...]]]]:
    """Rows drawn from small per-field pools, so rows often share leading fields."""
    schema = draw(schemas(min_size=min_size, max_size=max_size))
    db_pool = draw(st.lists(texts, min_size=1, max_size=2))
    table_pool = draw(st.lists(texts, min_size=1, max_size=2))
    pools = [draw(st.lists(nullable(t), min_size=1, max_size=3)) for t in schema.types]
    row = st.tuples(
        st.sampled_from(db_pool),
        st.sampled_from(table_pool),
        st.tuples(*(st.sampled_from(pool) for pool in pools)),
    )
    return schema, draw(st.lists(row, min_size=1, max_size=12))


def key_of(schema: KeySchema, row: tuple[str, str, Sequence[Any]]) -> bytes:
    return encode_key(schema, *row)


# -------------------------------------------------------------------------------------- ordering
@pytest.mark.parametrize("ctype", list(ColumnType))
@SETTINGS
@given(data=st.data())
def test_value_byte_order_is_value_order(ctype: ColumnType, data: st.DataObject) -> None:
    xs = data.draw(st.lists(nullable(ctype), max_size=20))
    encoded = [encode_value(ctype, x) for x in xs]
    assert sorted(encoded) == [encode_value(ctype, x) for x in sorted(xs, key=order_key)]
    for a, ea in zip(xs, encoded, strict=True):
        for b, eb in zip(xs, encoded, strict=True):
            assert (ea < eb) == (order_key(a) < order_key(b))
            assert (ea == eb) == (order_key(a) == order_key(b))


@pytest.mark.parametrize(
    ("ctype", "ascending"),
    [
        (ColumnType.STRING, [None, "", "\x00", "\x00\x00", "\x00\x01", "\x01", "a", "a\x00", "ab"]),
        (ColumnType.STRING, ["\x7f", "\x80", "\xff", "\u0100", "\uffff", "\U00010000"]),
        (ColumnType.INT, [None, INT32[0], -1, 0, 1, INT32[1]]),
        (ColumnType.BIGINT, [None, INT64[0], INT32[0] - 1, -1, 0, INT32[1] + 1, INT64[1]]),
        (ColumnType.DATE, [None, date.min, date(1969, 12, 31), date(1970, 1, 1), date.max]),
        (
            ColumnType.TIMESTAMP,
            [
                None,
                datetime.min.replace(tzinfo=UTC),
                datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                datetime(1970, 1, 1, 1, 0, 0, 0, tzinfo=timezone(timedelta(hours=1))),
                datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
                datetime.max.replace(tzinfo=UTC),
            ],
        ),
    ],
)
def test_known_orders(ctype: ColumnType, ascending: list[Any]) -> None:
    encoded = [encode_value(ctype, v) for v in ascending]
    assert encoded == sorted(encoded)
    assert len(set(encoded)) == len(encoded)


@SETTINGS
@given(schema_and_rows())
def test_key_byte_order_is_tuple_order(
    case: tuple[KeySchema, list[tuple[str, str, tuple[Any, ...]]]],
) -> None:
    schema, rows = case
    keys = [key_of(schema, r) for r in rows]
    assert sorted(keys) == [key_of(schema, r) for r in sorted(rows, key=row_order)]
    for a, ka in zip(rows, keys, strict=True):
        for b, kb in zip(rows, keys, strict=True):
            assert (ka < kb) == (row_order(a) < row_order(b))
            assert (ka == kb) == (row_order(a) == row_order(b))


@SETTINGS
@given(st.lists(st.tuples(texts, texts, schemas(max_size=3)), min_size=2, max_size=6), st.data())
def test_tables_with_different_schemas_sort_by_db_then_table(
    tables: list[tuple[str, str, KeySchema]], data: st.DataObject
) -> None:
    rows = []
    for db, table, schema in tables:
        if any((db, table) == (d, t) and schema != s for d, t, s in tables):
            continue  # one schema per table
        values = data.draw(st.tuples(*(nullable(t) for t in schema.types)))
        rows.append(((db, table), encode_key(schema, db, table, values)))
    for name_a, key_a in rows:
        for name_b, key_b in rows:
            if name_a != name_b:
                assert (key_a < key_b) == (name_a < name_b)


# ------------------------------------------------------------------------------------ round trip
@pytest.mark.parametrize("ctype", list(ColumnType))
@SETTINGS
@given(data=st.data())
def test_value_round_trip(ctype: ColumnType, data: st.DataObject) -> None:
    value = data.draw(nullable(ctype))
    decoded = decode_value(ctype, encode_value(ctype, value))
    assert decoded == canon(value)
    assert type(decoded) is type(value)
    if isinstance(decoded, datetime):
        assert decoded.tzinfo is UTC


@SETTINGS
@given(schema_and_rows(max_size=5))
def test_key_round_trip(case: tuple[KeySchema, list[tuple[str, str, tuple[Any, ...]]]]) -> None:
    schema, rows = case
    for db, table, values in rows:
        key = encode_key(schema, db, table, values)
        expected = (db, table, tuple(canon(v) for v in values))
        assert decode_key(schema, key) == expected
        assert decode_key(schema, bytearray(key)) == expected


def test_timestamps_are_normalised_to_utc() -> None:
    schema = KeySchema.of([("ts", "timestamp")])
    local = datetime(2015, 3, 29, 3, 30, tzinfo=timezone(timedelta(hours=2)))
    key = encode_key(schema, "db", "t", [local])
    assert key == encode_key(schema, "db", "t", [local.astimezone(UTC)])
    (decoded,) = decode_key(schema, key)[2]
    assert decoded == local
    assert decoded.tzinfo is UTC
    assert decoded.hour == 1


def test_dst_fold_is_told_apart() -> None:
    """01:30 happens twice in New York on 2015-11-01; ``fold`` picks the instant."""
    new_york = ZoneInfo("America/New_York")
    first = datetime(2015, 11, 1, 1, 30, tzinfo=new_york)
    second = first.replace(fold=1)
    encoded = [encode_value(ColumnType.TIMESTAMP, v) for v in (first, second)]
    assert encoded[0] < encoded[1]
    assert decode_value(ColumnType.TIMESTAMP, encoded[0]) == datetime(
        2015, 11, 1, 5, 30, tzinfo=UTC
    )
    assert decode_value(ColumnType.TIMESTAMP, encoded[1]) == datetime(
        2015, 11, 1, 6, 30, tzinfo=UTC
    )


# ----------------------------------------------------------------------------- O(1) field access
@SETTINGS
@given(schema_and_rows(max_size=5))
def test_field_bytes_equal_encode_value(
    case: tuple[KeySchema, list[tuple[str, str, tuple[Any, ...]]]],
) -> None:
    schema, rows = case
    for db, table, values in rows:
        key = encode_key(schema, db, table, values)
        expected = [encode_value(ColumnType.STRING, db), encode_value(ColumnType.STRING, table)]
        expected += [encode_value(t, v) for t, v in zip(schema.types, values, strict=True)]
        assert key[-1] == len(expected)
        position = 0
        for index, field in enumerate(expected):
            assert field_span(key, index) == (position, position + len(field))
            assert field_bytes(key, index) == field
            position += len(field)
        # The rest is the trailer: one 2-byte offset per field, then the count.
        assert len(key) == position + 2 * len(expected) + 1
        column_index = len(expected) - 1
        if column_index >= FIRST_VALUE_FIELD:
            ctype = schema.types[column_index - FIRST_VALUE_FIELD]
            assert decode_value(ctype, field_bytes(key, column_index)) == canon(values[-1])


def test_field_span_reads_only_the_trailer() -> None:
    """The span comes from the trailer: garbage in the body does not change it."""
    schema = KeySchema.of([("region", "string"), ("n", "bigint")])
    key = encode_key(schema, "db", "t", ["eu", 7])
    start, end = field_span(key, 3)
    scrambled = bytes([0xAB] * start) + key[start:]
    assert field_span(scrambled, 3) == (start, end)
    assert decode_value(ColumnType.BIGINT, field_bytes(scrambled, 3)) == 7


def test_worked_example_from_docs() -> None:
    schema = KeySchema.of([("dt", "date"), ("region", "string"), ("n", "int")])
    key = encode_key(schema, "db", "t", [date(2015, 2, 14), "eu", -5])
    assert key.hex(" ") == (
        "01 64 62 00 01 01 74 00 01 01 00 0b 39 9a 01 65 75 00 01 01 7f ff ff fb "
        "00 00 00 05 00 09 00 0e 00 13 05"
    )


# ------------------------------------------------------------------------------------- prefixes
@SETTINGS
@given(schema_and_rows(), st.data())
def test_key_prefix_starts_exactly_the_matching_keys(
    case: tuple[KeySchema, list[tuple[str, str, tuple[Any, ...]]]], data: st.DataObject
) -> None:
    schema, rows = case
    db, table, values = data.draw(st.sampled_from(rows))
    k = data.draw(st.integers(0, len(values)))
    prefix = key_prefix(schema, db, table, values[:k])
    if k == 0:
        assert prefix == table_prefix(db, table)
    successor = prefix_successor(prefix)
    assert successor is not None  # a prefix starts with a 0x01 tag
    wanted = (db, table, *map(canon, values[:k]))
    for row in rows:
        key = key_of(schema, row)
        matches = (row[0], row[1], *map(canon, row[2][:k])) == wanted
        assert key.startswith(prefix) == matches
        if matches:
            assert prefix <= key < successor
        elif key > prefix:
            assert key >= successor


@SETTINGS
@given(st.binary(max_size=6), st.binary(max_size=8))
def test_prefix_successor_is_the_least_upper_bound(prefix: bytes, other: bytes) -> None:
    successor = prefix_successor(prefix)
    if successor is None:
        assert prefix.strip(b"\xff") == b""
        return
    assert not successor.startswith(prefix)
    assert successor > prefix
    for candidate in (other, prefix + other, successor + other, successor[:-1] + other):
        above_all = candidate > prefix and not candidate.startswith(prefix)
        assert (candidate >= successor) == above_all


@pytest.mark.parametrize(
    ("prefix", "successor"),
    [
        (b"", None),
        (b"\xff\xff", None),
        (b"\x00", b"\x01"),
        (b"a\xff", b"b"),
        (b"a\xfe", b"a\xff"),
        (b"\x01\xff\xff", b"\x02"),
    ],
)
def test_prefix_successor_examples(prefix: bytes, successor: bytes | None) -> None:
    assert prefix_successor(prefix) == successor


def test_scan_plan_for_first_column_range() -> None:
    """The seed's ``p1 > 10 and p1 < 20`` is Scan(X10+, X20) on the encoded bytes."""
    schema = KeySchema.of([("p1", "int"), ("p2", "string")])
    keys = sorted(encode_key(schema, "db", "t", [p1, p2]) for p1 in range(5, 25) for p2 in "ab")
    x = table_prefix("db", "t")
    start = prefix_successor(x + encode_value(ColumnType.INT, 10))
    stop = x + encode_value(ColumnType.INT, 20)
    assert start is not None
    hits = [decode_key(schema, k)[2] for k in keys if start <= k < stop]
    assert hits == [(p1, p2) for p1 in range(11, 20) for p2 in "ab"]


# --------------------------------------------------------------------------------------- errors
AWARE = datetime(2015, 1, 1, tzinfo=UTC)


class _NoOffset(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None


@pytest.mark.parametrize(
    ("ctype", "value", "error"),
    [
        (ColumnType.STRING, 5, ValueTypeError),
        (ColumnType.STRING, b"bytes", ValueTypeError),
        (ColumnType.STRING, "\ud800", InvalidStringError),
        (ColumnType.INT, True, ValueTypeError),
        (ColumnType.BIGINT, False, ValueTypeError),
        (ColumnType.INT, 1.0, ValueTypeError),
        (ColumnType.INT, "1", ValueTypeError),
        (ColumnType.INT, 2**31, ValueOutOfRangeError),
        (ColumnType.INT, -(2**31) - 1, ValueOutOfRangeError),
        (ColumnType.BIGINT, 2**63, ValueOutOfRangeError),
        (ColumnType.BIGINT, -(2**63) - 1, ValueOutOfRangeError),
        (ColumnType.DATE, AWARE, ValueTypeError),
        (ColumnType.DATE, "2015-01-01", ValueTypeError),
        (ColumnType.TIMESTAMP, date(2015, 1, 1), ValueTypeError),
        (ColumnType.TIMESTAMP, 1420070400, ValueTypeError),
        (ColumnType.TIMESTAMP, datetime(2015, 1, 1), NaiveTimestampError),
        (ColumnType.TIMESTAMP, datetime(2015, 1, 1, tzinfo=_NoOffset()), NaiveTimestampError),
        (
            ColumnType.TIMESTAMP,
            datetime.min.replace(tzinfo=timezone(timedelta(hours=1))),
            ValueOutOfRangeError,
        ),
        (
            ColumnType.TIMESTAMP,
            datetime.max.replace(tzinfo=timezone(timedelta(hours=-1))),
            ValueOutOfRangeError,
        ),
    ],
)
def test_bad_values_raise_typed_errors(
    ctype: ColumnType, value: object, error: type[KeyEncodingError]
) -> None:
    with pytest.raises(error, match="'region'") as excinfo:
        encode_value(ctype, value, column="region")  # type: ignore[arg-type]
    assert isinstance(excinfo.value, KeyEncodingError)
    assert isinstance(excinfo.value, ValueError)
    assert isinstance(excinfo.value, InvalidInput)
    assert repr(value)[:20] in str(excinfo.value) or error is InvalidStringError
    # The same value inside a key names the column too.
    schema = KeySchema((("region", ctype),))
    with pytest.raises(error, match="'region'"):
        encode_key(schema, "db", "t", [value])


SCHEMA = KeySchema.of([("dt", "date"), ("region", "string")])


@pytest.mark.parametrize(
    ("call", "error", "fragment"),
    [
        (lambda: encode_key(SCHEMA, "db", "t", [date(2015, 1, 1)]), ArityError, "1 values"),
        (lambda: encode_key(SCHEMA, "db", "t", [None, "a", "b"]), ArityError, "3 values"),
        (lambda: encode_key(SCHEMA, "db", "t", "ab"), ValueTypeError, "sequence"),
        (lambda: key_prefix(SCHEMA, "db", "t", [None, None, None]), ArityError, "3 leading"),
        (lambda: encode_key(SCHEMA, None, "t", [None, None]), ValueTypeError, "db name"),
        (lambda: encode_key(SCHEMA, "db", 5, [None, None]), ValueTypeError, "table name"),
        (lambda: table_prefix("db", None), ValueTypeError, "table name"),
        (lambda: encode_key(SCHEMA, "db", "t", [None, "x" * 40000]), KeyTooLongError, "32767"),
        (lambda: ColumnType.parse("varchar"), SchemaError, "'varchar'"),
        (lambda: ColumnType.parse(3), SchemaError, "3"),
        (lambda: KeySchema.of([("a", "int"), ("a", "string")]), SchemaError, "duplicate"),
        (lambda: KeySchema.of([("", "int")]), SchemaError, "empty"),
        (lambda: KeySchema((("a", "int"),)), SchemaError, "ColumnType"),
        (lambda: KeySchema([("a", ColumnType.INT)]), SchemaError, "tuple"),
        (lambda: KeySchema.of([(f"c{i}", "int") for i in range(254)]), SchemaError, "253"),
        (lambda: field_span(encode_key(SCHEMA, "d", "t", [None, None]), 4), FieldIndexError, "4"),
        (lambda: field_span(encode_key(SCHEMA, "d", "t", [None, None]), -1), FieldIndexError, ""),
        (lambda: field_bytes(b"", 0), CorruptKeyError, "empty"),
        (lambda: field_bytes("text", 0), ValueTypeError, "bytes"),
        (lambda: decode_key(SCHEMA, "text"), ValueTypeError, "bytes"),
        (
            lambda: decode_key(KeySchema(()), encode_key(SCHEMA, "d", "t", [None, None])),
            CorruptKeyError,
            "4 fields",
        ),
        (lambda: decode_value(ColumnType.INT, b"\x01\x00\x00\x00\x00\x00"), CorruptKeyError, "1"),
        (lambda: decode_value(ColumnType.STRING, b"\x01ab"), CorruptKeyError, "unterminated"),
        (lambda: decode_value(ColumnType.STRING, b"\x01a\x00\x02\x00\x01"), CorruptKeyError, ""),
        (lambda: decode_value(ColumnType.STRING, b"\x01\xc3\x00\x01"), CorruptKeyError, "UTF-8"),
        (lambda: decode_value(ColumnType.DATE, b"\x01\xff\xff\xff\xff"), CorruptKeyError, "date"),
        (lambda: decode_value(ColumnType.TIMESTAMP, b"\x01" + b"\xff" * 8), CorruptKeyError, ""),
        (lambda: decode_value(ColumnType.INT, b"\x02"), CorruptKeyError, "tag"),
        (lambda: decode_value(ColumnType.INT, b""), CorruptKeyError, "ends"),
        (lambda: encode_value("int", None), SchemaError, "not a ColumnType"),
        (lambda: decode_value("int", b"\x00"), SchemaError, "not a ColumnType"),
    ],
)
def test_bad_calls_raise_typed_errors(
    call: Any, error: type[KeyEncodingError], fragment: str
) -> None:
    with pytest.raises(error, match=fragment or None) as excinfo:
        call()
    assert isinstance(excinfo.value, KeyEncodingError)
    assert isinstance(excinfo.value, ValueError)


def test_null_db_or_table_in_a_key_is_corrupt() -> None:
    schema = KeySchema(())
    key = encode_key(schema, "db", "t", [])
    # Replace the db field by a NULL tag and fix the trailer so only the NULL is wrong.
    db_end = field_span(key, 0)[1]
    body = b"\x00" + key[db_end : field_span(key, 1)[1]]
    forged = body + (0).to_bytes(2, "big") + (1).to_bytes(2, "big") + b"\x02"
    with pytest.raises(CorruptKeyError, match="db is NULL"):
        decode_key(schema, forged)


def test_key_length_limit_is_exact() -> None:
    schema = KeySchema.of([("s", "string")])
    overhead = len(encode_key(schema, "db", "t", [""]))
    fits = "x" * (MAX_KEY_LENGTH - overhead)
    assert len(encode_key(schema, "db", "t", [fits])) == MAX_KEY_LENGTH
    with pytest.raises(KeyTooLongError):
        encode_key(schema, "db", "t", [fits + "x"])


def test_column_type_parse_is_case_insensitive() -> None:
    assert ColumnType.parse("BigInt") is ColumnType.BIGINT
    assert ColumnType.parse(" TIMESTAMP ") is ColumnType.TIMESTAMP
    assert ColumnType.parse(ColumnType.DATE) is ColumnType.DATE
    schema = KeySchema.of([("dt", "Date"), ("n", ColumnType.INT)])
    assert schema.names == ("dt", "n")
    assert schema.types == (ColumnType.DATE, ColumnType.INT)


# ------------------------------------------------------------------------------------- garbage
def _check_decoded_or_typed_error(schema: KeySchema, data: bytes) -> None:
    """Garbage raises KeyEncodingError; anything accepted re-encodes to the same bytes."""
    try:
        db, table, values = decode_key(schema, data)
    except KeyEncodingError:
        pass
    else:
        assert encode_key(schema, db, table, values) == data
    for index in range(-1, FIRST_VALUE_FIELD + len(schema.columns) + 1):
        try:
            start, end = field_span(data, index)
        except KeyEncodingError:
            continue
        assert 0 <= start < end <= len(data)


@SETTINGS
@given(schemas(max_size=3), st.binary(max_size=64))
def test_decoding_random_bytes_raises_only_typed_errors(schema: KeySchema, data: bytes) -> None:
    _check_decoded_or_typed_error(schema, data)


@SETTINGS
@given(schema_and_rows(max_size=3), st.data())
def test_decoding_mutated_keys_raises_only_typed_errors(
    case: tuple[KeySchema, list[tuple[str, str, tuple[Any, ...]]]], data: st.DataObject
) -> None:
    schema, rows = case
    key = key_of(schema, rows[0])
    position = data.draw(st.integers(0, len(key)))
    byte = data.draw(st.binary(min_size=0, max_size=2))
    how = data.draw(st.sampled_from(["replace", "insert", "delete", "truncate"]))
    if how == "replace":
        mutated = key[:position] + byte + key[position + 1 :]
    elif how == "insert":
        mutated = key[:position] + byte + key[position:]
    elif how == "delete":
        mutated = key[:position] + key[position + 1 :]
    else:
        mutated = key[:position]
    assume(mutated != key)
    _check_decoded_or_typed_error(schema, mutated)


@pytest.mark.parametrize("ctype", list(ColumnType))
@SETTINGS
@given(data=st.binary(max_size=16))
def test_decode_value_on_random_bytes(ctype: ColumnType, data: bytes) -> None:
    try:
        value = decode_value(ctype, data)
    except KeyEncodingError:
        return
    assert encode_value(ctype, value) == data


# ------------------------------------------------------------------------------- row layout
def test_row_layout_names_the_cells_and_keys_of_a_storage() -> None:
    layout = RowLayout("ev", (("dt", ColumnType.STRING), ("n", ColumnType.INT)))
    assert layout.column_names == ("dt", "n")
    assert layout.key_schema == KeySchema(layout.columns)
    assert layout.value_cell("n") == value_cell_column("n") == b"p:v.n"
    assert layout.encoded_cell("n") == encoded_cell_column("n") == b"p:k.n"
    assert layout.location_cell == LOCATION_CELL == b"p:loc"
    key = layout.row_key("DAILY", ["2015-01-01", 3])
    assert key == encode_key(layout.key_schema, "ev", "DAILY", ["2015-01-01", 3])
    assert key.startswith(layout.period_prefix("DAILY", ["2015-01-01"]))
    assert layout.period_prefix("DAILY") == key_prefix(layout.key_schema, "ev", "DAILY", [])
    assert layout == RowLayout("ev", layout.columns) and hash(layout) == hash(
        RowLayout("ev", layout.columns))


def test_row_layout_validates_its_columns_and_storage() -> None:
    with pytest.raises(SchemaError, match="duplicate"):
        RowLayout("ev", (("a", ColumnType.INT), ("a", ColumnType.INT)))
    with pytest.raises(SchemaError, match="storage name"):
        RowLayout("", (("a", ColumnType.INT),))
