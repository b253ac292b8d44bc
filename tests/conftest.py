"""Fixtures every test folder may use: a fresh sqlite catalog per test (the hook's view of it),
a migrated Airflow home and a local SparkSession, both one per session.

Airflow reads ``AIRFLOW_HOME`` when first imported; unless the caller set one, the tests use a
throw-away directory so nothing lands in ``~/airflow``. Helpers live in ``tests/helpers.py``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="airflow-partitions-unit-"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")

from airflow_partitions.catalog import Catalog
from airflow_partitions.hooks.catalog import forget_catalogs, shared_catalog
from tests.helpers import AirflowHome, make_airflow_home


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh sqlite store that the hook finds through ``$AIRFLOW_PARTITIONS_STORE``."""
    url = f"sqlite:///{tmp_path}/catalog.db"
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", url)
    monkeypatch.setenv("AIRFLOW_PARTITIONS_DATA_ROOT", str(tmp_path / "data"))
    monkeypatch.delenv("AIRFLOW_CONN_PARTITIONS_DEFAULT", raising=False)
    forget_catalogs()
    yield url
    forget_catalogs()


@pytest.fixture
def catalog(store_url: str) -> Catalog:
    """The very catalog object the hook hands out in this process."""
    return shared_catalog(store_url)


@pytest.fixture
def events(catalog: Catalog) -> Catalog:
    """``events``: ``raw`` HOURLY by (dt, region), ``rollup`` DAILY (preferred)."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    catalog.create_storage("events", "rollup", ["DAILY"], priority=5)
    return catalog


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory: pytest.TempPathFactory) -> AirflowHome:
    """One migrated Airflow home per session (``airflow db migrate`` takes seconds)."""
    return make_airflow_home(tmp_path_factory.mktemp("airflow_home"))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One small local SparkSession for every job-level test (JVM start-up is the cost)."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("airflow-partitions-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    yield session
    session.stop()
