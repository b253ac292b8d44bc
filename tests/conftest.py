"""Fixtures every test folder may use: a fresh sqlite catalog per test, and the hook's view of it.

Airflow reads ``AIRFLOW_HOME`` when first imported; unless the caller set one, the tests use a
throw-away directory so nothing lands in ``~/airflow``. Helpers live in ``tests/helpers.py``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

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
