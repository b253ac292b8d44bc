"""``make demo`` in a log: its lines are laid out by the CLI's rule, 200 columns when
the output is not a terminal, so the first header keeps the catalog's whole path."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from airflow_partitions.demo.run import Demo, demo_console, plan


def test_a_piped_demo_keeps_its_long_headers_whole(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    root = tmp_path / ("a-rather-long-directory-name-" * 3)  # a path as long as a real one
    out = io.StringIO()
    demo = Demo(root, plan(2), demo_console(out), root / "dags")
    demo.step(1, f"Airflow home {demo.home}, catalog {demo.store_url}")
    header = " ".join(out.getvalue().split())  # the rule's line, whatever its padding
    assert f"catalog {demo.store_url}" in header
    assert "…" not in header


def test_a_terminal_keeps_its_own_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "90")
    assert demo_console(io.StringIO()).width == 90
    monkeypatch.delenv("COLUMNS")
    assert demo_console(io.StringIO()).width == 200
