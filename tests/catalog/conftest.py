"""Catalog tests run on both backends: sqlite, and happybase against a real HBase Thrift server
when ``AIRFLOW_PARTITIONS_TEST_HBASE=host:port`` names one (``make test``), else against the
HBase test double (``make check``)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.kv import KVError, open_store
from tests.helpers import unique
from tests.kv.conftest import backend_kind, drop_all_tables, empty_table, real_hbase_target

#: The tables a catalog keeps (docs/hbase.md, "The data model").
CATALOG_TABLES = ("catalog", "partitions")


#: How many tests one table prefix serves on a real HBase before its tables are dropped. A table
#: costs about 0.7 s to create and drop, and emptying a test's rows milliseconds, so a finished
#: test's empty tables go to the next test. But HBase keeps deleted cells, and the markers that
#: delete them, in the region's memstore until a flush, which a test run never writes enough
#: for: each scan of a table emptied again and again steps over every cell earlier tests wrote.
#: The ``hbase`` catalog cases alone, one worker: reused without end, 238 s and 207 s of the
#: server's CPU; a new prefix per test, 301 s and 112 s; dropped after 10, 25 or 60 tests,
#: 112, 94 and 113 s, and 58, 52 and 77 s of CPU.
PREFIX_USES = 25

#: Table prefixes of this worker whose catalog tables a finished test left empty, with the
#: number of tests each has served.
_emptied_prefixes: list[tuple[str, int]] = []


def empty_catalog_tables(url: str) -> bool:
    """Delete every row of the catalog's tables under ``url`` and drop any other table; False
    when that could not be done (the prefix is then not used again)."""
    try:
        with open_store(url) as store:
            for name in store.list_tables():
                if name not in CATALOG_TABLES:
                    store.drop_table(name, missing_ok=True)
                    continue
                if not empty_table(store.table(name)):
                    return False
    except KVError:
        return False
    return True


@pytest.fixture(params=["sqlite", "hbase"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/catalog.db"
        return
    if backend_kind(request.param) == "hbase-real":
        real = real_hbase_target()
        prefix, uses = (_emptied_prefixes.pop() if _emptied_prefixes
                        else (unique(f"apcat{os.getpid()}x"), 0))
        url = f"hbase://{real}?table_prefix={prefix}"
        yield url
        if uses + 1 < PREFIX_USES and empty_catalog_tables(url):
            _emptied_prefixes.append((prefix, uses + 1))
        else:
            with contextlib.suppress(KVError), open_store(url) as store:
                drop_all_tables(store)
        return
    server: Any = request.getfixturevalue("hbase_test_server")
    yield f"{server.url}?table_prefix={unique('cat')}_"


@pytest.fixture
def catalog(store_url: str, tmp_path: Path) -> Iterator[Catalog]:
    cat = Catalog(store_url, data_root=str(tmp_path / "data"), cache=TimelineCache())
    yield cat
    cat.close()


@pytest.fixture
def events(catalog: Catalog) -> Catalog:
    """A fact with an hourly raw storage partitioned by (dt, region) and a daily rollup."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    catalog.create_storage("events", "rollup", ["DAILY", "MONTHLY"], priority=5)
    return catalog


def rows_truth(catalog: Catalog, storage: str) -> dict[tuple[str, str], set[str]]:
    """(period, column) -> time values that have a live row, straight from list_partitions."""
    sdef = catalog.get_storage(storage)
    truth: dict[tuple[str, str], set[str]] = {
        (p.name, c): set() for p in sdef.periods for c in sdef.time_columns
    }
    for part in catalog.list_partitions(storage):
        for column in sdef.time_columns:
            truth[(part.period.name, column)].add(part.values[column])
    return truth


def stored_values(catalog: Catalog, storage: str) -> dict[tuple[str, str], set[str]]:
    """(period, column) -> time values the stored timelines advertise (read fresh)."""
    catalog.cache.invalidate()
    return {
        (period.name, column): {p.value for p in timeline}
        for (period, column), timeline in catalog.timelines(storage).items()
    }
