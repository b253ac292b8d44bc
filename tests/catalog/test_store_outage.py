"""The HBase server dies mid-operation: a typed, readable error, and nothing falsely advertised."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog, writer
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.writer import DROP_STEPS, REGISTER_STEPS
from airflow_partitions.kv import StoreUnavailable
from tests.catalog.conftest import rows_truth, stored_values
from tests.catalog.test_crash_safety import CASES, INITIAL
from tests.catalog.workers import CRASH_DROP, CRASH_REGISTER


@pytest.fixture
def stop_at() -> Iterator[Callable[[str, Any], None]]:
    """Stop the given server when the catalog reaches a write step."""
    installed: list[Callable[[str], None]] = []

    def arm(step: str, server: Any) -> None:
        fired: list[str] = []

        def hook(current: str) -> None:
            if current == step and not fired:  # once: the repair runs the same steps again
                fired.append(current)
                server.stop()

        installed.append(hook)
        writer.STEP_HOOKS.append(hook)

    yield arm
    for hook in installed:
        writer.STEP_HOOKS.remove(hook)


@pytest.mark.parametrize(("op", "step"), CASES, ids=[s for _, s in CASES])
def test_server_dies_mid_write(hbase_server_factory: Any, stop_at: Any, tmp_path: Path,
                               op: str, step: str) -> None:
    server = hbase_server_factory()
    catalog = Catalog(server.url, data_root=str(tmp_path), cache=TimelineCache())
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    catalog.register("raw", "HOURLY", INITIAL)
    stop_at(step, server)
    try:
        if op == "register":
            catalog.register("raw", "HOURLY", CRASH_REGISTER)
        else:
            catalog.drop("raw", "HOURLY", CRASH_DROP)
    except StoreUnavailable as exc:
        message = str(exc)
        assert server.url.split("//")[1] in message and "unavailable" in message
        assert "\n" not in message
    else:
        # The last step has nothing left to do against the store.
        assert step in (REGISTER_STEPS[-1], DROP_STEPS[-1])
    server.start()  # restarted on the same port, data kept
    advertised = stored_values(catalog, "raw")[("HOURLY", "dt")]
    truth = rows_truth(catalog, "raw")[("HOURLY", "dt")]
    assert advertised <= truth
    catalog.reconcile("raw")
    assert stored_values(catalog, "raw") == rows_truth(catalog, "raw")
    catalog.close()


def test_reads_fail_readably_when_the_server_is_down(hbase_server_factory: Any,
                                                    tmp_path: Path) -> None:
    server = hbase_server_factory()
    catalog = Catalog(server.url, data_root=str(tmp_path), cache=TimelineCache())
    catalog.create_fact("events")
    server.stop()
    with pytest.raises(StoreUnavailable, match="unavailable"):
        catalog.fact_state("events")
    server.start()
    assert catalog.fact_state("events").storages == {}
