"""Zones: DST days of 23 and 25 hours, repeated (fall-back) and skipped (spring-forward) wall
times, offset suffixes, half-hour zones, misaligned and naive instants, zone names.

The "fixed bugs" section pins bugs the property tests found (DST-repeated hours, fixed offsets,
zones whose offsets break sub-daily boundaries).
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

import pendulum
import pytest

from airflow_partitions.errors import (
    AmbiguousTime,
    InvalidInput,
    InvalidPartitionValue,
    MisalignedTime,
    UnsupportedZone,
)
from airflow_partitions.periods import TimePartition, TimePartitionRange, zone
from tests.periods.instants import BERLIN, KOLKATA, NEW_YORK, UTC, P, utc

# ---------------------------------------------------------------------------------------- DST


@pytest.mark.parametrize(
    ("tz", "short_day", "long_day"),
    [(BERLIN, "2015-03-29", "2015-10-25"), (NEW_YORK, "2015-03-08", "2015-11-01")],
)
def test_dst_days_are_23_and_25_hours(tz: str, short_day: str, long_day: str) -> None:
    short = TimePartition.of(P.DAILY, short_day, tz)
    long = TimePartition.of(P.DAILY, long_day, tz)
    assert utc(short.end) - utc(short.start) == dt.timedelta(hours=23)
    assert utc(long.end) - utc(long.start) == dt.timedelta(hours=25)
    normal = short.previous()
    assert utc(normal.end) - utc(normal.start) == dt.timedelta(hours=24)
    # the hours of each day, by ordinal
    for day, hours in ((short, 23), (long, 25)):
        first = P.HOURLY.ordinal(day.start, tz)
        last = P.HOURLY.ordinal(day.end, tz)
        assert last - first == hours


def test_hourly_over_fall_back_night_berlin() -> None:
    day = TimePartition.of(P.DAILY, "2015-10-25", BERLIN)
    first, last = P.HOURLY.ordinal(day.start, BERLIN), P.HOURLY.ordinal(day.end, BERLIN)
    values = [P.HOURLY.format_ordinal(o, BERLIN) for o in range(first, last)]
    assert len(values) == len(set(values)) == 25
    assert values[:5] == [
        "2015-10-25-00",
        "2015-10-25-01",
        "2015-10-25-02+02:00",
        "2015-10-25-02+01:00",
        "2015-10-25-03",
    ]
    assert values[-1] == "2015-10-25-23"
    assert [P.HOURLY.parse_ordinal(v, BERLIN) for v in values] == list(range(first, last))
    assert utc(P.HOURLY.parse("2015-10-25-02+02:00", BERLIN)) == dt.datetime(
        2015, 10, 25, 0, tzinfo=UTC
    )
    assert utc(P.HOURLY.parse("2015-10-25-02+01:00", BERLIN)) == dt.datetime(
        2015, 10, 25, 1, tzinfo=UTC
    )
    with pytest.raises(AmbiguousTime, match="2015-10-25-02") as info:
        P.HOURLY.parse("2015-10-25-02", BERLIN)
    assert "2015-10-25-02+02:00" in str(info.value)
    assert "2015-10-25-02+01:00" in str(info.value)
    assert isinstance(info.value, InvalidPartitionValue)
    # a range over the night holds both
    night = TimePartitionRange.parse("[2015-10-25-01, 2015-10-25-03]", P.HOURLY, BERLIN)
    assert [p.value for p in night] == [
        "2015-10-25-01",
        "2015-10-25-02+02:00",
        "2015-10-25-02+01:00",
        "2015-10-25-03",
    ]
    # minutes and seconds of the repeated hour carry the suffix too
    assert P.MINUTELY.format(dt.datetime(2015, 10, 25, 1, 30, tzinfo=UTC), BERLIN) == (
        "2015-10-25-02-30+01:00"
    )
    assert P.SECONDLY.format(dt.datetime(2015, 10, 25, 0, 59, 59, tzinfo=UTC), BERLIN) == (
        "2015-10-25-02-59-59+02:00"
    )
    # the last second before the repeat and the first after carry none
    assert P.SECONDLY.format(dt.datetime(2015, 10, 24, 23, 59, 59, tzinfo=UTC), BERLIN) == (
        "2015-10-25-01-59-59"
    )
    assert P.SECONDLY.format(dt.datetime(2015, 10, 25, 2, tzinfo=UTC), BERLIN) == (
        "2015-10-25-03-00-00"
    )


def test_hourly_over_fall_back_night_new_york() -> None:
    assert P.HOURLY.format(dt.datetime(2015, 11, 1, 5, tzinfo=UTC), NEW_YORK) == (
        "2015-11-01-01-04:00"
    )
    assert P.HOURLY.format(dt.datetime(2015, 11, 1, 6, tzinfo=UTC), NEW_YORK) == (
        "2015-11-01-01-05:00"
    )
    assert utc(P.HOURLY.parse("2015-11-01-01-05:00", NEW_YORK)) == dt.datetime(
        2015, 11, 1, 6, tzinfo=UTC
    )
    with pytest.raises(AmbiguousTime, match="2015-11-01-01"):
        P.HOURLY.parse("2015-11-01-01", NEW_YORK)


def test_dst_gap_is_rejected() -> None:
    for period, value in [
        (P.HOURLY, "2015-03-29-02"),
        (P.MINUTELY, "2015-03-29-02-30"),
        (P.SECONDLY, "2015-03-29-02-59-59"),
    ]:
        with pytest.raises(InvalidPartitionValue, match=re.escape(value)) as info:
            period.parse(value, BERLIN)
        assert not isinstance(info.value, AmbiguousTime)
    with pytest.raises(InvalidPartitionValue, match="2015-03-08-02"):
        P.HOURLY.parse("2015-03-08-02", NEW_YORK)
    # the same wall time is fine in UTC, and the spring-forward day has 23 distinct hours
    assert P.HOURLY.parse("2015-03-29-02") == dt.datetime(2015, 3, 29, 2, tzinfo=UTC)
    day = TimePartition.of(P.DAILY, "2015-03-29", BERLIN)
    first, last = P.HOURLY.ordinal(day.start, BERLIN), P.HOURLY.ordinal(day.end, BERLIN)
    values = [P.HOURLY.format_ordinal(o, BERLIN) for o in range(first, last)]
    assert "2015-03-29-02" not in values
    assert values[1:3] == ["2015-03-29-01", "2015-03-29-03"]


def test_offset_suffix_is_strict() -> None:
    for value in [
        "2015-06-01-02+02:00",
        "2015-10-25-02+03:00",
        "2015-10-25-02+0100",
        "2015-10-25-02+01:00 ",
        "2015-01-01-00+00:00",
    ]:
        tz = "UTC" if value.startswith("2015-01") else BERLIN
        with pytest.raises(InvalidPartitionValue, match=re.escape(value.strip())):
            P.HOURLY.parse(value, tz)
    with pytest.raises(InvalidPartitionValue):
        P.DAILY.parse("2015-10-25+02:00", BERLIN)


def test_half_hour_zone() -> None:
    start = P.HOURLY.parse("2015-01-01-00", KOLKATA)
    assert utc(start) == dt.datetime(2014, 12, 31, 18, 30, tzinfo=UTC)
    assert not P.HOURLY.is_aligned(dt.datetime(2015, 1, 1, 0, tzinfo=UTC), KOLKATA)
    assert P.HOURLY.is_aligned(dt.datetime(2015, 1, 1, 0, 30, tzinfo=UTC), KOLKATA)
    assert P.HOURLY.format(dt.datetime(2015, 1, 1, 0, 29, tzinfo=UTC), KOLKATA) == "2015-01-01-05"
    assert P.DAILY.format(dt.datetime(2014, 12, 31, 18, 30, tzinfo=UTC), KOLKATA) == "2015-01-01"
    assert P.DAILY.format(dt.datetime(2014, 12, 31, 18, 29, tzinfo=UTC), KOLKATA) == "2014-12-31"


def test_unknown_zone_and_period() -> None:
    with pytest.raises(InvalidPartitionValue, match="Mars/Olympus_Mons"):
        P.DAILY.parse("2015-01-01", "Mars/Olympus_Mons")
    with pytest.raises(InvalidPartitionValue, match="Mars/Olympus_Mons"):
        TimePartition.of(P.DAILY, "2015-01-01", "Mars/Olympus_Mons")
    with pytest.raises(InvalidPartitionValue, match="BIWEEKLY"):
        TimePartition.of("BIWEEKLY", "2015-01-01")


def test_misaligned_instants() -> None:
    half_past = dt.datetime(2015, 1, 1, 0, 30, tzinfo=UTC)
    with pytest.raises(MisalignedTime, match="2015-01-01T00:30:00"):
        TimePartition.of(P.HOURLY, half_past)
    for fn in (P.HOURLY.next, P.HOURLY.previous):
        with pytest.raises(MisalignedTime):
            fn(half_past)
    with pytest.raises(MisalignedTime):
        P.HOURLY.add(half_past, 2)
    with pytest.raises(MisalignedTime):
        TimePartitionRange.of(P.HOURLY, half_past, dt.datetime(2015, 1, 2, tzinfo=UTC))
    # UTC midnight is not Berlin midnight
    with pytest.raises(MisalignedTime):
        TimePartition.of(P.DAILY, dt.datetime(2015, 1, 1, tzinfo=UTC), BERLIN)
    assert TimePartition.of(P.DAILY, dt.datetime(2014, 12, 31, 23, tzinfo=UTC), BERLIN).value == (
        "2015-01-01"
    )
    # the partition's zone defaults to the instant's own zone
    berlin_midnight = pendulum.datetime(2015, 1, 1, tz=BERLIN)
    p = TimePartition.of(P.DAILY, berlin_midnight)
    assert (p.value, p.tz) == ("2015-01-01", BERLIN)
    assert not P.DAILY.is_aligned(dt.datetime(2015, 1, 1, 0, 0, 1, tzinfo=UTC))
    assert not P.MONTHLY.is_aligned(dt.datetime(2015, 1, 2, tzinfo=UTC))
    assert P.MONTHLY.ceil(dt.datetime(2015, 1, 2, tzinfo=UTC)) == dt.datetime(
        2015, 2, 1, tzinfo=UTC
    )
    assert P.DAILY.ceil(dt.datetime(2015, 1, 1, tzinfo=UTC)) == dt.datetime(2015, 1, 1, tzinfo=UTC)


def test_naive_datetimes_are_rejected() -> None:
    naive = dt.datetime(2015, 1, 1)
    calls = [
        lambda: P.DAILY.ordinal(naive),
        lambda: P.DAILY.format(naive),
        lambda: P.DAILY.truncate(naive),
        lambda: P.DAILY.ceil(naive),
        lambda: P.DAILY.is_aligned(naive),
        lambda: P.DAILY.next(naive),
        lambda: P.DAILY.ordinal(naive, "UTC"),
        lambda: TimePartition.of(P.DAILY, naive),
        lambda: TimePartition.of(P.DAILY, naive, "UTC"),
        lambda: TimePartitionRange.of(P.DAILY, naive, dt.datetime(2015, 1, 2)),
    ]
    for call in calls:
        with pytest.raises(InvalidInput, match="naive"):
            call()


# ------------------------------------------------------------------------------ fixed bugs


@pytest.mark.parametrize("value", ["2015-10-25-02+02:00", "2015-10-25-02+01:00"])
def test_next_previous_of_repeated_hour(value: str) -> None:
    """Found by these tests: ``==`` across zones is False in a DST-repeated hour (PEP 495)."""
    start = P.HOURLY.parse(value, BERLIN)  # a Berlin-zoned instant, as the API returns it
    p = TimePartition.of(P.HOURLY, start, BERLIN)
    assert p.value == value
    assert utc(P.HOURLY.next(start, BERLIN)) == utc(start) + dt.timedelta(hours=1)
    assert utc(P.HOURLY.previous(start, BERLIN)) == utc(start) - dt.timedelta(hours=1)


@pytest.mark.parametrize("hour", [0, 1])
def test_is_aligned_and_ceil_in_utc_inside_the_repeated_hour(hour: int) -> None:
    instant = dt.datetime(2015, 10, 25, hour, tzinfo=UTC)  # 02:00+02:00 and 02:00+01:00
    assert P.HOURLY.is_aligned(instant, BERLIN)
    assert utc(P.HOURLY.ceil(instant, BERLIN)) == instant


def test_fixed_offset_zone_keeps_its_offset() -> None:
    plus5 = dt.timezone(dt.timedelta(hours=5))
    instant = dt.datetime(2015, 1, 1, tzinfo=plus5)
    p = TimePartition.of(P.DAILY, instant)
    assert p.tz == "+05:00"
    assert utc(p.start) == utc(instant)
    assert TimePartition.of(P.DAILY, "2015-01-01", "+05:00") == p


def test_zone_whose_dst_shift_breaks_hours_is_refused() -> None:
    tz = "Australia/Lord_Howe"  # 30-minute DST: local hours are not consecutive partitions
    instant = dt.datetime(2015, 4, 4, 14, 30, tzinfo=UTC)
    with pytest.raises(UnsupportedZone, match="Lord_Howe"):
        P.HOURLY.truncate(instant, tz)
    assert P.DAILY.truncate(instant, tz).day == 5  # calendar periods still work there


def test_instants_before_a_zone_offset_became_aligned_are_refused() -> None:
    # Asia/Kolkata was at +05:21:10 until 1906; its hours then do not line up with today's.
    with pytest.raises(UnsupportedZone, match="Kolkata"):
        P.HOURLY.ordinal(dt.datetime(1905, 12, 31, 18, tzinfo=UTC), KOLKATA)
    assert P.HOURLY.format(dt.datetime(1906, 1, 1, 0, 45, tzinfo=UTC), KOLKATA) == "1906-01-01-06"


def test_zone_normalisation() -> None:
    assert TimePartition.of(P.DAILY, "2015-01-01", zone(BERLIN)).tz == BERLIN
    assert TimePartition.of(P.DAILY, "2015-01-01", zoneinfo.ZoneInfo(BERLIN)).tz == BERLIN
    assert TimePartition.of(P.DAILY, "2015-01-01", UTC).tz == "UTC"
    assert TimePartition.of(P.DAILY, "2015-01-01").tz == "UTC"
