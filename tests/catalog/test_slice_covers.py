"""Per-slice covers from the catalog: each slice of a fact with declared dimensions gets its
own minimal mixed-granularity cover, a rollup shared by every slice counts once, and
verification and the manifest read exactly the chosen partitions' rows of their slice. Both
backends (the ``catalog`` fixture)."""

from __future__ import annotations

import datetime as dt
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import Cover, CoverRequest, RequiredSlice, SliceSource, to_us
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline, new_timeline
from tests.cover.slice_oracle import SliceOracle
from tests.hypothesis_budget import examples

T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
DAY = T0 + dt.timedelta(days=1)
DAY_VALUE = "2015-01-01"
EU, US = (("region", "eu"),), (("region", "us"),)
H, D = UpdatePeriod.HOURLY, UpdatePeriod.DAILY


def hour(h: int) -> str:
    return (T0 + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H")


def raw_fact(catalog: Catalog, name: str = "ev") -> str:
    """``{name}_raw``: (dt, region), HOURLY and DAILY, the domain eu, us."""
    catalog.create_fact(name)
    catalog.create_storage(name, f"{name}_raw", ["HOURLY", "DAILY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"])
    return f"{name}_raw"


def test_each_region_gets_its_own_mixed_cover(catalog: Catalog) -> None:
    """eu has only its DAILY, us only its 24 hours: before per-slice covers the day was
    missing (no period of the storage had both regions); now it is coverable with 25
    partitions, and the manifest's rows are exactly those (never eu's hours nor us's day)."""
    raw = raw_fact(catalog)
    catalog.register(raw, "DAILY", [{"dt": DAY_VALUE, "region": "eu"}])
    catalog.register(raw, "HOURLY", [{"dt": hour(h), "region": "us"} for h in range(24)])
    catalog.register(raw, "HOURLY", [{"dt": hour(3), "region": "eu"}])  # never needed
    verified = catalog.cover_with_partitions(CoverRequest.of("ev", T0, DAY))
    cover = verified.cover
    assert cover.coverable and len(cover) == 25
    assert [(p.period, p.value, p.dimensions) for p in cover.partitions if p.dimensions == EU] \
        == [(D, DAY_VALUE, EU)]
    assert [p.value for p in cover.partitions if p.dimensions == US] == [hour(h)
                                                                         for h in range(24)]
    rows = sorted((p.period.name, p.values["dt"], p.values["region"])
                  for p in verified.partitions)
    assert rows == sorted([("DAILY", DAY_VALUE, "eu")]
                          + [("HOURLY", hour(h), "us") for h in range(24)])
    data = cover.to_json()
    assert [p["value"] for p in data["partitions"]
            if p.get("dimensions") == {"region": "eu"}] == [DAY_VALUE]
    assert all("dimensions" in p for p in data["partitions"])
    assert Cover.from_json(data, "UTC") == cover
    assert "DAILY 2015-01-01 for region=eu" in str(cover)


def test_a_rollup_shared_by_every_region_counts_once(catalog: Catalog) -> None:
    """eu has its own DAILY; a global HOURLY storage has all 24 hours. Slice by slice gives
    eu's DAILY + 24 hours = 25; the minimum is the 24 shared hours for both regions, read
    once (docs/dimensions.md, rule 2)."""
    raw = raw_fact(catalog)
    catalog.create_storage("ev", "ev_all", ["HOURLY"])
    catalog.register(raw, "DAILY", [{"dt": DAY_VALUE, "region": "eu"}])
    catalog.register("ev_all", "HOURLY", [{"dt": hour(h)} for h in range(24)])
    verified = catalog.cover_with_partitions(CoverRequest.of("ev", T0, DAY))
    cover = verified.cover
    assert cover.coverable and len(cover) == 24
    assert {(p.storage, p.dimensions) for p in cover.partitions} == {("ev_all", ())}
    assert len(verified.partitions) == 24
    assert "dimensions" not in cover.to_json()["partitions"][0]


def test_global_hours_read_by_both_regions_are_listed_once(catalog: Catalog) -> None:
    """A global HOURLY storage has 00..11, each region its own 12..23: both regions read the
    global hours, listed (and read) once without a slice; each region's own hours carry it."""
    raw = raw_fact(catalog)
    catalog.create_storage("ev", "ev_all", ["HOURLY"])
    catalog.register("ev_all", "HOURLY", [{"dt": hour(h)} for h in range(12)])
    for region in ("eu", "us"):
        catalog.register(raw, "HOURLY", [{"dt": hour(h), "region": region}
                                         for h in range(12, 24)])
    verified = catalog.cover_with_partitions(CoverRequest.of("ev", T0, DAY))
    cover = verified.cover
    assert cover.coverable and len(cover) == 36  # 12 shared + 12 per region, not 48
    assert sorted({(p.storage, p.dimensions) for p in cover.partitions}) == [
        ("ev_all", ()), (raw, EU), (raw, US)]
    assert len(verified.partitions) == 36
    assert sum(p.storage == "ev_all" for p in verified.partitions) == 12


def test_a_fact_without_dimensions_keeps_its_json(catalog: Catalog) -> None:
    catalog.create_fact("plain")
    catalog.create_storage("plain", "plain_raw", ["HOURLY"], columns=["dt", "region"])
    catalog.register("plain_raw", "HOURLY", [{"dt": hour(h), "region": "eu"} for h in range(2)])
    cover = catalog.cover("plain", T0, T0 + dt.timedelta(hours=2))
    assert cover.coverable and len(cover) == 2
    assert all(set(p) == {"storage", "period", "value", "start", "end", "location"}
               for p in cover.to_json()["partitions"])


def _timeline(period: UpdatePeriod, ordinals: set[int]) -> PartitionTimeline:
    timeline = new_timeline("Ranges", period, tz="UTC")
    timeline.add_ordinal_ranges((o, o + 1) for o in sorted(ordinals))
    return timeline


HOURS = st.sets(st.tuples(st.integers(0, 23), st.sampled_from(("eu", "us"))), max_size=48)


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hours=HOURS, days=st.sets(st.sampled_from(("eu", "us"))),
       shared_hours=st.sets(st.integers(0, 23), max_size=24), shared_day=st.booleans(),
       shared_priority=st.sampled_from((-5, 5)))
