"""``CoverRequest.of`` keeps the requests it made recently: a kept one must be exactly the
request a fresh validation makes (same instants, zones and names), and input it cannot key
(a naive datetime, a set) is validated every time."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pendulum
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.cover import CoverRequest, forget_requests
from airflow_partitions.cover.request import NaiveInstant
from tests.hypothesis_budget import examples

ZONES = [dt.UTC, dt.timezone(dt.timedelta(hours=5, minutes=30)), ZoneInfo("Europe/Berlin"),
         pendulum.timezone("America/New_York")]


def instants() -> st.SearchStrategy[dt.datetime]:
    """Aware datetimes and pendulum instants in several zones, folds included."""
    plain = st.builds(lambda naive, zone, fold: naive.replace(tzinfo=zone, fold=fold),
                      st.datetimes(min_value=dt.datetime(2015, 1, 1),
                                   max_value=dt.datetime(2016, 1, 1)),
                      st.sampled_from(ZONES), st.integers(0, 1))
    return st.one_of(plain, plain.map(pendulum.instance))


def names(pool: list[str]) -> st.SearchStrategy[object]:
    """None, or some names of ``pool`` as a list, a tuple or one comma-separated string."""
    some = st.lists(st.sampled_from(pool), min_size=1, max_size=2)
    return st.one_of(st.none(), some.flatmap(
        lambda xs: st.sampled_from([xs, tuple(xs), ", ".join(xs)])))


def shape(r: CoverRequest) -> tuple[object, ...]:
    return (r, r.start.isoformat(), r.end.isoformat(), r.start.tzinfo, r.end.tzinfo,
            type(r.start), type(r.end))


@settings(max_examples=examples(200), deadline=None)
@given(start=instants(), length=st.timedeltas(min_value=dt.timedelta(0),
                                              max_value=dt.timedelta(days=40)),
       other_zone=st.sampled_from(ZONES), periods=names(["HOURLY", "daily"]),
       storages=names(["raw", "rollup"]), align=st.sampled_from([None, "outer", "inner"]))
def test_a_kept_request_is_the_request_made_afresh(
        start: dt.datetime, length: dt.timedelta, other_zone: dt.tzinfo,
        periods: Any, storages: Any, align: str | None) -> None:
    """The same instants in other zones or types are other requests (their texts differ):
    each is kept under its own key, and every kept one equals a fresh one."""
    end = (start + length).astimezone(other_zone)
    for s, e in ((start, end), (start.astimezone(dt.UTC), end), (start, end.astimezone(dt.UTC))):
        asked = [CoverRequest.of("events", s, e, periods=periods, storages=storages,
                                 align=align) for _ in range(2)]
        forget_requests()
        fresh = CoverRequest.of("events", s, e, periods=periods, storages=storages,
                                align=align)
        assert shape(asked[0]) == shape(asked[1]) == shape(fresh)


def test_input_without_a_key_is_validated_every_time() -> None:
    naive = dt.datetime(2015, 1, 1)
    for _ in range(2):
        with pytest.raises(NaiveInstant):
            CoverRequest.of("events", naive, naive)
    start = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
    names_ = ["raw", "daily"]
    first = CoverRequest.of("events", start, start, storages=names_)
    names_.append("hourly")  # the list changed: not the request made before
    assert CoverRequest.of("events", start, start, storages=names_).storages == (
        "raw", "daily", "hourly") != first.storages
    assert CoverRequest.of("events", start, start, storages={"raw"}).storages == ("raw",)
