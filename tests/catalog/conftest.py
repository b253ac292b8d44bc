"""Catalog tests run on every backend: sqlite, happybase against the HBase test double, and a
real HBase Thrift server when ``AIRFLOW_PARTITIONS_TEST_HBASE=host:port`` is set."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from tests.helpers import unique
from tests.kv.conftest import REAL_HBASE_ENV, REAL_HBASE_SKIP


@pytest.fixture(params=["sqlite", "hbase-testserver", "hbase-real"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    if request.param == "hbase-real":
        real = os.environ.get(REAL_HBASE_ENV)
        if not real:
            pytest.skip(REAL_HBASE_SKIP)
        return f"hbase://{real}?table_prefix={unique(f'apcat{os.getpid()}x')}"
    server: Any = request.getfixturevalue("hbase_test_server")
    return f"{server.url}?table_prefix={unique('cat')}_"


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
