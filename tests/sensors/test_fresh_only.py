"""``fresh_only`` through the sensor, its deferral and the trigger's JSON."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from airflow.sdk.exceptions import TaskDeferred
from structlog.testing import capture_logs

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import CoverRequest
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from tests.helpers import T0, register_hours

DAY = {"dt": "2024-01-01"}


def sensor(**kwargs: Any) -> PartitionCoverageSensor:
    args: dict[str, Any] = {"task_id": "wait", "fact": "events", "start": T0,
                            "end": T0.add(days=1), "poke_interval": 0, "timeout": 0,
                            "periods": "DAILY", "fresh_only": True}
    args.update(kwargs)
    return PartitionCoverageSensor(**args)


@pytest.fixture
def stale_day(events: Catalog) -> Catalog:
    """rollup DAILY 2024-01-01 built from 24 raw hours, one of which was restated since."""
    register_hours(events, 0, 23)
    events.register("rollup", "DAILY", DAY, inputs=[
        {"storage": "raw", "period": "HOURLY", "values": p.values, "version": 1}
        for p in events.list_partitions("raw")])
    events.register("raw", "HOURLY", {"dt": "2024-01-01-07", "region": "eu"}, restate=True)
    return events


def test_a_stale_partition_does_not_satisfy_the_sensor(stale_day: Catalog) -> None:
    assert sensor(fresh_only=False).poke({})
    task = sensor()
    with capture_logs() as logs:
        assert not task.poke({})
    line = next(e["event"] for e in logs if "skipped" in e["event"])
    assert line.endswith("DAILY 2024-01-01 of rollup skipped: stale (input raw HOURLY "
                         "2024-01-01-07 eu restated); region: not a dimension, any value counts")
    # the day is rebuilt from the current hours: fresh again
    stale_day.register("rollup", "DAILY", DAY, inputs=[
        {"storage": "raw", "period": "HOURLY", "values": p.values, "version": p.version}
        for p in stale_day.list_partitions("raw")])
    assert task.poke({})


def test_the_deferral_carries_fresh_only_to_the_trigger(stale_day: Catalog) -> None:
    with pytest.raises(TaskDeferred) as deferred:
        sensor(deferrable=True, poke_interval=5, timeout=600).execute({})
    trigger = deferred.value.trigger
    assert isinstance(trigger, PartitionCoverageTrigger)
    _, kwargs = trigger.serialize()
    assert kwargs["request"]["fresh_only"] is True
    rebuilt = PartitionCoverageTrigger(**{**kwargs, "poke_interval": 0.05,
                                          "deadline": "2000-01-01T00:00:00+00:00"})
    event = asyncio.run(asyncio.wait_for(rebuilt.run().__anext__(), 30))
    assert event.payload["status"] == "timeout"
    # without the flag the same trigger fires: the stale day counts
    plain = PartitionCoverageTrigger(**{**kwargs, "poke_interval": 0.05, "request": {
        **kwargs["request"], "fresh_only": False}})
    assert asyncio.run(asyncio.wait_for(plain.run().__anext__(), 30)).payload["status"] == \
        "success"


def test_requests_without_the_flag_read_as_not_fresh_only() -> None:
    """Triggers serialised without a ``fresh_only`` key still load."""
    data = CoverRequest.of("events", T0, T0.add(days=1)).to_json()
    del data["fresh_only"]
    assert CoverRequest.from_json(data).fresh_only is False
    assert CoverRequest.from_json({**data, "fresh_only": True}).fresh_only is True
