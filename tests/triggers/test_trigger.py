"""PartitionCoverageTrigger: serialisation, and run() driven until it yields."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pendulum
import pytest
from airflow.triggers.base import TriggerEvent

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import CoverRequest
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from tests.helpers import T0, register_hours

REQUEST = CoverRequest.of("events", T0, T0.add(hours=4)).to_json()


def trigger(**kwargs: Any) -> PartitionCoverageTrigger:
    args: dict[str, Any] = {"request": REQUEST, "poke_interval": 0.05}
    args.update(kwargs)
    return PartitionCoverageTrigger(**args)


async def next_event(events: AsyncIterator[TriggerEvent], timeout: float = 30) -> TriggerEvent:
    return await asyncio.wait_for(events.__anext__(), timeout)


def test_serialize_round_trip() -> None:
    original = trigger(catalog_conn_id="cat", deadline="2024-01-02T00:00:00+00:00")
    path, kwargs = original.serialize()
    assert path == "airflow_partitions.triggers.coverage.PartitionCoverageTrigger"
    rebuilt = PartitionCoverageTrigger(**kwargs)
    assert rebuilt.serialize() == (path, kwargs)
    assert kwargs == {"request": REQUEST, "catalog_conn_id": "cat", "poke_interval": 0.05,
                      "deadline": "2024-01-02T00:00:00+00:00"}
    assert CoverRequest.from_json(kwargs["request"]) == CoverRequest.of("events", T0,
                                                                         T0.add(hours=4))


def test_fires_at_once_when_coverable(events: Catalog) -> None:
    register_hours(events, 0, 3)
    event = asyncio.run(next_event(trigger().run()))
    assert event.payload["status"] == "success"
    assert event.payload["partitions"] == 4 and event.payload["covered_fraction"] == 1.0


def test_fires_after_a_registration_in_between(events: Catalog) -> None:
    register_hours(events, 0, 1)

    async def scenario() -> TriggerEvent:
        run = trigger().run()
        waiting = asyncio.ensure_future(next_event(run))
        await asyncio.sleep(0.3)  # several polls: none may fire, the range is not covered
        assert not waiting.done()
        await asyncio.to_thread(register_hours, events, 2, 3)
        return await waiting

    event = asyncio.run(scenario())
    assert event.payload["status"] == "success"


def test_times_out_with_the_missing_list(events: Catalog) -> None:
    register_hours(events, 0, 2)
    past = pendulum.now("UTC").subtract(seconds=1).isoformat()
    event = asyncio.run(next_event(trigger(deadline=past).run()))
    assert event.payload["status"] == "timeout"
    assert event.payload["missing"] == ["missing 2024-01-01T03:00/04:00: no HOURLY 2024-01-01-03"]


def test_bad_requests_end_with_an_error_event(events: Catalog) -> None:
    event = asyncio.run(next_event(trigger(request={**REQUEST, "fact": "nope"}).run()))
    assert event.payload["status"] == "error" and "nope" in event.payload["message"]
    event = asyncio.run(next_event(trigger(catalog_conn_id="undefined_conn").run()))
    assert event.payload["status"] == "error" and "undefined_conn" in event.payload["message"]


@pytest.mark.parametrize("bad", [{"start": "yesterday"}, {"end": None}])
def test_malformed_request(events: Catalog, bad: dict[str, Any]) -> None:
    event = asyncio.run(next_event(trigger(request={**REQUEST, **bad}).run()))
    assert event.payload["status"] == "error"
