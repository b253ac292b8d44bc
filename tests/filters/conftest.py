"""Filter tests run on every backend: sqlite, and happybase against the HBase test double.

Catalogs are module scoped (hypothesis examples share one and create uniquely named storages),
so a test never pays for a fresh store per example.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from tests.helpers import unique


@pytest.fixture(scope="module", params=["sqlite", "hbase-testserver"])
def catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Catalog]:
    tmp = tmp_path_factory.mktemp("filters")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp}/catalog.db"
    else:
        server: Any = request.getfixturevalue("hbase_test_server")
        url = f"{server.url}?table_prefix={unique('flt')}_"
    cat = Catalog(url, data_root=str(tmp / "data"), cache=TimelineCache())
    cat.create_fact("ev")
    yield cat
    cat.close()
