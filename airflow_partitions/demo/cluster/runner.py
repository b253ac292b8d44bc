"""Start the cluster's parts in order, wait until each is ready, stop exactly them by pid.

Order, and why: PostgreSQL and Redis first (everything else needs them); the catalog's HBase
(HDFS, ZooKeeper, a master, two RegionServers, Thrift: :mod:`..hbase.distributed`) and the
Spark master and workers next. HBase's start, 20 to 40 s, runs in a thread beside
``airflow db migrate``, the connections going into the metadata DB, and the Airflow services
and Celery workers booting (none of them reads the catalog before a task runs); the example
fact is created once HBase answers. Stopping goes the other way: the Airflow processes (the
api-server last of them, as :func:`..services.processes.stop_groups` does), then Spark, HBase
stage by stage (:data:`..hbase.distributed.STOP_STAGES`), Redis and PostgreSQL.

Every part is recorded as a pid file in the state directory the moment it runs, so a start
that fails half way is stopped by ``make airflow-stop`` like a whole one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypedDict

from airflow_partitions.demo.cluster import broker, spark_standalone
from airflow_partitions.demo.cluster.layout import WORKERS, ClusterLayout
from airflow_partitions.demo.cluster.ports import ClusterPorts, ClusterPortsJson
from airflow_partitions.demo.cluster.settings import (
    cluster_environment,
    connections,
    shared_secrets,
    worker_environment,
)
from airflow_partitions.demo.hbase import distributed
from airflow_partitions.demo.hbase.distributed import DistributedHBase, DistributedLayout
from airflow_partitions.demo.layout import REPO
from airflow_partitions.demo.services import postgres
from airflow_partitions.demo.services.api import (
    ADMIN,
    ApiClient,
    ApiError,
    HealthJson,
    ensure_admin_password,
)
from airflow_partitions.demo.services.environment import VENV_BIN, api_settings, follower_argv
from airflow_partitions.demo.services.processes import (
    ServiceRecord,
    ServicesFailed,
    recorded,
    spawn_recorded,
    stop_groups,
)
from airflow_partitions.demo.services.runner import (
    COMMANDS,
    FOLLOWER,
    HEARTBEATS,
    env_script,
    log_tail,
)
from airflow_partitions.demo.services.supervisor import (
    DEFAULT_POLICY,
    SUPERVISOR,
    RestartPolicy,
    start_supervisor,
)

STATE_FILE = "cluster.json"
ENV_FILE = "env.sh"
#: Stopped first to last: Airflow (which needs everything below), Spark, then the stores.
AIRFLOW_PARTS = (FOLLOWER, *COMMANDS, *(f"celery-worker-{n}" for n in WORKERS))
SPARK_PARTS = (*(f"spark-worker-{n}" for n in WORKERS), "spark-master")
CATALOG_STAGES = distributed.STOP_STAGES
STORE_PARTS = ("redis", "postgres")
#: The supervisor first: else it would start again what the stop ends.
STOP_ORDER = ((SUPERVISOR,), AIRFLOW_PARTS, SPARK_PARTS, *CATALOG_STAGES, STORE_PARTS)
Progress = Callable[[str], None]


#: Started once the catalog holds the example facts (see :meth:`Cluster.start`).
DAG_PROCESSOR = "dag-processor"

class Cluster:
    """One cluster on one machine: its layout, ports and environment, and its processes."""

    def __init__(self, layout: ClusterLayout, ports: ClusterPorts,
                 base: Mapping[str, str] | None = None,
                 worker_extra: Mapping[str, str] | None = None) -> None:
        """``base``: the environment to start from (default ``os.environ``); ``worker_extra``:
        more for the Celery workers only (the tests' ``AIRFLOW_PARTITIONS_PAUSE_AT``)."""
        self.layout = layout
        self.worker_extra = dict(worker_extra or {})
        self.ports = ports
        for path in layout.directories():
            path.mkdir(parents=True, exist_ok=True)
        self.env = cluster_environment(layout, ports, dict(base) if base is not None else None)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.hbase = DistributedHBase(DistributedLayout(layout.catalog, layout.state),
                                      ports.hbase)
        self.started_at: dt.datetime | None = None

    @property
    def api_url(self) -> str:
        return self.ports.airflow.api_url

    def client(self) -> ApiClient:
        return ApiClient(self.api_url, self.layout.home)

    def log(self, name: str) -> Path:
        return self.layout.state / f"{name}.log"

    # -- start ---------------------------------------------------------------------------------

    def start(self, progress: Progress = print, timeout: float = 600) -> None:
        """Every part, in order, each ready before what needs it starts."""
        self.started_at = dt.datetime.now(dt.UTC)
        self.env.update(api_settings(self.api_url, ADMIN, ensure_admin_password(self.layout.home)))
        self._write_state()
        host, p = self.ports.host, self.ports
        keys = shared_secrets(self.layout.state)
        pg = postgres.files(self.layout.postgres)
        if postgres.initdb(pg, keys["postgres_password"]):
            progress(f"initdb {pg.data}")
        self._spawn("postgres", postgres.server_argv(pg, host, p.postgres), pg.home,
                    user=postgres.run_as(), stop_signal="SIGINT")
        redis_password = keys["redis_password"]
        self._spawn("redis", broker.server_argv(self.layout.redis, host, p.redis,
                                                redis_password),
                    self.layout.redis)
        catalog_failed: list[BaseException] = []
        catalog = threading.Thread(target=self._start_catalog, args=(progress, timeout,
                                                                     catalog_failed),
                                   name="start-hbase", daemon=True)
        catalog.start()
        try:
            (self.layout.spark_conf / "spark-defaults.conf").write_text(
                spark_standalone.defaults(self.layout.spark_events))
            self._spawn("spark-master", spark_standalone.master_argv(host, p.spark_master,
                                                                     p.spark_master_ui),
                        self.layout.spark)
            for n in WORKERS:
                self.start_spark_worker(n)
            postgres.wait_ready(host, p.postgres, timeout)
            postgres.create_database(host, p.postgres, keys["postgres_password"])
            progress(f"PostgreSQL ready on {host}:{p.postgres}")
            broker.wait_ready(host, p.redis, redis_password, timeout)
            progress(f"Redis ready on {host}:{p.redis}")
            self._airflow("db", "migrate")
            progress("airflow db migrate done (PostgreSQL)")
            self._import_connections()
            progress("connections partitions_default, spark_default stored in the metadata DB")
            # Airflow boots while HBase does; the dag-processor waits for the catalog: a DAG
            # scheduled on a coverage asset checks its fact when it is parsed, and a file that
            # failed to import is parsed again only after min_file_process_interval (30 s).
            for name, args in COMMANDS.items():
                if name != DAG_PROCESSOR:
                    self._spawn(name, [str(VENV_BIN / "airflow"), *args], self.layout.home)
            for n in WORKERS:
                self.start_celery_worker(n)
        finally:
            catalog.join()  # a failed start stops what was recorded: all of HBase's parts
        if catalog_failed:
            raise ServicesFailed(f"the catalog's HBase did not start: {catalog_failed[0]}")
        self._ensure_catalog()
        self._spawn(DAG_PROCESSOR, [str(VENV_BIN / "airflow"), *COMMANDS[DAG_PROCESSOR]],
                    self.layout.home)
        # once the catalog answers; named, as its connection is in the metadata DB only
        self._spawn(FOLLOWER, follower_argv("--store", p.catalog_url,
                                            "--data-root", str(self.layout.data)),
                    self.layout.home)
        spark_standalone.wait_ready(host, p.spark_master_ui, len(WORKERS), timeout)
        progress(f"Spark master {self.ports.spark_url} with {len(WORKERS)} workers")
        self.wait_airflow(timeout, progress)

    def _start_catalog(self, progress: Progress, timeout: float,
                       failed: list[BaseException]) -> None:
        """HBase's start, in its own thread: its failure is handed to the one that joins."""
        try:
            self.hbase.start(REPO, progress, timeout)
        except Exception as exc:  # ProvisionError, DistributedFailed, OSError, ...
            failed.append(exc)

    def restart_catalog_part(self, part: str, timeout: float = 300) -> None:
        """Start one part of the catalog's HBase again, on its ports, and wait until the
        catalog answers through Thrift (and a restarted RegionServer serves)."""
        self.hbase.start_part(part)
        self.hbase.wait_ready(time.monotonic() + timeout, [part])

    def start_spark_worker(self, n: int) -> None:
        ui = self.ports.spark_worker_uis[n - 1]
        self._spawn(f"spark-worker-{n}", spark_standalone.worker_argv(
            self.ports.spark_url, self.ports.host, ui, self.layout.spark_worker(n)),
            self.layout.spark_worker(n))

    def start_celery_worker(self, n: int, extra: Mapping[str, str] | None = None) -> None:
        """``airflow celery worker`` as ``worker-<n>@cluster`` in its own directory."""
        env = {**worker_environment(self.env, self.layout, n), **self.worker_extra,
               **(extra or {})}
        self._spawn(f"celery-worker-{n}", [
            str(VENV_BIN / "airflow"), "celery", "worker", "--celery-hostname",
            f"worker-{n}@cluster", "--concurrency", str(env["AIRFLOW__CELERY__WORKER_CONCURRENCY"]),
            "--skip-serve-logs"], self.layout.celery_worker(n), env=env)

    def _spawn(self, name: str, argv: Sequence[str], cwd: Path, *,
               env: Mapping[str, str] | None = None, user: int | None = None,
               stop_signal: str = "SIGTERM") -> None:
        proc, _ = spawn_recorded(self.layout.state, name, argv, env or self.env, cwd, user=user,
                                 stop_signal=stop_signal, log=self.log(name))
        self.procs[name] = proc

    def _airflow(self, *args: str, timeout: float = 600) -> str:
        done = subprocess.run([str(VENV_BIN / "airflow"), *args], env=self.env,  # noqa: S603
                              cwd=self.layout.home, capture_output=True, text=True,
                              timeout=timeout, check=False)
        if done.returncode != 0:
            raise ServicesFailed(f"airflow {' '.join(args)} failed:\n"
                                 f"{(done.stdout + done.stderr)[-3000:]}")
        return done.stdout

    def _import_connections(self) -> None:
        path = self.layout.state / "connections.json"
        path.write_text(json.dumps(connections(self.ports, self.layout), indent=2))
        self._airflow("connections", "import", "--overwrite", str(path))

    def _ensure_catalog(self) -> None:
        """The example fact in the catalog (idempotent), as ``make airflow`` does.

        In a fresh interpreter with the cluster's environment: the example's location templates
        are built from the data root when :mod:`airflow_partitions.demo.events` is imported,
        and this process may have imported it with another one already."""
        code = ("from airflow_partitions.catalog import Catalog\n"
                "from airflow_partitions.demo.events import ensure_catalog\n"
                f"with Catalog({self.ports.catalog_url!r}) as catalog:\n"
                "    ensure_catalog(catalog)\n")
        done = subprocess.run([sys.executable, "-c", code], env=self.env,  # noqa: S603
                              capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise ServicesFailed(f"creating the example fact failed:\n{done.stderr[-3000:]}")

    def _write_state(self) -> None:
        state = {"api_url": self.api_url, "ports": self.ports.to_json(),
                 "root": str(self.layout.root),
                 "started_at": self.started_at.isoformat() if self.started_at else None}
        (self.layout.state / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")
        script = self.layout.state / ENV_FILE
        with os.fdopen(os.open(script, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(env_script(self.env))
            f.writelines(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(self.env.items())
                         if k.startswith("SPARK_"))
        script.chmod(0o600)

    # -- readiness -----------------------------------------------------------------------------

    def wait_airflow(self, timeout: float, progress: Progress = print) -> None:
        """Until the api-server reports every heartbeat and both Celery workers said ready."""
        deadline = time.monotonic() + timeout
        since = (self.started_at or dt.datetime.now(dt.UTC)) - dt.timedelta(seconds=5)
        waiting = {*HEARTBEATS, *(f"celery-worker-{n}" for n in WORKERS)}
        last: HealthJson | str = "no answer yet"
        while waiting and time.monotonic() < deadline:
            self.check_alive()
            try:
                health = self.client().health()
            except ApiError as exc:
                last = str(exc)
                health = {}
            else:
                last = health
            for name in sorted(waiting):
                if self._ready(name, health, since):
                    waiting.discard(name)
                    progress(f"{name} ready")
            if waiting:
                time.sleep(1)
        if waiting:
            raise ServicesFailed(f"{sorted(waiting)} not ready after {timeout:.0f} s; "
                                 f"last health: {last}")

    def _ready(self, name: str, health: HealthJson, since: dt.datetime) -> bool:
        if name.startswith("celery-worker-"):
            return f"worker-{name.rsplit('-', 1)[1]}@cluster ready." in log_tail(self.log(name),
                                                                                 200)
        key = HEARTBEATS[name]
        part = health.get(key) or {}
        beat = part.get(f"latest_{key}_heartbeat")
        return (part.get("status") == "healthy" and beat is not None
                and dt.datetime.fromisoformat(beat) >= since)

    def check_alive(self) -> None:
        """Fail with the end of its log when a part this object started has exited."""
        for name, proc in {**self.procs, **self.hbase.procs}.items():
            code = proc.poll()
            if code is not None:
                raise ServicesFailed(f"{name} exited with status {code}; the end of its log "
                                     f"({self.log(name)}):\n{log_tail(self.log(name))}")

    def forget(self, name: str) -> None:
        """Stop watching ``name`` (the tests kill parts on purpose) and reap it."""
        self.hbase.forget(name)
        proc = self.procs.pop(name, None)
        if proc is not None:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass

    # -- stop ----------------------------------------------------------------------------------

    def supervise(self, policy: RestartPolicy = DEFAULT_POLICY) -> ServiceRecord:
        """Start the supervisor (:mod:`..services.supervisor`): from now on a part that exits
        is started again on the same command line and ports."""
        return start_supervisor(self.layout.state, policy)

    def stop(self, grace: float = 30.0) -> list[str]:
        done = stop_cluster(self.layout.state, grace)
        for name in [*self.procs, *self.hbase.procs]:
            self.forget(name)
        return done


def record_of(state: Path, name: str) -> ServiceRecord | None:
    return next((r for r in recorded(state) if r.name == name), None)


def stop_parts(state: Path, names: Sequence[str], grace: float = 30.0) -> list[str]:
    """Stop the recorded parts named, then remove their pid files. Idempotent."""
    records = [r for r in recorded(state) if r.name in names]
    lines = stop_groups(records, grace)
    for record in records:
        if not record.live_members():
            (state / f"{record.name}.pid").unlink(missing_ok=True)
    return lines


def stop_cluster(state: Path, grace: float = 30.0) -> list[str]:
    """Every recorded part, Airflow first, the stores last (:data:`STOP_ORDER`)."""
    lines: list[str] = []
    known = {name for group in STOP_ORDER for name in group}
    for group in STOP_ORDER:
        lines += stop_parts(state, group, grace)
    strays = [r.name for r in recorded(state) if r.name not in known]
    if strays:
        lines += stop_parts(state, strays, grace)
    return lines


class ClusterStateJson(TypedDict, total=False):
    """The cluster's state file (:data:`STATE_FILE`), as read back: any key may be missing."""

    api_url: str
    ports: ClusterPortsJson
    root: str
    started_at: str | None


def last_cluster_ports(state: Path) -> ClusterPorts | None:
    """The ports of the last start recorded in ``state`` (None: none usable)."""
    ports = (load_state(state) or {}).get("ports")
    try:
        return ClusterPorts.from_json(ports) if ports else None
    except (KeyError, TypeError, ValueError):
        return None


def load_state(state: Path) -> ClusterStateJson | None:
    try:
        doc: ClusterStateJson = json.loads((state / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return doc
