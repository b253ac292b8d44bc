"""The cluster on one machine: ``make airflow-cluster``'s parts, with faults.

One cluster for the module (:mod:`airflow_partitions.demo.cluster`): PostgreSQL, Redis, the
four Airflow services with CeleryExecutor and two Celery workers, a Spark standalone master
with two workers, and the catalog on Apache HBase distributed over HDFS (NameNode, DataNode,
ZooKeeper, HMaster, two RegionServers, Thrift1: :mod:`airflow_partitions.demo.hbase
.distributed`), all on loopback.

* **The pipeline.** Three days of events: the last :data:`DAG_HOURS` hours are left to the
  ``events_hourly_ingest`` DAG, the rest written by one Spark job and registered (72 hourly
  runs would not fit the module's budget). ``airflow-partitions backfill --max-active-runs 3``
  then runs the pipeline as the DAGs do: the hourly ingest runs (write, register) on both
  Celery workers at once, then the three daily rollups at once, so registrations from both
  workers race on the shared catalog; the report over the three days equals the raw events.
  Celery's own records (its result backend, ``worker`` per task) show both workers did work;
  Spark's own (the event logs) show executors on both Spark workers ran tasks, and that every
  covered job got its manifest as the spark conf ``spark.airflow_partitions.manifest`` (its
  properties), not as ``--partitions-manifest`` (its command line).
* **A Celery worker killed mid-registration.** The first daily rollup's registration pauses
  (armed once the ingest's hours are registered) between writing its rows and advertising
  them (``AIRFLOW_PARTITIONS_PAUSE_AT``); that worker's whole process group is then killed
  with SIGKILL. The task is failed by the heartbeat timeout and its retry runs on the other
  worker; ``reconcile`` finds nothing to repair and the rollups' cover is verified.
* **The catalog's HBase, three faults**, each while a reschedule-mode and a deferrable sensor
  wait and a ``cluster_register`` run's registration is held between its rows and its
  timeline: the RegionServer holding the partition rows' table killed with SIGKILL (HBase
  moves every region to the other one: asked through Thrift, the dead one holds none; the
  held rows, only in its memory and its write-ahead log, are found afterwards); the
  Thrift1 server killed with SIGKILL and started again 20 s later on its port, while a second
  ``cluster_register`` run starts (its task's first call meets the outage); the HMaster
  stopped and started again. Each registration finishes in its one try (the operator rides
  the outage out), the sensors neither fail nor retry and fire once their hour is registered,
  and every hour registered during a fault is there once, whole (verified covers,
  ``reconcile``).
* **A Spark worker killed mid-task**: the report's reading tasks are held (a spark conf only
  this test sets, :mod:`airflow_partitions.spark.task_hold`) until the one on that worker's
  executor is running; the worker dies, the tasks are released. Spark's event log shows that
  task lost (``ExecutorLostFailure``) and run again on the other worker; the report is exact.

Every wait polls a condition with a generous deadline; nothing asserts on wall-clock time.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg2
import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.demo.cluster.layout import ClusterLayout
from airflow_partitions.demo.cluster.ports import choose_cluster_ports
from airflow_partitions.demo.cluster.runner import Cluster, record_of, stop_parts
from airflow_partitions.demo.cluster.settings import shared_secrets
from airflow_partitions.demo.hbase import distributed
from airflow_partitions.demo.layout import REPO
from airflow_partitions.demo.services import postgres
from airflow_partitions.demo.services.api import ApiClient
from airflow_partitions.demo.services.environment import VENV_BIN
from airflow_partitions.demo.services.runner import log_tail, recorded
from airflow_partitions.spark import (
    HOLD_CONF,
    MANIFEST_ARG,
    MANIFEST_CONF,
    RELEASE,
    SLICE_REGIONS,
    expected_slice_totals,
    job_path,
)
from tests.helpers import poll

# Generous: every wait below has its own deadline; on a loaded 2-core machine the pipeline
# alone has taken minutes.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

DAY0 = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)
DAYS = 3
END = DAY0 + dt.timedelta(days=DAYS)
#: The hour the outage's sensors wait for (registered only after the catalog is back).
LATE = END
RAW, ROLLUP, FACT = "events_raw", "events_rollup", "events"
PAUSE_STEP = "register:after-rows"
#: The hours the ``events_hourly_ingest`` DAG writes and registers (the last ones of the range),
#: through the backfill: each is a DAG run of three tasks and a Spark application.
DAG_HOURS = 3
DAG_FROM = END - dt.timedelta(hours=DAG_HOURS)
INGEST_DAG, ROLLUP_DAG = "events_hourly_ingest", "events_daily_rollup"

#: The HBase table of the catalog's partition rows: the store's table prefix, then the table.
PARTITION_ROWS_TABLE = b"partitions_partitions"
#: The hours ``cluster_register`` registers during the catalog faults: the first three held
#: one a fault, the last started during the Thrift server's outage (:data:`STARTED_IN_OUTAGE`);
#: an hour apart from :data:`LATE` so the sensors' hour stays missing until the test registers it.
FAULT_HOURS = [LATE + dt.timedelta(hours=2 + n) for n in range(4)]
STARTED_IN_OUTAGE = FAULT_HOURS[3]

REGISTER_DAG = '''
import pendulum
from airflow.sdk import DAG

from airflow_partitions.operators.partitions import RegisterPartitionsOperator

with DAG("cluster_register", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    RegisterPartitionsOperator(
        task_id="register", storage="events_raw", period="HOURLY",
        values={"range": ["{{ dag_run.conf['start'] }}", "{{ dag_run.conf['end'] }}"],
                "region": @REGIONS@})
'''

WAIT_DAG = '''
import pendulum
from airflow.sdk import DAG

from airflow_partitions.sensors.coverage import PartitionCoverageSensor

with DAG("cluster_waits", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    for task_id, kwargs in (("wait_reschedule", {"mode": "reschedule", "poke_interval": 3}),
                            ("wait_deferrable", {"deferrable": True, "poke_interval": 2})):
        PartitionCoverageSensor(task_id=task_id, fact="events", storages=["events_raw"],
                                start="@START@", end="@END@", timeout=900, **kwargs)
'''


def hourly(instant: dt.datetime) -> str:
    return instant.strftime("%Y-%m-%d-%H")


def iso(instant: dt.datetime) -> str:
    return instant.isoformat()


class Run:
    """The cluster of this module and what the tests share."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.layout = cluster.layout
        self.env = cluster.env
        self.api: ApiClient = cluster.client()
        self.started_in = 0.0
        self.timings: dict[str, float] = {}

    def catalog(self) -> Catalog:
        return Catalog(self.cluster.ports.catalog_url, data_root=str(self.layout.data))

    def run(self, argv: list[str], timeout: float = 900) -> str:
        done = subprocess.run(argv, env=self.env, cwd=self.layout.root, capture_output=True,
                              text=True, timeout=timeout, check=False)
        assert done.returncode == 0, f"{argv[:3]} failed:\n{done.stdout[-3000:]}\n" \
                                     f"{done.stderr[-3000:]}"
        return done.stdout

    def sql(self, query: str) -> list[tuple[Any, ...]]:
        p = self.cluster.ports
        password = shared_secrets(self.layout.state)["postgres_password"]
        conn = psycopg2.connect(host=p.host, port=p.postgres, user=postgres.USER,
                                password=password,
                                dbname=postgres.DATABASE)
        try:
            with conn.cursor() as cur:
                cur.execute(query)
                return list(cur.fetchall())
        finally:
            conn.close()

    def trigger(self, dag_id: str, conf: dict[str, Any] | None = None, *,
                unpause: bool = True) -> str:
        if unpause:  # through the REST API, as `airflow-partitions backfill` unpauses
            self.api.call("PATCH", f"dags/{dag_id}", {"is_paused": False})
        doc = self.api.call("POST", f"dags/{dag_id}/dagRuns",
                            {"logical_date": None, "conf": conf or {}})
        return str(doc["dag_run_id"])

    def run_state(self, dag_id: str, run_id: str) -> str:
        return str(self.api.get(f"dags/{dag_id}/dagRuns/{run_id}")["state"])

    def wait_run(self, dag_id: str, run_id: str, timeout: float = 600) -> None:
        def done() -> str | None:
            self.cluster.check_alive()
            state = self.run_state(dag_id, run_id)
            return state if state in ("success", "failed") else None

        state = poll(f"{dag_id} {run_id} to finish", done, timeout, every=2)
        assert state == "success", f"{dag_id} {run_id}: {state}; {self.task_states(dag_id, run_id)}"

    def task_states(self, dag_id: str, run_id: str) -> dict[str, Any]:
        doc = self.api.get(f"dags/{dag_id}/dagRuns/{run_id}/taskInstances")
        return {ti["task_id"]: (ti["state"], ti["try_number"], ti.get("hostname"))
                for ti in doc["task_instances"]}

    def tries(self, dag_id: str, run_id: str, task_id: str) -> list[dict[str, Any]]:
        doc = self.api.get(f"dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/tries")
        return sorted(doc["task_instances"], key=lambda t: t["try_number"])

    def kill_group(self, name: str) -> None:
        """SIGKILL a part's whole process group (a host dying), then forget it."""
        record = record_of(self.layout.state, name)
        assert record is not None and record.live_members(), f"{name} is not running"
        os.killpg(record.pid, signal.SIGKILL)
        poll(f"{name} to be gone", lambda: True if not record.live_members() else None, 60,
             every=0.2)
        self.cluster.forget(name)
        stop_parts(self.layout.state, [name])  # nothing left to signal: drops the pid file


