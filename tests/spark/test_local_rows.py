"""``frame_of_rows`` gives what ``createDataFrame`` gives for the same rows, without Python on
the executors (airflow_partitions/spark/local_rows.py)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from airflow_partitions.spark.local_rows import frame_of_rows

SCHEMA = "event_time timestamp, user_id long, region string, amount_cents long"
ROWS = [
    (dt.datetime(2015, 1, 1, 5, 59, 59, 123456, tzinfo=dt.UTC), 1, "eu", 100),
    (dt.datetime(2015, 3, 29, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))), 2, None, 0),
    (None, None, "us-east", -(2**63)),
]


def test_the_same_rows_and_schema_as_create_data_frame(spark: Any) -> None:
    ours = frame_of_rows(spark, ROWS, SCHEMA)
    theirs = spark.createDataFrame(ROWS, SCHEMA)
    assert ours.schema == theirs.schema
    assert ours.collect() == theirs.collect()
    assert [r.region for r in ours.collect()] == ["eu", None, "us-east"]


def test_no_rows_keep_the_schema(spark: Any) -> None:
    frame = frame_of_rows(spark, [], SCHEMA)
    assert frame.count() == 0
    assert frame.schema == spark.createDataFrame([], SCHEMA).schema


def test_rows_that_do_not_fit_the_schema_are_refused(spark: Any) -> None:
    with pytest.raises(ValueError, match="4"):
        frame_of_rows(spark, [(1, 2)], SCHEMA)
    with pytest.raises(ValueError):
        frame_of_rows(spark, [ROWS[0], ROWS[1][:3]], SCHEMA)
    with pytest.raises(ValueError, match="not a row schema"):
        frame_of_rows(spark, [(1,)], "int")
