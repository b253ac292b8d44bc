"""Coverage assets under the real scheduler: consumers on ``CoverageAsset`` run once a window is
coverable, and only then.

Shares the services of test_scheduler.py (the ``scheduler`` fixture of tests/e2e/conftest.py):
their start writes this module's DAG files and creates its facts (:func:`setup_coverage`), and
``make airflow``'s harness starts the follower (``airflow-partitions assets follow``) beside
them, with the ``airflow_api_default`` connection in every task's environment. One fact per
scenario, so the scenarios cannot see each other's writes; every fact is empty when the follower
first follows its asset, so nothing is "known" before. The writes of every scenario go first,
then one wait covers them all (the suite's time is short).

Scenarios (a ``(dt, region)`` HOURLY storage declaring ``region=eu,us``, DAILY windows):

1. 48 hours registered one by one in order: one run;
2. eu's 05:00 last: no run until it arrives, then one;
3. an hour registered, dropped, then the rest: no run until the dropped hour is back;
4. only a DAILY rollup partition (no region column): a run;
5. the hours registered with the CLI: a run;
6. an hour restated after the day ran: a second run, its event's extra ``restated`` true;
7. Europe/Berlin, the 23-hour 2024-03-31: one run, key ``2024-03-31T00:00:00``;
8. ``apac`` required from 12:00: no run with eu's and us's hours only, one with apac's from 12:00;
9. the in-task path: a producer DAG's RegisterPartitionsOperator writes a day; one run, and the
   window announced by exactly one process (the task, or the follower that saw it first).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import CoverageAssetSpec, EmissionMarkers
from airflow_partitions.demo.services.runner import FOLLOWER, log_tail
from tests.helpers import AirflowHome, poll

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e:scheduler")]

DAY = "2024-01-02"
BERLIN_DAY = "2024-03-31"
REGIONS = ("eu", "us")
#: Scenario -> (fact, time zone).
FACTS = {n: (f"cov{n}", "Europe/Berlin" if n == 7 else "UTC") for n in range(1, 10)}
PRODUCER = "cov_produce"

CONSUMERS = '''
import pendulum
from airflow.sdk import DAG, PartitionedAssetTimetable, task

from airflow_partitions.assets import CoverageAsset

for fact in @FACTS@:
    with DAG(f"{fact}_daily", start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
             schedule=PartitionedAssetTimetable(assets=CoverageAsset(fact, "DAILY"))):
        @task
        def record(dag_run=None, triggering_asset_events=None):
            print("coverage run", dag_run.partition_key)
            for events in (triggering_asset_events or {}).values():
                for event in events:
                    print("extra", event.extra)

        record()
'''

PRODUCER_DAG = '''
import pendulum
from airflow.sdk import DAG

from airflow_partitions.operators.partitions import RegisterPartitionsOperator

with DAG(@PRODUCER@, schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    RegisterPartitionsOperator(task_id="register", storage="cov9_raw", period="HOURLY",
                               values={"dt": [f"@DAY@-{h:02d}" for h in range(24)],
                                       "region": ["eu", "us"]})
'''


def setup_coverage(home: AirflowHome, catalog: Catalog) -> list[str]:
    """The facts (empty) and the DAG files, before the services start."""
    for n, (fact, tz) in FACTS.items():
        catalog.create_fact(fact, tz=tz)
        catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"], columns=["dt", "region"],
                               dimensions=["region=eu,us"])
        if n == 4:
            catalog.create_storage(fact, f"{fact}_daily", ["DAILY"], priority=10)
    facts = [fact for fact, _ in FACTS.values()]
    (home.dags / "cov_consumers.py").write_text(CONSUMERS.replace("@FACTS@", repr(facts)))
    (home.dags / "cov_producer.py").write_text(
        PRODUCER_DAG.replace("@PRODUCER@", repr(PRODUCER)).replace("@DAY@", DAY))
    return [*(f"{fact}_daily" for fact in facts), PRODUCER]


def hours(day: str = DAY, regions: tuple[str, ...] = REGIONS, start: int = 0,
          skip: tuple[tuple[int, str], ...] = ()) -> list[dict[str, str]]:
    return [{"dt": f"{day}-{h:02d}", "region": r} for h in range(start, 24) for r in regions
            if (h, r) not in skip]


def uri(n: int) -> str:
    return CoverageAssetSpec.of(FACTS[n][0], "DAILY").uri


class Coverage:
    """The shared services, and what each scenario's consumer ran."""

    def __init__(self, scheduler: Any) -> None:
        self.s = scheduler
        self.catalog: Catalog = scheduler.catalog
        self.markers = EmissionMarkers(self.catalog.rows.kv)

    def runs(self, n: int) -> list[dict[str, Any]]:
        return list(self.s.runs(f"{FACTS[n][0]}_daily"))

    def statuses(self, n: int) -> dict[str, str]:
        return {key: m.doc["status"] for key, m in self.markers.markers(uri(n))}

    def wait_runs(self, n: int, count: int, timeout: float = 180) -> list[dict[str, Any]]:
        """Until ``count`` runs of scenario ``n``'s consumer succeeded (a failed one fails)."""
        def check() -> list[dict[str, Any]] | None:
            runs = self.runs(n)
            failed = [r for r in runs if r["state"] == "failed"]
            if failed:
                raise AssertionError(self.s.failure_report(f"{FACTS[n][0]}_daily", failed[0]))
            done = [r for r in runs if r["state"] == "success"]
            return done if len(done) >= count else None
        try:
            return poll(f"{count} run(s) of {FACTS[n][0]}_daily", check, timeout, every=1)
        except AssertionError:
            print(f"--- {FOLLOWER}.log\n"
                  f"{log_tail(self.s.services.state_dir / f'{FOLLOWER}.log', 60)}")
            raise

    def events(self, n: int, run: dict[str, Any]) -> list[dict[str, Any]]:
        doc = self.s.api.get(f"dags/{FACTS[n][0]}_daily/dagRuns/{run['dag_run_id']}/"
                             "upstreamAssetEvents")
        events: list[dict[str, Any]] = doc["asset_events"]
        return events


