"""Producers on storage definitions: validation, JSON round trip, old definitions, set_producers
(check-and-put, concurrent updates of different periods both land, warm caches see them)."""

from __future__ import annotations

import json
import threading

import pendulum
import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.definitions.producers import (
    InvalidProducer,
    Producer,
    parse_producer_items,
)
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.layout import DEF, storage_row
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod


@pytest.fixture
def cat(catalog: Catalog) -> Catalog:
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"],
                           producers={"HOURLY": Producer("events_hourly_ingest")})
    catalog.create_storage("events", "rollup", ["DAILY", "MONTHLY"])
    return catalog


def test_round_trip_and_old_definitions_decode(cat: Catalog) -> None:
    sdef = cat.set_producers("rollup", {"DAILY": Producer("d", "end-P1D"),
                                        "monthly": Producer("m")})
    assert StorageDef.from_json(json.loads(json.dumps(sdef.to_json()))) == sdef
    assert list(sdef.producers) == ["DAILY", "MONTHLY"]
    old = {k: v for k, v in sdef.to_json().items() if k != "producers"}
    assert StorageDef.from_json(old).producers == {}
    assert "producers" not in cat.get_storage("rollup").to_json() or sdef.producers


def test_set_and_remove_reach_other_processes_caches(cat: Catalog, store_url: str) -> None:
    other = Catalog(store_url, cache=TimelineCache())
    assert other.fact_state("events").storages["rollup"].definition.producers == {}
    cat.set_producers("rollup", {"DAILY": Producer("d")})
    assert other.fact_state("events").storages["rollup"].definition.producers == {
        "DAILY": Producer("d")}
    cat.set_producers("rollup", {"DAILY": None})
    assert other.fact_state("events").storages["rollup"].definition.producers == {}
    other.close()


def test_exist_ok_ignores_producers_unless_given(cat: Catalog) -> None:
    assert cat.create_storage("events", "raw", ["HOURLY"], exist_ok=True).producers == {
        "HOURLY": Producer("events_hourly_ingest")}
    with pytest.raises(InvalidInput, match="already exists"):
        cat.create_storage("events", "raw", ["HOURLY"], exist_ok=True,
                           producers={"HOURLY": Producer("other")})


def test_concurrent_updates_of_different_periods_both_land(cat: Catalog, store_url: str) -> None:
    catalogs = [Catalog(store_url, cache=TimelineCache()) for _ in range(4)]
    changes = [{"DAILY": Producer(f"d{i}")} if i % 2 else {"MONTHLY": Producer(f"m{i}")}
               for i in range(4)]
    threads = [threading.Thread(target=c.set_producers, args=("rollup", ch))
               for c, ch in zip(catalogs, changes, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    producers = Catalog(store_url, cache=TimelineCache()).get_storage("rollup").producers
    assert set(producers) == {"DAILY", "MONTHLY"}
    raw = cat.rows.catalog.get(storage_row("rollup"), [DEF])[DEF]
    assert set(json.loads(raw)["producers"]) == {"DAILY", "MONTHLY"}
    for c in catalogs:
        c.close()


@pytest.mark.parametrize("bad", [
    lambda c: Producer("a b"), lambda c: Producer("x" * 251), lambda c: Producer("x", "middle"),
    lambda c: Producer("x", "start+1H"), lambda c: Producer("x", "end-P"),
    lambda c: c.set_producers("raw", {"DAILY": Producer("x")}),
    lambda c: c.set_producers("raw", {"HOURLY": "dag"}),
    lambda c: c.set_producers("nope", {"HOURLY": Producer("x")}),
    lambda c: parse_producer_items("HOURLY=a,HOURLY=b"),
    lambda c: parse_producer_items("SOMETIMES=a"),
])
def test_bad_producers_are_typed(cat: Catalog, bad: object) -> None:
    with pytest.raises(InvalidInput):
        bad(cat)  # type: ignore[operator]


def test_logical_date_rules() -> None:
    day = UpdatePeriod.DAILY.parse_ordinal("2015-03-29", "Europe/Paris")  # a 23-hour day
    at = {rule: Producer("x", rule).logical_date_of(UpdatePeriod.DAILY, day, "Europe/Paris")
          for rule in ("start", "end", "end-PT1H", "start+P1D", "start-P1M", "start+PT90M")}
    utc = pendulum.datetime
    assert at == {"start": utc(2015, 3, 28, 23), "end": utc(2015, 3, 29, 22),
                  "end-PT1H": utc(2015, 3, 29, 21), "start+P1D": utc(2015, 3, 29, 22),
                  "start-P1M": utc(2015, 2, 27, 23), "start+PT90M": utc(2015, 3, 29, 0, 30)}
    assert Producer("x", "end-PT1H").spec() == "x@end-PT1H" and Producer("x").spec() == "x"
    with pytest.raises(InvalidProducer):
        Producer("x", "start+PT1.5H")