def test_the_cover_is_minimal_against_a_brute_force_recount(
        catalog: Catalog, hours: set[tuple[int, str]], days: set[str], shared_hours: set[int],
        shared_day: bool, shared_priority: int) -> None:
    """Random small catalogs (per-region hours and days, a global rollup's hours and day):
    the catalog's cover has the brute-force optimum's uncovered length and partition count
    (``tests/cover/slice_oracle.py`` over sources rebuilt from what was registered), each
    region's partitions are disjoint and exist for that region, and every manifest row
    belongs to its partition's slice."""
    name = f"m{len(catalog.list_facts())}"
    raw = raw_fact(catalog, name)
    catalog.create_storage(name, f"{name}_all", ["HOURLY", "DAILY"], priority=shared_priority)
    if hours:
        catalog.register(raw, "HOURLY", [{"dt": hour(h), "region": r} for h, r in sorted(hours)])
    if days:
        catalog.register(raw, "DAILY", [{"dt": DAY_VALUE, "region": r} for r in sorted(days)])
    if shared_hours:
        catalog.register(f"{name}_all", "HOURLY", [{"dt": hour(h)} for h in sorted(shared_hours)])
    if shared_day:
        catalog.register(f"{name}_all", "DAILY", [{"dt": DAY_VALUE}])
    verified = catalog.cover_with_partitions(CoverRequest.of(name, T0, DAY))
    cover = verified.cover

    h0, d0 = H.parse_ordinal(hour(0), "UTC"), D.parse_ordinal(DAY_VALUE, "UTC")
    sources = [SliceSource(f"{name}_all", shared_priority, H,
                           _timeline(H, {h0 + h for h in shared_hours})),
               SliceSource(f"{name}_all", shared_priority, D,
                           _timeline(D, {d0} if shared_day else set()))]
    for region, s in (("eu", EU), ("us", US)):
        sources.append(SliceSource(raw, 0, H, _timeline(
            H, {h0 + h for h, r in hours if r == region}), fixed=s))
        sources.append(SliceSource(raw, 0, D, _timeline(
            D, {d0} if region in days else set()), fixed=s))
    whole = ((to_us(T0), to_us(DAY)),)
    best = SliceOracle(sources, [RequiredSlice(EU, whole), RequiredSlice(US, whole)],
                       "UTC").best(to_us(T0), to_us(DAY))
    assert cover.coverable == (best[0] == 0)
    assert len(cover) == best[1]
    for s in (EU, US):  # (a shared partition does not say which slices it serves)
        mine = [p for p in cover.partitions if p.dimensions == s]
        spans = sorted((p.start, p.end) for p in mine)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
        for p in mine:
            if p.storage == raw:
                region = dict(s)["region"]
                assert ((int(p.value[-2:]), region) in hours if p.period is H
                        else region in days)
    chosen = {(p.storage, p.period, p.value, p.dimensions) for p in cover.partitions}
    for row in verified.partitions:  # exactly the chosen partitions' rows of their slice
        slice_ = (("region", row.values["region"]),) if row.storage == raw else ()
        assert (row.storage, row.period, row.values["dt"], slice_) in chosen
    assert len(verified.partitions) == len(cover)