@pytest.fixture(scope="module")
def coverage(scheduler: Any) -> Coverage:
    """Every scenario's first writes, once the follower follows every asset."""
    cov = Coverage(scheduler)
    wanted = {uri(n) for n in FACTS}
    poll("the follower following every coverage asset",
         lambda: wanted <= {u for u, _ in cov.markers.assets()} or None, timeout=120)
    c = cov.catalog
    # the scenarios that must wait go first, so that the follower's later announcements
    # prove it has read these writes (it reads every followed fact each round)
    c.register("cov2_raw", "HOURLY", hours(skip=((5, "eu"),)))
    c.register("cov3_raw", "HOURLY", {"dt": f"{DAY}-07", "region": "us"})
    c.drop("cov3_raw", "HOURLY", {"dt": f"{DAY}-07", "region": "us"})
    c.register("cov3_raw", "HOURLY", hours(skip=((7, "us"),)))
    c.set_dimension("cov8_raw", f"region=apac@{DAY}T12:00:00Z")
    c.register("cov8_raw", "HOURLY", hours())
    for part in hours():  # in order, one write each
        c.register("cov1_raw", "HOURLY", part)
    c.register("cov4_daily", "DAILY", {"dt": DAY})
    for region in REGIONS:
        scheduler.run_cli("partition", "add", "cov5_raw", "--period", "HOURLY", "--range",
                          f"{DAY}T00:00:00Z", "2024-01-03T00:00:00Z", f"region={region}")
    c.register("cov6_raw", "HOURLY", hours())
    c.register("cov7_raw", "HOURLY", [p for p in hours(BERLIN_DAY) if p["dt"][-2:] != "02"])
    scheduler.trigger(PRODUCER)
    return cov


def test_48_hours_in_order_run_the_day_once(coverage: Coverage) -> None:
    runs = coverage.wait_runs(1, 1)
    assert [r["partition_key"] for r in runs] == [f"{DAY}T00:00:00"]


