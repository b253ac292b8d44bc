"""TimePartition and TimePartitionRange: identity, ordering, mixed periods and zones, range
brackets, membership and malformed ranges."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow_partitions.errors import InvalidPartitionValue, InvalidRange, MixedPeriods
from airflow_partitions.periods import TimePartition, TimePartitionRange
from tests.periods.instants import BERLIN, UTC, P

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
