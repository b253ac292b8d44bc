"""Under the real services: api-server, scheduler, dag-processor and triggerer on loopback.

The services start once for this module and test_coverage_assets.py (the package-scoped
``scheduler`` fixture of tests/e2e/conftest.py), through the harness ``make airflow`` uses
(:mod:`airflow_partitions.demo.services`), in a temporary ``AIRFLOW_HOME`` whose DAG folder holds
the small DAGs below; they are stopped by process group at the end, even on failure. States are
read through the REST API (a JWT from the simple auth manager), and only polled, with deadlines.

* a deferrable coverage sensor defers, its log says what is missing, and it succeeds once the
  missing hour is registered (the trigger runs in the real triggerer);
* a reschedule-mode sensor is ``up_for_reschedule`` between pokes, then succeeds;
* ``airflow-partitions backfill`` over two days of a small rollup pipeline creates the Airflow
  backfill of the rollup's producer DAG, which runs the covered Spark job on exactly each
  day's 24 hours and registers each day with its inputs (two spark-submits);
* a ``PartitionedAssetTimetable`` DAG runs once per registered day, with that day's key;
* over declared dimensions: a deferrable sensor over two regions stays deferred
  while one region's hour is missing (its log names the region) and fires at the first poll
  after the registration; the registration's composite asset keys (``eu|2024-01-01T05:00:00``)
  run a ``PartitionedAssetTimetable`` consumer with ``ProductMapper`` once per region and day;
* restating one hour makes exactly its day stale; a backfill of the paused producer is
  refused; ``PartitionBackfillOperator(restate=True)`` (the REST API path) rebuilds that day
  alone (one more spark-submit), after which the rollup equals the raw data again;
* the Partitions view on the same api-server: the plugin is found the way a user's
  installation finds it (the package's entry point), its app is mounted at ``/partitions``,
  and its routes answer only to an authenticated Airflow user: no token is 401, a forged one
  403, the simple auth manager's admin token 200. The JSON the page is drawn from is checked
  against what the catalog holds. (It shares these services rather than starting an
  api-server of its own: one start-up less in ``make test``.)
* acting from the view, as Airflow's users ``admin`` and ``viewer``: the viewer is
  refused (403 naming the DAG) and nothing is created; the admin fills a two-day gap of
  ``vfact`` from the view's endpoints, a double-submitted confirmation creating one backfill,
  until the range is coverable, and the audit log says who; a restate from the view re-runs
  exactly the stale day.
* the services under load and faults, last (they run on PostgreSQL, as ``make airflow``'s do,
  under its supervisor): a burst of runs triggered through the REST API at once, with
  ``airflow`` CLI writes beside them, ends with every run finished and no service having
  exited; PostgreSQL stopped for 6 s under a running ``airflow-partitions backfill`` and
  started again on its port: the backfill rides it out and succeeds, and scheduling continues.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_partitions.catalog import Catalog, Producer, TimelineCache
from airflow_partitions.demo.services import postgres
from airflow_partitions.demo.services.api import ADMIN, ApiClient, ApiError, admin_password
from airflow_partitions.demo.services.api import request as api_request
from airflow_partitions.demo.services.environment import (
    VENV_BIN,
    airflow_environment,
    overridden,
)
from airflow_partitions.demo.services.ports import choose_ports
from airflow_partitions.demo.services.processes import (
    ServiceRecord,
    pid_file,
    recorded,
    respawn,
    stop_groups,
)
from airflow_partitions.demo.services.runner import (
    COMMANDS,
    FOLLOWER,
    POSTGRES,
    AirflowServices,
    log_tail,
)
from airflow_partitions.spark import events_for_hour, expected_totals, job_path
from tests.helpers import AirflowHome, make_airflow_home, poll

#: One group with test_coverage_assets.py: one worker, one start of the services for both.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e:scheduler")]

DAY0 = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)
DAYS = [DAY0, DAY0 + dt.timedelta(days=1)]
ROLLUP_ASSET = "sched_rollup_days"
SPARK_CONF = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
              "spark.sql.session.timeZone": "UTC"}

WAIT_DAGS = '''
import pendulum
from airflow.sdk import DAG

from airflow_partitions.sensors.coverage import PartitionCoverageSensor

for dag_id, kwargs, end in (
    # retries: on a busy machine Airflow 3.3 sometimes fails the resumed task after the trigger
    # fired and execute_complete returned ("Failed to report terminal task state to
    # supervisor", the execution API refusing the success report); the retry finds it coverable
    ("sched_deferred", {"deferrable": True, "poke_interval": 1, "retries": 2,
                        "retry_delay": pendulum.duration(seconds=1)}, "02:00"),
    # retries, as docs/pipelines.md advises: a poke's late executor event can fail a re-queued
    # reschedule-mode sensor (apache/airflow#71172, open in 3.3), most often on a busy machine
    ("sched_reschedule", {"mode": "reschedule", "poke_interval": 5, "retries": 2,
                          "retry_delay": pendulum.duration(seconds=1)}, "04:00"),
):
    start = {"sched_deferred": "00:00", "sched_reschedule": "02:00"}[dag_id]
    with DAG(dag_id, schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
        PartitionCoverageSensor(task_id="wait", fact="waits", timeout=600,
                                start=f"2024-01-01T{start}:00+00:00",
                                end=f"2024-01-01T{end}:00+00:00", **kwargs)
'''

ROLLUP_DAG = '''
import pendulum
from airflow.sdk import DAG, Asset, CronDataIntervalTimetable, PartitionedAssetTimetable, task

from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator
from airflow_partitions.sensors.coverage import PartitionCoverageSensor

OUTPUT = @ROLLUP@ + "/dt={{ ds }}"

with DAG(
    "sched_rollup",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=pendulum.datetime(2015, 1, 30, tz="UTC"),
    end_date=pendulum.datetime(2015, 1, 31, tz="UTC"),  # no scheduled run far from the data
    catchup=False,
):
    wait = PartitionCoverageSensor(
        task_id="wait_for_hours", fact="sevents", storages=["sevents_raw"],
        start="{{ data_interval_start }}", end="{{ data_interval_end }}",
        mode="reschedule", poke_interval=5, timeout=600,
    )
    rollup = CoveredSparkSubmitOperator(
        task_id="rollup_day", cover_from="wait_for_hours", application=@JOB@,
        application_args=["--output", OUTPUT, "--format", "parquet"],
        conf=@SPARK_CONF@, name="sched_rollup",
    )
    register = RegisterPartitionsOperator(
        task_id="register_day", storage="sevents_rollup", period="DAILY",
        values={"dt": "{{ ds }}"}, location=OUTPUT, outlets=[Asset(@ASSET@)],
        inputs_from="rollup_day",
    )
    wait >> rollup >> register

with DAG(
    "sched_rollup_consumer",
    schedule=PartitionedAssetTimetable(assets=Asset(@ASSET@)),
    start_date=pendulum.datetime(2015, 1, 1, tz="UTC"),
    catchup=False,
):
    @task
    def follow(dag_run=None):
        print("following partition", dag_run.partition_key)

    follow()
'''


REGION_DAGS = '''
import pendulum
from airflow.sdk import (DAG, Asset, IdentityMapper, PartitionedAssetTimetable, ProductMapper,
                         StartOfDayMapper, task)

from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.sensors.coverage import PartitionCoverageSensor

HOURS = Asset("sched_region_hours")
START = pendulum.datetime(2024, 1, 1, tz="UTC")

with DAG("sched_regions_wait", schedule=None, start_date=START):
    PartitionCoverageSensor(task_id="wait", fact="regions", deferrable=True, poke_interval=2,
                            timeout=600, start="2024-01-01T04:00:00+00:00",
                            end="2024-01-01T06:00:00+00:00")

with DAG("sched_regions_produce", schedule=None, start_date=START):
    RegisterPartitionsOperator(task_id="register", storage="regions_raw", period="HOURLY",
                               values={"dt": "2024-01-01-05", "region": ["eu", "us"]},
                               outlets=[HOURS], partition_key="composite")

with DAG("sched_regions_daily", start_date=START, catchup=False,
         schedule=PartitionedAssetTimetable(
             assets=HOURS,
             default_partition_mapper=ProductMapper(IdentityMapper(), StartOfDayMapper()))):
    @task
    def follow(dag_run=None):
        print("following region and day", dag_run.partition_key)

    follow()
'''


RESTATE_DAG = '''
import pendulum
from airflow.sdk import DAG

from airflow_partitions.operators.backfill import PartitionBackfillOperator

with DAG("sched_restate", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    PartitionBackfillOperator(
        task_id="restate", fact="sevents", start="2015-01-30T00:00:00+00:00",
        end="2015-02-01T00:00:00+00:00", restate=True, poll_interval=2,
        airflow_api_conn_id="airflow_api_e2e",
    )
'''


VIEW_DAG = '''
import pendulum
from airflow.sdk import DAG, CronDataIntervalTimetable, task

with DAG(
    "sched_view_fill",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=pendulum.datetime(2024, 2, 1, tz="UTC"),
    end_date=pendulum.datetime(2024, 2, 4, tz="UTC"),  # no scheduled run
    catchup=False,
):
    @task
    def register_day(ds=None):
        """The day of vfact_daily from its 24 hours (their versions as lineage): a rollup
        without Spark, so that the view's backfills cost seconds."""
        from airflow_partitions.hooks.catalog import PartitionCatalogHook

        catalog = PartitionCatalogHook().get_conn()
        hours = [p.to_json() for p in catalog.list_partitions("vfact_raw", "HOURLY")
                 if p.values["dt"].startswith(ds)]
        assert len(hours) == 24, hours
        catalog.register("vfact_daily", "DAILY", {"dt": ds}, inputs=hours)

    register_day()
