"""Pruning tests: one sqlite catalog per module, storages named uniquely per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from tests.helpers import unique

REGIONS = ("ap", "eu", "sa", "us")




@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    tmp: Path = tmp_path_factory.mktemp("pruning")
    cat = Catalog(f"sqlite:///{tmp}/catalog.db", data_root=str(tmp / "data"),
                  cache=TimelineCache())
    cat.create_fact("ev")
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


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One small local SparkSession for every job-level test (JVM start-up is the cost)."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("pruning-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    yield session
    session.stop()


