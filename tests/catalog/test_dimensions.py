"""Declared dimensions: the spelling, its errors, JSON, required slices and their edges."""

from __future__ import annotations

import datetime as dt
import json

import pendulum
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog.slices.dimensions import (
    Dimension,
    DimensionError,
    DomainValue,
    NaiveDomainInstant,
    NotADimension,
    OverlappingDomainValue,
    dimensions_from_json,
    dimensions_to_json,
    parse_dimension,
    parse_dimensions,
    required_slices,
    select_slices,
    undeclared_notes,
)
from airflow_partitions.cover import CoverRequest, SliceSource, compute_slice_cover, slice_of, to_us
from airflow_partitions.errors import InvalidInput
from airflow_partitions.filters import FilterSyntaxError
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import new_timeline
from tests.hypothesis_budget import examples

UTC = dt.UTC
JUNE = dt.datetime(2025, 6, 1, tzinfo=UTC)
JAN = dt.datetime(2026, 1, 1, tzinfo=UTC)


def test_the_spelling() -> None:
    d = parse_dimension("region=eu,us,apac@2025-06-01T00:00:00Z")
    assert d.column == "region"
    assert d.values == (DomainValue("eu"), DomainValue("us"), DomainValue("apac", JUNE))
    span = parse_dimension("region=apac@2025-06-01T00:00:00Z..2026-01-01T00:00:00Z")
    assert span.values == (DomainValue("apac", JUNE, JAN),)
    retired = parse_dimension("region=apac@..2026-01-01T00:00:00+00:00")
    assert retired.values == (DomainValue("apac", None, JAN),)
    for d in (span, retired, parse_dimension("region=eu")):
        assert parse_dimension(d.text()) == d


def test_specs_of_one_column_are_merged() -> None:
    dims = parse_dimensions(["region=eu", "source=web,app", "region=us@2025-06-01T00:00:00Z"])
    assert [d.column for d in dims] == ["region", "source"]
    assert [v.value for v in dims[0].values] == ["eu", "us"]


def test_retire_and_relaunch() -> None:
    d = parse_dimension("region=eu,apac").retired("apac", JUNE)
    assert d.values[1] == DomainValue("apac", None, JUNE)
    again = d.with_value(DomainValue("apac", JAN))  # disjoint spans: allowed
    assert parse_dimension(again.text()) == again
    with pytest.raises(OverlappingDomainValue):
        again.with_value(DomainValue("apac", JUNE - dt.timedelta(days=1)))
    with pytest.raises(NaiveDomainInstant):
        d.retired("eu", dt.datetime(2025, 1, 1))
    with pytest.raises(DimensionError, match="no value"):
        d.retired("mars", JUNE)


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        ("region=", DimensionError, "empty value"),
        ("region=eu,,us", DimensionError, "empty value"),
        ("region", DimensionError, "column=value"),
        ("=eu", DimensionError, "identifier"),
        ("re gion=eu", DimensionError, "identifier"),
        ("region=eu,eu", OverlappingDomainValue, "twice"),
        ("region=eu@2025-06-01T00:00:00", NaiveDomainInstant, "no UTC offset"),
        ("region=eu@2026-01-01T00:00:00Z..2025-06-01T00:00:00Z", DimensionError, "not after"),
        ("region=eu@2025-06-01T00:00:00Z..2025-06-01T00:00:00Z", DimensionError, "not after"),
        ("region=eu@tomorrow", DimensionError, "not an ISO-8601"),
        ("region=eu@", DimensionError, "give an instant"),
        ("region=e\nu", DimensionError, "control character"),
        ("region=eu\x00", DimensionError, "control character"),
    ],
)
def test_bad_specs_are_typed_and_readable(spec: str, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match) as info:
        parse_dimension(spec)
    assert isinstance(info.value, InvalidInput)
    assert "\n" not in str(info.value)


def test_json_round_trip() -> None:
    dims = parse_dimensions(["region=eu,apac@2025-06-01T00:00:00Z..2026-01-01T00:00:00Z",
                             "source=web@..2025-06-01T00:00:00+02:00"])
    text = json.dumps(dimensions_to_json(dims))
    assert dimensions_from_json(json.loads(text)) == dims
    with pytest.raises(DimensionError):
        dimensions_from_json({"column": "region"})
    with pytest.raises(DimensionError):
        dimensions_from_json([{"column": "region", "values": [{"value": ""}]}])
    with pytest.raises(DimensionError, match="ISO-8601 text"):
        dimensions_from_json([{"column": "region", "values": [{"value": "eu", "since": 5}]}])
    with pytest.raises(DimensionError, match="tuple of DomainValue"):
        Dimension("region", ["eu"])  # type: ignore[arg-type]