'''
BURST_DAGS = 6
BURST_DAG = '''
import time

import pendulum
from airflow.sdk import DAG, CronDataIntervalTimetable, task

START = pendulum.datetime(2024, 3, 1, tz="UTC")

for n in range(@N@):
    with DAG(f"sched_burst_{n}", schedule=None, start_date=START):
        @task
        def note(dag_run=None):
            print("burst run", dag_run.run_id)

        note()

with DAG("sched_burst_fill", start_date=START, catchup=False,
         schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
         end_date=pendulum.datetime(2024, 3, 3, tz="UTC")):  # no scheduled run
    @task
    def register_day(ds=None):
        """Long enough that the backfill still waits for it while PostgreSQL restarts."""
        from airflow_partitions.hooks.catalog import PartitionCatalogHook

        time.sleep(8)
        PartitionCatalogHook().get_conn().register("bfact_daily", "DAILY", {"dt": ds})

    register_day()
'''
BURST_DAY0 = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)

#: The view's users: the simple auth manager's admin, and a read-only viewer.
VIEW_USERS = {"AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin,viewer:viewer"}
VIEW_DAYS = [dt.datetime(2024, 2, d, tzinfo=dt.UTC) for d in (1, 2, 3, 4)]


class Scheduler:
    """The running services, their REST API and the catalog the tasks use."""

    def __init__(self, services: AirflowServices, catalog: Catalog, data: Path) -> None:
        self.services = services
        self.api: ApiClient = services.client()
        self.catalog = catalog
        self.data = data

    def airflow(self, *args: str) -> str:
        done = subprocess.run([str(VENV_BIN / "airflow"), *args], env=self.services.env,
                              cwd=self.services.home, capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
        return done.stdout

    def run_cli(self, *args: str, code: int = 0) -> str:
        """``airflow-partitions`` with the services' environment; its stdout (exit ``code``)."""
        done = subprocess.run([str(VENV_BIN / "airflow-partitions"), *args],
                              env=self.services.env, cwd=self.services.home,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == code, (done.stdout + done.stderr)[-4000:]
        return done.stdout

    def trigger(self, dag_id: str) -> str:
        """A manual run, through the CLI (``airflow dags trigger``); the burst below triggers
        through the REST API."""
        run_id = f"test__{dag_id}"
        self.airflow("dags", "trigger", dag_id, "--run-id", run_id)
        return run_id

    def ti(self, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
        path = f"dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}"
        doc: dict[str, Any] = self.api.get(path)
        return doc

    def log(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1) -> str:
        doc = self.api.get(f"dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/logs/"
                           f"{try_number}", full_content="true")
        content = doc.get("content", []) if isinstance(doc, dict) else doc
        if isinstance(content, str):
            return content
        return "\n".join(str(item.get("event", item)) if isinstance(item, dict) else str(item)
                         for item in content)

    def wait_state(self, dag_id: str, run_id: str, task_id: str, states: set[str],
                   timeout: float = 180, seen: list[str] | None = None) -> str:
        """Poll the task's state until it is one of ``states``; a failure stops the wait."""
        def check() -> str | None:
            state = str(self.ti(dag_id, run_id, task_id).get("state"))
            if seen is not None and (not seen or seen[-1] != state):
                seen.append(state)
            if state in states:
                return state
            if state in {"failed", "upstream_failed", "skipped"}:
                raise AssertionError(f"{dag_id}.{task_id} is {state}:\n"
                                     f"{self.log(dag_id, run_id, task_id)[-4000:]}")
            return None
        return poll(f"{dag_id}.{task_id} in {sorted(states)}", check, timeout, every=0.5)

    def failure_report(self, dag_id: str, run: dict[str, Any]) -> str:
        """The failed run, its task states and the end of each failed task's log."""
        lines = [f"{dag_id} run failed: {run}"]
        tis = self.api.get(f"dags/{dag_id}/dagRuns/{run['dag_run_id']}/taskInstances")
        for ti in tis["task_instances"]:
            lines.append(f"  {ti['task_id']}: {ti['state']} (try {ti['try_number']})")
            if ti["state"] in {"failed", "up_for_retry"} and ti["try_number"]:
                try:
                    log = self.log(dag_id, run["dag_run_id"], ti["task_id"], ti["try_number"])
                except ApiError as exc:
                    log = str(exc)
                lines.append(log[-3000:])
        return "\n".join(lines)

    def runs(self, dag_id: str) -> list[dict[str, Any]]:
        runs: list[dict[str, Any]] = self.api.get(f"dags/{dag_id}/dagRuns")["dag_runs"]
        return runs


def write_hours(catalog: Catalog, data: Path) -> None:
    """The two days' raw hours as Parquet (no Spark: pyarrow), registered in the catalog."""
    values = []
    for day in DAYS:
        for hour in range(24):
            start = day + dt.timedelta(hours=hour)
            events = events_for_hour(start)
            location = data / "raw" / f"dt={start:%Y-%m-%d-%H}"
            location.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist([
                {"event_time": e.event_time, "user_id": e.user_id, "region": e.region,
                 "amount_cents": e.amount_cents} for e in events]), location / "part-0.parquet")
            values.append({"dt": f"{start:%Y-%m-%d-%H}"})
    catalog.register("sevents_raw", "HOURLY", values)


#: What a user exported before `make airflow`: passed through, except the executor,
#: which the harness needs to be LocalExecutor (Airflow 3 has no SequentialExecutor: a scheduler
#: given it would not start). The StatsD settings come from :class:`StatsdSink`.
CALLER_SETTINGS = {"AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
                   "AIRFLOW__API__INSTANCE_NAME": "Partitions e2e",
                   "AIRFLOW__CORE__EXECUTOR": "SequentialExecutor"}
STATSD_PREFIX = "e2e31"


class StatsdSink:
    """A UDP socket on loopback that the services' StatsD metrics go to (a caller's
    ``AIRFLOW__METRICS__*`` settings, as docs/observability.md says to set them); a thread
    keeps the metric names it receives.

    Why metrics and not ``/proc/<pid>/environ``: Airflow's services set their process title
    (setproctitle), which overwrites the memory that file is read from.
    """

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.5)
        self.port: int = self.sock.getsockname()[1]
        self.names: set[str] = set()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def settings(self) -> dict[str, str]:
        return {"AIRFLOW__METRICS__STATSD_ON": "True",
                "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
                "AIRFLOW__METRICS__STATSD_PORT": str(self.port),
                "AIRFLOW__METRICS__STATSD_PREFIX": STATSD_PREFIX}

    def _drain(self) -> None:
        while not self.stopped.is_set():
            try:
                data = self.sock.recv(65535)
            except TimeoutError:
                continue
            except OSError:
                return
            self.names.update(line.split(":", 1)[0]
                              for line in data.decode(errors="replace").splitlines())

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()


#: Adds DAG files and catalog entries of another module sharing these services (before they
#: start): returns the DAG ids to wait for.
Setup = Callable[[AirflowHome, Catalog], list[str]]


def start_scheduler(tmp_path_factory: pytest.TempPathFactory, statsd: StatsdSink,
                    setups: Sequence[Setup] = ()) -> Iterator[Scheduler]:
    """The services with this module's DAGs and catalog, and ``setups``' (the ``scheduler``
    fixture of tests/e2e/conftest.py: shared by this module and test_coverage_assets.py)."""
    home = make_airflow_home(tmp_path_factory.mktemp("scheduler_home"))
    data = home.home / "sevents"
    (home.dags / "sched_waits.py").write_text(WAIT_DAGS)
    (home.dags / "sched_restate.py").write_text(RESTATE_DAG)
    (home.dags / "sched_regions.py").write_text(REGION_DAGS)
    (home.dags / "sched_view.py").write_text(VIEW_DAG)
    (home.dags / "sched_burst.py").write_text(BURST_DAG.replace("@N@", str(BURST_DAGS)))
    (home.dags / "sched_rollup.py").write_text(
        ROLLUP_DAG.replace("@ROLLUP@", repr(str(data / "rollup")))
        .replace("@JOB@", repr(job_path("events_aggregate")))
        .replace("@SPARK_CONF@", repr(SPARK_CONF)).replace("@ASSET@", repr(ROLLUP_ASSET)))
    catalog = Catalog(home.store_url, data_root=str(home.home / "data"), cache=TimelineCache())
    catalog.create_fact("waits")
    catalog.create_storage("waits", "waits_hourly", ["HOURLY"])
    catalog.register("waits_hourly", "HOURLY", [{"dt": "2024-01-01-00"}, {"dt": "2024-01-01-02"}])
    catalog.create_fact("regions")  # us has hours 04 and 05, eu only 04
    catalog.create_storage("regions", "regions_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"])
    catalog.register("regions_raw", "HOURLY", [{"dt": "2024-01-01-04", "region": "eu"}] + [
        {"dt": f"2024-01-01-0{h}", "region": "us"} for h in (4, 5)])
    catalog.create_fact("sevents")
    catalog.create_storage("sevents", "sevents_raw", ["HOURLY"],
                           location=f"{data}/raw/dt={{dt}}")
    catalog.create_storage("sevents", "sevents_rollup", ["DAILY"], priority=10,
                           location=f"{data}/rollup/dt={{dt}}")
    catalog.set_producers("sevents_rollup", {"DAILY": Producer("sched_rollup")})
    write_hours(catalog, data)
    add_vfact(catalog)
    catalog.create_fact("bfact")
    catalog.create_storage("bfact", "bfact_daily", ["DAILY"])
    catalog.set_producers("bfact_daily", {"DAILY": Producer("sched_burst_fill")})
    more_dags = [dag_id for setup in setups for dag_id in setup(home, catalog)]
    # built as `make airflow` builds it, from a caller who exported settings of their own
    env = airflow_environment(home.home, home.dags, home.store_url, home.home / "data",
                              spark_master="local[1]",
                              base={**home.env, **CALLER_SETTINGS, **statsd.settings(),
                                    **VIEW_USERS})
    services = AirflowServices(home.home, env, choose_ports(), parallelism=4)
    try:
        services.start()
        services.wait_healthy(timeout=300)
        services.wait_for_dags(["sched_deferred", "sched_reschedule", "sched_rollup",
                                "sched_rollup_consumer", "sched_restate", "sched_regions_wait",
                                "sched_regions_produce", "sched_regions_daily", "sched_view_fill",
                                "sched_burst_fill",
                                *(f"sched_burst_{n}" for n in range(BURST_DAGS)), *more_dags],
                               timeout=180)
        services.supervise()  # as `make airflow` does once every service is healthy
        scheduler = Scheduler(services, catalog, data)
        api = urllib.parse.urlsplit(services.api_url)
        scheduler.airflow("connections", "add", "airflow_api_e2e", "--conn-type", "http",
                          "--conn-host", f"{api.scheme}://{api.hostname}",
                          "--conn-port", str(api.port), "--conn-login", ADMIN,
                          f"--conn-password={admin_password(home.home) or ''}")
        yield scheduler
    except BaseException:
        for name in ("scheduler", "triggerer", "dag-processor", "api-server", FOLLOWER,
                     "postgres"):
            print(f"--- {name}.log\n{log_tail(services.state_dir / f'{name}.log', 40)}")
        raise
    finally:
        stopped = services.stop()
        catalog.close()
        assert all(not line.startswith(("killed", "survived")) for line in stopped), stopped


def add_vfact(catalog: Catalog) -> None:
    """``vfact``: four days of hours, days 1 and 4 rolled up, 2 and 3 the gap."""
    catalog.create_fact("vfact")
    catalog.create_storage("vfact", "vfact_raw", ["HOURLY"])
    catalog.create_storage("vfact", "vfact_daily", ["DAILY"], priority=5)
    catalog.set_producers("vfact_daily", {"DAILY": Producer("sched_view_fill")})
    for day in VIEW_DAYS:
        hours = [{"dt": f"{day + dt.timedelta(hours=h):%Y-%m-%d-%H}"} for h in range(24)]
        catalog.register("vfact_raw", "HOURLY", hours)
        if day.day in (1, 4):
            inputs = [p.to_json() for p in catalog.list_partitions("vfact_raw", "HOURLY")
                      if p.values["dt"].startswith(f"{day:%Y-%m-%d}")]
            catalog.register("vfact_daily", "DAILY", {"dt": f"{day:%Y-%m-%d}"}, inputs=inputs)


class Command:
    """An ``airflow-partitions`` command running in the background, its output in a file."""

    def __init__(self, scheduler: Scheduler, name: str, *args: str) -> None:
        self.output = scheduler.services.state_dir / f"{name}.out"
        with self.output.open("w") as out:
            self.process = subprocess.Popen(
                [str(VENV_BIN / "airflow-partitions"), *args], env=scheduler.services.env,
                cwd=scheduler.services.home, stdout=out, stderr=subprocess.STDOUT)

    def wait(self, timeout: float) -> str:
        """Its output once it exited 0; a failure or a timeout shows the output."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"timed out:\n{self.output.read_text()[-4000:]}") from None
        text = self.output.read_text()
        assert code == 0, text[-4000:]
        return text


def backfill_args(*extra: str) -> list[str]:
    end = DAYS[-1] + dt.timedelta(days=1)
    return ["backfill", "sevents", "--start", DAYS[0].isoformat(), "--end", end.isoformat(),
            "--poll-interval", "2", *extra]


@pytest.fixture(scope="module")
def backfill(scheduler: Scheduler) -> Iterator[Command]:
    """``airflow-partitions backfill`` over two days of the rollup's producer, started first so
    its two Spark jobs overlap the sensor tests (the suite's longest wait). Stopped at the
    module's end if no test waited for it (``-k`` picked a sensor test only): it would poll the
    stopped api-server for ever."""
    command = Command(scheduler, "backfill", *backfill_args())
    yield command
    if command.process.poll() is None:
        command.process.kill()
        command.process.wait(timeout=60)


def test_the_callers_settings_reach_every_service_and_env_sh_gives_airflow(
        scheduler: Scheduler, statsd: StatsdSink) -> None:
    """Settings a caller exported reach the services, the harness's required values
    win (and it names the ones it replaced), and ``source env.sh`` in a fresh shell finds the
    venv's ``airflow`` and the same settings."""
    services = scheduler.services
    config = api_request(f"{services.api_url}/ui/config", token=scheduler.api.token())
    assert config["instance_name"] == "Partitions e2e"  # the api-server has the caller's
    beats = {f"{STATSD_PREFIX}.{name}_heartbeat"
             for name in ("scheduler", "triggerer", "dag_processor")}
    poll("every service's heartbeat through the caller's StatsD settings",
         lambda: beats <= statsd.names or None, timeout=120)
    assert overridden({**CALLER_SETTINGS, **statsd.settings()}, services.env) == [
        "AIRFLOW__CORE__EXECUTOR"]
    shell = subprocess.run(
        ["bash", "-c", f"source {services.state_dir / 'env.sh'}; command -v airflow; "
                       "echo $AIRFLOW__METRICS__STATSD_PREFIX"],
        env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True)
    assert shell.stdout.splitlines() == [str(VENV_BIN / "airflow"), STATSD_PREFIX]


def test_deferrable_sensor_waits_in_the_triggerer(scheduler: Scheduler, backfill: Command,
                                                  statsd: StatsdSink) -> None:
    run_id = scheduler.trigger("sched_deferred")
    scheduler.wait_state("sched_deferred", run_id, "wait", {"deferred"})
    log = scheduler.log("sched_deferred", run_id, "wait")
    assert "missing 2024-01-01T01:00/02:00: no HOURLY 2024-01-01-01" in log, log[-3000:]
    scheduler.catalog.register("waits_hourly", "HOURLY", {"dt": "2024-01-01-01"})
    scheduler.wait_state("sched_deferred", run_id, "wait", {"success"})
    xcom = scheduler.api.get(f"dags/sched_deferred/dagRuns/{run_id}/taskInstances/wait/"
                             "xcomEntries/return_value")
    cover = xcom["value"] if isinstance(xcom["value"], dict) else json.loads(xcom["value"])
    assert [p["value"] for p in cover["partitions"]] == ["2024-01-01-00", "2024-01-01-01"]
    # the task processes and the trigger inherit the caller's metrics settings
    assert any(n.startswith(f"{STATSD_PREFIX}.partitions.coverage") for n in statsd.names), \
        sorted(statsd.names)


def test_reschedule_mode_is_up_for_reschedule_between_pokes(scheduler: Scheduler,
                                                            backfill: Command) -> None:
    run_id = scheduler.trigger("sched_reschedule")
    seen: list[str] = []
    scheduler.wait_state("sched_reschedule", run_id, "wait", {"up_for_reschedule"}, seen=seen)
    def pokes() -> int:
        """Pokes that logged the missing hour, over every try so far (a retry absorbs
        apache/airflow#71172: the sensor restarts its pokes in the next try). Read from the
        task's log files: while the task is up for reschedule the api-server may answer for
        a try with "Could not read served logs" (it asks the worker's log server)."""
        logs = (Path(scheduler.services.home) / "logs" / "dag_id=sched_reschedule"
                / f"run_id={run_id}" / "task_id=wait")
        return sum(f.read_text(errors="replace").count("missing 2024-01-01T03:00/04:00")
                   for f in logs.glob("attempt=*.log"))

    # a second poke, in a new process, logs what is missing again
    poll("a second poke", lambda: True if pokes() >= 2 else None, timeout=180)
    scheduler.catalog.register("waits_hourly", "HOURLY", {"dt": "2024-01-01-03"})
    scheduler.wait_state("sched_reschedule", run_id, "wait", {"success"}, seen=seen)
    ti = scheduler.ti("sched_reschedule", run_id, "wait")
    assert ti["try_number"] <= 3, ti
    assert "up_for_reschedule" in seen and seen[-1] == "success", seen


def test_backfill_runs_the_covered_job_per_day_and_registers_it(scheduler: Scheduler,
                                                                backfill: Command) -> None:
    def done() -> list[dict[str, Any]] | None:
        runs = scheduler.runs("sched_rollup")
        failed = [r for r in runs if r["state"] == "failed"]
        if failed:
            raise AssertionError(scheduler.failure_report("sched_rollup", failed[0]))
        finished = [r for r in runs if r["state"] == "success"]
        return runs if len(finished) == len(DAYS) and len(runs) == len(DAYS) else None

    runs = poll("both backfill runs to succeed", done, timeout=540, every=2)
    output = backfill.wait(timeout=180)
    assert "plan: 2 run(s) for sevents" in output, output
    assert "creating dag run" not in output, output  # Airflow's own per-run lines kept out
    assert "stage 1 backfill: sched_rollup 2015-01-30T00:00Z..2015-01-31T00:00Z (2 runs)" \
        in output, output
    assert "done: sevents [2015-01-30T00:00, 2015-02-01T00:00): 100.0% covered by 2 " \
        "partition(s), coverable" in output, output
    assert sorted(r["run_type"] for r in runs) == ["backfill"] * len(DAYS)
    by_day = {r["logical_date"][:10]: r["dag_run_id"] for r in runs}
    assert sorted(by_day) == [f"{d:%Y-%m-%d}" for d in DAYS]
    for day in DAYS:
        run_id = by_day[f"{day:%Y-%m-%d}"]
        log = scheduler.log("sched_rollup", run_id, "rollup_day")
        assert "wrote the rollup of 24 partitions" in log, log[-3000:]
        cover = scheduler.api.get(f"dags/sched_rollup/dagRuns/{run_id}/taskInstances/"
                                  "wait_for_hours/xcomEntries/return_value")["value"]
        cover = cover if isinstance(cover, dict) else json.loads(cover)
        assert [p["value"] for p in cover["partitions"]] == [
            f"{day + dt.timedelta(hours=h):%Y-%m-%d-%H}" for h in range(24)]
        registered = scheduler.catalog.get_partition("sevents_rollup", "DAILY",
                                                     {"dt": f"{day:%Y-%m-%d}"})
        assert registered is not None
        rows = pq.read_table(scheduler.data / "rollup" / f"dt={day:%Y-%m-%d}").to_pylist()
        totals = {r["region"]: (r["events"], r["amount_cents"]) for r in rows}
        assert totals == expected_totals(day, day + dt.timedelta(days=1))


def test_partitioned_asset_consumer_runs_with_each_registered_key(scheduler: Scheduler,
                                                                  backfill: Command) -> None:
    expected = sorted(f"{d:%Y-%m-%dT%H:%M:%S}" for d in DAYS)

    def done() -> list[dict[str, Any]] | None:
        if any(r["state"] == "failed" for r in scheduler.runs("sched_rollup")):
            raise AssertionError("the backfill failed, so no key was registered (see above)")
        runs = [r for r in scheduler.runs("sched_rollup_consumer") if r["state"] == "success"]
        return runs if sorted(str(r.get("partition_key")) for r in runs) == expected else None

    runs = poll(f"consumer runs with keys {expected}", done, timeout=240, every=2)
    assert len(runs) == len(DAYS)


def produce_regions(scheduler: Scheduler) -> str:
    """Run ``sched_regions_produce`` once (eu's and us's hour 05, composite asset keys)."""
    run_id = "test__sched_regions_produce"
    if not any(r["dag_run_id"] == run_id for r in scheduler.runs("sched_regions_produce")):
        scheduler.trigger("sched_regions_produce")
    scheduler.wait_state("sched_regions_produce", run_id, "register", {"success"})
    return run_id


def test_a_deferred_sensor_over_two_regions_waits_for_the_late_one(scheduler: Scheduler,
                                                                   backfill: Command) -> None:
    """Declared dimensions under the real triggerer: us has both hours, eu lacks 05. The sensor
    defers,
    names eu, stays deferred over several polls, and fires on the first poll after eu's hour
    is registered: the trigger computed the cover at its start and once more, at the first
    generation change it saw (``checks == 2``), having polled in between."""
    run_id = scheduler.trigger("sched_regions_wait")
    scheduler.wait_state("sched_regions_wait", run_id, "wait", {"deferred"})
    log = scheduler.log("sched_regions_wait", run_id, "wait")
    assert "missing 2024-01-01T05:00/06:00: no HOURLY 2024-01-01-05 for region=eu" in log, \
        log[-3000:]
    for _ in range(3):  # 2-second polls: several of them, and nothing fires
        time.sleep(2)
        assert scheduler.ti("sched_regions_wait", run_id, "wait")["state"] == "deferred"
    produce_regions(scheduler)
    scheduler.wait_state("sched_regions_wait", run_id, "wait", {"success"})
    log = scheduler.log("sched_regions_wait", run_id, "wait")
    fired = re.search(r"the trigger fired at its cover check (\d+), after (\d+) poll", log)
    assert fired is not None, log[-3000:]
    assert int(fired[1]) == 2 and int(fired[2]) >= 3, fired[0]
    # two hours of two regions, each region's hours its own partitions (per-slice covers)
    assert "100.0% covered by 4 partition(s), coverable (re-verified)" in log, log[-3000:]


def test_product_mapper_consumer_runs_from_composite_keys(scheduler: Scheduler,
                                                          backfill: Command) -> None:
    """The registration's events carry ``eu|2024-01-01T05:00:00`` and ``us|...``; the
    consumer's ``ProductMapper(IdentityMapper(), StartOfDayMapper())`` maps them to one run
    per region and day."""
    produce_regions(scheduler)
    expected = ["eu|2024-01-01", "us|2024-01-01"]

    def done() -> list[dict[str, Any]] | None:
        runs = [r for r in scheduler.runs("sched_regions_daily") if r["state"] == "success"]
        return runs if sorted(str(r.get("partition_key")) for r in runs) == expected else None

    runs = poll(f"consumer runs with keys {expected}", done, timeout=240, every=2)
    assert len(runs) == 2
    events = scheduler.api.get("assets/events", limit=100)["asset_events"]
    keys = sorted(e["partition_key"] for e in events if e.get("partition_key", "") and
                  "|" in e["partition_key"])
    assert keys == ["eu|2024-01-01T05:00:00", "us|2024-01-01T05:00:00"], events


def raw_totals(data: Path, day: dt.datetime) -> dict[str, tuple[int, int]]:
    """Events and amount per region of a day, straight from the raw hours' files."""
    totals: dict[str, tuple[int, int]] = {}
    for hour in range(24):
        start = day + dt.timedelta(hours=hour)
        for row in pq.read_table(data / "raw" / f"dt={start:%Y-%m-%d-%H}").to_pylist():
            events, amount = totals.get(row["region"], (0, 0))
            totals[row["region"]] = (events + 1, amount + row["amount_cents"])
    return totals


def test_a_restated_hour_makes_its_day_stale_until_backfill_restate_rebuilds_it(
        scheduler: Scheduler, backfill: Command) -> None:
    """Runs last: restate one hour with changed data; ``stale`` names exactly its day; a
    backfill of a paused producer is refused; ``PartitionBackfillOperator(restate=True)``
    re-runs exactly that day's rollup; the rollup then equals the raw data again and nothing
    is stale."""
    backfill.wait(timeout=600)
    hour = DAYS[0] + dt.timedelta(hours=5)
    location = scheduler.data / "raw" / f"dt={hour:%Y-%m-%d-%H}" / "part-0.parquet"
    rows = pq.read_table(location).to_pylist()
    pq.write_table(pa.Table.from_pylist([{**r, "amount_cents": r["amount_cents"] * 3}
                                         for r in rows]), location)
    scheduler.run_cli("partition", "add", "sevents_raw", "--period", "HOURLY",
                      f"dt={hour:%Y-%m-%d-%H}", "--restate")
    stale = json.loads(scheduler.run_cli("stale", "sevents", "--json", code=1))
    listed = stale["stale"]
    assert [(s["storage"], s["values"]) for s in listed] == [
        ("sevents_rollup", {"dt": f"{DAYS[0]:%Y-%m-%d}"})], stale
    assert f"{hour:%Y-%m-%d-%H}" in json.dumps(listed[0]["changed"])
    assert raw_totals(scheduler.data, DAYS[0]) != expected_totals(DAYS[0], DAYS[1])

    # where Airflow would queue runs forever, nothing is created
    scheduler.airflow("dags", "pause", "sched_rollup")
    refused = subprocess.run([str(VENV_BIN / "airflow-partitions"), *backfill_args("--restate")],
                             env=scheduler.services.env, cwd=scheduler.services.home,
                             capture_output=True, text=True, timeout=300, check=False)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "sched_rollup is paused" in refused.stderr and "--unpause" in refused.stderr
    scheduler.airflow("dags", "unpause", "sched_rollup")
    planned = scheduler.run_cli(*backfill_args("--restate", "--dry-run"))
    assert "stale: sevents_rollup DAILY 2015-01-30" in planned, planned
    assert "stage 1 backfill: sched_rollup 2015-01-30T00:00Z (1 run)" in planned, planned

    # the same from a DAG: PartitionBackfillOperator, through the REST API
    run_id = scheduler.trigger("sched_restate")
    scheduler.wait_state("sched_restate", run_id, "restate", {"success"}, timeout=540)
    report = scheduler.api.get(f"dags/sched_restate/dagRuns/{run_id}/taskInstances/restate/"
                               "xcomEntries/return_value")["value"]
    report = report if isinstance(report, dict) else json.loads(report)
    assert report["ok"] and [r["kind"] for r in report["plan"]["runs"]] == ["restate"]
    assert report["stages"] == [{"period": "DAILY", "backfills": [
        {"dag_id": "sched_rollup", "from": "2015-01-30T00:00:00+00:00",
         "to": "2015-01-30T00:00:00+00:00", "runs": 1}]}]
    assert json.loads(scheduler.run_cli("stale", "sevents", "--json"))["stale"] == []
    for day in DAYS:
        rollup = pq.read_table(scheduler.data / "rollup" / f"dt={day:%Y-%m-%d}").to_pylist()
        assert {r["region"]: (r["events"], r["amount_cents"]) for r in rollup} == \
            raw_totals(scheduler.data, day)


# -- the Partitions view -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ui(scheduler: Scheduler) -> ApiClient:
    """The api-server's client, with a small fact ``web`` (hours 05 to 07 missing)."""
    catalog = scheduler.catalog
    catalog.create_fact("web")
    catalog.create_storage("web", "web_raw", ["HOURLY"])
    catalog.create_storage("web", "web_daily", ["DAILY"], priority=5)
    catalog.register("web_raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}"} for h in range(24)
                                           if h not in (5, 6, 7)])
    return scheduler.api


def get(api: ApiClient, path: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(f"{api.base_url}{path}", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


PATHS = ["/partitions/", "/partitions/api/facts", "/partitions/api/facts/web",
         "/partitions/facts/web"]


@pytest.mark.parametrize("path", PATHS)
def test_every_route_needs_an_airflow_user(ui: ApiClient, path: str) -> None:
    assert get(ui, path)[0] == 401
    assert get(ui, path, token="not-a-jwt")[0] == 403
    assert get(ui, path, token=ui.token())[0] == 200


def test_the_plugin_is_registered_with_its_navigation_entry(ui: ApiClient) -> None:
    plugins = ui.get("plugins")["plugins"]
    [ours] = [p for p in plugins if p["name"] == "airflow_partitions"]
    assert ours["fastapi_apps"][0]["url_prefix"] == "/partitions"
    [view] = ours["external_views"]
    assert view["href"] == "/partitions/" and view["url_route"] == "partitions"
    assert view["destination"] == "nav" and view["nav_top_level"] is True


def test_the_json_the_page_is_drawn_from(ui: ApiClient, scheduler: Scheduler) -> None:
    status, body = get(ui, "/partitions/api/facts", token=ui.token())
    facts: list[dict[str, Any]] = json.loads(body)
    assert [f["name"] for f in facts] == sorted(f.name for f in scheduler.catalog.list_facts())
    assert "web" in [f["name"] for f in facts]
    status, body = get(ui, "/partitions/api/facts/web?start=2024-01-01T00:00:00Z"
                           "&end=2024-01-02T00:00:00Z", token=ui.token())
    assert status == 200, body
    view = json.loads(body)
    assert view["status"] == ("web [2024-01-01T00:00, 2024-01-02T00:00): 87.5% covered by 21 "
                              "partition(s); missing 2024-01-01T05:00/08:00: no HOURLY "
                              "2024-01-01-05..07 (3), no DAILY 2024-01-01")
    lanes = {(lane["storage"], lane["period"]): lane for lane in view["lanes"]}
    hourly = lanes[("web_raw", "HOURLY")]
    assert [(s["state"], s["first"], s["last"]) for s in hourly["stretches"]] == [
        ("registered", "2024-01-01-00", "2024-01-01-04"),
        ("missing", "2024-01-01-05", "2024-01-01-07"),
        ("registered", "2024-01-01-08", "2024-01-01-23"),
    ]
    assert lanes[("web_daily", "DAILY")]["missing"] == 1
    status, page = get(ui, "/partitions/facts/web", token=ui.token())
    assert "no HOURLY 2024-01-01-05..07 (3)" in page and "<svg" in page
    # links inside the page keep the mount point
    assert "href='/partitions/facts/web?" in page


def test_an_unknown_fact_is_404(ui: ApiClient) -> None:
    assert get(ui, "/partitions/api/facts/nope", token=ui.token())[0] == 404


def test_the_cookie_of_the_ui_is_enough(ui: ApiClient) -> None:
    """Inside the UI the page is an iframe: the browser sends the ``_token`` cookie only."""
    req = urllib.request.Request(f"{ui.base_url}/partitions/api/facts",
                                 headers={"Cookie": f"_token={ui.token()}"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        assert resp.status == 200


def test_the_api_server_log_is_clean(ui: ApiClient, scheduler: Scheduler) -> None:
    text = (scheduler.services.state_dir / "api-server.log").read_text(errors="replace")
    assert "Failed to import plugin" not in text, text[-3000:]


# -- acting from the Partitions view -----------------------------------------------------------

VIEW_RANGE = {"start": "2024-02-01T00:00:00+00:00", "end": "2024-02-05T00:00:00+00:00"}
ACTIONS = "/partitions/api/facts/vfact/actions"


def send(api: ApiClient, method: str, path: str, body: Any = None,
         token: str | None = None) -> tuple[int, Any]:
    """One JSON request to the api-server; the status and the decoded body."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{api.base_url}{path}", data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        text = exc.read().decode(errors="replace")
        try:
            return exc.code, json.loads(text)
        except ValueError:
            return exc.code, text


@pytest.fixture(scope="module")
def viewer(scheduler: Scheduler) -> ApiClient:
    """The simple auth manager's read-only user (``VIEW_USERS``)."""
    return ApiClient(scheduler.services.api_url, scheduler.services.home, user="viewer")


def view_backfills(scheduler: Scheduler) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = scheduler.api.get(
        "backfills", dag_id="sched_view_fill", limit=100)["backfills"]
    return sorted(found, key=lambda b: int(b["id"]))


def until_done(scheduler: Scheduler, action_id: str, want: str) -> dict[str, Any]:
    """Poll the action's progress as the page does (confirming again when the next backfill
    is due) until its state is ``want``; a failed stage fails the test, naming it."""
    token = scheduler.api.token()

    def check() -> dict[str, Any] | None:
        status, doc = send(scheduler.api, "GET", f"/partitions/api/actions/{action_id}",
                           token=token)
        assert status == 200, doc
        if doc["state"] == "failed":
            raise AssertionError(f"{doc['failure']}\n" + scheduler.failure_report(
                "sched_view_fill", {"dag_run_id": doc["stages"][0]["backfills"][0]
                                    ["run_links"][0]["run_id"]}))
        if doc["next_ready"]:
            send(scheduler.api, "POST", f"/partitions/api/actions/{action_id}/confirm", {},
                 token)
        return doc if doc["state"] == want else None

    return poll(f"action {action_id} to be {want}", check, timeout=480, every=2)


def test_the_views_actions_need_a_token_and_a_role_that_may_trigger_the_producer(
        scheduler: Scheduler, viewer: ApiClient) -> None:
    api = scheduler.api
    assert send(api, "POST", ACTIONS, VIEW_RANGE)[0] == 401
    assert send(api, "POST", ACTIONS, VIEW_RANGE, token="not-a-jwt")[0] == 403
    assert send(api, "POST", "/partitions/api/actions/00ff/confirm", {})[0] == 401
    # the viewer may see the plan (a read) ...
    status, plan = send(api, "POST", "/partitions/api/facts/vfact/plan", VIEW_RANGE,
                        token=viewer.token())
    assert status == 200, plan
    assert [(r["dag_id"], r["value"], r["kind"]) for r in plan["runs"]] == [
        ("sched_view_fill", "2024-02-02", "gap"), ("sched_view_fill", "2024-02-03", "gap")]
    assert plan["coverable_after"] is True
    # ... not act on it: refused by name, before anything reaches Airflow's backfills
    status, refused = send(api, "POST", ACTIONS, VIEW_RANGE, token=viewer.token())
    assert status == 403, refused
    assert "viewer may not trigger sched_view_fill" in refused["detail"], refused
    # and Airflow's own API, which the view forwards the user's token to, agrees
    status, _ = send(api, "POST", "/api/v2/backfills/dry_run", {
        "dag_id": "sched_view_fill", "from_date": "2024-02-02T00:00:00Z",
        "to_date": "2024-02-03T00:00:00Z"}, token=viewer.token())
    assert status == 403
    # inside the UI the page has only the _token cookie: it is the token forwarded to Airflow
    req = urllib.request.Request(f"{api.base_url}{ACTIONS}", method="POST",
                                 data=json.dumps(VIEW_RANGE).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Cookie": f"_token={api.token()}"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        assert json.loads(resp.read())["state"] == "planned"  # planned, nothing created
    assert view_backfills(scheduler) == []


def test_an_admin_fills_a_two_day_gap_from_the_view_and_a_double_submit_creates_one(
        scheduler: Scheduler) -> None:
    token = scheduler.api.token()
    status, action = send(scheduler.api, "POST", ACTIONS, VIEW_RANGE, token=token)
    assert status == 200, action
    assert action["state"] == "planned" and action["user"] == "admin"
    assert [(s["period"], [(b["dag_id"], b["start"], b["end"], b["runs"])
                           for b in s["backfills"]]) for s in action["stages"]] == [
        ("DAILY", [("sched_view_fill", "2024-02-02T00:00:00+00:00",
                    "2024-02-03T00:00:00+00:00", 2)])]
    assert view_backfills(scheduler) == []  # the confirmation step: nothing yet
    confirm = f"/partitions/api/actions/{action['action_id']}/confirm"
    results: list[tuple[int, Any]] = []
    threads = [threading.Thread(target=lambda: results.append(
        send(scheduler.api, "POST", confirm, {}, token))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [status for status, _ in results] == [200, 200], results
    assert sorted(doc["repeated"] for _, doc in results) == [False, True], results
    status, retried = send(scheduler.api, "POST", confirm, {}, token)  # a retried request
    assert status == 200 and retried["repeated"] is True
    [made] = view_backfills(scheduler)
    done = until_done(scheduler, action["action_id"], "coverable")
    [row] = done["stages"][0]["backfills"]
    assert row["backfill_id"] == made["id"] and row["state"] == "success"
    assert sorted((r["logical_date"][:10], r["state"]) for r in row["run_links"]) == [
        ("2024-02-02", "success"), ("2024-02-03", "success")]
    assert row["run_links"][0]["url"].startswith("/dags/sched_view_fill/runs/")
    assert "vfact [2024-02-01T00:00, 2024-02-05T00:00): 100.0% covered by 4 partition(s), " \
        "coverable" in done["status"], done["status"]
    assert len(view_backfills(scheduler)) == 1
    # who, which fact and range, which backfill: in Airflow's audit log
    logs = scheduler.api.get("eventLogs", event="partitions.fill", limit=100)["event_logs"]
    assert {log["owner"] for log in logs} == {"admin"}, logs
    extras = [json.loads(log["extra"]) for log in logs]
    created = [e for e in extras if e.get("backfill_id") == made["id"]]
    assert len(created) == 1 and created[0]["fact"] == "vfact", extras
    assert (created[0]["start"], created[0]["end"]) == (VIEW_RANGE["start"], VIEW_RANGE["end"])
    assert [log["dag_id"] for log in logs if json.loads(log["extra"]).get("backfill_id")] == [
        "sched_view_fill"]


def test_a_restate_from_the_view_reruns_exactly_the_stale_day(scheduler: Scheduler) -> None:
    token = scheduler.api.token()
    before = view_backfills(scheduler)
    assert len(before) == 1, "runs after the fill above"
    scheduler.catalog.register("vfact_raw", "HOURLY", {"dt": "2024-02-02-05"}, restate=True)
    status, plan = send(scheduler.api, "POST", "/partitions/api/facts/vfact/plan",
                        {**VIEW_RANGE, "stale": True}, token=token)
    assert status == 200, plan
    assert [(r["value"], r["kind"]) for r in plan["runs"]] == [("2024-02-02", "restate")]
    assert plan["stale"] == ["stale: vfact_daily DAILY 2024-02-02: input vfact_raw HOURLY "
                             "2024-02-02-05 restated"], plan["stale"]
    status, action = send(scheduler.api, "POST", ACTIONS, {**VIEW_RANGE, "kind": "restate"},
                          token=token)
    assert status == 200, action
    assert [(b["start"], b["end"], b["runs"]) for b in action["stages"][0]["backfills"]] == [
        ("2024-02-02T00:00:00+00:00", "2024-02-02T00:00:00+00:00", 1)]
    status, _ = send(scheduler.api, "POST",
                     f"/partitions/api/actions/{action['action_id']}/confirm", {}, token)
    assert status == 200
    done = until_done(scheduler, action["action_id"], "coverable")
    [row] = done["stages"][0]["backfills"]
    assert [r["logical_date"][:10] for r in row["run_links"]] == ["2024-02-02"]
    after = view_backfills(scheduler)
    assert [(b["from_date"][:10], b["to_date"][:10]) for b in after[len(before):]] == [
        ("2024-02-02", "2024-02-02")]
    assert scheduler.catalog.stale("vfact") == []
    logs = scheduler.api.get("eventLogs", event="partitions.restate", limit=100)["event_logs"]
    assert {log["owner"] for log in logs} == {"admin"}, logs
    extras = [json.loads(log["extra"]) for log in logs]
    assert sum(1 for e in extras if e.get("confirmed")) == 1, extras
    # one backfill, or a second one if Airflow lost the first (a locked SQLite database)
    made = [e["backfill_id"] for e in extras if "backfill_id" in e]
    assert row["backfill_id"] in made and 1 <= len(made) <= 2, extras


# -- the services under load and faults: last, so a restart cannot disturb the tests above ------


def services_recorded(scheduler: Scheduler) -> dict[str, ServiceRecord]:
    return {r.name: r for r in recorded(scheduler.services.state_dir)}


def trigger_through_api(scheduler: Scheduler, dag_id: str, run_id: str) -> None:
    """``POST /api/v2/dags/{id}/dagRuns``, as the UI's Trigger button does."""
    scheduler.api.call("POST", f"dags/{dag_id}/dagRuns",
                       {"dag_run_id": run_id, "logical_date": None})


def wait_runs(scheduler: Scheduler, runs: Sequence[tuple[str, str]], timeout: float) -> None:
    """Until every (DAG, run) succeeded; a failed one stops the wait with its report."""
    def check() -> bool | None:
        for dag_id, run_id in runs:
            run = scheduler.api.get(f"dags/{dag_id}/dagRuns/{run_id}")
            if run["state"] == "failed":
                raise AssertionError(scheduler.failure_report(dag_id, run))
        return all(scheduler.api.get(f"dags/{d}/dagRuns/{r}")["state"] == "success"
                   for d, r in runs) or None
    poll(f"{len(runs)} runs to succeed", check, timeout, every=2)


def supervised_report(scheduler: Scheduler) -> str:
    return log_tail(scheduler.services.state_dir / "supervisor.log", 40)


def test_a_burst_of_api_triggered_runs_and_cli_writes_leaves_every_service_up(
        scheduler: Scheduler) -> None:
    """A run of each of six DAGs triggered through the REST API all at once, two ``airflow`` CLI
    processes writing to the metadata DB beside them: every run finishes, and no service
    exited (none was started again)."""
    runs = [(f"sched_burst_{n}", f"burst_{n}") for n in range(BURST_DAGS)]
    errors: list[str] = []

    def attempt(what: str, call: Callable[[], object]) -> None:
        try:
            call()
        except (AssertionError, ApiError) as exc:
            errors.append(f"{what}: {exc}")

    threads = [threading.Thread(target=attempt, args=(
        f"trigger {run}", lambda d=dag, r=run: trigger_through_api(scheduler, d, r)))
        for dag, run in runs]
    threads += [threading.Thread(target=attempt, args=(
        f"cli {k}", lambda k=k: (scheduler.airflow("variables", "set", f"burst_{k}", str(k)),
                                 scheduler.airflow("dags", "unpause", f"sched_burst_{k}"))))
        for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == [], errors
    wait_runs(scheduler, runs, timeout=420)
    records = services_recorded(scheduler)
    for name in (*COMMANDS, FOLLOWER, POSTGRES):
        assert records[name].leader_alive() and records[name].restarts == 0, (
            name, log_tail(records[name].log), supervised_report(scheduler))


def test_postgresql_restarted_under_a_backfill_is_ridden_out_and_scheduling_continues(
        scheduler: Scheduler) -> None:
    """PostgreSQL stopped for 6 s and started again on its port while ``airflow-partitions
    backfill`` waits for its runs: the backfill says it waits for the metadata DB and
    finishes (the range coverable), every service runs again (the supervisor starts again any
    that exited), and a run triggered afterwards succeeds."""
    services = scheduler.services
    state, port = services.state_dir, services.postgres_port
    assert port is not None
    end = BURST_DAY0 + dt.timedelta(days=2)
    command = Command(scheduler, "burst_backfill", "backfill", "bfact", "--start",
                      BURST_DAY0.isoformat(), "--end", end.isoformat(), "--poll-interval", "1")
    try:
        poll("the backfill's creation", lambda: "created" in command.output.read_text() or None,
             180, every=0.5)
        before = services_recorded(scheduler)[POSTGRES]
        pid_file(state, POSTGRES).unlink()  # stopped by hand: the supervisor leaves it be
        assert stop_groups([before], grace=30) == [f"stopped {POSTGRES} (pid {before.pid})"]
        time.sleep(6)  # the outage
        respawn(state, POSTGRES, before.restarts)  # started again by hand, on its port
        postgres.wait_ready(services.ports.host, port, 60)
        output = command.wait(timeout=420)
    finally:
        if command.process.poll() is None:
            command.process.kill()
            command.process.wait(timeout=60)
    assert "Airflow's metadata DB is unreachable" in output, output[-3000:]
    assert "Airflow's metadata DB answers again" in output, output[-3000:]
    assert "done: " in output, output[-3000:]

    def every_service_running() -> bool | None:
        records = services_recorded(scheduler)
        return all(records[n].leader_alive() for n in (*COMMANDS, FOLLOWER)) or None
    poll("every service running again", every_service_running, 180)
    trigger_through_api(scheduler, "sched_burst_0", "after_restart")
    wait_runs(scheduler, [("sched_burst_0", "after_restart")], timeout=300)
    print(supervised_report(scheduler))
