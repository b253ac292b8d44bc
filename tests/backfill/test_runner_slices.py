"""The backfill runner over declared dimensions: each run's slices reach Airflow as
its ``dag_run_conf``, and a DAG's backfills with different confs run one after the other.

The stand-in for Airflow is test_runner's: it refuses a second open backfill of one DAG, and a
finished ingest run registers the regions its conf names."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow_partitions.catalog import Catalog, Producer
from tests.backfill.test_runner import DAY, FakeAirflow, run

H = dt.timedelta(hours=1)
EU = {"partition_slice": {"region": "eu"}}
US = {"partition_slice": {"region": "us"}}


@pytest.fixture
def regions(catalog: Catalog) -> Catalog:
    """``events``: ``raw`` HOURLY by (dt, region) with the domain eu, us, produced by
    ``ingest`` (one slice per run); ``rollup`` DAILY over every region, by ``rollup``."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"], producers={"HOURLY": Producer("ingest")})
    catalog.create_storage("events", "rollup", ["DAILY"], priority=5,
                           producers={"DAILY": Producer("rollup")})
    return catalog


def hours(catalog: Catalog, region: str, first: int, last: int) -> None:
    catalog.register("raw", "HOURLY", [{"dt": f"2015-01-02-{h:02d}", "region": region}
                                       for h in range(first, last)])


def test_each_slice_is_its_own_backfill_one_after_the_other(regions: Catalog) -> None:
    """eu lacks 20-23, us 22-23: eu's stretch, then us's (the same DAG: never side by side;
    hours 22 and 23 run twice, once per region), then the rollup; the range ends coverable."""
    hours(regions, "eu", 0, 20)
    hours(regions, "us", 0, 22)
    airflow = FakeAirflow(regions)
    report, lines = run(regions, airflow)
    assert report.ok, lines
    assert list(zip(airflow.created, airflow.confs, strict=True)) == [
        (("ingest", DAY + 20 * H, DAY + 23 * H), EU),
        (("ingest", DAY + 22 * H, DAY + 23 * H), US),
        (("rollup", DAY, DAY), None)]
    assert ("ingest", EU) in airflow.scheduled and ("ingest", US) in airflow.scheduled
    stage = report.to_json()["stages"][0]["backfills"]
    assert [(b["runs"], b["conf"]) for b in stage] == [(4, EU), (2, US)]
    assert '  stage 1 backfill: ingest 2015-01-02T20:00Z..2015-01-02T23:00Z (4 runs) conf ' \
        '{"partition_slice": {"region": "eu"}}' in lines
    assert regions.cover("events", DAY, DAY + 24 * H).coverable


def test_a_producer_taking_its_slices_gets_one_run_per_date(regions: Catalog) -> None:
    """With ``slice_conf="regions"`` hours lacking the same regions share a backfill:
    20-21 (eu) and 22-23 (eu and us) are two backfills, not four."""
    regions.set_producers("raw", {"HOURLY": Producer("ingest", slice_conf="regions")})
    hours(regions, "eu", 0, 20)
    hours(regions, "us", 0, 22)
    airflow = FakeAirflow(regions)
    report, lines = run(regions, airflow)
    assert report.ok, lines
    assert list(zip(airflow.created, airflow.confs, strict=True)) == [
        (("ingest", DAY + 20 * H, DAY + 21 * H), {"regions": ["eu"]}),
        (("ingest", DAY + 22 * H, DAY + 23 * H), {"regions": ["eu", "us"]}),
        (("rollup", DAY, DAY), None)]


def test_where_backfills_only_the_named_slices(regions: Catalog) -> None:
    hours(regions, "eu", 0, 20)
    hours(regions, "us", 0, 22)
    airflow = FakeAirflow(regions)
    report, lines = run(regions, airflow, where="region = 'us'")
    assert report.ok, lines
    assert airflow.confs == [US, None]  # us's hours, then the rollup


def test_a_stale_slice_re_runs_only_that_slice(catalog: Catalog) -> None:
    """A rollup partitioned by region: restating eu's hour 05 makes eu's day stale, and the
    restate re-runs the rollup for eu alone (checked with a dry run: Airflow's own dry run
    receives the conf, which is where it validates it against the DAG's params)."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"])
    catalog.create_storage("events", "rollup", ["DAILY"], columns=["dt", "region"], priority=5,
                           dimensions=["region=eu,us"], producers={"DAILY": Producer("rollup")})
    for region in ("eu", "us"):
        hours(catalog, region, 0, 24)
        inputs = [p.to_json() for p in catalog.list_partitions("raw")
                  if p.values["region"] == region]
        catalog.register("rollup", "DAILY", {"dt": "2015-01-02", "region": region},
                         inputs=inputs)
    catalog.register("raw", "HOURLY", {"dt": "2015-01-02-05", "region": "eu"}, restate=True)
    airflow = FakeAirflow(catalog)
    report, _ = run(catalog, airflow, restate=True, dry_run=True)
    assert [(r.kind, r.conf) for r in report.plan.runs] == [("restate", EU)]
    assert airflow.scheduled == [("rollup", EU)] and airflow.created == []
