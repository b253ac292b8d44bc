"""A module-wide sqlite catalog for the planning tests and a builder of the example pipeline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_partitions.catalog import Catalog, Producer, TimelineCache
from tests.helpers import unique

DAGS = {"HOURLY": "events_hourly_ingest", "DAILY": "events_daily_rollup",
        "MONTHLY": "events_monthly_rollup"}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    """One store per module: hypothesis examples each make their own fact in it."""
    tmp = tmp_path_factory.mktemp("planning")
    catalog = Catalog(f"sqlite:///{tmp}/catalog.db", data_root=str(tmp / "data"),
                      cache=TimelineCache())
    yield catalog
    catalog.close()


def pipeline(catalog: Catalog, producers: frozenset[str] = frozenset(DAGS),
             tz: str = "UTC") -> tuple[str, str, str]:
    """A fresh fact like the demo's: ``raw`` HOURLY and ``roll`` DAILY+MONTHLY (preferred),
    with producers for the named periods. Returns (fact, raw, roll)."""
    fact, raw, roll = unique("ev"), unique("raw"), unique("roll")
    catalog.create_fact(fact, tz=tz)
    made = {p: Producer(DAGS[p]) for p in producers}
    catalog.create_storage(fact, raw, ["HOURLY"],
                           producers={k: v for k, v in made.items() if k == "HOURLY"})
    catalog.create_storage(fact, roll, ["DAILY", "MONTHLY"], priority=10,
                           producers={k: v for k, v in made.items() if k != "HOURLY"})
    return fact, raw, roll