# -- required slices ------------------------------------------------------------------------------


def test_required_slices_are_the_product_with_intersected_spans() -> None:
    dims = parse_dimensions(["region=eu,apac@2025-06-01T00:00:00Z",
                             "source=web,app@..2025-06-15T00:00:00Z"])
    start, end = dt.datetime(2025, 5, 1, tzinfo=UTC), dt.datetime(2025, 7, 1, tzinfo=UTC)
    got = {r.slice: r.spans for r in required_slices(dims, start, end)}
    june, mid = to_us(JUNE), to_us(dt.datetime(2025, 6, 15, tzinfo=UTC))
    assert got == {
        slice_of({"region": "eu", "source": "web"}): ((to_us(start), to_us(end)),),
        slice_of({"region": "eu", "source": "app"}): ((to_us(start), mid),),
        slice_of({"region": "apac", "source": "web"}): ((june, to_us(end)),),
        slice_of({"region": "apac", "source": "app"}): ((june, mid),),
    }
    before = required_slices(dims, dt.datetime(2025, 1, 1, tzinfo=UTC), JUNE)
    assert {dict(r.slice)["region"] for r in before} == {"eu"}  # apac: not yet launched
    assert required_slices([], start, end)[0].slice == ()
    with pytest.raises(NaiveDomainInstant):
        required_slices(dims, dt.datetime(2025, 1, 1), end)


def test_a_launch_inside_a_berlin_dst_day_is_widened_to_whole_partitions() -> None:
    """2015-03-29 in Berlin has 23 hours. apac launches at 12:30 local: with HOURLY data it
    needs 12:00..24:00 (12 hours); with DAILY only, the whole (23-hour) day."""
    tz = "Europe/Berlin"
    start = pendulum.datetime(2015, 3, 29, tz=tz)
    end = start.add(days=1)
    assert (end - start).total_seconds() == 23 * 3600
    dims = parse_dimensions(["region=eu,apac@2015-03-29T12:30:00+02:00"])
    required = required_slices(dims, start, end)
    apac = slice_of({"region": "apac"})
    hourly = new_timeline("Ranges", UpdatePeriod.HOURLY, tz=tz)
    first = UpdatePeriod.HOURLY.ordinal(start, tz)
    hourly.add_ordinal_ranges([(first, first + 23)])
    sources = [SliceSource("raw", 0, UpdatePeriod.HOURLY, hourly)]
    cover = compute_slice_cover(sources, required, CoverRequest(None, start, end), tz=tz)
    noon = pendulum.datetime(2015, 3, 29, 12, tz=tz)
    assert cover.answer(apac).spans == ((to_us(noon), to_us(end)),)
    assert sum(r.count for r in cover.answer(apac).runs) == 12
    assert cover.partition_count == 23 and cover.coverable
    daily = new_timeline("Ranges", UpdatePeriod.DAILY, tz=tz)  # the day is not there yet
    cover = compute_slice_cover([SliceSource("roll", 0, UpdatePeriod.DAILY, daily)], required,
                                CoverRequest(None, start, end), tz=tz)
    assert cover.answer(apac).spans == ((to_us(start), to_us(end)),)
    assert not cover.coverable and cover.summary().endswith(
        "missing 23 hours of region=apac, 23 hours of region=eu")


def test_a_retired_value_is_not_required_from_its_until() -> None:
    dims = parse_dimensions(["region=eu,us@..2025-01-01T05:00:00Z"])
    start, end = dt.datetime(2025, 1, 1, tzinfo=UTC), dt.datetime(2025, 1, 2, tzinfo=UTC)
    got = {r.slice: r.spans for r in required_slices(dims, start, end)}
    assert got[slice_of({"region": "us"})] == ((to_us(start), to_us(start) + 5 * 3600 * 10**6),)


@st.composite
def domains(draw: st.DrawFn) -> list[Dimension]:
    hours = st.integers(0, 48).map(lambda h: dt.datetime(2025, 1, 1, tzinfo=UTC)
                                   + dt.timedelta(hours=h))
    out = []
    for column in draw(st.lists(st.sampled_from(["region", "source"]), min_size=0,
                                max_size=2, unique=True)):
        values = []
        for name in draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, unique=True)):
            since = draw(st.none() | hours)
            until = draw(st.none() | hours)
            if since is not None and until is not None and until <= since:
                until = None
            values.append(DomainValue(name, since, until))
        out.append(Dimension(column, tuple(values)))
    return out


