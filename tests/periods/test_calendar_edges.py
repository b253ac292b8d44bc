"""The edges of the calendar: year 0001 and year 9999.

Partition values run from year 0001 to 9999 in every period and zone; the exclusive end of the
last one is the first value of year 10000 (``10000-01-01``), which formats and parses so a
timeline can store ``[9999-12-31, 10000-01-01)``, but is never a partition. Instants that Python
cannot represent (``datetime`` stops at 9999-12-31T23:59:59.999999 UTC) are typed errors, never
a raw ``OverflowError`` or ``ValueError``; the CLI says so in one line.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.cli import main
from airflow_partitions.errors import InvalidInput, InvalidRange, UnsupportedZone
from airflow_partitions.periods import TimePartition, TimePartitionRange, UpdatePeriod
from airflow_partitions.timelines import IMPLEMENTATIONS, new_timeline, timeline_from_properties

P = UpdatePeriod
LAST = {
    P.SECONDLY: "9999-12-31-23-59-59", P.MINUTELY: "9999-12-31-23-59", P.HOURLY: "9999-12-31-23",
    P.DAILY: "9999-12-31", P.WEEKLY: "9999-W52", P.MONTHLY: "9999-12", P.QUARTERLY: "9999-Q4",
    P.YEARLY: "9999",
}
FIRST = {
    P.SECONDLY: "0001-01-01-00-00-00", P.MINUTELY: "0001-01-01-00-00", P.HOURLY: "0001-01-01-00",
    P.DAILY: "0001-01-01", P.WEEKLY: "0001-W01", P.MONTHLY: "0001-01", P.QUARTERLY: "0001-Q1",
    P.YEARLY: "0001",
}
END = {
    P.SECONDLY: "10000-01-01-00-00-00", P.MINUTELY: "10000-01-01-00-00",
    P.HOURLY: "10000-01-01-00", P.DAILY: "10000-01-01", P.WEEKLY: "10000-W01",
    P.MONTHLY: "10000-01", P.QUARTERLY: "10000-Q1", P.YEARLY: "10000",
}
ZONES = ["UTC", "America/New_York", "Asia/Tokyo", "Asia/Kolkata", "Europe/Berlin", "-03:00"]
MAX = dt.datetime.max.replace(tzinfo=dt.UTC)
MIN = dt.datetime.min.replace(tzinfo=dt.UTC)


def typed(call: Callable[[], Any]) -> Any:
    """The call's result, or None if it raised a typed error; any other exception fails."""
    try:
        return call()
    except InvalidInput:
        return None


def lmt_breaks(period: UpdatePeriod, tz: str) -> bool:
    """Whether a zone's local mean time in year 1 (Berlin +00:53:28, New York -04:56:02) breaks
    the period's boundaries: then the period is not defined there (UnsupportedZone)."""
    return "/" in tz and P.SECONDLY < period < P.DAILY


@pytest.mark.parametrize("tz", ZONES)
@pytest.mark.parametrize("period", list(UpdatePeriod), ids=lambda p: p.name)
def test_the_last_partition_round_trips_and_ends_at_year_10000(period: UpdatePeriod,
                                                                tz: str) -> None:
    last = TimePartition.of(period, LAST[period], tz)
    assert last.value == LAST[period]
    end = last.next()
    assert end.value == END[period]
    assert period.parse_ordinal(END[period], tz) == end.ordinal
    assert str(TimePartitionRange(last, end)) == f"[{LAST[period]}, {END[period]})"
    assert TimePartitionRange.parse(f"[{LAST[period]}, {LAST[period]}]", period, tz) == \
        TimePartitionRange(last, end)
    # an instant past 9999-12-31T23:59:59.999999Z is a typed error, never an OverflowError
    typed(lambda: last.start)
    with pytest.raises(InvalidRange, match="10000"):
        _ = end.start
    typed(lambda: last.end)  # representable east of UTC (Tokyo's last day ends 15:00Z)


@pytest.mark.parametrize("tz", ZONES)
@pytest.mark.parametrize("period", list(UpdatePeriod), ids=lambda p: p.name)
def test_the_first_partition_round_trips(period: UpdatePeriod, tz: str) -> None:
    if lmt_breaks(period, tz):
        with pytest.raises(InvalidInput, match="not defined at"):
            TimePartition.of(period, FIRST[period], tz)
        return
    first = TimePartition.of(period, FIRST[period], tz)
    assert first.value == FIRST[period]
    assert first.next().previous() == first
    typed(lambda: first.start)  # before 0001-01-01T00:00Z in zones east of UTC
    with pytest.raises(InvalidRange, match="0001"):
        _ = first.previous().value


@pytest.mark.parametrize("period", list(UpdatePeriod), ids=lambda p: p.name)
def test_nothing_past_the_end_of_the_calendar(period: UpdatePeriod) -> None:
    end = period.parse_ordinal(END[period])
    with pytest.raises(InvalidRange):
        period.format_ordinal(end + 1)
    for ordinal in (10**15, -(10**15)):
        with pytest.raises(InvalidRange):
            period.format_ordinal(ordinal)
        with pytest.raises(InvalidRange):
            period.start_of(ordinal)
    with pytest.raises(InvalidInput):
        period.parse_ordinal(END[period].replace("10000", "10001"))
    with pytest.raises(InvalidInput):
        period.parse_ordinal("0000" + FIRST[period][4:])


