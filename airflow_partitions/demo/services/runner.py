"""The four Airflow services of one installation: start them, wait until healthy, stop them.

* **api-server**: the UI, the REST API, and the execution API that every task process calls;
* **scheduler**: creates DAG runs and runs tasks (LocalExecutor: as its own child processes);
* **dag-processor**: parses the DAG files into the metadata DB (nothing runs without it);
* **triggerer**: runs deferred tasks' triggers (the deferrable coverage sensor waits there);

and one of the provider's: the **assets-follower** (``airflow-partitions assets follow``), which
announces coverage assets' windows for writes Airflow never sees, through the REST API as the
admin user. The admin's password is written into the simple auth manager's password file
before the api-server starts (it keeps a password it finds there), so the follower and every
task (the ``airflow_api_default`` connection the writing operators announce through) are given
it in their environment.

Each service is the leader of its own process group, recorded in ``<state dir>/<name>.pid``, so
:meth:`AirflowServices.stop` ends exactly what was started, children included (LocalExecutor
workers, task processes, ``spark-submit``). The log servers are not started: they bind every
interface, and the api-server reads the task logs from local files on one machine anyway.

The metadata DB is **PostgreSQL** (:mod:`.postgres`, the same server the cluster runs), a fifth
process group (``postgres``, data in ``<home>/postgres``), unless the caller's environment names
a database of its own (``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN``). Why not Airflow's sqlite
default: four services and every task write one file, and under a burst of triggered runs
sqlite's "database is locked" ended the scheduler, the triggerer and the dag-processor.

Once every service is healthy, :meth:`AirflowServices.supervise` starts the supervisor
(:mod:`.supervisor`), which starts an exited service again on the same command line and ports.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypedDict

from airflow_partitions.demo.services import postgres
from airflow_partitions.demo.services.api import (
    ADMIN,
    ApiClient,
    ApiError,
    HealthJson,
    ensure_admin_password,
)
from airflow_partitions.demo.services.environment import (
    VENV_BIN,
    ServicePorts,
    ServicePortsJson,
    api_settings,
    follower_argv,
    service_settings,
)
from airflow_partitions.demo.services.ports import free_port
from airflow_partitions.demo.services.processes import (
    ServiceRecord,
    ServicesFailed,
    pid_file,
    recorded,
    spawn_recorded,
    stop_groups,
    write_owner_only,
)
from airflow_partitions.demo.services.secrets import kept_secrets
from airflow_partitions.demo.services.supervisor import (
    DEFAULT_POLICY,
    SUPERVISOR,
    RestartPolicy,
    start_supervisor,
)

#: The services and their command lines (``--skip-serve-logs``: see the module docstring).
COMMANDS: dict[str, list[str]] = {
    "api-server": ["api-server"],
    "scheduler": ["scheduler", "--skip-serve-logs"],
    "dag-processor": ["dag-processor"],
    "triggerer": ["triggerer", "--skip-serve-logs"],
}
#: The provider's coverage-event follower, started after the Airflow services.
FOLLOWER = "assets-follower"
#: The metadata DB's part, stopped after the services that write to it.
POSTGRES = "postgres"
#: The heartbeats ``/api/v2/monitor/health`` reports, by service.
HEARTBEATS = {"scheduler": "scheduler", "dag-processor": "dag_processor",
              "triggerer": "triggerer"}
STATE_FILE = "services.json"
ENV_FILE = "env.sh"
#: Variables written to ``env.sh`` so the ``airflow`` CLI sees the same installation.
SHARED_PREFIXES = ("AIRFLOW", "PYSPARK_")


def env_script(env: Mapping[str, str]) -> str:
    """``env.sh``: the shared settings, and the venv's ``bin`` first on the caller's ``PATH``.

    Why ``PATH`` is extended when sourced rather than copied: the shell keeps its own ``PATH``
    (whatever it added since), and still finds this installation's ``airflow`` first.
    """
    exports = [f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items())
               if k.startswith(SHARED_PREFIXES)]
    path = f'export PATH={shlex.quote(str(VENV_BIN))}"${{PATH:+:$PATH}}"'
    return ("# source this to use the airflow CLI against these services\n"
            + "\n".join([*exports, path]) + "\n")


def log_tail(path: Path | str, lines: int = 30) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _instant(text: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(text) if text else None


class AirflowServices:
    """The services of the installation at ``home``, sharing ``env`` plus the service settings."""

    def __init__(self, home: Path, env: Mapping[str, str], ports: ServicePorts,
                 state_dir: Path | None = None, parallelism: int = 4,
                 postgres_port: int | None = None) -> None:
        """``postgres_port``: where the metadata DB listens (default a free port); unused when
        ``env`` names a database of its own."""
        self.home = home
        self.ports = ports
        self.state_dir = state_dir or home / "services"
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.env = {**env, **service_settings(ports, parallelism)}
        #: None when the caller's environment names the metadata DB.
        self.postgres_port: int | None = None
        if "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN" not in self.env:
            self.postgres_port = postgres_port or free_port(
                ports.host, frozenset({ports.api, ports.worker_logs, ports.trigger_logs}))
            self.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = postgres.sqlalchemy_url(
                ports.host, self.postgres_port, self.postgres_password)
        self.records: list[ServiceRecord] = []
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.started_at: dt.datetime | None = None

    @property
    def postgres_password(self) -> str:
        """The metadata DB's password, made once, kept owner-only in the state directory."""
        return kept_secrets(self.state_dir, ("postgres_password",))["postgres_password"]

    @property
    def api_url(self) -> str:
        return self.ports.api_url

    def client(self) -> ApiClient:
        return ApiClient(self.api_url, self.home)

    # -- start ---------------------------------------------------------------------------------

    def start(self, progress: Callable[[str], None] | None = None, timeout: float = 300) -> None:
        """The metadata DB (PostgreSQL ready, ``airflow db migrate``), then the four services
        and the follower; each pid file is written as soon as its process runs, so a start
        that fails half way can still be stopped."""
        say = progress or (lambda line: None)
        self.started_at = dt.datetime.now(dt.UTC)
        self.env.update(api_settings(self.api_url, ADMIN, ensure_admin_password(self.home)))
        self.write_state()
        if self.postgres_port is not None:
            self.start_postgres(say, timeout)
        self.migrate()
        say("airflow db migrate done")
        for name, args in COMMANDS.items():
            self._spawn(name, [str(VENV_BIN / "airflow"), *args])
        # it retries until the api-server answers, and follows the catalog the tasks use
        self._spawn(FOLLOWER, follower_argv())

    def start_postgres(self, say: Callable[[str], None], timeout: float = 300) -> None:
        """PostgreSQL on its port, its data in ``<home>/postgres`` (made once), the ``airflow``
        database in it."""
        assert self.postgres_port is not None
        host, port, password = self.ports.host, self.postgres_port, self.postgres_password
        pg = postgres.files(self.home / POSTGRES)
        if postgres.initdb(pg, password):
            say(f"initdb {pg.data}")
        self._spawn(POSTGRES, postgres.server_argv(pg, host, port), cwd=pg.home,
                    user=postgres.run_as(), stop_signal="SIGINT")
        postgres.wait_ready(host, port, timeout)
        postgres.create_database(host, port, password)
        say(f"PostgreSQL ready on {host}:{port} (the metadata DB)")

    def migrate(self) -> None:
        """``airflow db migrate`` (idempotent: seconds when the schema is current)."""
        done = subprocess.run([str(VENV_BIN / "airflow"), "db", "migrate"],  # noqa: S603
                              env=self.env, cwd=self.home, capture_output=True, text=True,
                              timeout=600, check=False)
        if done.returncode != 0:
            raise ServicesFailed("airflow db migrate failed:\n"
                                 f"{(done.stdout + done.stderr)[-3000:]}")

    def _spawn(self, name: str, argv: list[str], cwd: Path | None = None,
               user: int | None = None, stop_signal: str = "SIGTERM") -> None:
        proc, record = spawn_recorded(self.state_dir, name, argv, self.env, cwd or self.home,
                                      user=user, stop_signal=stop_signal)
        self.procs[name] = proc
        self.records.append(record)

    def supervise(self, policy: RestartPolicy = DEFAULT_POLICY) -> ServiceRecord:
        """Start the supervisor (:mod:`.supervisor`): from now on an exited service is started
        again on the same command line and ports."""
        return start_supervisor(self.state_dir, policy)

    def write_state(self) -> None:
        """``services.json`` (the ports, also for the next start) and ``env.sh``."""
        state = {"api_url": self.api_url, "host": self.ports.host, "ports": vars(self.ports),
                 "postgres": self.postgres_port, "home": str(self.home),
                 "started_at": self.started_at.isoformat() if self.started_at else None}
        (self.state_dir / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")
        # owner-only from the start: it may hold the caller's connection passwords
        write_owner_only(self.state_dir / ENV_FILE, env_script(self.env))

    def wait_healthy(self, timeout: float = 240, progress: Callable[[str], None] | None = None,
                     poll: float = 1.0) -> HealthJson:
        """Poll ``/api/v2/monitor/health`` until every heartbeat is fresh; fail fast on an exit."""
        deadline = time.monotonic() + timeout
        since = (self.started_at or dt.datetime.now(dt.UTC)) - dt.timedelta(seconds=5)
        last: HealthJson | str = "the api-server did not answer yet"
        reported: set[str] = set()
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                health = self.client().health()
            except ApiError as exc:
                last = str(exc)
            else:
                last = health
                ready = self._ready(health, since)
                for name in sorted(ready - reported):
                    if progress:
                        progress(name)
                reported |= ready
                if health.get("metadatabase", {}).get("status") == "healthy" and \
                        ready == set(COMMANDS):
                    return health
            time.sleep(poll)
        raise ServicesFailed(f"services not healthy after {timeout:.0f} s; last health: {last}")

    @staticmethod
    def _ready(health: HealthJson, since: dt.datetime) -> set[str]:
        ready = {"api-server"}
        for name, key in HEARTBEATS.items():
            part = health.get(key) or {}
            beat = _instant(part.get(f"latest_{key}_heartbeat"))
            if part.get("status") == "healthy" and beat is not None and beat >= since:
                ready.add(name)
        return ready

    def _check_alive(self) -> None:
        """Fail fast when a part exited before the supervisor watches over it."""
        for name, proc in self.procs.items():
            code = proc.poll()
            if code is not None:
                raise ServicesFailed(f"{name} exited with status {code}; the end of its log "
                                     f"({self.state_dir / f'{name}.log'}):\n"
                                     f"{log_tail(self.state_dir / f'{name}.log')}")

    def wait_for_dags(self, dag_ids: list[str], timeout: float = 180, poll: float = 1.0) -> None:
        """Wait until the dag-processor has serialised every DAG in ``dag_ids``."""
        client = self.client()
        missing = list(dag_ids)
        deadline = time.monotonic() + timeout
        while missing and time.monotonic() < deadline:
            self._check_alive()
            for dag_id in list(missing):
                try:
                    client.get(f"dags/{dag_id}")
                except ApiError as exc:
                    if exc.status != 404:
                        raise
                else:
                    missing.remove(dag_id)
            if missing:
                time.sleep(poll)
        if missing:
            errors = client.get("importErrors")
            raise ServicesFailed(f"DAGs {missing} not loaded after {timeout:.0f} s; "
                                 f"import errors: {errors}")

    # -- stop ----------------------------------------------------------------------------------

    def stop(self, grace: float = 30.0) -> list[str]:
        """Stop the services this object started (and reap them); see :func:`stop_recorded`."""
        done = stop_recorded(self.state_dir, grace)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        return done


def stop_recorded(state_dir: Path, grace: float = 30.0) -> list[str]:
    """Stop every recorded process group, then remove its pid file. Idempotent.

    The supervisor first (else it would start again what is being stopped), then the
    services (the api-server last of them: :func:`.processes.stop_groups`), PostgreSQL last
    (the services write to it until they end)."""
    records = recorded(state_dir)
    first = [r for r in records if r.name == SUPERVISOR]
    last = [r for r in records if r.name == POSTGRES]
    lines: list[str] = []
    for group in (first, [r for r in records if r not in first + last], last):
        lines += stop_groups(group, grace)
    for record in records:
        if not record.live_members():
            pid_file(state_dir, record.name).unlink(missing_ok=True)
    return lines


class ServicesStateJson(TypedDict, total=False):
    """The services' state file (:data:`STATE_FILE`), as read back: any key may be missing."""

    api_url: str
    host: str
    ports: ServicePortsJson
    postgres: int | None
    home: str
    started_at: str | None


def load_state(state_dir: Path) -> ServicesStateJson | None:
    try:
        doc: ServicesStateJson = json.loads((state_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return doc


def last_ports(state_dir: Path) -> tuple[ServicePorts | None, int | None]:
    """The services' ports and PostgreSQL's of the last start recorded (None: none usable)."""
    state: ServicesStateJson = load_state(state_dir) or {}
    try:
        ports = ServicePorts(**state["ports"])
    except (KeyError, TypeError):
        ports = None
    port = state.get("postgres")
    return ports, port if isinstance(port, int) and 0 < port < 65536 else None


def last_api_port(state_dir: Path) -> int | None:
    """The api-server port of the last start recorded in ``state_dir`` (None: no usable one)."""
    state: ServicesStateJson = load_state(state_dir) or {}
    ports = state.get("ports")
    port = ports.get("api") if isinstance(ports, dict) else None
    return port if isinstance(port, int) and 0 < port < 65536 else None
