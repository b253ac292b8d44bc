"""The collect_keys job's command line (its Spark side: tests/pruning/test_spark_jobs.py)."""

from __future__ import annotations

import pytest

from airflow_partitions.spark.jobs.collect_keys import parse_args


def test_parse_args_groups_columns_by_source() -> None:
    args = parse_args(["--source", "/a", "--column", "x", "--column", "y", "--source", "db.t",
                       "--name", "t", "--column", "z", "--output", "k.json", "--format", "orc"])
    assert [(s.source, s.columns, s.label, s.format, s.is_table) for s in args.sources] == [
        ("/a", ["x", "y"], "/a", "parquet", False), ("db.t", ["z"], "t", "orc", True)]
    with pytest.raises(SystemExit):
        parse_args(["--column", "x", "--source", "/a", "--output", "k"])
