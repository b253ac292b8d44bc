"""Properties of plan(): executing it (registering exactly the planned partitions, in order)
makes the range coverable iff ``coverable_after()``, and the catalog's cover is then exactly
``cover_after``; no run twice, none for a registered partition outside ``restate``; inputs
before the rollups that need them."""

from __future__ import annotations

from typing import Any

import pendulum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.planning import plan
from tests.hypothesis_budget import examples
from tests.planning.conftest import DAGS, pipeline

H, D, M = UpdatePeriod.HOURLY, UpdatePeriod.DAILY, UpdatePeriod.MONTHLY
WINDOW = pendulum.datetime(2015, 1, 29), pendulum.datetime(2015, 3, 3)
N_HOURS = int((WINDOW[1] - WINDOW[0]).total_hours())
N_DAYS = N_HOURS // 24
MONTHS = ["2015-01", "2015-02", "2015-03"]


def hour_value(i: int) -> str:
    return H.format(WINDOW[0].add(hours=i))


def day_value(i: int) -> str:
    return D.format(WINDOW[0].add(days=i))


spans = st.lists(st.tuples(st.integers(0, N_HOURS - 1), st.integers(1, 300)), max_size=4)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    hour_spans = draw(spans)
    hours = sorted({h for b, n in hour_spans for h in range(b, min(b + n, N_HOURS))})
    days = sorted(draw(st.sets(st.integers(0, N_DAYS - 1), max_size=N_DAYS)))
    months = sorted(draw(st.sets(st.sampled_from(MONTHS))))
    producers = draw(st.frozensets(st.sampled_from(sorted(DAGS))))
    lo = draw(st.integers(0, N_HOURS - 1))
    hi = draw(st.integers(lo, N_HOURS))
    stale_hours = draw(st.sets(st.sampled_from(hours), max_size=3)) if hours else set()
    stale_days = draw(st.sets(st.sampled_from(days), max_size=3)) if days else set()
    stale_months = draw(st.sets(st.sampled_from(months), max_size=1)) if months else set()
    return {"hours": hours, "days": days, "months": months, "producers": producers,
            "lo": lo, "hi": hi, "stale": (stale_hours, stale_days, stale_months)}


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=scenarios())
def test_executing_the_plan_gives_its_cover(shared: Catalog, case: dict[str, Any]) -> None:
    fact, raw, roll = pipeline(shared, case["producers"])
    registered = {(raw, "HOURLY", hour_value(h)) for h in case["hours"]}
    registered |= {(roll, "DAILY", day_value(d)) for d in case["days"]}
    registered |= {(roll, "MONTHLY", m) for m in case["months"]}
    for storage, period in ((raw, "HOURLY"), (roll, "DAILY"), (roll, "MONTHLY")):
        values = [{"dt": v} for s, p, v in sorted(registered) if (s, p) == (storage, period)]
        if values:
            shared.register(storage, period, values)
    stale_hours, stale_days, stale_months = case["stale"]
    restate = ({(raw, "HOURLY", hour_value(h)) for h in stale_hours}
               | {(roll, "DAILY", day_value(d)) for d in stale_days}
               | {(roll, "MONTHLY", m) for m in stale_months})
    start, end = WINDOW[0].add(hours=case["lo"]), WINDOW[0].add(hours=case["hi"])

    p = plan(shared, fact, start, end, restate=sorted(restate))

    targets = [(r.storage, r.period.name, r.value) for r in p.runs]
    assert len(set(targets)) == len(targets), "a partition planned twice"
    assert len({(r.dag_id, r.logical_date) for r in p.runs}) == len(p.runs)
    assert not (set(targets) & registered) - restate, "a fresh registered partition re-run"
    assert [(r.period, r.start) for r in p.runs] == sorted((r.period, r.start) for r in p.runs)
    assert all(r.dag_id == DAGS[r.period.name] for r in p.runs)
    assert all(start <= r.start and r.end <= end for r in p.runs)
    assert {r.kind for r in p.runs if (r.storage, r.period.name, r.value) in restate} <= {
        "restate"}

    # stale partitions the plan does not re-make are unusable (as in a fresh-only cover)
    for storage, period, value in restate - set(targets):
        shared.drop(storage, period, {"dt": value})

    # execute in order; a rollup's span must already be coverable by finer partitions
    done: set[tuple[str, str, str]] = (registered - restate)
    for run in p.runs:
        if run.period is not H:
            finer = [q for q in ("HOURLY", "DAILY") if UpdatePeriod.of(q) < run.period]
            inputs = shared.cover(fact, run.start, run.end, periods=finer, verify=False)
            stale_used = {(c.storage, c.period.name, c.value) for c in inputs.partitions}
            assert inputs.coverable and not (stale_used - done), run
        shared.register(run.storage, run.period.name, {"dt": run.value})
        done.add((run.storage, run.period.name, run.value))
    cover = shared.cover(fact, start, end)
    assert cover.coverable == p.coverable_after()
    assert tuple((c.storage, c.period.name, c.value) for c in cover.partitions) == p.cover_after
    assert [(m.start, m.end) for m in cover.missing] == [(t0, t1) for t0, t1, _ in p.unfillable]
