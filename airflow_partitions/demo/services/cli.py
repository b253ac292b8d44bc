"""``python -m airflow_partitions.demo.services start|stop|status`` (``make airflow``).

Runs the example pipeline under the real Airflow services on loopback, on the demo's Airflow
home, catalog and data root (``.demo/``, which ``make demo`` fills), and stops them again.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from airflow_partitions.demo.layout import DemoLayout
from airflow_partitions.demo.services.api import ADMIN, admin_password, password_file
from airflow_partitions.demo.services.environment import (
    override_notice,
    passed_through,
)
from airflow_partitions.demo.services.ports import (
    LOOPBACK,
    choose_ports,
    is_loopback,
    kept_port,
    pick_api_port,
    port_in_use,
)
from airflow_partitions.demo.services.processes import ServiceRecord, ServicesFailed, recorded
from airflow_partitions.demo.services.runner import (
    COMMANDS,
    ENV_FILE,
    FOLLOWER,
    POSTGRES,
    AirflowServices,
    ServicesStateJson,
    last_api_port,
    last_ports,
    load_state,
    stop_recorded,
)
from airflow_partitions.demo.services.secrets import SECRETS_FILE
from airflow_partitions.demo.services.supervisor import DEFAULT_POLICY, RestartPolicy


def prepare(layout: DemoLayout) -> None:
    """Create the example fact (idempotent); the metadata DB is migrated by the start."""
    layout.home.mkdir(parents=True, exist_ok=True)
    layout.data.mkdir(parents=True, exist_ok=True)
    os.environ["AIRFLOW_PARTITIONS_DATA_ROOT"] = str(layout.data)  # read when events is imported
    from airflow_partitions.catalog import AlreadyExists, Catalog
    from airflow_partitions.demo.events import ensure_catalog

    with Catalog(layout.store_url, data_root=str(layout.data)) as catalog:
        try:
            ensure_catalog(catalog)
        except AlreadyExists as exc:  # a catalog an older demo made
            raise ServicesFailed(str(exc)) from exc


def has_demo_data(layout: DemoLayout) -> bool:
    return (layout.data / "events" / "events_raw").is_dir()


def start(args: argparse.Namespace) -> int:
    layout = DemoLayout.at(args.root, args.dags)
    running = [r.name for r in recorded(layout.services) if r.live_members()]
    if running:
        state: ServicesStateJson = load_state(layout.services) or {}
        print(f"already running: {', '.join(running)} at {state.get('api_url', '?')}; "
              "stop them with `make airflow-stop`")
        return 1
    if not is_loopback(args.host):
        print(f"warning: the api-server will listen on {args.host}, not only on loopback")
    if args.api_port and port_in_use(args.host, args.api_port):
        print(f"port {args.api_port} is in use on {args.host}; pick another (AIRFLOW_API_PORT=)")
        return 1
    user = dict(os.environ)  # before prepare() sets the data root in it
    env = layout.environment()
    port = pick_api_port(args.host, args.api_port, last_api_port(layout.services))
    if port.moved:
        print(f"note: {port.moved}")
    prepare(layout)
    previous, postgres_port = last_ports(layout.services)
    ports = choose_ports(args.host, port.port, previous)
    taken = {ports.api, ports.worker_logs, ports.trigger_logs}
    services = AirflowServices(layout.home, env, ports, layout.services,
                               parallelism=args.parallelism,
                               postgres_port=kept_port(args.host, postgres_port, taken))
    kept = passed_through(user, services.env)
    if kept:
        print(f"your settings passed to the services: {', '.join(kept)}")
    notice = override_notice(user, services.env)
    if notice:
        print(f"note: {notice}")
    metadata = "PostgreSQL, " if services.postgres_port else ""
    print(f"starting {metadata}{', '.join([*COMMANDS, FOLLOWER])} (logs in {layout.services}) "
          "...", flush=True)
    try:
        services.start(progress=lambda line: print(f"  ✓ {line}", flush=True),
                       timeout=args.timeout)
        services.wait_healthy(args.timeout, progress=lambda name: print(f"  ✓ {name} healthy",
                                                                        flush=True))
        services.supervise(RestartPolicy(max_restarts=args.max_restarts))
    except (ServicesFailed, KeyboardInterrupt) as exc:
        print(f"failed: {exc}\nstopping what was started ...")
        for line in stop_recorded(layout.services):
            print(f"  {line}")
        return 1
    report(layout, services)
    return 0


def report(layout: DemoLayout, services: AirflowServices) -> None:
    password = password_file(layout.home)
    shown = "" if admin_password(layout.home) else " (not written yet)"
    print(f"""
