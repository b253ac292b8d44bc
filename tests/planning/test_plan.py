"""plan(): gaps, rollup preference, edges, unfillable spans, restatement, rules and JSON."""

from __future__ import annotations

from typing import Any

import pendulum
import pytest

from airflow_partitions.catalog import Catalog, Producer
from airflow_partitions.cover import MisalignedBound
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.planning import Plan, plan
from tests.planning.conftest import pipeline

H, D, M = UpdatePeriod.HOURLY, UpdatePeriod.DAILY, UpdatePeriod.MONTHLY


def hours(day: str, first: int = 0, last: int = 23,
          skip: tuple[int, ...] = ()) -> list[dict[str, str]]:
    return [{"dt": f"{day}-{h:02d}"} for h in range(first, last + 1) if h not in skip]


def days(month: str, first: int, last: int) -> list[dict[str, str]]:
    return [{"dt": f"{month}-{d:02d}"} for d in range(first, last + 1)]


def planned(p: Plan) -> list[tuple[str, str, str]]:
    return [(r.period.name, r.value, r.kind) for r in p.runs]


def test_hour_holes_are_filled_by_the_ingest_dag(shared: Catalog) -> None:
    fact, raw, _ = pipeline(shared, frozenset({"HOURLY"}))
    shared.register(raw, "HOURLY", hours("2015-01-05", skip=(3, 4, 17)))
    p = plan(shared, fact, "2015-01-05T00:00Z", "2015-01-06T00:00Z")
    assert planned(p) == [("HOURLY", f"2015-01-05-{h:02d}", "gap") for h in (3, 4, 17)]
    assert {r.dag_id for r in p.runs} == {"events_hourly_ingest"}
    assert [r.logical_date for r in p.runs] == [
        pendulum.datetime(2015, 1, 5, h, tz="UTC") for h in (3, 4, 17)]
    assert p.coverable_after() and p.unfillable == ()
    assert len(p.cover_after) == 24 and p.cover_after[0] == (raw, "HOURLY", "2015-01-05-00")
    assert "no fresh HOURLY 2015-01-05-03" in p.runs[0].reason


def test_a_missing_day_is_rolled_up_when_its_hours_exist(shared: Catalog) -> None:
    fact, raw, roll = pipeline(shared)
    shared.register(raw, "HOURLY", hours("2015-01-05") + hours("2015-01-06"))
    shared.register(roll, "DAILY", days("2015-01", 5, 5))
    p = plan(shared, fact, "2015-01-05T00:00Z", "2015-01-07T00:00Z")
    assert planned(p) == [("DAILY", "2015-01-06", "gap")]
    assert p.runs[0].dag_id == "events_daily_rollup" and p.runs[0].storage == roll
    assert p.cover_after == ((roll, "DAILY", "2015-01-05"), (roll, "DAILY", "2015-01-06"))


def test_a_month_is_planned_with_the_inputs_it_lacks_finest_first(shared: Catalog) -> None:
    fact, raw, roll = pipeline(shared)
    shared.register(roll, "DAILY", days("2015-02", 1, 27))
    shared.register(raw, "HOURLY", hours("2015-02-28", skip=(6,)))
    p = plan(shared, fact, "2015-02-01T00:00Z", "2015-03-01T00:00Z")
    assert planned(p) == [("HOURLY", "2015-02-28-06", "input"), ("DAILY", "2015-02-28", "input"),
                          ("MONTHLY", "2015-02", "gap")]
    hour, day, _month = p.runs
    assert "input of" in hour.reason and "DAILY 2015-02-28 (events_daily_rollup)" in hour.reason
    assert "MONTHLY 2015-02 (events_monthly_rollup)" in day.reason
    assert p.cover_after == ((roll, "MONTHLY", "2015-02"),)
    assert [r.dag_id for r in p.by_dag()["events_daily_rollup"]] == ["events_daily_rollup"]


def test_partitions_that_do_not_fit_the_range_are_never_planned(shared: Catalog) -> None:
    fact, _raw, _roll = pipeline(shared)
    p = plan(shared, fact, "2015-01-30T22:00Z", "2015-03-01T02:00Z")
    months = [r.value for r in p.runs if r.period is M]
    assert months == ["2015-02"]  # January and March stick out of the range
    edge_hours = [r.value for r in p.runs if r.period is H and r.kind == "gap"]
    assert edge_hours == ["2015-01-30-22", "2015-01-30-23", "2015-03-01-00", "2015-03-01-01"]
    assert [r.value for r in p.runs if r.period is D and r.kind == "gap"] == ["2015-01-31"]
    assert all(p.start <= r.start and r.end <= p.end for r in p.runs)
    assert len(p.cover_after) == 2 + 1 + 1 + 2


