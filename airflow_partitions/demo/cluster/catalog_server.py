"""The catalog on the network: the HBase Thrift1 test double as a server process of its own.

It stands in for an HBase Thrift server (docs/testing.md says what it is not). ``--state``
keeps its tables across a stop, as a real HBase keeps its data, so stopping it is an outage,
not a lost catalog: the cluster test stops it for 20 s while sensors wait.
"""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

from airflow_partitions.demo.services.runner import ServicesFailed


def server_argv(state: Path, host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "airflow_partitions.testing.hbase", "--host", host,
            "--port", str(port), "--state", str(state)]


def wait_ready(host: str, port: int, timeout: float = 60) -> None:
    """Until the server accepts a connection."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise ServicesFailed(f"the catalog server on {host}:{port} not ready after {timeout:.0f} s")
