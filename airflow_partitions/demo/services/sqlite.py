"""The sqlite metadata DB under four services: WAL, so readers and the writer do not block.

With the default rollback journal a reader blocks a writer, and the scheduler, the api-server
(and the execution API every task calls), the dag-processor and the triggerer all read and write
one file. WAL lets readers and one writer proceed together; the mode persists in the file.

The busy timeout stays at pysqlite's 5 s on purpose. A 30 s one was tried: on a loaded machine
a ``POST /api/v2/dags/{id}/dagRuns`` then hung for 30 s, every service's heartbeat stalled for
that long and a task process was killed; the stall ended exactly when that request's audit-log
insert (``INSERT INTO log``) gave up, so the request seems to wait on its own write lock.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def use_wal(db: Path) -> None:
    """Switch the database file to WAL (persistent; a no-op when it already is)."""
    with sqlite3.connect(db, timeout=30) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
