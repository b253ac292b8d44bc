"""The range the view acts on: snapped to the fact's finest period, and bounded before a plan.

A drag on the selection bar gives instants anywhere; ``align`` snaps them with the cover's
rule. A range wider than :data:`MAX_PLAN_PARTITIONS` is refused before anything is planned or
asked of Airflow (the plan functions are replaced by ones that fail, to show none is called).
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import clock_for, to_us
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.ui.selection import MAX_PLAN_PARTITIONS, RangeTooLarge, select
from tests.ui.fakes import View

CENTURY = {"start": "2015-01-01T00:00:00+00:00", "end": "2115-01-01T00:00:00+00:00"}
CENTURY_HOURS = int((dt.datetime(2115, 1, 1) - dt.datetime(2015, 1, 1)).total_seconds() // 3600)
DRAGGED = {"start": "2015-01-02T19:12:00+00:00", "end": "2015-01-03T09:36:00+00:00"}


def no_plan(*args: object, **kwargs: object) -> None:
    raise AssertionError("a plan was built for a range the view must refuse first")


@pytest.fixture
def unplannable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way the view builds a plan, or reads what is stale, fails the test."""
    import airflow_partitions.backfill.runner as runner
    import airflow_partitions.ui.actions as actions

    for module, name in ((actions, "plan"), (actions, "stale_items"), (runner, "plan"),
                         (runner, "stale_items")):
        monkeypatch.setattr(module, name, no_plan)


@pytest.mark.usefixtures("unplannable")
def test_a_century_for_a_paused_producer_is_refused_before_it_is_planned(view: View) -> None:
    view.airflow.paused = {"rollup"}
    for kind in ("fill", "restate"):
        refused = view.post("/api/facts/events/actions", {**CENTURY, "kind": kind})
        assert refused.status_code == 400, refused.text
        detail = refused.json()["detail"]
        assert f"spans {CENTURY_HOURS:,} HOURLY partitions" in detail, detail
        assert f"at most {MAX_PLAN_PARTITIONS:,}" in detail, detail
    planned = view.post("/api/facts/events/plan", {**CENTURY, "stale": True})
    assert planned.status_code == 400 and "HOURLY partitions" in planned.json()["detail"]
    assert view.airflow.scheduled == [] and view.airflow.created == []
    assert view.gate.audit == []


def test_the_bound_counts_partitions_of_the_finest_period(produced: Catalog) -> None:
    start = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
    at_bound = (start + dt.timedelta(hours=MAX_PLAN_PARTITIONS)).isoformat()
    chosen = select(produced, "events", start.isoformat(), at_bound, None)
    assert (chosen.finest, chosen.partitions) == (UpdatePeriod.HOURLY, MAX_PLAN_PARTITIONS)
    over = (start + dt.timedelta(hours=MAX_PLAN_PARTITIONS + 1)).isoformat()
    with pytest.raises(RangeTooLarge, match=f"spans {MAX_PLAN_PARTITIONS + 1:,} HOURLY"):
        select(produced, "events", start.isoformat(), over, None)
    # snapping outward counts the partitions it adds
    with pytest.raises(RangeTooLarge):
        select(produced, "events", start.isoformat(), at_bound[:14] + "30:00+00:00", "outer")


def test_a_dragged_selection_is_snapped_to_whole_hours(view: View) -> None:
    strict = view.post("/api/facts/events/plan", DRAGGED)
    assert strict.status_code == 400 and "not aligned" in strict.json()["detail"]
    outer = view.post("/api/facts/events/plan", {**DRAGGED, "align": "outer"})
    assert outer.status_code == 200, outer.text
    assert (outer.json()["start"], outer.json()["end"]) == (
        "2015-01-02T19:00:00+00:00", "2015-01-03T10:00:00+00:00")
    inner = view.post("/api/facts/events/plan", {**DRAGGED, "align": "inner"}).json()
    assert (inner["start"], inner["end"]) == (
        "2015-01-02T20:00:00+00:00", "2015-01-03T09:00:00+00:00")
    action = view.post("/api/facts/events/actions", {**DRAGGED, "align": "inner"}).json()
    assert (action["start"], action["end"]) == (inner["start"], inner["end"])
    assert view.post("/api/facts/events/plan", {**DRAGGED, "align": "out"}).status_code == 422


@pytest.fixture
def berlin(catalog: Catalog) -> Catalog:
    """A fact whose finest period is DAILY in a zone with DST (days of 23 and 25 hours)."""
    catalog.create_fact("sales", tz="Europe/Berlin")
    catalog.create_storage("sales", "daily", ["DAILY", "MONTHLY"])
    return catalog


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.datetimes(min_value=dt.datetime(2015, 1, 1), max_value=dt.datetime(2016, 12, 31),
                    timezones=st.just(dt.UTC)),
       st.timedeltas(min_value=dt.timedelta(seconds=1), max_value=dt.timedelta(days=90)))
def test_snapping_keeps_whole_partitions_of_the_finest_period(
        berlin: Catalog, start: dt.datetime, length: dt.timedelta) -> None:
    end = start + length
    clock, day = clock_for("Europe/Berlin"), UpdatePeriod.DAILY
    outer = select(berlin, "sales", start.isoformat(), end.isoformat(), "outer")
    inner = select(berlin, "sales", start.isoformat(), end.isoformat(), "inner")
    for chosen in (outer, inner):
        assert chosen.finest is day
        assert clock.is_aligned(day, to_us(chosen.start)) and clock.is_aligned(day, to_us(
            chosen.end))
        assert chosen.partitions == clock.floor(day, to_us(chosen.end)) - clock.floor(
            day, to_us(chosen.start))
    assert outer.start <= start and end <= outer.end  # outer holds the selection ...
    assert outer.start > start - dt.timedelta(hours=25)  # ... and adds less than a day a side
    assert outer.end < end + dt.timedelta(hours=25)
    assert start <= inner.start <= inner.end <= end or inner.partitions == 0
    assert outer.partitions - inner.partitions in (0, 1, 2)
