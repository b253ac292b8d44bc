"""``AIRFLOW_PARTITIONS_PAUSE_AT``: the first process at a step pauses, every later one passes."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from airflow_partitions.catalog.pause_point import HOST_ENV, PAUSE_ENV, pause_point
from airflow_partitions.catalog.writer import crash_point


def test_unset_or_another_step_does_not_pause(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "paused"
    pause_point("register:after-rows")
    monkeypatch.setenv(PAUSE_ENV, f"register:after-timeline@{marker}")
    crash_point("register:after-rows")
    assert not marker.exists()


def test_the_first_pauses_until_the_marker_goes_and_the_rest_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "paused"
    monkeypatch.setenv(PAUSE_ENV, f"register:after-rows@{marker}")
    monkeypatch.setenv(HOST_ENV, "worker-7")
    first = threading.Thread(target=crash_point, args=("register:after-rows",))
    first.start()
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    doc = json.loads(marker.read_text())
    assert doc["host"] == "worker-7" and doc["step"] == "register:after-rows"
    crash_point("register:after-rows")  # a second writer passes straight through
    assert first.is_alive()  # the first still waits
    marker.unlink()
    first.join(timeout=60)
    assert not first.is_alive()
