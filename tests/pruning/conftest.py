"""Pruning tests: one sqlite catalog per module, storages named uniquely per test.

The local SparkSession the job-level tests use is the shared ``spark`` fixture of
``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_partitions.catalog import Catalog
from tests.helpers import module_catalog, unique

REGIONS = ("ap", "eu", "sa", "us")


@pytest.fixture(scope="module")
def catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Catalog]:
    cat = module_catalog(request, tmp_path_factory, "pruning")
    yield cat
    cat.close()


def hourly_storage(catalog: Catalog, hours: int = 6, regions: tuple[str, ...] = REGIONS,
                   extra: list[str] | None = None) -> str:
    """A fresh HOURLY storage keyed (dt, region[, extra...]) with hours x regions registered."""
    name = unique("raw")
    columns = ["dt", "region", *(extra or [])]
    catalog.create_storage("ev", name, ["HOURLY"], columns=columns)
    rows = []
    for h in range(hours):
        for r in regions:
            row = {"dt": f"2024-01-01-{h:02d}", "region": r}
            for c in extra or []:
                row[c.split(":")[0]] = "1"
            rows.append(row)
    catalog.register(name, "HOURLY", rows)
    return name