def test_what_no_producer_can_fill_is_unfillable_with_why(shared: Catalog) -> None:
    fact, raw, roll = pipeline(shared, frozenset({"DAILY"}))
    shared.register(raw, "HOURLY", hours("2015-01-05", skip=(7,)) + hours("2015-01-06"))
    p = plan(shared, fact, "2015-01-05T00:00Z", "2015-01-07T00:00Z")
    assert planned(p) == [("DAILY", "2015-01-06", "gap")]  # 01-05 lacks an hour nobody makes
    assert not p.coverable_after()
    [(t0, t1, why)] = p.unfillable
    assert (t0, t1) == (pendulum.datetime(2015, 1, 5, 7), pendulum.datetime(2015, 1, 5, 8))
    assert "no producer for MONTHLY, HOURLY" in why and "DAILY" in why
    assert (roll, "DAILY", "2015-01-06") in p.cover_after


def test_restated_partitions_are_re_made_and_registered_ones_never(shared: Catalog) -> None:
    fact, raw, roll = pipeline(shared)
    shared.register(raw, "HOURLY", hours("2015-01-05") + hours("2015-01-06"))
    shared.register(roll, "DAILY", days("2015-01", 5, 6))
    assert plan(shared, fact, "2015-01-05T00:00Z", "2015-01-07T00:00Z").runs == ()
    p = plan(shared, fact, "2015-01-05T00:00Z", "2015-01-07T00:00Z",
             restate=[(roll, "DAILY", "2015-01-06"), (raw, "HOURLY", "2015-01-06-03")])
    assert planned(p) == [("HOURLY", "2015-01-06-03", "restate"),
                          ("DAILY", "2015-01-06", "restate")]
    assert "stale" in p.runs[1].reason and "input of" in p.runs[0].reason
    # a stale hour under a fresh day is not needed: the day covers it
    p = plan(shared, fact, "2015-01-05T00:00Z", "2015-01-07T00:00Z",
             restate=[(raw, "HOURLY", "2015-01-06-03")])
    assert p.runs == () and p.coverable_after()


def test_the_logical_date_rule_and_the_zone(shared: Catalog) -> None:
    fact, raw, roll = pipeline(shared, frozenset(), tz="Europe/Paris")
    shared.set_producers(roll, {"DAILY": Producer("rollup", "end-PT1H")})
    shared.register(raw, "HOURLY", [{"dt": f"2015-01-05-{h:02d}"} for h in range(24)])
    p = plan(shared, fact, "2015-01-05T00:00+01:00", "2015-01-06T00:00+01:00")
    [run] = p.runs
    assert run.logical_date == pendulum.datetime(2015, 1, 5, 22, tz="UTC")
    assert run.logical_date.timezone_name == "UTC"
    assert run.start == pendulum.datetime(2015, 1, 5, tz="Europe/Paris")


def test_json_is_complete_and_plain(shared: Catalog) -> None:
    fact, raw, _ = pipeline(shared, frozenset({"HOURLY"}))
    p = plan(shared, fact, "2015-01-05T00:00Z", "2015-01-05T02:00Z")
    data = p.to_json()
    assert data["fact"] == fact and data["coverable_after"] is True
    assert data["counts"] == {"gap": 2, "input": 0, "restate": 0, "runs": 2, "cover_after": 2}
    assert data["runs"][0] == {
        "dag_id": "events_hourly_ingest", "logical_date": "2015-01-05T00:00:00+00:00",
        "storage": raw, "period": "HOURLY", "value": "2015-01-05-00",
        "start": "2015-01-05T00:00:00+00:00", "end": "2015-01-05T01:00:00+00:00",
        "kind": "gap", "reason": p.runs[0].reason}
    assert data["cover_after"][1] == {"storage": raw, "period": "HOURLY",
                                      "value": "2015-01-05-01"}


def test_bad_input_is_typed(shared: Catalog) -> None:
    fact, raw, _ = pipeline(shared)
    with pytest.raises(MisalignedBound):
        plan(shared, fact, "2015-01-05T00:30Z", "2015-01-06T00:00Z")
    bad: Any
    for bad in ([("nope", "HOURLY", "2015-01-05-00")], [(raw, "DAILY", "2015-01-05")],
                [(raw, "HOURLY", "2015-01-05")], ["x"], "abc"):
        with pytest.raises(InvalidInput):
            plan(shared, fact, "2015-01-05T00:00Z", "2015-01-06T00:00Z", restate=bad)


def test_a_year_of_hours_plans_from_cached_timelines(shared: Catalog) -> None:
    fact, raw, roll = pipeline(shared)
    start = pendulum.datetime(2015, 1, 1)
    holes = {h * 97 for h in range(90)}
    shared.register(raw, "HOURLY", [{"dt": H.format(start.add(hours=h))}
                                    for h in range(8760) if h not in holes])
    plan(shared, fact, "2015-01-01T00:00Z", "2016-01-01T00:00Z")  # warms the cache
    before = shared.stats.round_trips
    p = plan(shared, fact, "2015-01-01T00:00Z", "2016-01-01T00:00Z")
    assert shared.stats.round_trips - before <= 2  # the generation check, not per partition
    assert len(p.by_dag()["events_monthly_rollup"]) == 12
    assert len(p.by_dag()["events_daily_rollup"]) == 365
    assert len(p.by_dag()["events_hourly_ingest"]) == len(holes)
    assert p.cover_after == tuple((roll, "MONTHLY", f"2015-{m:02d}") for m in range(1, 13))
