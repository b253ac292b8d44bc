"""An idle poke is the store's change stamp and nothing else; any write is seen at the next poke.

The stamp (SQLite's WAL-index header and the connection's own counters) stays equal only
while no row changed, so an idle poke skips the generation read. These tests hold the saving
(the store's own round-trip counters, no timing) and what it must never cost: a write through
another connection or another process, to this fact or another one, is seen by the very next
poke, and HBase, which has no stamp, keeps its one generation read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk import PokeReturnValue
from structlog.testing import capture_logs

from airflow_partitions.catalog import Catalog
from airflow_partitions.hooks.catalog import PartitionCatalogHook, forget_catalogs
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from tests.helpers import T0, register_hours


def sensor() -> PartitionCoverageSensor:
    return PartitionCoverageSensor(task_id="wait", fact="events", start=T0, end=T0.add(hours=4),
                                   poke_interval=0, timeout=0)


def done(result: bool | PokeReturnValue) -> bool:
    return isinstance(result, PokeReturnValue) and result.is_done


def test_an_idle_poke_reads_only_the_change_stamp(events: Catalog) -> None:
    register_hours(events, 0, 1)
    task = sensor()
    assert task.poke({}) is False  # the first poke computes the cover
    events.stats.reset()
    for _ in range(5):
        assert task.poke({}) is False
    assert dict(events.stats.ops) == {"change_stamp": 5}
    assert events.stats.round_trips == 5


def test_a_write_to_another_fact_costs_a_generation_read_and_no_cover(events: Catalog) -> None:
    """The stamp moves with any write; the fact's generation then says the answer stands."""
    events.create_fact("clicks")
    events.create_storage("clicks", "clicks_raw", ["HOURLY"])
    register_hours(events, 0, 1)
    task = sensor()
    assert task.poke({}) is False
    cover = task.last_cover
    events.register("clicks_raw", "HOURLY", {"dt": "2024-01-01-02"})
    events.stats.reset()
    with capture_logs() as logs:
        assert task.poke({}) is False
    assert events.stats.round_trips == 2 and events.stats.ops["change_stamp"] == 1
    assert task.last_cover is cover and logs == []  # not recomputed, nothing logged
    events.stats.reset()
    assert task.poke({}) is False
    assert dict(events.stats.ops) == {"change_stamp": 1}


def test_a_producer_appending_after_the_range_costs_a_generation_and_a_feed_read(
        events: Catalog, store_url: str) -> None:
    """Another connection registers the hour after the latest, outside the range: the fact's
    generation moved, and one read of the change feeds proves the kept cover still true
    (no reload of the fact, no cover computed, nothing logged)."""
    register_hours(events, 0, 1)
    register_hours(events, 5, 7)  # hours 02..04 missing: 02 and 03 in the range
    task = sensor()
    assert task.poke({}) is False
    cover = task.last_cover
    with Catalog(store_url) as other:
        register_hours(other, 8, 8)
    events.stats.reset()
    with capture_logs() as logs:
        assert task.poke({}) is False
    assert dict(events.stats.ops) == {"change_stamp": 2, "get": 1, "changed_rows": 1}
    assert task.last_cover is cover and logs == []
    with Catalog(store_url) as other:  # inside the range: worked out again, and done
        register_hours(other, 2, 4)
    assert done(task.poke({}))


def test_a_write_through_another_connection_is_seen_at_the_next_poke(
        events: Catalog, store_url: str) -> None:
    register_hours(events, 0, 1)
    task = sensor()
    assert task.poke({}) is False
    assert task.poke({}) is False
    with Catalog(store_url) as other:  # its own SQLite connection to the same file
        assert other.kv is not events.kv
        register_hours(other, 2, 3)
    assert done(task.poke({}))


def test_a_write_by_another_process_is_seen_at_the_next_poke(events: Catalog,
                                                              store_url: str) -> None:
    register_hours(events, 0, 2)
    task = sensor()
    assert task.poke({}) is False
    assert task.poke({}) is False
    script = ("import sys; from airflow_partitions.catalog import Catalog; "
              "c = Catalog(sys.argv[1]); "
              "c.register('raw', 'HOURLY', {'dt': '2024-01-01-03', 'region': 'eu'}); c.close()")
    subprocess.run([sys.executable, "-c", script, store_url], check=True, timeout=300)
    assert done(task.poke({}))


def test_a_drop_by_another_process_is_seen_at_the_next_poke(events: Catalog,
                                                            store_url: str) -> None:
    """The other direction: what was coverable stops being so, and the next poke says it."""
    register_hours(events, 0, 3)
    watch_task = sensor()
    assert done(watch_task.poke({}))
    assert done(watch_task.poke({}))
    script = ("import sys; from airflow_partitions.catalog import Catalog; "
              "c = Catalog(sys.argv[1]); "
              "c.drop('raw', 'HOURLY', {'dt': '2024-01-01-01', 'region': 'eu'}); c.close()")
    subprocess.run([sys.executable, "-c", script, store_url], check=True, timeout=300)
    assert watch_task.poke({}) is False
    assert watch_task.last_cover is not None and not watch_task.last_cover.coverable


@pytest.fixture
def hbase_events(hbase_server_factory: Any, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[Catalog]:
    """``events`` on a test HBase server, the catalog the sensor's default connection opens."""
    server = hbase_server_factory()
    monkeypatch.setenv("AIRFLOW_CONN_PARTITIONS_DEFAULT", json.dumps({
        "conn_type": "partition_catalog", "host": server.host, "port": server.port,
        "extra": {"backend": "hbase"}}))
    monkeypatch.setenv("AIRFLOW_PARTITIONS_DATA_ROOT", str(tmp_path / "data"))
    forget_catalogs()
    catalog = PartitionCatalogHook().get_conn()
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    yield catalog
    forget_catalogs()


def test_hbase_has_no_stamp_so_an_idle_poke_is_the_generation_read(
        hbase_events: Catalog) -> None:
    register_hours(hbase_events, 0, 1)
    task = sensor()
    assert task.poke({}) is False
    hbase_events.stats.reset()
    for _ in range(3):
        assert task.poke({}) is False
    assert hbase_events.stats.round_trips == 3
    assert "change_stamp" not in hbase_events.stats.ops
    register_hours(hbase_events, 2, 3)
    assert done(task.poke({}))