@settings(max_examples=examples(60), deadline=None)
@given(domains(), st.integers(0, 40), st.integers(1, 30))
def test_required_slices_match_a_pointwise_recount(
    dims: list[Dimension], first: int, length: int
) -> None:
    base = dt.datetime(2025, 1, 1, tzinfo=UTC)
    start, end = base + dt.timedelta(hours=first), base + dt.timedelta(hours=first + length)
    got = {r.slice: r.spans for r in required_slices(dims, start, end)}
    assert dimensions_from_json(json.loads(json.dumps(dimensions_to_json(dims)))) == tuple(dims)
    for h in range(first - 2, first + length + 2):
        t = base + dt.timedelta(hours=h, minutes=30)
        inside = start <= t < end
        expected = set()
        if inside:
            combos: list[dict[str, str]] = [{}]
            for d in dims:
                live = [v.value for v in d.values if (v.since is None or v.since <= t)
                        and (v.until is None or t < v.until)]
                combos = [{**c, d.column: v} for c in combos for v in live]
            expected = {slice_of(c) for c in combos}
        found = {s for s, spans in got.items() if any(a <= to_us(t) < b for a, b in spans)}
        assert found == expected


@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from(["UTC", "Europe/Berlin", "Asia/Kolkata"]),
       st.sampled_from([UpdatePeriod.HOURLY, UpdatePeriod.DAILY]),
       st.lists(st.integers(0, 4 * 24 * 60), min_size=2, max_size=2), st.integers(0, 3))
def test_spans_are_widened_to_the_nearest_whole_partitions(
    tz: str, finest: UpdatePeriod, minutes: list[int], first_day: int
) -> None:
    """Across Berlin's spring change: each required span grows to the finest period's
    boundaries around it (at most one partition on each side), clipped to the range."""
    start = pendulum.datetime(2015, 3, 27, tz=tz).add(days=first_day)
    end = start.add(days=4)
    since, until = (start.add(minutes=m) for m in sorted(minutes))
    if since >= until:
        return
    dims = [Dimension("region", (DomainValue("eu", since, until),))]
    timeline = new_timeline("Ranges", finest, tz=tz)
    cover = compute_slice_cover([SliceSource("raw", 0, finest, timeline)],
                                required_slices(dims, start, end),
                                CoverRequest(None, start, end), tz=tz)
    (answer,) = cover.answers
    ((a, b),) = answer.spans
    lo = finest.start_of(finest.ordinal(since, tz), tz)
    hi_ordinal = finest.ordinal(until, tz)
    hi_start = finest.start_of(hi_ordinal, tz)
    hi = hi_start if to_us(hi_start) == to_us(until) else finest.start_of(hi_ordinal + 1, tz)
    assert (a, b) == (max(to_us(lo), to_us(start)), min(to_us(hi), to_us(end)))
    assert answer.uncovered_us == b - a  # nothing registered: all of it missing


# -- selection ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "kept"),
    [
        ("region IN ('eu','us')", {"eu/web", "eu/app", "us/web", "us/app"}),
        ("region = 'eu' AND source != 'app'", {"eu/web"}),
        ("region <> 'eu' AND source = 'web'", {"us/web", "apac/web"}),
        ("region NOT IN ('eu', 'us') OR source = 'app'", {"apac/web", "apac/app", "eu/app",
                                                          "us/app"}),
        ("REGION = 'apac'", {"apac/web", "apac/app"}),
        (None, {f"{r}/{s}" for r in ("eu", "us", "apac") for s in ("web", "app")}),
    ],
)
def test_select_slices(where: str | None, kept: set[str]) -> None:
    dims = parse_dimensions(["region=eu,us,apac", "source=web,app"])
    required = required_slices(dims, JUNE, JAN)
    got = select_slices(required, dims, where)
    assert {f"{dict(r.slice)['region']}/{dict(r.slice)['source']}" for r in got} == kept


def test_select_refuses_non_dimension_columns_and_bad_syntax() -> None:
    dims = parse_dimensions(["region=eu,us"])
    required = required_slices(dims, JUNE, JAN)
    with pytest.raises(NotADimension, match=r"dt is not a declared dimension.*region"):
        select_slices(required, dims, "dt = '2025-06-01' AND region = 'eu'")
    with pytest.raises(FilterSyntaxError):
        select_slices(required, dims, "region IN ('eu'")
    with pytest.raises(InvalidInput):
        select_slices(required, dims, "region = 5")


def test_undeclared_columns_say_so() -> None:
    dims = parse_dimensions(["region=eu"])
    assert undeclared_notes(["dt", "region", "source"], dims, ["dt"]) == [
        "source: not a dimension, any value counts"]
