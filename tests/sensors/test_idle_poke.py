"""An idle poke is one store round trip and nothing else that scales with pokes: the
connection resolved once per process (again when it changes or the store fails), the status
line logged only when the answer changes (or as a reminder)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk import PokeReturnValue
from structlog.testing import capture_logs

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import CoverRequest, status_line
from airflow_partitions.hooks.catalog import PartitionCatalogHook, forget_catalogs
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from airflow_partitions.watch import CoverageWatch
from tests.helpers import T0, register_hours


def sensor(conn_id: str = "my_catalog") -> PartitionCoverageSensor:
    return PartitionCoverageSensor(task_id="wait", fact="events", start=T0, end=T0.add(hours=4),
                                   catalog_conn_id=conn_id, poke_interval=0, timeout=0)


def connection(**fields: Any) -> str:
    """An ``AIRFLOW_CONN_*`` value (the JSON form)."""
    return json.dumps({"conn_type": "partition_catalog", **fields})


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every time the hook asks Airflow for a connection (sync or async)."""
    calls: list[str] = []
    sync, asynchronous = PartitionCatalogHook.get_connection, PartitionCatalogHook.aget_connection

    def spy(conn_id: str) -> Any:
        calls.append(conn_id)
        return sync(conn_id)

    async def aspy(conn_id: str) -> Any:
        calls.append(conn_id)
        return await asynchronous(conn_id)

    monkeypatch.setattr(PartitionCatalogHook, "get_connection", staticmethod(spy))
    monkeypatch.setattr(PartitionCatalogHook, "aget_connection", staticmethod(aspy))
    yield calls
    forget_catalogs()  # no resolution made under the spy outlives the test


