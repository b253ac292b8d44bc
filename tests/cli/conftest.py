"""The CLI's tests drive ``main(argv)`` in-process on a temporary sqlite store.

``run`` is the command line; ``events`` adds a fact and a storage to it (overriding the root
conftest's catalog-level ``events`` for this folder). ``one_error_line`` checks the error contract.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Run = Callable[..., Result]


@pytest.fixture
def store_args(tmp_path: Path) -> list[str]:
    return ["--store", f"sqlite:///{tmp_path}/p.db", "--data-root", str(tmp_path / "data")]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], store_args: list[str],
        monkeypatch: pytest.MonkeyPatch) -> Run:
    """``run("fact", "list")`` -> exit code and captured stdout/stderr, on a temp store."""
    monkeypatch.delenv("COLUMNS", raising=False)  # tables at their full width

    def _run(*args: str, store: bool = True) -> Result:
        code = main([*store_args, *args] if store else list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return _run


@pytest.fixture
def events(run: Run) -> Run:
    """A fact ``events`` (dt) and a storage ``raw`` (HOURLY, DAILY; dt, region)."""
    assert run("fact", "create", "events", "--time-column", "dt").code == 0
    created = run("storage", "create", "events", "raw", "--periods", "HOURLY,DAILY",
                  "--partition-columns", "dt,region:string")
    assert created.code == 0, created.err
    return run


def one_error_line(result: Result, code: int) -> str:
    """The error contract: the exit code, one line on stderr, no traceback, nothing on stdout."""
    assert result.code == code, (result.out, result.err)
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("airflow-partitions: error: ")
    assert "Traceback" not in result.err
    assert result.out == ""
    return lines[0]