@pytest.fixture(scope="module")
def cluster() -> Iterator[Run]:
    # Not under pytest's tmp_path: its root is 0700, and PostgreSQL runs as nobody under root.
    root = Path(tempfile.mkdtemp(prefix="airflow-partitions-cluster-"))
    root.chmod(0o755)
    dags = root / "dags"
    dags.mkdir()
    for dag_file in (REPO / "dags_examples").glob("*.py"):
        shutil.copy(dag_file, dags / dag_file.name)
    (dags / "cluster_waits.py").write_text(
        WAIT_DAG.replace("@START@", iso(LATE)).replace("@END@", iso(LATE + dt.timedelta(hours=1))))
    (dags / "cluster_register.py").write_text(REGISTER_DAG.replace("@REGIONS@",
                                                                   repr(list(SLICE_REGIONS))))
    layout = ClusterLayout.at(root / "cluster", dags)
    began = time.monotonic()
    cluster = Cluster(layout, choose_cluster_ports(),
                      worker_extra={"AIRFLOW_PARTITIONS_PAUSE_AT":
                                    f"{PAUSE_STEP}@{layout.pause_marker}"})
    run = Run(cluster)
    try:
        cluster.start(progress=lambda line: None)
        run.started_in = time.monotonic() - began
        yield run
    finally:
        lines = cluster.stop()
        left = [r.name for r in recorded(layout.state)]
        print("\n".join(lines), f"\ncluster timings: started in {run.started_in:.0f} s; "
              f"{run.timings}")
        assert not left, f"parts still recorded after stop: {left}"
        shutil.rmtree(root, ignore_errors=True)


