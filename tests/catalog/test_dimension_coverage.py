"""Covers that see the declared dimensions: an hour of a storage partitioned by ``(dt, region)``
counts only when every required region has its row, on every backend."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.definitions.tables import InvalidDefinition, StorageDef
from airflow_partitions.catalog.rows.runs import read_runs
from airflow_partitions.catalog.slices.completeness import completeness, incomplete_in
from airflow_partitions.catalog.slices.dimensions import NotADimension
from airflow_partitions.cover import Cover, CoverRequest, CoverRun
from tests.hypothesis_budget import examples

T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
DAY = T0 + dt.timedelta(days=1)


def hour(h: int) -> str:
    return (T0 + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H")


def regions_fact(catalog: Catalog, name: str = "ev", *dimensions: str) -> str:
    catalog.create_fact(name)
    catalog.create_storage(name, f"{name}_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=list(dimensions) or ["region=eu,us"])
    return f"{name}_raw"


def register(catalog: Catalog, storage: str, region: str, hours: range | list[int]) -> None:
    catalog.register(storage, "HOURLY", [{"dt": hour(h), "region": region} for h in hours])


def lacking(cover: Cover) -> dict[str, list[str]]:
    """slice text -> the first value of each run its needed entries name."""
    out: dict[str, list[str]] = {}
    for m in cover.missing:
        for n in m.needed:
            key = ",".join(f"{c}={v}" for c, v in n.dimensions) or "-"
            out.setdefault(key, []).extend(r.first for r in n.runs)
    return out


def test_an_hour_one_region_lacks_is_missing_for_that_region(catalog: Catalog) -> None:
    """The issue's reproduction: us has two days, eu five hours; the day is not coverable."""
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(48))
    register(catalog, raw, "eu", range(5))
    cover = catalog.cover("ev", T0, DAY, periods=["HOURLY"])
    assert not cover.coverable
    # Each region its own cover (was: the 5 hours both had): eu's 5 hours, us's 24.
    assert len(cover.partitions) == 29
    assert sum(p.dimensions == (("region", "eu"),) for p in cover.partitions) == 5
    [missing] = cover.missing
    assert (missing.start, missing.end) == (T0 + dt.timedelta(hours=5), DAY)
    [needed] = missing.needed
    assert needed.dimensions == (("region", "eu"),) and needed.total == 19
    assert "no HOURLY 2015-01-01-05..23 (19) for region=eu" in str(cover)
    assert Cover.from_json(cover.to_json(), "UTC") == cover
    # A slice selection asks for us only: then the day is there.
    assert catalog.cover("ev", T0, DAY, where="region = 'us'").coverable
    register(catalog, raw, "eu", range(5, 24))
    assert catalog.cover("ev", T0, DAY).coverable


def test_a_rollup_without_the_column_covers_every_region(catalog: Catalog) -> None:
    raw = regions_fact(catalog)
    catalog.create_storage("ev", "ev_day", ["DAILY"], priority=5)
    register(catalog, raw, "us", range(24))
    catalog.register("ev_day", "DAILY", [{"dt": "2015-01-01"}])
    cover = catalog.cover("ev", T0, DAY)
    assert cover.coverable
    assert [(p.storage, p.value) for p in cover.partitions] == [("ev_day", "2015-01-01")]


def test_domain_spans_are_honoured_at_their_edges(catalog: Catalog) -> None:
    """apac is required from 12:00 and retired from 18:00: hours 12 to 17 need it."""
    raw = regions_fact(catalog, "ev", "region=eu,apac@2015-01-01T12:00:00Z")
    catalog.set_dimension(raw, "region=apac@..2015-01-01T18:00:00Z")
    register(catalog, raw, "eu", range(24))
    assert catalog.cover("ev", T0, T0 + dt.timedelta(hours=12)).coverable
    cover = catalog.cover("ev", T0, DAY)
    assert lacking(cover) == {"region=apac": [hour(12)]}
    assert sum(n.total for m in cover.missing for n in m.needed) == 6
    assert catalog.cover("ev", T0 + dt.timedelta(hours=18), DAY).coverable
    register(catalog, raw, "apac", range(12, 18))
    assert catalog.cover("ev", T0, DAY).coverable


def test_a_filter_may_name_only_dimension_columns(catalog: Catalog) -> None:
    regions_fact(catalog)
    with pytest.raises(NotADimension, match="dt is not a declared dimension"):
        catalog.cover("ev", T0, DAY, where="dt = '2015-01-01-00'")
    catalog.create_fact("plain")
    catalog.create_storage("plain", "plain_raw", ["HOURLY"], columns=["dt", "region"])
    with pytest.raises(NotADimension, match="declares a dimension"):
        catalog.cover("plain", T0, DAY, where="region = 'eu'")


