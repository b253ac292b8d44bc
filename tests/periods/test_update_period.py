"""UpdatePeriod: values and ordinals (property tests), ordering and nesting, the calendar
arithmetic, calendar edge cases (leap years, ISO weeks, quarters) and strict parsing.

Zone-specific behaviour (DST days, repeated and skipped hours) is in test_zones.py.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions.errors import (
    AmbiguousTime,
    InvalidInput,
    InvalidPartitionValue,
    InvalidRange,
)
from airflow_partitions.periods import TimePartition, TimePartitionRange, UpdatePeriod
from tests.periods.instants import (
    ALL_PERIODS,
    BERLIN,
    KOLKATA,
    SETTINGS,
    SUFFIX,
    UTC,
    P,
    expected_base_value,
    instants,
    periods,
    utc,
    wall_is_repeated,
    zones,
)

# ------------------------------------------------------------------------------ property tests


@SETTINGS
@given(period=periods, tz=zones, instant=instants)
def test_format_parse_round_trip(period: UpdatePeriod, tz: str, instant: dt.datetime) -> None:
    ordinal = period.ordinal(instant, tz)
    value = period.format(instant, tz)
    assert value == period.format_ordinal(ordinal, tz)
    assert period.parse_ordinal(value, tz) == ordinal
    assert utc(period.parse(value, tz)) == utc(period.start_of(ordinal, tz))
    # the value names the local calendar unit, independently computed
    local = instant.astimezone(zoneinfo.ZoneInfo(tz))
    assert SUFFIX.sub("", value) == expected_base_value(period, local)
    # an offset suffix appears exactly on sub-daily values whose wall time is repeated
    if period < P.DAILY and wall_is_repeated(instant, tz):
        offset = local.utcoffset()
        assert offset is not None
        minutes = int(offset.total_seconds()) // 60
        assert value.endswith(
            f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
        )
        with pytest.raises(AmbiguousTime, match=re.escape(SUFFIX.sub("", value))):
            period.parse_ordinal(SUFFIX.sub("", value), tz)
    else:
        assert SUFFIX.search(value) is None
    # the same partition, whichever zone the instant is expressed in
    assert period.ordinal(instant.astimezone(zoneinfo.ZoneInfo(tz)), tz) == ordinal
    partition = TimePartition.of(period, value, tz)
    assert partition.ordinal == ordinal
    assert partition.value == value


@SETTINGS
@given(period=periods, tz=zones, instant=instants)
def test_truncate_next_previous(period: UpdatePeriod, tz: str, instant: dt.datetime) -> None:
    floor = period.truncate(instant, tz)
    nxt = period.next(floor, tz)
    assert utc(floor) <= instant < utc(nxt)
    assert utc(period.truncate(floor, tz)) == utc(floor)  # idempotent
    assert utc(period.truncate(utc(floor), tz)) == utc(floor)
    assert period.is_aligned(floor, tz)
    assert utc(period.previous(nxt, tz)) == utc(floor)
    prev = period.previous(floor, tz)
    assert utc(period.next(prev, tz)) == utc(floor)
    assert utc(prev) < utc(floor)
    ordinal = period.ordinal(instant, tz)
    assert period.ordinal(floor, tz) == ordinal
    assert period.ordinal(prev, tz) == ordinal - 1
    assert period.ordinal(nxt, tz) == ordinal + 1
    assert utc(period.add(floor, 3, tz)) == utc(period.start_of(ordinal + 3, tz))
    assert utc(period.add(floor, -2, tz)) == utc(period.start_of(ordinal - 2, tz))
    assert utc(period.add(floor, 0, tz)) == utc(floor)
    partition = TimePartition.of(period, floor, tz)
    assert partition.ordinal == ordinal
    assert utc(partition.start) == utc(floor)
    assert utc(partition.end) == utc(nxt)
    assert partition.next().previous() == partition
    assert partition.previous().next() == partition


@SETTINGS
@given(period=periods, tz=zones, a=instants, b=instants)
def test_ordinal_is_monotonic(
    period: UpdatePeriod, tz: str, a: dt.datetime, b: dt.datetime
) -> None:
    a, b = min(a, b), max(a, b)
    assert period.ordinal(a, tz) <= period.ordinal(b, tz)
    if period.ordinal(a, tz) == period.ordinal(b, tz):
        assert period.format(a, tz) == period.format(b, tz)
    else:
        assert utc(period.truncate(a, tz)) < utc(period.truncate(b, tz))


@SETTINGS
@given(period=periods, tz=zones, instant=instants, aligned=st.booleans())
def test_ceil(period: UpdatePeriod, tz: str, instant: dt.datetime, aligned: bool) -> None:
    if aligned:
        instant = utc(period.truncate(instant, tz))
    ceil = period.ceil(instant, tz)
    ordinal = period.ordinal(instant, tz)
    floor = utc(period.start_of(ordinal, tz))
    if floor == instant:
        assert period.is_aligned(instant, tz)
        assert utc(ceil) == instant
    else:
        assert not period.is_aligned(instant, tz)
        assert utc(ceil) == utc(period.start_of(ordinal + 1, tz))
        assert instant < utc(ceil)
    assert period.is_aligned(ceil, tz)
    assert utc(period.ceil(ceil, tz)) == utc(ceil)


@SETTINGS
@given(period=periods, tz=zones, ordinal_instant=instants, n=st.integers(-50, 50))
def test_start_of_and_ordinals_agree(
    period: UpdatePeriod, tz: str, ordinal_instant: dt.datetime, n: int
) -> None:
    o = period.ordinal(ordinal_instant, tz) + n
    start, end = period.start_of(o, tz), period.start_of(o + 1, tz)
    assert utc(start) < utc(end)
    assert period.ordinal(start, tz) == o
    assert period.ordinal(utc(end) - dt.timedelta(seconds=1), tz) == o
    assert period.ordinal(end, tz) == o + 1


# ----------------------------------------------------------------------------- periods as such


def test_period_ordering() -> None:
    names = ["SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"]
    assert [p.name for p in sorted(reversed(ALL_PERIODS))] == names
    assert P.HOURLY < P.DAILY < P.WEEKLY < P.MONTHLY
    assert P.YEARLY > P.QUARTERLY >= P.QUARTERLY
    assert max(ALL_PERIODS) is P.YEARLY
    assert min(ALL_PERIODS) is P.SECONDLY
    with pytest.raises(TypeError):
        _ = P.DAILY < 3  # type: ignore[operator]


def test_period_lookup() -> None:
    assert P.of("hourly") is P.HOURLY
    assert P.of(" Daily ") is P.DAILY
    assert P.of(P.WEEKLY) is P.WEEKLY
    with pytest.raises(InvalidPartitionValue, match="FORTNIGHTLY"):
        P.of("FORTNIGHTLY")
    with pytest.raises(InvalidInput):
        P.of("")


@pytest.mark.parametrize(
    ("fine", "coarse", "expected"),
    [
        (P.HOURLY, P.DAILY, True),
        (P.WEEKLY, P.MONTHLY, False),
        (P.DAILY, P.WEEKLY, True),
        (P.DAILY, P.MONTHLY, True),
        (P.MONTHLY, P.QUARTERLY, True),
        (P.QUARTERLY, P.YEARLY, True),
        (P.WEEKLY, P.YEARLY, False),
        (P.DAILY, P.HOURLY, False),
        (P.YEARLY, P.MONTHLY, False),
        (P.HOURLY, P.HOURLY, True),
        (P.SECONDLY, P.YEARLY, True),
    ],
)
def test_nests_in(fine: UpdatePeriod, coarse: UpdatePeriod, expected: bool) -> None:
    assert fine.nests_in(coarse) is expected


@pytest.mark.parametrize("tz", ["UTC", BERLIN, KOLKATA])
def test_nests_in_matches_the_calendar(tz: str) -> None:
    """nests_in(a, b) iff every start of a b-partition (2014..2016) is an a-partition start."""
    begin = dt.datetime(2014, 1, 1, tzinfo=UTC)
    for coarse in ALL_PERIODS:
        if coarse < P.DAILY:
            continue
        o0 = coarse.ordinal(begin, tz)
        starts = [coarse.start_of(o, tz) for o in range(o0, o0 + 40)]
        for fine in ALL_PERIODS:
            nested = (
                all(utc(fine.start_of(fine.ordinal(s, tz), tz)) == utc(s) for s in starts)
                and fine <= coarse
            )
            assert fine.nests_in(coarse) is nested, (fine, coarse, tz)


def test_format_patterns() -> None:
    assert P.HOURLY.format_pattern == "yyyy-MM-dd-HH"
    assert P.SECONDLY.format_pattern == "yyyy-MM-dd-HH-mm-ss"
    instant = dt.datetime(2015, 2, 14, 13, 7, 9, tzinfo=UTC)
    assert [p.format(instant) for p in ALL_PERIODS] == [
        "2015-02-14-13-07-09",
        "2015-02-14-13-07",
        "2015-02-14-13",
        "2015-02-14",
        "2015-W07",
        "2015-02",
        "2015-Q1",
        "2015",
    ]


# ------------------------------------------------------------------------ calendar arithmetic

CALENDAR_PERIODS = [p for p in ALL_PERIODS if p >= P.DAILY]


@SETTINGS
@given(
    period=st.sampled_from(CALENDAR_PERIODS),
    tz=zones,
    instant=instants,
)
def test_calendar_ordinal_is_the_ordinal_of_the_local_day(
    period: UpdatePeriod, tz: str, instant: dt.datetime
) -> None:
    """The zone-free day arithmetic (the cover's UTC fast path) numbers like ``ordinal``."""
    local_day = instant.astimezone(zoneinfo.ZoneInfo(tz)).date()
    assert period.calendar_ordinal(local_day) == period.ordinal(instant, tz)


@SETTINGS
@given(
    period=st.sampled_from(CALENDAR_PERIODS),
    day=st.dates(min_value=dt.date(2, 1, 1), max_value=dt.date(9998, 12, 31)),
)
def test_calendar_start_day_inverts_calendar_ordinal(period: UpdatePeriod, day: dt.date) -> None:
    ordinal = period.calendar_ordinal(day)
    first = period.calendar_start_day(ordinal)
    assert first <= day.toordinal() < period.calendar_start_day(ordinal + 1)
    assert period.calendar_ordinal(dt.date.fromordinal(first)) == ordinal
    assert period.calendar_ordinal(dt.date.fromordinal(first - 1)) == ordinal - 1
    start = period.start_of(ordinal)
    assert start.date() == dt.date.fromordinal(first)
    assert (start.hour, start.minute, start.second) == (0, 0, 0)


# ------------------------------------------------------------------------- calendar edge cases


def test_leap_years() -> None:
    assert P.DAILY.parse("2016-02-29") == dt.datetime(2016, 2, 29, tzinfo=UTC)
    with pytest.raises(InvalidPartitionValue, match="2015-02-29"):
        P.DAILY.parse("2015-02-29")
    with pytest.raises(InvalidPartitionValue, match="1900-02-29"):
        P.DAILY.parse("1900-02-29")
    assert P.DAILY.parse("2000-02-29").day == 29
    feb16 = TimePartition.of(P.MONTHLY, "2016-02")
    assert feb16.end - feb16.start == dt.timedelta(days=29)
    assert TimePartition.of(P.MONTHLY, "2015-02").end - TimePartition.of(
        P.MONTHLY, "2015-02"
    ).start == dt.timedelta(days=28)
    assert len(TimePartitionRange.parse("[2016-01-01, 2016-12-31]", P.DAILY)) == 366
    assert len(TimePartitionRange.parse("[2015-01-01, 2015-12-31]", P.DAILY)) == 365
    y2016 = TimePartition.of(P.YEARLY, "2016")
    assert y2016.end - y2016.start == dt.timedelta(days=366)
    assert P.HOURLY.format(dt.datetime(2016, 2, 29, 23, tzinfo=UTC)) == "2016-02-29-23"
    assert P.HOURLY.next(P.HOURLY.parse("2016-02-29-23")) == dt.datetime(2016, 3, 1, tzinfo=UTC)


def test_iso_weeks() -> None:
    w53 = TimePartition.of(P.WEEKLY, "2015-W53")
    assert w53.start == dt.datetime(2015, 12, 28, tzinfo=UTC)
    assert w53.next().value == "2016-W01"
    assert TimePartition.of(P.WEEKLY, "2020-W53").start == dt.datetime(2020, 12, 28, tzinfo=UTC)
    with pytest.raises(InvalidPartitionValue, match="2019-W53"):
        P.WEEKLY.parse("2019-W53")
    for bad in ["2015-W00", "2015-W54", "2015-W7", "2015-w07", "2015W07"]:
        with pytest.raises(InvalidPartitionValue, match=re.escape(bad)):
            P.WEEKLY.parse(bad)
    assert P.WEEKLY.format(dt.datetime(2014, 12, 29, tzinfo=UTC)) == "2015-W01"
    assert P.WEEKLY.format(dt.datetime(2021, 1, 3, 23, 59, tzinfo=UTC)) == "2020-W53"
    assert P.WEEKLY.format(dt.datetime(2021, 1, 4, tzinfo=UTC)) == "2021-W01"
    assert P.WEEKLY.format(dt.datetime(2014, 12, 28, tzinfo=UTC)) == "2014-W52"
    # Monday start
    assert P.WEEKLY.truncate(dt.datetime(2015, 2, 15, 12, tzinfo=UTC)) == dt.datetime(
        2015, 2, 9, tzinfo=UTC
    )
    assert P.WEEKLY.parse("2015-W07") == dt.datetime(2015, 2, 9, tzinfo=UTC)
    assert not P.WEEKLY.is_aligned(dt.datetime(2015, 2, 8, tzinfo=UTC))
    # a week holding a DST change is 167 hours long in Berlin
    w13 = TimePartition.of(P.WEEKLY, "2015-W13", BERLIN)
    assert utc(w13.end) - utc(w13.start) == dt.timedelta(hours=167)


def test_quarters() -> None:
    q1 = TimePartition.of(P.QUARTERLY, "2015-Q1")
    assert q1.start == dt.datetime(2015, 1, 1, tzinfo=UTC)
    assert q1.end == dt.datetime(2015, 4, 1, tzinfo=UTC)
    assert TimePartition.of(P.QUARTERLY, "2015-Q4").next().value == "2016-Q1"
    assert P.QUARTERLY.format(dt.datetime(2015, 5, 17, tzinfo=UTC)) == "2015-Q2"
    assert P.QUARTERLY.format(dt.datetime(2015, 9, 30, 23, 59, 59, tzinfo=UTC)) == "2015-Q3"
    assert P.QUARTERLY.format(dt.datetime(2015, 10, 1, tzinfo=UTC)) == "2015-Q4"
    for bad in ["2015-Q0", "2015-Q5", "2015-q1", "2015-Q01", "2015Q1"]:
        with pytest.raises(InvalidPartitionValue, match=re.escape(bad)):
            P.QUARTERLY.parse(bad)
    q1_berlin = TimePartition.of(P.QUARTERLY, "2015-Q1", BERLIN)
    assert utc(q1_berlin.end) == dt.datetime(2015, 3, 31, 22, tzinfo=UTC)  # CEST midnight
    assert P.MONTHLY.nests_in(P.QUARTERLY)


def test_years_and_months_bounds() -> None:
    assert P.YEARLY.format_ordinal(1) == "0001"
    assert P.YEARLY.parse_ordinal("0999") == 999
    with pytest.raises(InvalidPartitionValue, match="0000"):
        P.YEARLY.parse("0000")
    with pytest.raises(InvalidRange):
        P.YEARLY.start_of(10000)
    assert P.MONTHLY.format(dt.datetime(2015, 12, 31, 23, tzinfo=UTC)) == "2015-12"
    assert TimePartition.of(P.MONTHLY, "2015-12").next().value == "2016-01"


# ------------------------------------------------------------------------------ strict parsing


@pytest.mark.parametrize(
    ("period", "value"),
    [
        (P.DAILY, "2015-13-45"),
        (P.DAILY, "2015-1-5"),
        (P.DAILY, "2015-02-30"),
        (P.DAILY, "2015-04-31"),
        (P.DAILY, "2015-01-01 "),
        (P.DAILY, " 2015-01-01"),
        (P.DAILY, "2015-01-01\n"),
        (P.DAILY, "2015/01/01"),
        (P.DAILY, "20150101"),
        (P.DAILY, "2015-01"),
        (P.DAILY, "2015-01-01-00"),
        (P.DAILY, "\uff12\uff10\uff11\uff15-01-01"),  # full-width digits
        (P.DAILY, ""),
        (P.HOURLY, "2015-01-01"),
        (P.HOURLY, "2015-01-01-24"),
        (P.HOURLY, "2015-01-01-5"),
        (P.MINUTELY, "2015-01-01-00-60"),
        (P.SECONDLY, "2015-01-01-00-00-60"),
        (P.MONTHLY, "2015-13"),
        (P.MONTHLY, "2015-00"),
        (P.MONTHLY, "2015-1"),
        (P.MONTHLY, "2015-01-01"),
        (P.YEARLY, "15"),
        (P.YEARLY, "20150"),
        (P.YEARLY, "2015-01"),
        (P.WEEKLY, "2015-02"),
        (P.QUARTERLY, "2015-03"),
    ],
)
def test_strict_parsing(period: UpdatePeriod, value: str) -> None:
    with pytest.raises(InvalidPartitionValue) as info:
        period.parse(value)
    assert repr(value) in str(info.value) or value in str(info.value)
    assert isinstance(info.value, InvalidInput)
    assert isinstance(info.value, ValueError)
    with pytest.raises(InvalidPartitionValue):
        TimePartition.of(period, value)


def test_non_string_value_is_rejected() -> None:
    with pytest.raises(InvalidPartitionValue, match="20150101"):
        P.DAILY.parse_ordinal(20150101)  # type: ignore[arg-type]