Airflow {services.api_url}  (UI and REST API; only on {services.ports.host})
  user      {ADMIN}
  password  in {password}{shown}
  metadata  {metadata_db(services)}
  catalog   {layout.store_url}
  data root {layout.data}
  DAGs      {layout.dags} (new DAGs start paused)
  logs      {layout.services}/<service>.log; task logs in {layout.home}/logs
  restarts  an exited service is started again (supervisor.log; `status` counts restarts)
  view      {services.api_url}/partitions/  (the Partitions view; in the UI: its nav button)
  CLI       source {layout.services / ENV_FILE}   # then `airflow dags list`, ...
stop with: make airflow-stop""")
    if not has_demo_data(layout):
        print(f"\nno demo data under {layout.data} yet, so the sensors would wait: "
              "`make airflow-stop`, `make demo` (it fills the catalog and data these services "
              "use), then `make airflow` again")


def metadata_db(services: AirflowServices) -> str:
    if services.postgres_port is None:
        return "the database your AIRFLOW__DATABASE__SQL_ALCHEMY_CONN names"
    return (f"PostgreSQL {services.ports.host}:{services.postgres_port} "
            f"(data {services.home / POSTGRES}; password in {services.state_dir / SECRETS_FILE})")


def stop(args: argparse.Namespace) -> int:
    layout = DemoLayout.at(args.root, args.dags)
    return report_stopped(stop_recorded(layout.services, grace=args.grace), layout.services,
                          "pid files")


def report_stopped(lines: list[str], state_dir: Path, what: str) -> int:
    """Print what a stop did (or that ``state_dir`` recorded nothing: no ``what``); 0 when no
    recorded process is left alive, else 1 (shared by ``make airflow-stop``'s two stops)."""
    if not lines:
        print(f"nothing to stop (no {what} in {state_dir})")
    for line in lines:
        print(line)
    return 0 if not any(r.live_members() for r in recorded(state_dir)) else 1


def status_line(record: ServiceRecord, width: int) -> str:
    """``scheduler  pid 123  running  restarts 2  log ...`` (``gave up`` after the last);
    running: the process started last, whatever its group left behind."""
    alive = "running" if record.leader_alive() else "not running"
    restarts = f"restarts {record.restarts}" + (", gave up" if record.gave_up else "")
    return f"{record.name:{width}} pid {record.pid:<8} {alive:11}  {restarts:20} log {record.log}"


def status(args: argparse.Namespace) -> int:
    layout = DemoLayout.at(args.root, args.dags)
    records = recorded(layout.services)
    state: ServicesStateJson = load_state(layout.services) or {}
    for record in records:
        print(status_line(record, 15))
    if not records:
        print("no services recorded")
        return 1
    print(f"api: {state.get('api_url', '?')}")
    return 0 if all(r.live_members() for r in records) else 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m airflow_partitions.demo.services",
        description="Run the example pipeline under the real Airflow services (api-server, "
                    "scheduler, dag-processor, triggerer; LocalExecutor, the metadata DB on "
                    "PostgreSQL) on loopback, on the demo's catalog and data (make demo); a "
                    "supervisor starts an exited service again; stop them by process id.")
    p.add_argument("--root", type=Path, default=Path(".demo"),
                   help="the demo's root: Airflow home in ROOT/airflow (default .demo)")
    p.add_argument("--dags", type=Path, default=None, help="DAG folder (default dags_examples)")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("start", help="start the services and wait until they are healthy")
    s.add_argument("--host", default=LOOPBACK, help="where the api-server listens (127.0.0.1)")
    s.add_argument("--api-port", type=int, default=0,
                   help="the api-server's port (default 0: a free one)")
    s.add_argument("--parallelism", type=int, default=4, help="LocalExecutor task slots (4)")
    s.add_argument("--timeout", type=float, default=300,
                   help="seconds to wait until healthy (300)")
    s.add_argument("--max-restarts", type=int, default=DEFAULT_POLICY.max_restarts,
                   help="restarts of one service within 10 minutes before the supervisor "
                        f"gives up on it ({DEFAULT_POLICY.max_restarts})")
    s.set_defaults(func=start)
    t = sub.add_parser("stop", help="stop the recorded services (safe to run twice)")
    t.add_argument("--grace", type=float, default=30,
                   help="seconds after SIGTERM before SIGKILL (30)")
    t.set_defaults(func=stop)
    sub.add_parser("status", help="which recorded services are running, and how often each "
                                  "was started again").set_defaults(func=status)
    return p


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed subcommand; a start or stop that failed is exit 1 with its reason (the
    services' and the cluster's commands alike)."""
    try:
        code: int = args.func(args)
    except ServicesFailed as exc:
        print(f"failed: {exc}", file=sys.stderr)
        return 1
    return code


def main(argv: list[str] | None = None) -> int:
    return run_command(parser().parse_args(argv))