def ingest_directly(run: Run) -> None:
    """[DAY0, DAG_FROM) of (hour, region) partitions: one Spark job on the standalone cluster,
    then one registration. The DAG's route would be one run (three tasks, a JVM) per hour."""
    location = str(run.layout.data / "events" / RAW / "HOURLY" / "dt={dt}" / "region={region}")
    run.run([str(VENV_BIN / "spark-submit"), "--master", run.cluster.ports.spark_url,
             "--name", "cluster_ingest", job_path("events_ingest"), "--start", iso(DAY0),
             "--end", iso(DAG_FROM), "--regions", ",".join(SLICE_REGIONS),
             "--location-template", location])
    hours = [DAY0 + dt.timedelta(hours=i)
             for i in range(int((DAG_FROM - DAY0).total_seconds()) // 3600)]
    with run.catalog() as catalog:
        catalog.register(RAW, "HOURLY", [{"dt": hourly(h), "region": r}
                                         for h in hours for r in SLICE_REGIONS])


def test_the_pipeline_on_the_cluster_survives_a_worker_killed_mid_registration(
        cluster: Run) -> None:
    run = cluster
    began = time.monotonic()
    ingest_directly(run)
    run.timings["ingest_directly"] = round(time.monotonic() - began)
    # Disarmed while the ingest DAG registers its hours: the pause point passes everyone
    # while its marker exists; removed (armed) once they are registered.
    run.layout.pause_marker.write_text(json.dumps({"step": "disarmed"}))
    backfill = subprocess.Popen(
        [str(VENV_BIN / "airflow-partitions"), "backfill", FACT, "--start", iso(DAY0),
         "--end", iso(END), "--max-active-runs", "3", "--unpause", "--poll-interval", "2"],
        env=run.env, cwd=run.layout.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        def hours_registered() -> bool | None:
            if backfill.poll() is not None:
                out = backfill.stdout.read() if backfill.stdout else ""
                raise AssertionError(f"the backfill ended before the rollups: {out[-4000:]}")
            with run.catalog() as catalog:
                cover = catalog.cover_with_partitions(_request(DAY0, END, RAW)).cover
            return True if not cover.missing else None

        poll("the ingest DAG's hours to be registered", hours_registered, 900, every=0.5)
        run.timings["dag_ingest"] = round(time.monotonic() - began)
        run.layout.pause_marker.unlink()
        # The first rollup registration on either worker pauses half way; that worker dies.
        marker = poll("a rollup's registration to pause",
                      lambda: _read_json(run.layout.pause_marker), 900, every=0.2)
        assert marker["step"] == PAUSE_STEP
        victim = int(str(marker["host"]).removeprefix("worker-"))
        run.kill_group(f"celery-worker-{victim}")
        out, _ = backfill.communicate(timeout=900)
    finally:
        if backfill.poll() is None:
            backfill.kill()
            backfill.wait()
    assert backfill.returncode == 0, out[-4000:]
    run.timings["backfill"] = round(time.monotonic() - began)
    survivor = 3 - victim

    # The hours through the DAG: one run per hour, their tasks on both workers at once.
    ingest_runs = run.api.get(f"dags/{INGEST_DAG}/dagRuns")["dag_runs"]
    assert sorted(r["logical_date"][:13] for r in ingest_runs) == [
        (DAG_FROM + dt.timedelta(hours=i)).isoformat()[:13] for i in range(DAG_HOURS)]
    assert all(r["state"] == "success" for r in ingest_runs), ingest_runs
    spans = [(ti["hostname"], _instant(ti["start_date"]), _instant(ti["end_date"]))
             for r in ingest_runs
             for ti in run.api.get(f"dags/{INGEST_DAG}/dagRuns/{r['dag_run_id']}"
                                   "/taskInstances")["task_instances"]]
    assert {host for host, _, _ in spans} == {"worker-1", "worker-2"}, spans
    assert any(a[0] != b[0] and a[1] < b[2] and b[1] < a[2] for a in spans for b in spans), \
        f"no two ingest tasks ran at once on different workers: {spans}"

    # The killed task's retry ran on the other worker (Airflow's record of each try).
    runs = run.api.get(f"dags/{ROLLUP_DAG}/dagRuns")["dag_runs"]
    assert len(runs) == DAYS
    retried = []
    for dag_run in runs:
        assert dag_run["state"] == "success"
        tries = run.tries(ROLLUP_DAG, dag_run["dag_run_id"], "register_day")
        if len(tries) > 1:
            retried.append(tries)
    assert retried, "no register_day was retried after its worker was killed"
    for tries in retried:
        assert tries[0]["hostname"] == f"worker-{victim}"
        assert tries[-1]["hostname"] == f"worker-{survivor}"
        assert tries[-1]["state"] == "success"

    # Celery's own record: both workers ran tasks (the result backend keeps the worker).
    workers = dict(run.sql("SELECT worker, count(*) FROM celery_taskmeta GROUP BY worker"))
    assert {"worker-1@cluster", "worker-2@cluster"} <= set(workers), workers

    # Spark's own record: the hours' applications ran, and every rollup got its manifest as
    # the spark conf (its properties), not on its command line.
    apps = _event_logs(run)
    assert sum("--name events_ingest " in a["command"] for a in apps.values()) >= DAG_HOURS
    rollups = [a for a in apps.values() if f"--name {ROLLUP_DAG} " in a["command"]]
    assert len(rollups) >= DAYS, [a["command"] for a in apps.values()]
    assert_manifest_by_conf(rollups)

    assert_nothing_lost_or_falsely_advertised(run)

    # Restore the cluster for the next tests.
    run.cluster.start_celery_worker(victim)
    poll(f"worker-{victim} to be ready again",
         lambda: True if f"worker-{victim}@cluster ready." in log_tail(
             run.cluster.log(f"celery-worker-{victim}"), 400) else None, 300)


def test_catalog_faults_lose_nothing_while_sensors_wait_and_a_registration_runs(
        cluster: Run) -> None:
    """Three faults of the catalog's HBase, one after the other, each while a reschedule-mode
    and a deferrable sensor wait for :data:`LATE` and a ``cluster_register`` run's registration
    is held between writing its rows and advertising them: the RegionServer holding the
    partition rows' table killed with SIGKILL, the Thrift1 server killed with SIGKILL and
    started again after 20 s (meanwhile a second registration starts and meets the outage
    from its first call), the HMaster stopped and started again."""
    run = cluster
    hbase = run.cluster.hbase
    run_id = run.trigger("cluster_waits")

    def waiting() -> dict[str, Any] | None:
        states = run.task_states("cluster_waits", run_id)
        ok = (states.get("wait_reschedule", ("",))[0] == "up_for_reschedule"
              and states.get("wait_deferrable", ("",))[0] == "deferred")
        return states if ok else None

    poll("both sensors to wait", waiting, 600)
    tables = catalog_tables(run)

    # Each fault lands while the registration is held, and lets it go on (``release``) while
    # the fault lasts, so that its remaining calls meet it.
    def kill_regionserver(release: Callable[[], None]) -> None:
        # The one holding the partition rows' table: the held registration's rows are in its
        # memory and its write-ahead log only, so finding them afterwards proves the replay.
        rows = hbase.region_servers([PARTITION_ROWS_TABLE])
        victim = max(rows, key=lambda part: rows[part])
        assert rows[victim] > 0, rows
        held = hbase.region_servers(tables)
        began = time.monotonic()
        run.kill_group(victim)
        release()

        def all_moved() -> dict[str, int] | None:
            """HBase's own answer: every region of the catalog on the other RegionServer."""
            try:
                now = hbase.region_servers(tables)
            except Exception:
                return None
            return now if now[victim] == 0 else None

        moved = poll("the dead RegionServer's regions to move", all_moved, 300, every=0.5)
        assert sum(moved.values()) == sum(held.values()), (held, moved)
        run.timings["regions_moved_s"] = round(time.monotonic() - began, 1)

    def kill_thrift(release: Callable[[], None]) -> None:
        run.kill_group(distributed.THRIFT)
        release()
        began = time.monotonic()
        # A registration that starts while the catalog is down: no run would hold (disarmed).
        started.append(run.trigger("cluster_register", {
            "start": hourly(STARTED_IN_OUTAGE),
            "end": hourly(STARTED_IN_OUTAGE + dt.timedelta(hours=1))}, unpause=False))

        # The catalog stays down until that task has met the outage (its log says so), and
        # for 20 s at least.
        poll("the registration started during the outage to meet it",
             lambda: True if "partition catalog unreachable while trying to register" in
             task_log(run, "cluster_register", started[0]) else None, 300, every=0.5)
        time.sleep(max(0.0, 20 - (time.monotonic() - began)))  # the fault, not a limit
        run.cluster.restart_catalog_part(distributed.THRIFT)

    def restart_master(release: Callable[[], None]) -> None:
        stop_parts(run.layout.state, [distributed.MASTER])
        run.cluster.forget(distributed.MASTER)
        release()
        run.cluster.restart_catalog_part(distributed.MASTER)

    started: list[str] = []  # the run kill_thrift starts during its outage
    registered: list[dt.datetime] = []
    for n, (name, fault) in enumerate((("regionserver", kill_regionserver),
                                       ("thrift", kill_thrift), ("master", restart_master))):
        began = time.monotonic()
        hour = FAULT_HOURS[n]
        run.layout.pause_marker.unlink(missing_ok=True)  # armed: the next registration holds
        reg_id = run.trigger("cluster_register", {"start": hourly(hour),
                                                  "end": hourly(hour + dt.timedelta(hours=1))})
        marker = poll(f"the registration of {hourly(hour)} to hold",
                      lambda: _read_json(run.layout.pause_marker), 600, every=0.2)
        assert marker["step"] == PAUSE_STEP
        fault(lambda: release_and_disarm(run))
        run.wait_run("cluster_register", reg_id)
        tries = run.tries("cluster_register", reg_id, "register")
        assert [t["state"] for t in tries] == ["success"], tries  # rode it out within one try
        registered.append(hour)
        if name == "thrift":
            log = task_log(run, "cluster_register", reg_id)
            assert "partition catalog unreachable while trying to register" in log, log[-3000:]
            # The run that started during the outage (and met it, kill_thrift saw to that):
            # its one try waited it out and registered.
            run.wait_run("cluster_register", started[0])
            tries = run.tries("cluster_register", started[0], "register")
            assert [t["state"] for t in tries] == ["success"], tries
            registered.append(STARTED_IN_OUTAGE)
        states = run.task_states("cluster_waits", run_id)
        assert states["wait_reschedule"][0] in ("up_for_reschedule", "running", "queued",
                                                "scheduled"), states
        assert states["wait_deferrable"][0] in ("deferred", "running", "queued",
                                                "scheduled"), states
        assert_nothing_lost_or_falsely_advertised(run, fault_hours=registered)
        run.timings[f"fault_{name}"] = round(time.monotonic() - began)

    with run.catalog() as catalog:
        catalog.register(RAW, "HOURLY", [{"dt": hourly(LATE), "region": r}
                                         for r in SLICE_REGIONS])
    run.wait_run("cluster_waits", run_id)
    for task_id in ("wait_reschedule", "wait_deferrable"):
        tries = run.tries("cluster_waits", run_id, task_id)
        assert [t["state"] for t in tries] == ["success"], tries  # no failed try, no retry
    logs = "".join(p.read_text(errors="replace")
                   for p in run.layout.logs.rglob("*") if p.is_file()
                   and ("cluster_waits" in str(p) or "cluster_register" in str(p)))
    assert "partition catalog unreachable" in logs
    assert_nothing_lost_or_falsely_advertised(run, raw_end=LATE + dt.timedelta(hours=1))


def test_a_spark_worker_killed_mid_task_loses_nothing(cluster: Run) -> None:
    run = cluster
    began = time.monotonic()
    output = "cluster_report.json"
    victim = 2
    hold = run.layout.root / "spark-hold"
    hold.mkdir()
    defaults = run.layout.spark_conf / "spark-defaults.conf"
    before = defaults.read_text()
    # Only the report runs now: its reading tasks wait for the release (task_hold).
    defaults.write_text(before + f"{HOLD_CONF} {hold}\n")
    try:
        run_id = run.trigger("events_report", {"start": iso(DAY0), "end": iso(END),
                                               "output": output})

        def held_on_victim() -> dict[str, Any] | None:
            for path in hold.glob("held-*.json"):
                doc = _read_json(path)
                if doc is not None and _worker_of(run, doc) == victim:
                    return doc
            return None

        held = poll(f"a report task to be held on spark-worker-{victim}'s executor",
                    held_on_victim, 500, every=0.1)
        run.kill_group(f"spark-worker-{victim}")
        (hold / RELEASE).touch()
        run.wait_run("events_report", run_id)
    finally:
        defaults.write_text(before)
    run.timings["report"] = round(time.monotonic() - began)
    report = json.loads((run.layout.data / "reports" / output).read_text())
    got = {r: (t["events"], t["amount_cents"]) for r, t in report["totals"].items()}
    assert got == expected_slice_totals(DAY0, END, SLICE_REGIONS)
    assert report["partitions_read"] == {"DAILY": DAYS}

    # Spark's own records: executors on both workers ran tasks over the whole test; in the
    # report's application a task was lost with the killed worker's executor and ran again,
    # successfully, on an executor of the other worker.
    apps = _event_logs(run)
    by_worker: dict[int, int] = {}
    for app in apps.values():
        for _, _, executor in app["succeeded"]:
            worker = app["executor_worker"].get(executor)
            if worker is not None:
                by_worker[worker] = by_worker.get(worker, 0) + 1
    assert by_worker.get(1, 0) > 0 and by_worker.get(2, 0) > 0, by_worker
    report_app = apps[_app_of(held)]
    assert "--name events_report " in report_app["command"], report_app["command"]
    lost = [(stage, index) for stage, index, executor, reason in report_app["failed"]
            if reason == "ExecutorLostFailure"
            and report_app["executor_worker"].get(executor) == victim]
    assert lost, report_app["failed"]
    for stage, index in lost:
        assert any((s, i) == (stage, index) and report_app["executor_worker"].get(e) != victim
                   for s, i, e in report_app["succeeded"]), (stage, index, report_app)
    victims = {e for e, w in report_app["executor_worker"].items() if w == victim}
    assert victims and victims <= report_app["removed"], report_app
    assert_manifest_by_conf([report_app])
    assert report_app["properties"].get(HOLD_CONF) == str(hold)
    assert_nothing_lost_or_falsely_advertised(run, raw_end=LATE + dt.timedelta(hours=1))
    run.cluster.start_spark_worker(victim)


# -- helpers -----------------------------------------------------------------------------------


def assert_nothing_lost_or_falsely_advertised(
        run: Run, raw_end: dt.datetime = END,
        fault_hours: list[dt.datetime] | None = None) -> None:
    """``reconcile`` finds both storages as their rows say, and the verified covers are whole:
    every raw hour and every daily rollup registered, nothing more; past ``raw_end``, exactly
    the ``fault_hours`` registered during the catalog faults (default: all or none of them)."""
    with run.catalog() as catalog:
        for storage in (RAW, ROLLUP):
            report = catalog.reconcile(storage)
            assert report.consistent, report.to_json()
        rollups = catalog.cover_with_partitions(_request(DAY0, END, ROLLUP))
        assert not rollups.cover.missing
        assert [dict(p.values)["dt"] for p in rollups.partitions] == [
            (DAY0 + dt.timedelta(days=i)).strftime("%Y-%m-%d") for i in range(DAYS)]
        raw = catalog.cover_with_partitions(_request(DAY0, raw_end, RAW))
        assert not raw.cover.missing
        hours = int((raw_end - DAY0).total_seconds()) // 3600
        assert len(raw.partitions) == hours * len(SLICE_REGIONS)
        after = catalog.cover_with_partitions(_request(raw_end, raw_end + dt.timedelta(hours=1),
                                                       RAW))
        assert after.cover.missing and not after.partitions  # nothing made up past the data
        listed = [(p["dt"], p["region"]) for p in
                  (dict(q.values) for q in catalog.list_partitions(RAW))
                  if p["dt"] >= hourly(raw_end)]
        registered = set(listed)
        assert len(listed) == len(registered), listed  # none listed twice
        faults = {(hourly(h), r) for h in FAULT_HOURS for r in SLICE_REGIONS}
        expected = [faults, set()] if fault_hours is None else [
            {(hourly(h), r) for h in fault_hours for r in SLICE_REGIONS}]
        assert registered in expected, registered  # each fault's hour, whole, once
        if registered:
            for hour in (FAULT_HOURS if fault_hours is None else fault_hours):
                held = catalog.cover_with_partitions(
                    _request(hour, hour + dt.timedelta(hours=1), RAW))
                assert not held.cover.missing and len(held.partitions) == len(SLICE_REGIONS)


def release_and_disarm(run: Run) -> None:
    """Let the held registration go on (its marker removed), then disarm the pause point (a
    marker present again) so that registering again, after an error, does not hold."""
    run.layout.pause_marker.unlink()
    time.sleep(0.5)  # the held process looks every 0.1 s
    run.layout.pause_marker.write_text(json.dumps({"step": "disarmed"}))


def task_log(run: Run, dag_id: str, run_id: str) -> str:
    """Every log file of one DAG run's tasks (the shared task log folder)."""
    return "".join(p.read_text(errors="replace")
                   for p in (run.layout.logs / f"dag_id={dag_id}" / f"run_id={run_id}").rglob("*")
                   if p.is_file())


def catalog_tables(run: Run) -> list[bytes]:
    """The catalog's HBase tables (the store's table prefix), by HBase's own list."""
    import happybase

    conn = happybase.Connection("127.0.0.1", run.cluster.ports.hbase.thrift, timeout=30_000)
    try:
        tables = [t for t in conn.tables() if t.startswith(b"partitions_")]
    finally:
        conn.close()
    assert tables
    return tables


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc


def _request(start: dt.datetime, end: dt.datetime, storage: str) -> Any:
    from airflow_partitions.cover import CoverRequest

    return CoverRequest.of(FACT, start, end, storages=[storage])


def assert_manifest_by_conf(apps: list[dict[str, Any]]) -> None:
    """Each covered application got its manifest as the spark conf (Spark's record of its
    properties), and no ``--partitions-manifest`` on its command line (``sun.java.command``)."""
    for app in apps:
        path = app["properties"].get(MANIFEST_CONF, "")
        assert path.endswith(".manifest.json"), (app["name"], app["properties"])
        assert app["command"] and MANIFEST_ARG not in app["command"], app["command"]


def _worker_of(run: Run, held: dict[str, Any]) -> int | None:
    """The Spark worker whose executor ran a held task: its working directory is under the
    worker's, and its log URL on the worker's UI port."""
    for n in (1, 2):
        if Path(held["cwd"]).is_relative_to(run.layout.spark_worker(n)):
            return n
    url = str(held.get("log_url", ""))
    if "//" in url:
        port = int(url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        ports = run.cluster.ports.spark_worker_uis
        return ports.index(port) + 1 if port in ports else None
    return None


def _app_of(held: dict[str, Any]) -> str:
    """The application of a held task: its log URL's ``appId``, else the ``<app id>`` of its
    working directory ``work/<app id>/<executor id>``."""
    url = str(held.get("log_url", ""))
    if "appId=" in url:
        return url.split("appId=", 1)[1].split("&", 1)[0]
    return Path(held["cwd"]).parent.name


def _event_logs(run: Run) -> dict[str, dict[str, Any]]:
    """Per application (Spark's event log): its name, properties and driver command line,
    which worker each executor ran on (from the executor's log URL, on that worker's UI port),
    successful task attempts ``(stage, index, executor)``, failed ones ``(stage, index,
    executor, reason)``, and the executors removed while it ran."""
    ui_worker = {port: n + 1 for n, port in enumerate(run.cluster.ports.spark_worker_uis)}
    apps: dict[str, dict[str, Any]] = {}
    for path in run.layout.spark_events.iterdir():
        app: dict[str, Any] = {"name": None, "properties": {}, "command": "",
                               "executor_worker": {}, "succeeded": [], "failed": [],
                               "removed": set()}
        for line in path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:  # the last line of a log still being written
                continue
            kind = event.get("Event")
            if kind == "SparkListenerApplicationStart":
                app["name"] = event["App Name"]
            elif kind == "SparkListenerEnvironmentUpdate":
                app["properties"] = dict(event.get("Spark Properties") or {})
                app["command"] = str(dict(event.get("System Properties") or {}).get(
                    "sun.java.command", ""))
            elif kind == "SparkListenerExecutorAdded":
                url = str(event["Executor Info"]["Log Urls"].get("stderr", ""))
                port = int(url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
                app["executor_worker"][event["Executor ID"]] = ui_worker.get(port)
            elif kind == "SparkListenerExecutorRemoved":
                app["removed"].add(event["Executor ID"])
            elif kind == "SparkListenerTaskEnd":
                info, reason = event["Task Info"], event["Task End Reason"]["Reason"]
                task = (event["Stage ID"], info["Index"], info["Executor ID"])
                if reason == "Success":
                    app["succeeded"].append(task)
                else:
                    app["failed"].append((*task, reason))
        apps[path.name.removesuffix(".inprogress")] = app
    return apps