@pytest.fixture
def my_catalog(events: Catalog, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Catalog:
    """``events``, named by the connection ``my_catalog`` defined in the environment."""
    monkeypatch.setenv("AIRFLOW_CONN_MY_CATALOG", connection(extra={"store_url": store_url}))
    return events


def test_an_idle_sensor_resolves_its_connection_once(my_catalog: Catalog,
                                                     resolutions: list[str]) -> None:
    register_hours(my_catalog, 0, 1)
    task = sensor()
    assert task.poke({}) is False
    my_catalog.stats.reset()
    for _ in range(5):
        assert task.poke({}) is False
    assert resolutions == ["my_catalog"]
    assert my_catalog.stats.round_trips == 5  # one generation read per poke, nothing else
    # another sensor of the same connection in the same process (a worker's next task)
    assert sensor().poke({}) is False
    assert resolutions == ["my_catalog"]


def test_a_changed_connection_is_picked_up_at_the_next_poke(
        my_catalog: Catalog, resolutions: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    register_hours(my_catalog, 0, 1)
    moved = tmp_path / "moved.db"
    with Catalog(f"sqlite:///{moved}", data_root=str(tmp_path / "data")) as other:
        other.create_fact("events")
        other.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
        register_hours(other, 0, 3)
    task = sensor()
    assert task.poke({}) is False
    assert task.poke({}) is False
    monkeypatch.setenv("AIRFLOW_CONN_MY_CATALOG", connection(extra={"sqlite_path": str(moved)}))
    result = task.poke({})
    assert isinstance(result, PokeReturnValue) and result.is_done
    assert resolutions == ["my_catalog", "my_catalog"]


def test_the_fallback_store_is_resolved_once_and_follows_the_environment(
        events: Catalog, resolutions: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``partitions_default`` absent: ``$AIRFLOW_PARTITIONS_STORE`` decides, and a change of it
    is seen at the next poke."""
    task = sensor(PartitionCatalogHook.default_conn_name)
    for _ in range(3):
        assert task.poke({}) is False
    assert resolutions == ["partitions_default"]
    other = f"sqlite:///{tmp_path}/other.db"
    with Catalog(other, data_root=str(tmp_path / "data")) as catalog:
        catalog.create_fact("events")
        catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
        register_hours(catalog, 0, 3)
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", other)
    assert task.poke({})
    assert resolutions == ["partitions_default"] * 2


@pytest.fixture
def hbase_catalog(hbase_server_factory: Any, tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Catalog]]:
    """A test HBase server named by the connection ``my_catalog``, with ``events`` in it."""
    server = hbase_server_factory()
    monkeypatch.setenv("AIRFLOW_CONN_MY_CATALOG", connection(
        host=server.host, port=server.port, extra={"backend": "hbase"}))
    monkeypatch.setenv("AIRFLOW_PARTITIONS_DATA_ROOT", str(tmp_path / "data"))
    forget_catalogs()
    catalog = PartitionCatalogHook("my_catalog").get_conn()
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    register_hours(catalog, 0, 1)
    yield server, catalog
    forget_catalogs()


def test_a_store_failure_makes_the_next_poke_resolve_again(
        hbase_catalog: tuple[Any, Catalog], resolutions: list[str]) -> None:
    server, catalog = hbase_catalog
    task = sensor()
    assert task.poke({}) is False
    assert task.poke({}) is False
    assert resolutions == ["my_catalog"]
    server.stop()  # a real outage: the Thrift server is gone
    with capture_logs() as logs:
        assert task.poke({}) is False
    assert [entry["log_level"] for entry in logs] == ["warning"]
    assert "unreachable" in logs[0]["event"]
    server.start()  # back on the same port
    register_hours(catalog, 2, 3)
    result = task.poke({})
    assert isinstance(result, PokeReturnValue) and result.is_done
    assert resolutions == ["my_catalog", "my_catalog"]  # asked Airflow again after the failure


def test_the_status_line_is_logged_when_the_answer_changes(my_catalog: Catalog) -> None:
    register_hours(my_catalog, 0, 0)
    task = sensor()
    with capture_logs() as logs:
        for _ in range(4):
            assert task.poke({}) is False
    assert [entry["event"] for entry in logs] == [status_line(task.last_cover)]  # type: ignore[arg-type]
    # a registration outside the range moves the generation, not the answer: still quiet
    register_hours(my_catalog, 0, 3, day="2024-01-05")
    with capture_logs() as logs:
        assert task.poke({}) is False
    assert logs == []
    register_hours(my_catalog, 1, 2)
    with capture_logs() as logs:
        assert task.poke({}) is False
        assert task.poke({}) is False
    assert len(logs) == 1 and "75.0% covered" in logs[0]["event"]
    register_hours(my_catalog, 3, 3)
    with capture_logs() as logs:
        assert task.poke({})
    assert len(logs) == 1 and "100.0% covered" in logs[0]["event"]


def test_an_unchanged_line_is_repeated_as_a_reminder(events: Catalog) -> None:
    now = [0.0]
    watch = CoverageWatch(CoverRequest.of("events", T0, T0.add(hours=4)), reminder=600,
                          clock=lambda: now[0])
    register_hours(events, 0, 1)
    watch.check(events)
    assert watch.news() == "changed" and "50.0% covered" in watch.line
    for t in (1.0, 300.0, 599.0):
        now[0] = t
        watch.check(events)
        assert watch.news() is None
    now[0] = 600.0
    watch.check(events)
    assert watch.news() == "reminder"
    now[0] = 700.0
    watch.check(events)
    assert watch.news() is None  # the next reminder is due at 1200 s
    register_hours(events, 2, 2)
    watch.check(events)
    assert watch.news() == "changed" and "75.0% covered" in watch.line
    never = CoverageWatch(watch.request, reminder=None, clock=lambda: now[0])
    never.check(events)
    now[0] = 1e9
    assert never.news() == "changed" and never.news() is None


def test_an_idle_trigger_poll_is_one_round_trip_and_resolves_once(
        my_catalog: Catalog, resolutions: list[str]) -> None:
    register_hours(my_catalog, 0, 1)
    request = CoverRequest.of("events", T0, T0.add(hours=4)).to_json()

    async def scenario() -> Any:
        run = PartitionCoverageTrigger(request=request, catalog_conn_id="my_catalog",
                                       poke_interval=0.01).run()
        waiting = asyncio.ensure_future(run.__anext__())
        with capture_logs() as logs:
            await asyncio.sleep(0.3)  # many polls, one picture
            polls_trips = my_catalog.stats.round_trips
            await asyncio.sleep(0.2)
            idle_trips = my_catalog.stats.round_trips - polls_trips
            await asyncio.to_thread(register_hours, my_catalog, 2, 3)
            event = await asyncio.wait_for(waiting, 30)
        return event, logs, idle_trips

    event, logs, idle_trips = asyncio.run(scenario())
    assert event.payload["status"] == "success" and event.payload["partitions"] == 4
    assert resolutions == ["my_catalog"]
    assert [e["event"].split(": ")[1].split(";")[0] for e in logs] == [
        "50.0% covered by 2 partition(s)", "100.0% covered by 4 partition(s), coverable"]
    assert idle_trips >= 5  # polls went on, one generation read each


def test_the_trigger_resolves_again_after_a_store_failure(
        hbase_catalog: tuple[Any, Catalog], resolutions: list[str]) -> None:
    server, catalog = hbase_catalog
    request = CoverRequest.of("events", T0, T0.add(hours=4)).to_json()

    async def scenario() -> Any:
        run = PartitionCoverageTrigger(request=request, catalog_conn_id="my_catalog",
                                       poke_interval=0.05).run()
        waiting = asyncio.ensure_future(run.__anext__())
        with capture_logs() as logs:
            await asyncio.sleep(0.3)
            assert resolutions == ["my_catalog"]
            await asyncio.to_thread(server.stop)
            await asyncio.sleep(0.5)
            await asyncio.to_thread(server.start)
            await asyncio.to_thread(register_hours, catalog, 2, 3)
            event = await asyncio.wait_for(waiting, 30)
        return event, logs

    event, logs = asyncio.run(scenario())
    assert event.payload["status"] == "success"
    assert any(e["log_level"] == "warning" and "unreachable" in e["event"] for e in logs)
    assert len(resolutions) >= 2 and set(resolutions) == {"my_catalog"}


def test_an_idle_trigger_computes_the_cover_once(my_catalog: Catalog,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing registered: the cover is empty (and falsy), and still not recomputed per poll."""
    computed: list[int] = []
    original = Catalog.cover_with_partitions

    def spy(self: Catalog, request: CoverRequest, **kwargs: Any) -> Any:
        computed.append(1)
        return original(self, request, **kwargs)

    monkeypatch.setattr(Catalog, "cover_with_partitions", spy)
    request = CoverRequest.of("events", T0, T0.add(hours=4)).to_json()

    async def scenario() -> Any:
        run = PartitionCoverageTrigger(request=request, catalog_conn_id="my_catalog",
                                       poke_interval=0.01).run()
        waiting = asyncio.ensure_future(run.__anext__())
        await asyncio.sleep(0.3)
        assert len(computed) == 1
        await asyncio.to_thread(register_hours, my_catalog, 0, 3)
        return await asyncio.wait_for(waiting, 30)

    assert asyncio.run(scenario()).payload["status"] == "success"
    assert len(computed) == 2