@pytest.mark.parametrize("tz", ZONES)
@pytest.mark.parametrize("period", list(UpdatePeriod), ids=lambda p: p.name)
def test_instants_at_the_ends_of_datetime_are_typed(period: UpdatePeriod, tz: str) -> None:
    for instant in (MAX, MIN, MAX - dt.timedelta(hours=1), MIN + dt.timedelta(hours=1)):
        if lmt_breaks(period, tz) and instant.year == 1:
            with pytest.raises(UnsupportedZone):
                period.ordinal(instant, tz)
            continue
        assert isinstance(period.ordinal(instant, tz), int)
        typed(lambda i=instant: period.format(i, tz))  # type: ignore[misc]
        typed(lambda i=instant: period.truncate(i, tz))  # type: ignore[misc]
        typed(lambda i=instant: period.ceil(i, tz))  # type: ignore[misc]
        typed(lambda i=instant: period.next(i, tz))  # type: ignore[misc]
        typed(lambda i=instant: TimePartition.of(period, i, tz))  # type: ignore[misc]


def test_the_end_of_9999_in_utc_is_a_partition_boundary() -> None:
    last_hour = TimePartition.of(P.HOURLY, "9999-12-31-23")
    assert last_hour.start == dt.datetime(9999, 12, 31, 23, tzinfo=dt.UTC)
    assert P.HOURLY.format(MAX) == "9999-12-31-23"
    assert P.DAILY.ordinal(MAX, "Asia/Tokyo") == P.DAILY.parse_ordinal(END[P.DAILY], "Asia/Tokyo")


@pytest.mark.parametrize("kind", [cls.kind for cls in IMPLEMENTATIONS])
@pytest.mark.parametrize("period", [P.HOURLY, P.DAILY, P.WEEKLY, P.MONTHLY, P.YEARLY],
                         ids=lambda p: p.name)
def test_timelines_store_both_ends_of_the_calendar(kind: str, period: UpdatePeriod) -> None:
    for value, end in ((FIRST[period], None), (LAST[period], END[period])):
        timeline = new_timeline(kind, period, "dt", "-03:00")
        first = TimePartition.of(period, value, "-03:00")
        timeline.add(first)
        props = timeline.to_properties()
        back = timeline_from_properties(props, period, "dt", "-03:00")
        assert back == timeline
        assert str(back.ranges()[-1]) == f"[{value}, {end or first.next().value})"


def test_the_cli_shows_and_covers_the_edges(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    store = ["--store", f"sqlite:///{tmp_path}/p.db", "--data-root", str(tmp_path / "data")]

    def run(*args: str) -> tuple[int, str, str]:
        code = main([*store, *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    assert run("fact", "create", "events")[0] == 0
    assert run("storage", "create", "events", "raw", "--periods",
               "HOURLY,DAILY,MONTHLY,YEARLY", "--partition-columns", "dt,region")[0] == 0
    for period in (P.HOURLY, P.DAILY, P.MONTHLY, P.YEARLY):
        for value in (LAST[period], FIRST[period]):
            code, _, err = run("partition", "add", "raw", "--period", period.name,
                               f"dt={value}", "region=us")
            assert code == 0, err
    code, out, err = run("timeline", "show", "raw", "--json")
    assert code == 0, err
    shown = {doc["period"]: doc["ranges"] for doc in __import__("json").loads(out)}
    assert shown["DAILY"] == [["0001-01-01", "0001-01-02"], ["9999-12-31", "10000-01-01"]]
    assert shown["YEARLY"] == [["0001", "0002"], ["9999", "10000"]]
    code, out, err = run("timeline", "show", "raw")
    assert code == 0, err
    assert "10000-01-01-00" in out
    # registering the end of the calendar is refused: it is not a partition
    code, _, err = run("partition", "add", "raw", "--period", "DAILY", "dt=10000-01-01",
                       "region=us")
    assert code == 2 and "end of the calendar" in err, err
    # a cover that must reach past 9999-12-31T23:59:59.999999Z to align is a typed error
    code, _, err = run("cover", "events", "--start", "9999-12-31T12:30:00+00:00",
                       "--end", "9999-12-31T23:00:00+00:00", "--periods", "HOURLY",
                       "--align", "outer")
    assert code == 1, err  # the hours from 12:00 are missing
    code, out, err = run("cover", "events", "--start", "9999-12-31T23:00:00+00:00",
                         "--end", "9999-12-31T23:59:59.999999+00:00", "--periods", "HOURLY",
                         "--align", "inner", "--json")
    assert code == 0 and __import__("json").loads(out)["partitions"] == [], err
    for align in ("outer", "inner"):
        code, _, err = run("cover", "events", "--start", "9999-12-31T12:00:00+00:00",
                           "--end", "9999-12-31T23:59:59+00:00", "--periods", "DAILY",
                           "--align", align)
        assert "unexpected" not in err and "Traceback" not in err, err
        assert code in (0, 1, 2), err
    code, out, err = run("cover", "events", "--start", "9999-12-31T00:00:00+00:00",
                         "--end", "9999-12-31T23:59:59.999999+00:00", "--align", "outer",
                         "--periods", "DAILY")
    assert code == 2, (out, err)
    assert "unexpected" not in err and "9999-12-31T23:59:59.999999" in err, err
    code, out, err = run("cover", "events", "--start", "0001-01-01T00:00:00+00:00",
                         "--end", "0001-01-02T00:00:00+00:00")
    assert code == 0, (out, err)
    code, out, err = run("partition", "list", "raw", "--filter", "dt >= '9999'")
    assert code == 0 and "unexpected" not in err, err
