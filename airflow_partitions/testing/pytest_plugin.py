"""Pytest fixtures for the HBase Thrift1 test double (registered as the ``airflow_partitions``
pytest11 entry point, so users' own DAG tests get them by installing the package).

Why the imports live inside the fixtures: pytest loads this module in *every* test run of every
project that installs airflow-partitions, so it must stay cheap and must not import airflow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from airflow_partitions.testing.hbase.server import HBaseTestServer

__all__ = ["hbase_server_factory", "hbase_test_server"]


@pytest.fixture(scope="session")
def hbase_test_server() -> Iterator[HBaseTestServer]:
    """One started HBase test double for the whole session (on a free loopback port).

    It is shared: use unique table names (or a ``table_prefix``) per test, or call ``clear()``.
    """
    from airflow_partitions.testing.hbase.server import HBaseTestServer

    server = HBaseTestServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def hbase_server_factory() -> Iterator[Callable[..., HBaseTestServer]]:
    """Start extra, independent test doubles; all are stopped when the test ends.

    Call it like the constructor: ``hbase_server_factory()``, ``hbase_server_factory(port=9091)``
    or ``hbase_server_factory(transport="framed", protocol="compact")``.
    """
    from airflow_partitions.testing.hbase.server import HBaseTestServer

    started: list[HBaseTestServer] = []

    def make(host: str = "127.0.0.1", port: int = 0, **options: Any) -> HBaseTestServer:
        server = HBaseTestServer(host, port, **options)
        server.start()
        started.append(server)
        return server

    try:
        yield make
    finally:
        for server in reversed(started):
            server.stop()
