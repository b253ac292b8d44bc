"""Plans over declared dimensions: an hour lacking some required slice is missing for
exactly those slices, a run names them, and a rollup is planned only when its inputs are
complete or planned for every slice."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, NotADimension, Producer
from airflow_partitions.cli import describe
from airflow_partitions.planning import Plan, plan
from tests.helpers import unique
from tests.hypothesis_budget import examples

DAY = dt.datetime(2015, 1, 31, tzinfo=dt.UTC)
END = DAY + dt.timedelta(days=1)
REGIONS = ("eu", "us")


def regions_pipeline(catalog: Catalog, *, slice_conf: str | None = None, rollup: bool = True,
                     apac_since: int | None = None) -> tuple[str, str, str]:
    """``raw`` HOURLY by (dt, region) with the domain eu, us (and apac from hour
    ``apac_since`` of DAY), ``roll`` DAILY without the region column (preferred), each with a
    producer (the rollup's only when ``rollup``)."""
    fact, raw, roll = unique("sl"), unique("raw"), unique("roll")
    catalog.create_fact(fact)
    dims = ["region=eu,us"]
    if apac_since is not None:
        dims.append(f"region=apac@{DAY + dt.timedelta(hours=apac_since):%Y-%m-%dT%H:%M:%SZ}")
    catalog.create_storage(fact, raw, ["HOURLY"], columns=["dt", "region"], dimensions=dims,
                           producers={"HOURLY": Producer("ingest", slice_conf=slice_conf)})
    catalog.create_storage(fact, roll, ["DAILY"], priority=10,
                           producers={"DAILY": Producer("rollup")} if rollup else {})
    return fact, raw, roll


def register(catalog: Catalog, raw: str, pairs: set[tuple[int, str]]) -> None:
    if pairs:
        catalog.register(raw, "HOURLY", [{"dt": f"2015-01-31-{h:02d}", "region": r}
                                          for h, r in sorted(pairs)])


def planned_pairs(p: Plan, raw: str) -> list[tuple[int, str]]:
    return sorted((int(run.value[-2:]), value) for run in p.runs if run.storage == raw
                  for s in run.slices for _, value in s)


def test_an_hour_one_region_lacks_is_planned_for_that_region_only(shared: Catalog) -> None:
    fact, raw, _ = regions_pipeline(shared, rollup=False)
    register(shared, raw, {(h, r) for h in range(24) for r in REGIONS} - {(5, "eu")})
    p = plan(shared, fact, DAY, END)
    assert [(r.dag_id, r.value, r.slices, r.conf) for r in p.runs] == [
        ("ingest", "2015-01-31-05", ((("region", "eu"),),), {"partition_slice": {"region": "eu"}})]
    assert p.runs[0].target() == "ingest 2015-01-31T05:00 for region=eu"
    assert p.to_json()["runs"][0]["slices"] == [{"region": "eu"}]
    assert "ingest @ 2015-01-31T05:00:00+00:00  " + raw + " HOURLY 2015-01-31-05 for region=eu  " \
        "[gap]" in "\n".join(describe(p))
    assert p.coverable_after()


def test_several_missing_slices_are_one_run_when_the_producer_takes_them(
        shared: Catalog) -> None:
    fact, raw, _ = regions_pipeline(shared, slice_conf="regions", rollup=False)
    register(shared, raw, {(h, r) for h in range(24) for r in REGIONS if h not in (3, 4)}
             | {(4, "us")})
    p = plan(shared, fact, DAY, END)
    assert [(r.value, r.conf) for r in p.runs] == [
        ("2015-01-31-03", {"regions": ["eu", "us"]}), ("2015-01-31-04", {"regions": ["eu"]})]
    default = regions_pipeline(shared, rollup=False)  # the same holes, one run per slice
    register(shared, default[1], {(h, r) for h in range(24) for r in REGIONS if h not in (3, 4)}
             | {(4, "us")})
    runs = plan(shared, default[0], DAY, END).runs
    assert [(r.value, r.conf) for r in runs] == [
        ("2015-01-31-03", {"partition_slice": {"region": "eu"}}),
        ("2015-01-31-03", {"partition_slice": {"region": "us"}}),
        ("2015-01-31-04", {"partition_slice": {"region": "eu"}})]


def test_a_rollup_waits_for_every_slice_of_its_inputs(shared: Catalog) -> None:
    """Without an hourly producer eu's missing hour cannot be made, so the day's rollup is not
    planned (us having the hour does not count); with one, the hour comes first."""
    fact, raw, roll = regions_pipeline(shared)
    shared.set_producers(raw, {"HOURLY": None})
    register(shared, raw, {(h, r) for h in range(24) for r in REGIONS} - {(5, "eu")})
    p = plan(shared, fact, DAY, END)
    assert [r.storage for r in p.runs] == [] and not p.coverable_after()
    assert p.unfillable[0][:2] == (DAY + dt.timedelta(hours=5), DAY + dt.timedelta(hours=6))
    shared.set_producers(raw, {"HOURLY": Producer("ingest")})
    p = plan(shared, fact, DAY, END)
    assert [(r.storage, r.kind, r.slices) for r in p.runs] == [
        (raw, "input", ((("region", "eu"),),)), (roll, "gap", ())]


def test_a_stale_slice_is_re_made_alone_and_a_stale_hour_whole(shared: Catalog) -> None:
    fact, raw, _ = regions_pipeline(shared, slice_conf="regions", rollup=False)
    register(shared, raw, {(h, r) for h in range(24) for r in REGIONS})
    one = plan(shared, fact, DAY, END, restate=[(raw, "HOURLY", "2015-01-31-07", {"region": "us"})])
    assert [(r.kind, r.conf) for r in one.runs] == [("restate", {"regions": ["us"]})]
    whole = plan(shared, fact, DAY, END, restate=[(raw, "HOURLY", "2015-01-31-07")])
    assert [(r.kind, r.conf) for r in whole.runs] == [("restate", {"regions": ["eu", "us"]})]


def test_where_plans_only_the_named_slices(shared: Catalog) -> None:
    fact, raw, _ = regions_pipeline(shared, rollup=False)
    register(shared, raw, {(h, r) for h in range(24) for r in REGIONS} - {(5, "eu"), (6, "us")})
    p = plan(shared, fact, DAY, END, where="region = 'us'")
    assert [(r.value, r.slices) for r in p.runs] == [("2015-01-31-06", ((("region", "us"),),))]
    with pytest.raises(NotADimension, match="dt is not a declared dimension"):
        plan(shared, fact, DAY, END, where="dt = 'x'")


@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(holes=st.sets(st.tuples(st.integers(0, 23), st.sampled_from(("eu", "us", "apac")))),
       apac_since=st.none() | st.integers(0, 24), slice_conf=st.sampled_from([None, "regions"]),
       hourly=st.booleans(), rollup=st.booleans(), day_registered=st.booleans())
def test_planned_slices_are_exactly_the_missing_pairs(
        shared: Catalog, holes: set[tuple[int, str]], apac_since: int | None,
        slice_conf: str | None, hourly: bool, rollup: bool, day_registered: bool) -> None:
    """Over random (hour, region) holes, with apac required from a random hour: the runs name
    exactly the missing required (hour, slice) pairs (none when the day's rollup exists or no
    producer can make hours), each once; no run for a complete hour; the rollup only when
    every slice of every hour is present or planned; and registering what the plan names
    makes the catalog's cover the plan's ``cover_after``."""
    fact, raw, roll = regions_pipeline(shared, slice_conf=slice_conf, rollup=rollup,
                                       apac_since=apac_since)
    if not hourly:
        shared.set_producers(raw, {"HOURLY": None})
    required = {(h, r) for h in range(24) for r in REGIONS} | {
        (h, "apac") for h in range(24) if apac_since is not None and h >= apac_since}
    register(shared, raw, required - holes)
    if day_registered:
        shared.register(roll, "DAILY", {"dt": "2015-01-31"})
    p = plan(shared, fact, DAY, END)
    missing = sorted(required & holes)
    pairs = planned_pairs(p, raw)
    assert pairs == ([] if day_registered or not hourly else missing)  # exactly, each once
    lacking_hours = {h for h, _ in missing}
    assert not [r for r in p.runs if r.storage == raw and int(r.value[-2:]) not in lacking_hours]
    per_run = [len(r.slices) for r in p.runs if r.storage == raw]
    assert all(n == 1 for n in per_run) if slice_conf is None else \
        len(per_run) == len({r.value for r in p.runs if r.storage == raw})
    if [r for r in p.runs if r.storage == roll]:  # every slice of every hour is there or planned
        assert rollup and not day_registered
        assert (required - holes) | set(pairs) == required
    assert p.coverable_after() == (day_registered or hourly or not missing)
    for run in p.runs:  # what the producers would write
        if run.storage == raw:
            shared.register(raw, "HOURLY", [{"dt": run.value, **dict(s)} for s in run.slices])
        else:
            shared.register(roll, run.period.name, {"dt": run.value})
    cover = shared.cover(fact, DAY, END)
    assert cover.coverable == p.coverable_after()
    # the catalog's cover lists a sliced hour once per slice: its distinct partitions are
    # the plan's when coverable; when not, each region also reads the hours only it has
    # (per-slice covers), so they hold the plan's complete hours
    distinct = list(dict.fromkeys((c.storage, c.period.name, c.value)
                                  for c in cover.partitions))
    if cover.coverable:
        assert distinct == list(p.cover_after)
    else:
        assert set(distinct) >= set(p.cover_after)
