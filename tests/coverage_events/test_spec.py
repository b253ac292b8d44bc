"""A coverage asset's URI and keys: what Airflow stores must give the same asset back, and a
key must name exactly its window (oracle: wall-clock arithmetic in zoneinfo, not the periods)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, NotADimension
from airflow_partitions.coverage_events import (
    CoverageAssetSpec,
    InvalidCoverageAsset,
    InvalidWindowKey,
)
from airflow_partitions.periods import UpdatePeriod

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                max_size=20).filter(str.strip)


@given(names, st.sampled_from(list(UpdatePeriod)),
       st.none() | st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)),
                           max_size=30).filter(str.strip), st.booleans())
def test_an_asset_is_its_uri(fact: str, period: UpdatePeriod, where: str | None,
                             per_slice: bool) -> None:
    spec = CoverageAssetSpec(fact, period, where, per_slice)
    assert CoverageAssetSpec.from_uri(spec.uri) == spec
    assert spec.uri.startswith("x-airflow-partitions://coverage/")


def test_other_uris_are_no_coverage_assets() -> None:
    for uri in ("s3://lake/events", "x-airflow-partitions://other/events/DAILY",
                "x-airflow-partitions://coverage/events", "x-airflow-partitions://coverage/e/NOPE"):
        assert CoverageAssetSpec.from_uri(uri) is None


@given(st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2040, 1, 1)),
       st.sampled_from(["UTC", "Europe/Berlin", "America/New_York"]),
       st.sampled_from([UpdatePeriod.HOURLY, UpdatePeriod.DAILY, UpdatePeriod.MONTHLY]))
def test_a_key_names_its_window(instant: dt.datetime, tz: str, period: UpdatePeriod) -> None:
    zone = ZoneInfo(tz)
    local = instant.replace(tzinfo=dt.UTC).astimezone(zone)
    if period is UpdatePeriod.HOURLY:
        start = local.replace(minute=0, second=0, microsecond=0)
        start = (start.astimezone(dt.UTC)).astimezone(zone)
    elif period is UpdatePeriod.DAILY:
        start = dt.datetime(local.year, local.month, local.day, tzinfo=zone)
    else:
        start = dt.datetime(local.year, local.month, 1, tzinfo=zone)
    spec = CoverageAssetSpec("f", period)
    key = spec.key(start, tz)
    assert key[:19] == start.strftime("%Y-%m-%dT%H:%M:%S")
    got_start, got_end, slice_ = spec.window_of(key, tz)
    assert got_start == start and slice_ == ()
    assert got_end > got_start
    assert spec.key(got_end, tz) != key


def test_the_repeated_autumn_hour_carries_its_offset() -> None:
    spec = CoverageAssetSpec("f", UpdatePeriod.HOURLY)
    first = dt.datetime(2015, 10, 25, 0, tzinfo=dt.UTC)  # 02:00 CEST
    second = dt.datetime(2015, 10, 25, 1, tzinfo=dt.UTC)  # 02:00 CET
    keys = [spec.key(first, "Europe/Berlin"), spec.key(second, "Europe/Berlin")]
    assert keys == ["2015-10-25T02:00:00+02:00", "2015-10-25T02:00:00+01:00"]
    assert [spec.window_of(k, "Europe/Berlin")[0] for k in keys] == [first, second]
    daily = CoverageAssetSpec("f", UpdatePeriod.DAILY)
    assert daily.key(dt.datetime(2015, 10, 24, 22, tzinfo=dt.UTC), "Europe/Berlin") == \
        "2015-10-25T00:00:00"


def test_per_slice_keys_put_the_slice_first() -> None:
    spec = CoverageAssetSpec("f", UpdatePeriod.DAILY, per_slice=True)
    start = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    key = spec.key(start, "UTC", (("region", "eu"),))
    assert key == "eu|2024-01-01T00:00:00"
    assert spec.window_of(key, "UTC", ("region",))[2] == (("region", "eu"),)


@pytest.mark.parametrize("key", ["2024-01-01", "2024-01-01T05:00:00", "eu|2024-01-01T00:00:00",
                                 "yesterday"])
def test_a_key_that_is_no_window_is_refused(key: str) -> None:
    with pytest.raises(InvalidWindowKey, match="partition key"):
        CoverageAssetSpec("f", UpdatePeriod.DAILY).window_of(key, "UTC")


def test_an_unknown_fact_or_a_period_it_cannot_make_is_refused(tmp_path: Path) -> None:
    catalog = Catalog(f"sqlite:///{tmp_path}/c.db")
    catalog.create_fact("events", time_columns=["dt"])
    catalog.create_storage("events", "daily", ["DAILY"], location=f"{tmp_path}/{{dt}}")
    with pytest.raises(InvalidCoverageAsset, match=r"no fact 'evnts' \(facts: events\)"):
        CoverageAssetSpec.of("evnts", "DAILY").check(catalog)
    with pytest.raises(InvalidCoverageAsset, match=r"fact 'events' cannot make HOURLY "
                                                   r"windows from its periods \(DAILY\)"):
        CoverageAssetSpec.of("events", "HOURLY").check(catalog)
    with pytest.raises(InvalidCoverageAsset, match="not an update period"):
        CoverageAssetSpec.of("events", "FORTNIGHTLY")
    assert CoverageAssetSpec.of("events", "monthly").check(catalog) == "UTC"


def test_a_where_over_a_column_that_is_no_dimension_is_refused(tmp_path: Path) -> None:
    catalog = Catalog(f"sqlite:///{tmp_path}/c.db")
    catalog.create_fact("events", time_columns=["dt"])
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["region"],
                           location=f"{tmp_path}/{{dt}}/{{region}}", dimensions=["region=eu"])
    assert CoverageAssetSpec.of("events", "DAILY", "region = 'eu'").check(catalog) == "UTC"
    with pytest.raises(NotADimension, match="regoin is not a declared dimension"):
        CoverageAssetSpec.of("events", "DAILY", "regoin = 'eu'").check(catalog)
