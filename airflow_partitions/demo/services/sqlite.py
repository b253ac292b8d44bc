"""The sqlite metadata DB under four services: WAL, and a longer busy timeout.

With the default rollback journal a reader blocks a writer, and pysqlite gives up after 5 s: on a
busy 2-core machine the scheduler, the api-server (and the execution API every task calls), the
dag-processor and the triggerer then see "Database error" now and then. WAL lets readers and one
writer proceed together, and the setting persists in the database file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

#: ``[database] sql_alchemy_connect_args`` names this dict (an import path): 30 s busy timeout.
CONNECT_ARGS: dict[str, Any] = {"timeout": 30}
CONNECT_ARGS_PATH = f"{__name__}.CONNECT_ARGS"


def use_wal(db: Path) -> None:
    """Switch the database file to WAL (persistent; a no-op when it already is)."""
    with sqlite3.connect(db, timeout=30) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
