"""The time model: update periods, values, ordinals, DST, strict parsing, partitions and ranges.

Instants in these tests are compared through UTC (``_utc``) on purpose: Python's ``==`` between
aware datetimes of *different* zones is always False for a wall time repeated by DST (PEP 495),
so a test that compared a local instant with a UTC one would test Python, not the code.

The "fixed bugs" section pins bugs these tests found (DST-repeated hours, fixed offsets, zones
whose offsets break sub-daily boundaries).
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

import pendulum
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.errors import (
    AmbiguousTime,
    InvalidInput,
    InvalidPartitionValue,
    InvalidRange,
    MisalignedTime,
    MixedPeriods,
    UnsupportedZone,
)
from airflow_partitions.periods import TimePartition, TimePartitionRange, UpdatePeriod, zone

UTC = dt.UTC
P = UpdatePeriod
ALL_PERIODS = list(UpdatePeriod)
BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"
KOLKATA = "Asia/Kolkata"
ZONES = ["UTC", BERLIN, NEW_YORK, KOLKATA]

# Hypothesis' deadline is a wall-clock check; we assert behaviour only.
SETTINGS = settings(deadline=None, max_examples=250, suppress_health_check=[HealthCheck.too_slow])

# Asia/Kolkata switched from Madras time (+05:21:10) to +05:30 on 1906-01-01, which trips the
# phase bug pinned by test_bug_offset_phase_change_*; the property range starts after it.
LOW = dt.datetime(1906, 1, 2, tzinfo=UTC)
HIGH = dt.datetime(2200, 1, 1, tzinfo=UTC)


_SUFFIX = re.compile(r"[+-]\d{2}:\d{2}$")


def _utc(value: dt.datetime) -> dt.datetime:
    """The same instant as a stdlib UTC datetime (safe to compare with ==)."""
    return dt.datetime.fromtimestamp(value.timestamp(), UTC)


def _wall_is_repeated(instant: dt.datetime, tz: str) -> bool:
    """Whether the local wall time of ``instant`` names a second instant too (DST fall-back)."""
    local = instant.astimezone(zoneinfo.ZoneInfo(tz))
    other = local.replace(fold=1 - local.fold)
    if other.utcoffset() == local.utcoffset():
        return False
    back = other.astimezone(UTC).astimezone(local.tzinfo)
    return back.replace(tzinfo=None) == local.replace(tzinfo=None)


def _dst_transitions(tz: str, first_year: int, last_year: int) -> list[int]:
    """UTC seconds of every offset change of ``tz`` in the years given (day scan + bisection)."""
    zone_ = zoneinfo.ZoneInfo(tz)
    out: list[int] = []
    day = int(dt.datetime(first_year, 1, 1, tzinfo=UTC).timestamp())
    stop = int(dt.datetime(last_year + 1, 1, 1, tzinfo=UTC).timestamp())

    def offset(seconds: int) -> dt.timedelta | None:
        return dt.datetime.fromtimestamp(seconds, UTC).astimezone(zone_).utcoffset()

    while day < stop:
        lo, hi = day, day + 86400
        if offset(lo) != offset(hi):
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if offset(mid) == offset(lo) else (lo, mid)
            out.append(hi)
        day += 86400
    return out


TRANSITIONS = sorted(
    {t for tz in (BERLIN, NEW_YORK) for t in _dst_transitions(tz, 1970, 2040)}
    | set(_dst_transitions(BERLIN, 1940, 1950))
)
assert len(TRANSITIONS) > 250


def _from_seconds(seconds: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, UTC)


uniform_instants = st.integers(int(LOW.timestamp()), int(HIGH.timestamp())).map(_from_seconds)
# instants within two hours of a DST change (where the interesting bugs live) ...
near_dst = st.builds(
    lambda t, d: _from_seconds(t + d), st.sampled_from(TRANSITIONS), st.integers(-7200, 7200)
)
# ... and a few seconds around UTC (and so, often, local) midnights, hours and year ends
near_boundary = st.builds(
    lambda day, h, d: dt.datetime.combine(day, dt.time(h), UTC) + dt.timedelta(seconds=d),
    st.dates(min_value=LOW.date() + dt.timedelta(days=1), max_value=HIGH.date()),
    st.sampled_from([0, 0, 18, 22, 23]),
    st.integers(-3, 3),
)
instants = st.one_of(uniform_instants, near_dst, near_boundary)
periods = st.sampled_from(ALL_PERIODS)
zones = st.sampled_from(ZONES)


def _expected_base_value(period: UpdatePeriod, local: dt.datetime) -> str:
    """The value of the partition holding ``local``, computed without the code under test."""
    if period is P.WEEKLY:
        year, week, _ = local.isocalendar()
        return f"{year:04d}-W{week:02d}"
    if period is P.QUARTERLY:
        return f"{local.year:04d}-Q{(local.month - 1) // 3 + 1}"
    pattern = {
        P.SECONDLY: "%Y-%m-%d-%H-%M-%S",
        P.MINUTELY: "%Y-%m-%d-%H-%M",
        P.HOURLY: "%Y-%m-%d-%H",
        P.DAILY: "%Y-%m-%d",
        P.MONTHLY: "%Y-%m",
        P.YEARLY: "%Y",
    }[period]
    return local.strftime(pattern)


# ------------------------------------------------------------------------------ property tests


@SETTINGS
@given(period=periods, tz=zones, instant=instants)
def test_format_parse_round_trip(period: UpdatePeriod, tz: str, instant: dt.datetime) -> None:
    ordinal = period.ordinal(instant, tz)
    value = period.format(instant, tz)
    assert value == period.format_ordinal(ordinal, tz)
    assert period.parse_ordinal(value, tz) == ordinal
    assert _utc(period.parse(value, tz)) == _utc(period.start_of(ordinal, tz))
    # the value names the local calendar unit, independently computed
    local = instant.astimezone(zoneinfo.ZoneInfo(tz))
    assert _SUFFIX.sub("", value) == _expected_base_value(period, local)
    # an offset suffix appears exactly on sub-daily values whose wall time is repeated
    if period < P.DAILY and _wall_is_repeated(instant, tz):
        offset = local.utcoffset()
        assert offset is not None
        minutes = int(offset.total_seconds()) // 60
        assert value.endswith(
            f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
        )
        with pytest.raises(AmbiguousTime, match=re.escape(_SUFFIX.sub("", value))):
            period.parse_ordinal(_SUFFIX.sub("", value), tz)
    else:
        assert _SUFFIX.search(value) is None
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
    assert _utc(floor) <= instant < _utc(nxt)
    assert _utc(period.truncate(floor, tz)) == _utc(floor)  # idempotent
    assert _utc(period.truncate(_utc(floor), tz)) == _utc(floor)
    assert period.is_aligned(floor, tz)
    assert _utc(period.previous(nxt, tz)) == _utc(floor)
    prev = period.previous(floor, tz)
    assert _utc(period.next(prev, tz)) == _utc(floor)
    assert _utc(prev) < _utc(floor)
    ordinal = period.ordinal(instant, tz)
    assert period.ordinal(floor, tz) == ordinal
    assert period.ordinal(prev, tz) == ordinal - 1
    assert period.ordinal(nxt, tz) == ordinal + 1
    assert _utc(period.add(floor, 3, tz)) == _utc(period.start_of(ordinal + 3, tz))
    assert _utc(period.add(floor, -2, tz)) == _utc(period.start_of(ordinal - 2, tz))
    assert _utc(period.add(floor, 0, tz)) == _utc(floor)
    partition = TimePartition.of(period, floor, tz)
    assert partition.ordinal == ordinal
    assert _utc(partition.start) == _utc(floor)
    assert _utc(partition.end) == _utc(nxt)
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
        assert _utc(period.truncate(a, tz)) < _utc(period.truncate(b, tz))


@SETTINGS
@given(period=periods, tz=zones, instant=instants, aligned=st.booleans())
def test_ceil(period: UpdatePeriod, tz: str, instant: dt.datetime, aligned: bool) -> None:
    if aligned:
        instant = _utc(period.truncate(instant, tz))
    ceil = period.ceil(instant, tz)
    ordinal = period.ordinal(instant, tz)
    floor = _utc(period.start_of(ordinal, tz))
    if floor == instant:
        assert period.is_aligned(instant, tz)
        assert _utc(ceil) == instant
    else:
        assert not period.is_aligned(instant, tz)
        assert _utc(ceil) == _utc(period.start_of(ordinal + 1, tz))
        assert instant < _utc(ceil)
    assert period.is_aligned(ceil, tz)
    assert _utc(period.ceil(ceil, tz)) == _utc(ceil)


@SETTINGS
@given(period=periods, tz=zones, ordinal_instant=instants, n=st.integers(-50, 50))
def test_start_of_and_ordinals_agree(
    period: UpdatePeriod, tz: str, ordinal_instant: dt.datetime, n: int
) -> None:
    o = period.ordinal(ordinal_instant, tz) + n
    start, end = period.start_of(o, tz), period.start_of(o + 1, tz)
    assert _utc(start) < _utc(end)
    assert period.ordinal(start, tz) == o
    assert period.ordinal(_utc(end) - dt.timedelta(seconds=1), tz) == o
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
                all(_utc(fine.start_of(fine.ordinal(s, tz), tz)) == _utc(s) for s in starts)
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
    assert _utc(w13.end) - _utc(w13.start) == dt.timedelta(hours=167)


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
    assert _utc(q1_berlin.end) == dt.datetime(2015, 3, 31, 22, tzinfo=UTC)  # CEST midnight
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


# ---------------------------------------------------------------------------------------- DST


@pytest.mark.parametrize(
    ("tz", "short_day", "long_day"),
    [(BERLIN, "2015-03-29", "2015-10-25"), (NEW_YORK, "2015-03-08", "2015-11-01")],
)
def test_dst_days_are_23_and_25_hours(tz: str, short_day: str, long_day: str) -> None:
    short = TimePartition.of(P.DAILY, short_day, tz)
    long = TimePartition.of(P.DAILY, long_day, tz)
    assert _utc(short.end) - _utc(short.start) == dt.timedelta(hours=23)
    assert _utc(long.end) - _utc(long.start) == dt.timedelta(hours=25)
    normal = short.previous()
    assert _utc(normal.end) - _utc(normal.start) == dt.timedelta(hours=24)
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
    assert _utc(P.HOURLY.parse("2015-10-25-02+02:00", BERLIN)) == dt.datetime(
        2015, 10, 25, 0, tzinfo=UTC
    )
    assert _utc(P.HOURLY.parse("2015-10-25-02+01:00", BERLIN)) == dt.datetime(
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
    assert _utc(P.HOURLY.parse("2015-11-01-01-05:00", NEW_YORK)) == dt.datetime(
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
    assert _utc(start) == dt.datetime(2014, 12, 31, 18, 30, tzinfo=UTC)
    assert not P.HOURLY.is_aligned(dt.datetime(2015, 1, 1, 0, tzinfo=UTC), KOLKATA)
    assert P.HOURLY.is_aligned(dt.datetime(2015, 1, 1, 0, 30, tzinfo=UTC), KOLKATA)
    assert P.HOURLY.format(dt.datetime(2015, 1, 1, 0, 29, tzinfo=UTC), KOLKATA) == "2015-01-01-05"
    assert P.DAILY.format(dt.datetime(2014, 12, 31, 18, 30, tzinfo=UTC), KOLKATA) == "2015-01-01"
    assert P.DAILY.format(dt.datetime(2014, 12, 31, 18, 29, tzinfo=UTC), KOLKATA) == "2014-12-31"


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


# ------------------------------------------------------------------------- partitions, ranges


def test_time_partition_basics() -> None:
    p = TimePartition.of("HOURLY", "2015-01-29-06")
    assert p.period is P.HOURLY
    assert p.start == dt.datetime(2015, 1, 29, 6, tzinfo=UTC)
    assert p.end == dt.datetime(2015, 1, 29, 7, tzinfo=UTC)
    assert p.value == str(p) == "2015-01-29-06"
    assert "2015-01-29-06" in repr(p)
    assert p.next().value == "2015-01-29-07"
    assert p.previous().value == "2015-01-29-05"
    assert p.add(18).value == "2015-01-30-00"
    assert p.add(-7).value == "2015-01-28-23"
    assert p == TimePartition.of(P.HOURLY, dt.datetime(2015, 1, 29, 6, tzinfo=UTC))
    assert p == P.HOURLY.partition("2015-01-29-06")
    assert p < p.next() and p.next() > p and p <= p and p >= p
    assert len({p, p.add(0), p.next()}) == 2
    assert sorted([p.add(3), p, p.add(-1)]) == [p.add(-1), p, p.add(3)]


def test_time_partition_mixed_periods_and_zones() -> None:
    hourly = TimePartition.of(P.HOURLY, "2015-01-01-00")
    daily = TimePartition.of(P.DAILY, "2015-01-01")
    berlin = TimePartition.of(P.HOURLY, "2015-01-01-00", BERLIN)
    for other in (daily, berlin):
        with pytest.raises(MixedPeriods):
            _ = hourly < other
        with pytest.raises(MixedPeriods):
            _ = hourly >= other
        assert hourly != other
    with pytest.raises(MixedPeriods):
        TimePartitionRange(hourly, daily)
    with pytest.raises(MixedPeriods):
        TimePartitionRange(hourly, berlin)
    with pytest.raises(MixedPeriods):
        _ = daily in TimePartitionRange(hourly, hourly.add(5))


DAY = "2015-01-29"


@pytest.mark.parametrize(
    ("text", "first", "last", "length"),
    [
        ("[2015-01-29, 2015-02-01)", "2015-01-29", "2015-01-31", 3),
        ("[2015-01-29, 2015-02-01]", "2015-01-29", "2015-02-01", 4),
        ("(2015-01-29, 2015-02-01]", "2015-01-30", "2015-02-01", 3),
        ("(2015-01-29, 2015-02-01)", "2015-01-30", "2015-01-31", 2),
        ("  [2015-01-29,2015-02-01)  ", "2015-01-29", "2015-01-31", 3),
        ("[ 2015-01-29 ,  2015-02-01 ]", "2015-01-29", "2015-02-01", 4),
    ],
)
def test_range_parse_brackets(text: str, first: str, last: str, length: int) -> None:
    r = TimePartitionRange.parse(text, P.DAILY)
    values = [p.value for p in r]
    assert len(r) == len(values) == length
    assert (values[0], values[-1]) == (first, last)
    assert r.period is P.DAILY
    assert r.begin.value == first
    assert r.end.value == TimePartition.of(P.DAILY, last).next().value
    assert str(r) == f"[{first}, {r.end.value})"
    assert TimePartitionRange.parse(str(r), P.DAILY) == r


def test_range_queries() -> None:
    r = TimePartitionRange.of(P.HOURLY, "2015-01-29-06", "2015-01-30-00")
    assert len(r) == 18 and not r.is_empty()
    assert TimePartition.of(P.HOURLY, "2015-01-29-06") in r
    assert TimePartition.of(P.HOURLY, "2015-01-29-23") in r
    assert TimePartition.of(P.HOURLY, "2015-01-30-00") not in r
    assert TimePartition.of(P.HOURLY, "2015-01-29-05") not in r
    assert dt.datetime(2015, 1, 29, 23, 59, 59, tzinfo=UTC) in r
    assert dt.datetime(2015, 1, 30, tzinfo=UTC) not in r
    assert "2015-01-29-06" not in r
    assert r.start_time == dt.datetime(2015, 1, 29, 6, tzinfo=UTC)
    assert r.end_time == dt.datetime(2015, 1, 30, tzinfo=UTC)
    assert list(r)[-1].value == "2015-01-29-23"
    empty = TimePartitionRange.parse("[2015-01-29-06, 2015-01-29-06)", P.HOURLY)
    assert empty.is_empty() and len(empty) == 0 and list(empty) == []
    assert len(TimePartitionRange.parse("(2015-01-29-06, 2015-01-29-07)", P.HOURLY)) == 0
    same = TimePartitionRange.of(
        P.HOURLY, dt.datetime(2015, 1, 29, 6, tzinfo=UTC), dt.datetime(2015, 1, 30, tzinfo=UTC)
    )
    assert same == r


@pytest.mark.parametrize(
    "text",
    [
        "[2015-02-01, 2015-01-29)",
        "[2015-01-29, 2015-01-27]",
        "(2015-01-29, 2015-01-28]",
    ],
)
def test_range_reversed(text: str) -> None:
    with pytest.raises(InvalidRange, match="revers"):
        TimePartitionRange.parse(text, P.DAILY)


def test_range_malformed() -> None:
    for text in [
        "[2015-01-29, 2015-02-01",
        "2015-01-29, 2015-02-01",
        "[2015-01-29)",
        "{2015-01-29, 2015-02-01}",
        "[2015-01-29, 2015-02-01, 2015-02-03)",
        "",
    ]:
        with pytest.raises(InvalidRange):
            TimePartitionRange.parse(text, P.DAILY)
    with pytest.raises(InvalidRange):
        TimePartitionRange.of(P.DAILY, "2015-02-01", "2015-01-29")
    with pytest.raises(InvalidPartitionValue, match="2015-02-30"):
        TimePartitionRange.parse("[2015-01-29, 2015-02-30)", P.DAILY)
    with pytest.raises(InvalidPartitionValue):
        TimePartitionRange.parse("[2015-01-29, 2015-02-01)", P.HOURLY)


# ------------------------------------------------------------------------------ fixed bugs


@pytest.mark.parametrize("value", ["2015-10-25-02+02:00", "2015-10-25-02+01:00"])
def test_next_previous_of_repeated_hour(value: str) -> None:
    """Found by these tests: ``==`` across zones is False in a DST-repeated hour (PEP 495)."""
    start = P.HOURLY.parse(value, BERLIN)  # a Berlin-zoned instant, as the API returns it
    p = TimePartition.of(P.HOURLY, start, BERLIN)
    assert p.value == value
    assert _utc(P.HOURLY.next(start, BERLIN)) == _utc(start) + dt.timedelta(hours=1)
    assert _utc(P.HOURLY.previous(start, BERLIN)) == _utc(start) - dt.timedelta(hours=1)


@pytest.mark.parametrize("hour", [0, 1])
def test_is_aligned_and_ceil_in_utc_inside_the_repeated_hour(hour: int) -> None:
    instant = dt.datetime(2015, 10, 25, hour, tzinfo=UTC)  # 02:00+02:00 and 02:00+01:00
    assert P.HOURLY.is_aligned(instant, BERLIN)
    assert _utc(P.HOURLY.ceil(instant, BERLIN)) == instant


def test_fixed_offset_zone_keeps_its_offset() -> None:
    plus5 = dt.timezone(dt.timedelta(hours=5))
    instant = dt.datetime(2015, 1, 1, tzinfo=plus5)
    p = TimePartition.of(P.DAILY, instant)
    assert p.tz == "+05:00"
    assert _utc(p.start) == _utc(instant)
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