def test_a_late_hour_holds_the_day_until_it_arrives(coverage: Coverage) -> None:
    coverage.wait_runs(1, 1)  # the follower has read every earlier write (module fixture)
    time.sleep(3)  # and a few more rounds
    for n in (2, 3, 8):  # nothing due: not announced, no run
        assert coverage.statuses(n) == {}, n
        assert coverage.runs(n) == [], n
    coverage.catalog.register("cov2_raw", "HOURLY", {"dt": f"{DAY}-05", "region": "eu"})
    coverage.catalog.register("cov3_raw", "HOURLY", {"dt": f"{DAY}-07", "region": "us"})
    coverage.catalog.register("cov8_raw", "HOURLY", hours(regions=("apac",), start=12))
    for n in (2, 3, 8):
        runs = coverage.wait_runs(n, 1)
        assert [r["partition_key"] for r in runs] == [f"{DAY}T00:00:00"], n


def test_a_daily_rollup_alone_covers_the_day(coverage: Coverage) -> None:
    runs = coverage.wait_runs(4, 1)
    assert [r["partition_key"] for r in runs] == [f"{DAY}T00:00:00"]


def test_hours_written_by_the_cli_run_the_day(coverage: Coverage) -> None:
    runs = coverage.wait_runs(5, 1)
    assert [r["partition_key"] for r in runs] == [f"{DAY}T00:00:00"]


def test_a_restated_hour_runs_the_day_again_marked_restated(coverage: Coverage) -> None:
    first = coverage.wait_runs(6, 1)
    assert [e["extra"].get("restated") for e in coverage.events(6, first[0])] == [False]
    coverage.catalog.register("cov6_raw", "HOURLY", {"dt": f"{DAY}-09", "region": "eu"},
                              restate=True)
    runs = coverage.wait_runs(6, 2)
    second = next(r for r in runs if r["dag_run_id"] != first[0]["dag_run_id"])
    assert second["partition_key"] == f"{DAY}T00:00:00"
    extra = [e["extra"] for e in coverage.events(6, second)]
    assert [x.get("restated") for x in extra] == [True]
    assert extra[0]["airflow_partitions"]["version"] == 2


def test_a_23_hour_berlin_day_runs_once_with_its_local_key(coverage: Coverage) -> None:
    runs = coverage.wait_runs(7, 1)
    assert [r["partition_key"] for r in runs] == [f"{BERLIN_DAY}T00:00:00"]
    extra = coverage.events(7, runs[0])[0]["extra"]["airflow_partitions"]
    assert extra["partitions"] == 46  # 23 hours x 2 regions


def test_a_producer_task_announces_its_write(coverage: Coverage) -> None:
    s = coverage.s
    s.wait_state(PRODUCER, f"test__{PRODUCER}", "register", {"success"})
    runs = coverage.wait_runs(9, 1)
    assert [r["partition_key"] for r in runs] == [f"{DAY}T00:00:00"]
    task_log = s.log(PRODUCER, f"test__{PRODUCER}", "register")
    assert "not announced here" not in task_log, task_log[-3000:]  # the REST API answered
    follower_log = (s.services.state_dir / f"{FOLLOWER}.log").read_text()
    key = f"{DAY}T00:00:00"

    def announced(text: str) -> bool:
        return any("announced cov9 daily coverage" in line and key in line
                   for line in text.splitlines())

    by_task, by_follower = announced(task_log), announced(follower_log)
    print(f"cov9 announced by the task: {by_task}, by the follower: {by_follower}")
    assert by_task != by_follower, (task_log[-2000:], follower_log[-2000:])


def test_every_consumer_ran_exactly_as_often_as_announced(coverage: Coverage) -> None:
    """Last: after every wait above, no consumer ran more often than its windows were due."""
    expected = {n: 2 if n == 6 else 1 for n in FACTS}
    for n in FACTS:
        coverage.wait_runs(n, expected[n])
    time.sleep(2)
    assert {n: len(coverage.runs(n)) for n in FACTS} == expected