def test_a_slice_row_dropped_after_the_scan_is_caught_by_the_verification(
        catalog: Catalog) -> None:
    """The completeness scan and the row read for verification are two reads: a drop in
    between shows in the second, which names the incomplete hour."""
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(24))
    state = catalog.fact_state("ev")
    sdef = state.storages[raw].definition
    period = sdef.periods[0]
    request = CoverRequest.of("ev", T0, DAY)
    check = completeness(catalog.rows, sdef, period, "dt",
                         state.storages[raw].timelines[(period, "dt")], request)
    assert len(check.complete) == 24
    catalog.drop(raw, "HOURLY", {"dt": hour(7), "region": "eu"})
    [rows] = read_runs(catalog.rows, {raw: sdef}, [CoverRun(raw, period, check.lo, check.hi)],
                       "dt")
    assert incomplete_in(rows.by_ordinal(), sdef, check) == [check.lo + 7]
    assert lacking(catalog.cover("ev", T0, DAY)) == {"region=eu": [hour(7)]}


def test_declared_dimensions_are_checked_and_round_trip(catalog: Catalog) -> None:
    catalog.create_fact("ev")
    with pytest.raises(InvalidDefinition, match="time column"):
        catalog.create_storage("ev", "a", ["HOURLY"], columns=["dt", "region"],
                               dimensions=["dt=x"])
    with pytest.raises(InvalidDefinition, match="not a string partition column"):
        catalog.create_storage("ev", "b", ["HOURLY"], columns=["dt", "n:int"],
                               dimensions=["n=1"])
    with pytest.raises(InvalidDefinition, match="not a string partition column"):
        catalog.create_storage("ev", "c", ["HOURLY"], dimensions=["region=eu"])
    sdef = catalog.create_storage("ev", "d", ["HOURLY"], columns=["dt", "region", "source"],
                                  dimensions=["region=eu", "region=us@2025-06-01T00:00:00Z"])
    assert [d.text() for d in sdef.dimensions] == ["region=eu,us@2025-06-01T00:00:00Z"]
    assert sdef.undeclared_columns == ("source",)
    assert StorageDef.from_json(sdef.to_json()) == sdef
    fresh = Catalog(catalog.kv, cache=TimelineCache())
    assert fresh.get_storage("d") == sdef


def test_concurrent_set_dimension_calls_all_land(catalog: Catalog, store_url: str) -> None:
    raw = regions_fact(catalog)
    catalogs = [Catalog(store_url, cache=TimelineCache()) for _ in range(4)]
    threads = [threading.Thread(target=c.set_dimension, args=(raw, f"region=r{i}"))
               for i, c in enumerate(catalogs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    [dimension] = Catalog(store_url, cache=TimelineCache()).get_storage(raw).dimensions
    assert sorted(v.value for v in dimension.values) == ["eu", "r0", "r1", "r2", "r3", "us"]
    for c in catalogs:
        c.close()


REGIONS = ("eu", "us", "ap")  # ap is not declared: any value counts, so it never blocks


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=st.sets(st.tuples(st.integers(0, 11), st.sampled_from(REGIONS)), max_size=30),
       bounds=st.tuples(st.integers(0, 12), st.integers(0, 12)))
def test_the_cover_uses_exactly_the_hours_each_declared_region_has(
        catalog: Catalog, rows: set[tuple[int, str]], bounds: tuple[int, int]) -> None:
    """Against a recount of the rows: each declared region reads exactly its own hours (per
    slice, not only the hours both have), the range is coverable iff both have every hour,
    and each region's lacking hours are named for it."""
    name = f"p{len(catalog.list_facts())}"
    raw = regions_fact(catalog, name)
    for region in REGIONS:
        hours = sorted(h for h, r in rows if r == region)
        if hours:
            register(catalog, raw, region, hours)
    lo, hi = sorted(bounds)
    cover = catalog.cover(name, T0 + dt.timedelta(hours=lo), T0 + dt.timedelta(hours=hi))
    for region in ("eu", "us"):
        assert [p.value for p in cover.partitions if p.dimensions == (("region", region),)] \
            == [hour(h) for h in range(lo, hi) if (h, region) in rows]
    assert all(p.dimensions for p in cover.partitions)  # ap is never read: nobody needs it
    assert cover.coverable == all((h, r) in rows for h in range(lo, hi) for r in ("eu", "us"))
    totals: dict[str, int] = {}
    for m in cover.missing:
        for n in m.needed:
            assert n.dimensions, "every HOURLY source is checked per slice"
            region = dict(n.dimensions)["region"]
            totals[region] = totals.get(region, 0) + n.total
            for r in n.runs:
                first = int(r.first[-2:])
                assert all((first + i, region) not in rows for i in range(r.count))
    for region in ("eu", "us"):
        assert totals.get(region, 0) == sum((h, region) not in rows for h in range(lo, hi))
