"""``partition list --filter`` and ``explain`` through the real command entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_partitions.cli import main


@pytest.fixture
def store(tmp_path: Path) -> list[str]:
    args = ["--store", f"sqlite:///{tmp_path}/p.db", "--data-root", str(tmp_path / "d")]
    assert main([*args, "fact", "create", "events"]) == 0
    assert main([*args, "storage", "create", "events", "raw", "--periods", "DAILY",
                 "--partition-columns", "dt,region"]) == 0
    for day in ("2015-01-30", "2015-01-31", "2015-02-01"):
        for region in ("us-east", "us-west", "eu-west"):
            assert main([*args, "partition", "add", "raw", "--period", "DAILY", f"dt={day}",
                         f"region={region}"]) == 0
    return args


def test_partition_list_filter(store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = main([*store, "partition", "list", "raw", "--json", "--stats", "--filter",
                 "dt >= '2015-01-31' and region like 'us%'"])
    out, err = capsys.readouterr()
    assert code == 0
    got = sorted((p["values"]["dt"], p["values"]["region"]) for p in json.loads(out))
    assert got == [(d, r) for d in ("2015-01-31", "2015-02-01") for r in ("us-east", "us-west")]
    stats = json.loads(err.split("stats: ", 1)[1])
    assert stats["rows_returned"] == 4


def test_explain_and_a_bad_filter(store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main([*store, "explain", "raw", "--json", "--filter", "dt = '2015-01-31'"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["full_scan"] is False and len(plan["scans"]) + len(plan["gets"]) == 1
    assert main([*store, "partition", "list", "raw", "--filter", "dt >= and"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("airflow-partitions: error:")
