"""Test seam: hold one process still between two write steps, so another can kill it there.

``AIRFLOW_PARTITIONS_PAUSE_AT=<step>@<marker file>`` makes the *first* process of an
installation that reaches ``<step>`` (one of :data:`.writer.WRITE_STEPS`) create the marker
file (exclusively and whole: its pid, its host name and the step) and wait until the file is
removed, at most :data:`MAX_PAUSE` s. Every later process passes straight through, because the
marker already exists.

Why: ``AIRFLOW_PARTITIONS_CRASH_AT`` kills the writing process itself at a step; the cluster
test (``tests/e2e/test_cluster.py``) needs the machine around it to die instead (a Celery
worker's whole process group, ``kill -9``) while a task is half way through a registration.
A write takes milliseconds, so without a pause no outside kill can land inside it.

What it costs when unset: one environment lookup per write step.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Final

PAUSE_ENV: Final = "AIRFLOW_PARTITIONS_PAUSE_AT"
#: The host name the marker reports (the cluster sets it per Celery worker).
HOST_ENV: Final = "AIRFLOW_PARTITIONS_HOSTNAME"
#: The longest a paused process waits for its marker to go before it carries on.
MAX_PAUSE: Final = 600.0


def pause_point(step: str) -> None:
    """Pause here if ``AIRFLOW_PARTITIONS_PAUSE_AT`` names ``step`` and nobody paused yet."""
    wanted = os.environ.get(PAUSE_ENV)
    if not wanted or "@" not in wanted:
        return
    name, _, marker = wanted.partition("@")
    if name != step:
        return
    path = Path(marker)
    if path.exists():
        return  # someone paused already: one pause per installation
    host = os.environ.get(HOST_ENV) or socket.gethostname()
    # Written whole under a name of its own, then linked to the marker's name (which fails if
    # it exists): a reader that sees the marker sees all of it, and only one process pauses.
    written = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    written.write_text(json.dumps({"pid": os.getpid(), "host": host, "step": step}))
    try:
        os.link(written, path)
    except FileExistsError:
        return  # someone paused first
    finally:
        written.unlink()
    deadline = time.monotonic() + MAX_PAUSE
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
