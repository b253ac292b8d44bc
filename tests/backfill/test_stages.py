"""Which backfills a plan needs: stages in dependency order, stretches of each DAG's schedule."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions.backfill.stages import OffSchedule, stages_of, stretches
from airflow_partitions.errors import InvalidInput

DAY = dt.datetime(2015, 1, 2, tzinfo=dt.UTC)
HOURS = [DAY + dt.timedelta(hours=i) for i in range(48)]


def test_stages_follow_the_plan_order_and_group_runs_per_dag() -> None:
    runs = [("HOURLY", "ingest_eu", HOURS[1]), ("HOURLY", "ingest_us", HOURS[0]),
            ("HOURLY", "ingest_eu", HOURS[0]), ("DAILY", "rollup", DAY),
            ("MONTHLY", "monthly", DAY)]
    stages = stages_of(runs)
    assert [s.period for s in stages] == ["HOURLY", "DAILY", "MONTHLY"]
    assert stages[0].dates == {"ingest_eu": (HOURS[0], HOURS[1]), "ingest_us": (HOURS[0],)}
    assert [s.runs for s in stages] == [3, 1, 1]
    with pytest.raises(InvalidInput, match="dependency order"):
        stages_of([*runs, ("HOURLY", "ingest_eu", HOURS[5])])


def test_a_stretch_never_spans_a_schedule_point_the_plan_does_not_want() -> None:
    wanted = [HOURS[i] for i in (0, 1, 2, 5, 6, 9)]
    parts = stretches("ingest", wanted, HOURS[:10])
    assert [(p.first, p.last, p.runs) for p in parts] == [
        (HOURS[0], HOURS[2], 3), (HOURS[5], HOURS[6], 2), (HOURS[9], HOURS[9], 1)]
    assert parts[0].describe() == "ingest 2015-01-02T00:00Z..2015-01-02T02:00Z (3 runs)"


def test_a_date_off_the_schedule_is_refused_by_name() -> None:
    daily = [DAY, DAY + dt.timedelta(days=1)]
    with pytest.raises(OffSchedule, match=r"rollup at 2015-01-02T05:00Z.*logical-date rule"):
        stretches("rollup", [DAY, HOURS[5]], daily)


@given(st.sets(st.integers(0, 47), min_size=1), st.sets(st.integers(0, 47)))
def test_stretches_create_exactly_the_wanted_runs(wanted: set[int], extra: set[int]) -> None:
    """Airflow creates a run at every schedule point inside a backfill's [first, last]: the
    union of those, over all stretches, is exactly the wanted dates, each once."""
    schedule = [HOURS[i] for i in sorted(wanted | extra)]
    parts = stretches("ingest", [HOURS[i] for i in wanted], schedule)
    created = [p for part in parts for p in schedule if part.first <= p <= part.last]
    assert sorted(created) == sorted(HOURS[i] for i in wanted)
    assert sum(p.runs for p in parts) == len(wanted)
    for a, b in itertools.pairwise(parts):  # fewest: an unwanted point splits them
        assert any(a.last < p < b.first for p in schedule)


def test_runs_with_different_confs_of_one_dag_are_separate_groups() -> None:
    """A backfill carries one conf for all its runs: slices of one DAG split into (DAG, conf)
    groups, in the order the plan first names them, and a stretch keeps its group's conf."""
    eu, us = '{"partition_slice": {"region": "eu"}}', '{"partition_slice": {"region": "us"}}'
    [stage] = stages_of([("HOURLY", "ingest", HOURS[3], us), ("HOURLY", "ingest", HOURS[3], eu),
                         ("HOURLY", "ingest", HOURS[4], us), ("HOURLY", "other", HOURS[0], None)])
    assert list(stage.groups) == [("ingest", us), ("ingest", eu), ("other", None)]
    assert stage.groups[("ingest", us)] == (HOURS[3], HOURS[4]) and stage.runs == 4
    assert stage.dates["ingest"] == (HOURS[3], HOURS[4])
    [part] = stretches("ingest", [HOURS[3], HOURS[4]], HOURS[3:5], us)
    assert part.conf_value() == {"partition_slice": {"region": "us"}}
    assert part.describe().endswith('(2 runs) conf {"partition_slice": {"region": "us"}}')
