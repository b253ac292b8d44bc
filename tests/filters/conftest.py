"""Filter tests run on every backend: sqlite, and happybase against the HBase test double.

Catalogs are module scoped (hypothesis examples share one and create uniquely named storages),
so a test never pays for a fresh store per example.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_partitions.catalog import Catalog
from tests.helpers import module_catalog


@pytest.fixture(scope="module", params=["sqlite", "hbase-testserver"])
def catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Catalog]:
    cat = module_catalog(request, tmp_path_factory, "filters", request.param)
    yield cat
    cat.close()
