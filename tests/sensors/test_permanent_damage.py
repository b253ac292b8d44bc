"""Permanent damage fails fast and typed; only transient outages are waited out.

A file that is not SQLite was "unavailable", so a sensor waited until its timeout; a corrupt
timeline made the trigger raise instead of yielding an error event. Real parts: a real file of
garbage bytes, a real corrupt cell on a real SQLite catalog.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowFailException

from airflow_partitions.catalog import Catalog, storage_row, timeline_column
from airflow_partitions.cover import CoverRequest
from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.kv import StoreDamaged, StoreUnavailable, open_store
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from tests.helpers import T0, register_hours

REQUEST = CoverRequest.of("events", T0, T0.add(hours=4)).to_json()


def sensor() -> PartitionCoverageSensor:
    return PartitionCoverageSensor(task_id="wait", fact="events", start=T0, end=T0.add(hours=4),
                                   poke_interval=0, timeout=3600)


def trigger_event() -> dict[str, Any]:
    run = PartitionCoverageTrigger(request=REQUEST, poke_interval=0.05).run()
    event = asyncio.run(asyncio.wait_for(run.__anext__(), 30))
    payload: dict[str, Any] = event.payload
    return payload


@pytest.fixture
def garbage_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "partitions.db"
    path.write_bytes(b"this is not a SQLite database, it is a text file\n" * 100)
    url = f"sqlite:///{path}"
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", url)
    return url


def test_a_file_that_is_not_sqlite_is_damaged_not_unavailable(garbage_store: str) -> None:
    with pytest.raises(StoreDamaged, match="file is not a database") as caught:
        Catalog(garbage_store)
    assert not isinstance(caught.value, StoreUnavailable)
    assert garbage_store in str(caught.value) and "backup" in str(caught.value)
    with pytest.raises(StoreDamaged):
        open_store(garbage_store).table("partitions").get(b"x")


def test_the_sensor_fails_at_once_on_a_damaged_store(garbage_store: str) -> None:
    with pytest.raises(AirflowFailException, match="is damaged"):
        sensor().poke({})


def test_the_trigger_yields_an_error_event_on_a_damaged_store(garbage_store: str) -> None:
    payload = trigger_event()
    assert payload["status"] == "error" and "is damaged" in payload["message"]


def _corrupt_timeline(events: Catalog) -> None:
    register_hours(events, 0, 3)
    events.rows.catalog.put(storage_row("raw"),
                            {timeline_column(UpdatePeriod.HOURLY, "dt"): b"{not json"})
    events.rows.bump_generation("events")


def test_a_corrupt_timeline_fails_the_sensor_and_is_an_error_event(events: Catalog) -> None:
    _corrupt_timeline(events)
    with pytest.raises(AirflowFailException, match="reconcile raw"):
        sensor().poke({})
    payload = trigger_event()
    assert payload["status"] == "error" and "HOURLY dt timeline" in payload["message"]


def test_an_empty_timeline_cell_is_corrupt_not_empty(events: Catalog) -> None:
    register_hours(events, 0, 3)
    events.rows.catalog.put(storage_row("raw"), {timeline_column(UpdatePeriod.HOURLY, "dt"): b""})
    events.rows.bump_generation("events")
    events.cache.invalidate()
    with pytest.raises(CorruptTimeline, match="empty"):
        events.timeline("raw", "HOURLY")
    [diff] = events.reconcile("raw").corrupt_timelines
    assert "empty" in (diff.corruption or "")
    assert len(events.timeline("raw", "HOURLY")) == 4
