"""Readers never wait for a writer (invariant 10): WAL readers take no write lock.

Another connection holds ``BEGIN IMMEDIATE`` (a writer mid-transaction) for the whole test. The
stores under test give up on a locked file after ``lock_timeout=1`` s, so any read path that
still asks for the write lock fails with StoreUnavailable instead of passing: the test does not
time anything, it fails on the error.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.kv import StoreUnavailable
from tests.helpers import register_hours

IMPATIENT = "?lock_timeout=1&busy_timeout=50"
CLI = "import sys; from airflow_partitions.cli import main; sys.exit(main())"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A catalog file with one fact, one storage and a day of hours."""
    path = tmp_path / "catalog.db"
    with Catalog(f"sqlite:///{path}", data_root=str(tmp_path / "data")) as catalog:
        catalog.create_fact("events")
        catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
        register_hours(catalog, 0, 23)
    return path


@pytest.fixture
def writer_holding_lock(db: Path) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection inside a write transaction until the test ends."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE _kv_meta SET families = families")
    yield conn
    conn.execute("ROLLBACK")
    conn.close()


def test_the_lock_is_really_held(db: Path, writer_holding_lock: sqlite3.Connection) -> None:
    """The premise: a writer through the store does fail while the lock is held."""
    catalog = Catalog(f"sqlite:///{db}{IMPATIENT}", cache=TimelineCache())
    with pytest.raises(StoreUnavailable, match="locked"):
        register_hours(catalog, 0, 0, regions=("us",))


def test_opening_and_reading_take_no_write_lock(
    db: Path, writer_holding_lock: sqlite3.Connection
) -> None:
    catalog = Catalog(f"sqlite:///{db}{IMPATIENT}", cache=TimelineCache())
    assert [f.name for f in catalog.list_facts()] == ["events"]
    cover = catalog.cover("events", "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z")
    assert cover.coverable and len(cover.partitions) == 24
    assert len(list(catalog.list_partitions("raw", "HOURLY"))) == 24
    found = catalog.get_partitions_by_filter("raw", "dt >= '2024-01-01-12'", "HOURLY")
    assert len(found) == 12


def test_a_fresh_cli_process_reads_while_a_writer_holds_the_lock(
    db: Path, writer_holding_lock: sqlite3.Connection, tmp_path: Path
) -> None:
    store = f"sqlite:///{db}{IMPATIENT}"
    for argv, expected in (
        (["partition", "list", "raw", "--period", "HOURLY"], "2024-01-01-05"),
        (["cover", "events", "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T06:00:00Z"],
         "6 partitions, coverable"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", CLI, "--store", store, "--data-root", str(tmp_path / "data"),
             *argv],
            capture_output=True, text=True, check=False,
        )
        assert done.returncode == 0, done.stderr
        assert expected in done.stdout
