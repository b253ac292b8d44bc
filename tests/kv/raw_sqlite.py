"""Writes to a SQLite store's file by another connection, as another process's raw SQL would:
the store's own counters do not see them, only SQLite's ``data_version`` does (the change
stamp, ``tests/kv/test_change_stamp.py``). Here, beside the kv tests, because it names the
SQLite layout (``sql_table``), which is kv's own business."""

from __future__ import annotations

import sqlite3

from airflow_partitions.kv import KVStore
from airflow_partitions.kv.sqlite import SQLiteStore
from airflow_partitions.kv.sqlite_table import sql_table


def delete_elsewhere(kv: KVStore, table: str, key: bytes) -> bool:
    """Delete row ``key`` of ``table`` through a second connection; False (nothing done)
    when ``kv`` is not a SQLite store."""
    if not isinstance(kv, SQLiteStore):
        return False
    other = sqlite3.connect(kv.path)
    with other:
        other.execute(f"DELETE FROM {sql_table(table)} WHERE row = ?", (key,))
    other.close()
    return True
