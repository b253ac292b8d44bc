"""Typing small-side values as the big column: conversions and typed errors."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pytest

from airflow_partitions.keys import ColumnType
from airflow_partitions.pruning import JoinKeyTypeError, load_key_file
from airflow_partitions.pruning.values import convert_value, partition_value
from airflow_partitions.spark import (
    column_entry,
    key_document,
    source_entry,
    write_key_file,
)


@pytest.mark.parametrize(("value", "ctype", "expected"), [
    ("eu", ColumnType.STRING, "eu"),
    (5, ColumnType.INT, 5),
    ("05", ColumnType.INT, 5),
    (decimal.Decimal("7"), ColumnType.BIGINT, 7),
    (2**40, ColumnType.BIGINT, 2**40),
    (dt.date(2024, 1, 2), ColumnType.DATE, dt.date(2024, 1, 2)),
    ("2024-01-02", ColumnType.DATE, dt.date(2024, 1, 2)),
    ("2024-01-02T03:00:00+01:00", ColumnType.TIMESTAMP,
     dt.datetime(2024, 1, 2, 2, tzinfo=dt.UTC)),
])
def test_conversions(value: object, ctype: ColumnType, expected: object) -> None:
    assert convert_value(value, ctype, "k") == expected


@pytest.mark.parametrize(("value", "ctype"), [
    (5, ColumnType.STRING),            # Spark would compare numerically: refuse to guess
    (True, ColumnType.INT),
    (1.5, ColumnType.INT),
    ("x1", ColumnType.INT),
    (2**31, ColumnType.INT),
    (dt.datetime(2024, 1, 1, tzinfo=dt.UTC), ColumnType.DATE),
    ("2024-02-30", ColumnType.DATE),
    ("01/02/2024", ColumnType.DATE),
    ("yesterday", ColumnType.TIMESTAMP),
])
def test_mismatches_raise_a_typed_error(value: object, ctype: ColumnType) -> None:
    with pytest.raises(JoinKeyTypeError) as err:
        convert_value(value, ctype, "join key dim.k -> col")
    assert "join key dim.k -> col" in str(err.value)


def test_partition_text_unreadable_is_none() -> None:
    assert partition_value(ColumnType.INT, "abc") is None
    assert partition_value(ColumnType.INT, "12") == 12
    assert partition_value(ColumnType.DATE, "2024-01-01") == dt.date(2024, 1, 1)


def test_key_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    columns = {
        "region": column_entry("string", ["eu"], has_null=True, overflow=False),
        "day": column_entry("date", [dt.date(2024, 1, 2)], has_null=False, overflow=False),
        "shop": column_entry("bigint", list(range(5)), has_null=False, overflow=True),
    }
    write_key_file(key_document([source_entry("dim", columns)], 4), str(path))
    sets = load_key_file(str(path))
    assert sets["dim"]["region"].values == ("eu",) and sets["dim"]["region"].nulls == 1
    assert sets["dim"]["day"].values == (dt.date(2024, 1, 2),)
    assert not sets["dim"]["day"].overflow
    # an overflowing column carries no values: the pruning must bail out for it
    assert sets["dim"]["shop"].overflow and sets["dim"]["shop"].values == ()
