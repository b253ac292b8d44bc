"""``python -m airflow_partitions.demo.cluster start|stop|status`` (``make airflow-cluster``).

Starts the cluster on one machine under ``--root`` (``.cluster/``): PostgreSQL, Redis, the
catalog on Apache HBase over HDFS (NameNode, DataNode, ZooKeeper, master, two RegionServers,
Thrift1), a Spark standalone master and two workers, the four Airflow services and two Celery
workers, all on loopback; prints where everything is; ``stop`` ends exactly those.
"""

from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path

from airflow_partitions.demo.cluster.layout import WORKERS, ClusterLayout
from airflow_partitions.demo.cluster.ports import choose_cluster_ports
from airflow_partitions.demo.cluster.runner import (
    ENV_FILE,
    STOP_ORDER,
    Cluster,
    ClusterStateJson,
    last_cluster_ports,
    load_state,
    stop_cluster,
)
from airflow_partitions.demo.services.api import ADMIN, password_file
from airflow_partitions.demo.services.cli import report_stopped, run_command, status_line
from airflow_partitions.demo.services.processes import ServicesFailed, recorded
from airflow_partitions.demo.services.supervisor import DEFAULT_POLICY, RestartPolicy


def start(args: argparse.Namespace) -> int:
    layout = ClusterLayout.at(args.root, args.dags)
    running = [r.name for r in recorded(layout.state) if r.live_members()]
    if running:
        print(f"already running: {', '.join(running)}; stop them with `make airflow-stop`")
        return 1
    began = time.monotonic()
    cluster = Cluster(layout, choose_cluster_ports(args.api_port,
                                                   previous=last_cluster_ports(layout.state)))
    print(f"starting the cluster under {layout.root} (logs in {layout.state}) ...", flush=True)
    try:
        cluster.start(progress=lambda line: print(f"  ✓ {line}", flush=True),
                      timeout=args.timeout)
        cluster.supervise(RestartPolicy(max_restarts=args.max_restarts))
    except (ServicesFailed, KeyboardInterrupt) as exc:
        print(f"failed: {exc}\nstopping what was started ...")
        for line in stop_cluster(layout.state, args.grace):
            print(f"  {line}")
        return 1
    report(cluster, time.monotonic() - began)
    return 0


def report(cluster: Cluster, seconds: float) -> None:
    layout, p = cluster.layout, cluster.ports
    workers = "\n".join(
        f"  celery    worker-{n}@cluster in {layout.celery_worker(n)}" for n in WORKERS)
    spark_workers = ", ".join(f"http://{p.host}:{ui}" for ui in p.spark_worker_uis)
    h = p.hbase
    regionservers = ", ".join(f":{port}" for port in h.regionservers)
    print(f"""
ready in {seconds:.0f} s: Airflow {cluster.api_url}  (UI and REST API; everything on {p.host})
  user      {ADMIN}, password in {password_file(layout.home)}
  metadata  PostgreSQL {p.host}:{p.postgres} (log {cluster.log("postgres")})
  broker    Redis {p.host}:{p.redis}
{workers}
  spark     {p.spark_url}  (master UI http://{p.host}:{p.spark_master_ui}; workers {spark_workers})
  catalog   {p.catalog_url}  (connection partitions_default in the metadata DB)
  hbase     Apache HBase on HDFS: NameNode :{h.namenode}, ZooKeeper :{h.zookeeper}, master \
:{h.master},
            RegionServers {regionservers}, Thrift1 :{h.thrift}; data in {layout.catalog}
  data root {layout.data}
  DAGs      {layout.dags} (new DAGs start paused)
  logs      {layout.state}/<part>.log; task logs in {layout.logs}; Spark event logs in
            {layout.spark_events}
  restarts  a part that exits is started again on its ports (supervisor.log; `status`)
  CLI       source {shlex.quote(str(layout.state / ENV_FILE))}   # then `airflow dags list`, ...
stop with: make airflow-stop""")


def stop(args: argparse.Namespace) -> int:
    layout = ClusterLayout.at(args.root, args.dags)
    return report_stopped(stop_cluster(layout.state, grace=args.grace), layout.state,
                          "cluster pid files")


def status(args: argparse.Namespace) -> int:
    layout = ClusterLayout.at(args.root, args.dags)
    records = {r.name: r for r in recorded(layout.state)}
    if not records:
        print("no cluster recorded")
        return 1
    for name in [n for group in reversed(STOP_ORDER) for n in reversed(group)]:
        record = records.get(name)
        if record is None:
            print(f"{name:22} not recorded")
            continue
        print(status_line(record, 22))
    state: ClusterStateJson = load_state(layout.state) or {}
    print(f"api: {state.get('api_url', '?')}")
    return 0 if all(r.live_members() for r in records.values()) else 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m airflow_partitions.demo.cluster",
        description="Run the example pipeline on a cluster on one machine, all on loopback: "
                    "PostgreSQL (metadata DB), Redis (Celery broker), the api-server, "
                    "scheduler, dag-processor, triggerer and two Celery workers "
                    "(CeleryExecutor), a Spark standalone master with two workers, and the "
                    "catalog on Apache HBase over HDFS (NameNode, DataNode, ZooKeeper, an "
                    "HMaster, two RegionServers, the Thrift1 server); a supervisor starts a "
                    "part that exits again, on its ports; stop them by process id. "
                    "docs/operations.md, 'A cluster on one machine'.")
    p.add_argument("--root", type=Path, default=Path(".cluster"),
                   help="where every part keeps its directory, logs and pid files "
                        "(default .cluster)")
    p.add_argument("--dags", type=Path, default=None, help="DAG folder (default dags_examples)")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("start", help="start every part and wait until each is ready")
    s.add_argument("--api-port", type=int, default=0,
                   help="the api-server's port (default 0: a free one)")
    s.add_argument("--timeout", type=float, default=600,
                   help="seconds to wait for each stage to be ready (600)")
    s.add_argument("--grace", type=float, default=30,
                   help="on a failed start: seconds after SIGTERM before SIGKILL (30)")
    s.add_argument("--max-restarts", type=int, default=DEFAULT_POLICY.max_restarts,
                   help="restarts of one part within 10 minutes before the supervisor gives "
                        f"up on it ({DEFAULT_POLICY.max_restarts})")
    s.set_defaults(func=start)
    t = sub.add_parser("stop", help="stop every recorded part (safe to run twice)")
    t.add_argument("--grace", type=float, default=30,
                   help="seconds after SIGTERM before SIGKILL, per stage (30)")
    t.set_defaults(func=stop)
    sub.add_parser("status", help="which recorded parts are running, and how often each was "
                                  "started again").set_defaults(func=status)
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(parser().parse_args(argv))
