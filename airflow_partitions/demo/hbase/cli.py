"""``python -m airflow_partitions.demo.hbase start|stop|status``: make hbase, make hbase-stop.

``start`` prints the store URL on a line of its own (``store: hbase://127.0.0.1:PORT?...``) for
scripts to pick up; ``AIRFLOW_PARTITIONS_STORE`` set to it points the catalog at this HBase.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from airflow_partitions.demo.hbase.provision import ProvisionError
from airflow_partitions.demo.hbase.runner import (
    DEFAULT_PREFIX,
    START_TIMEOUT,
    HBaseFailed,
    load,
    start,
    stop,
)
from airflow_partitions.demo.hbase.site import HBaseLayout, JvmHeaps


def run_start(args: argparse.Namespace) -> int:
    layout = HBaseLayout(args.root)
    running = load(layout)
    if running is not None and all(running.alive().values()):
        print(f"HBase is already running under {layout.root} (stop it with `make hbase-stop`)")
        print(f"store: {running.store_url}")
        return 0
    if running is not None and any(running.alive().values()):
        stop(layout)
    layout.root.mkdir(parents=True, exist_ok=True)
    print(f"starting HBase under {layout.root} (logs in {layout.logs}) ...", flush=True)
    try:
        hbase = start(args.project, layout, table_prefix=args.table_prefix,
                      heaps=JvmHeaps(args.master_heap, args.thrift_heap), timeout=args.timeout,
                      progress=lambda line: print(f"  ✓ {line}", flush=True))
    except ProvisionError as exc:
        print(f"cannot start HBase: {exc}")
        return 1
    except HBaseFailed as exc:
        print(f"HBase failed to start; nothing is left running.\n{exc}")
        return 1
    pids = ", ".join(f"{s.name} {s.pid}" for s in hbase.services)
    print(f"HBase {hbase.thrift_address} is up (pids: {pids}); stop it with `make hbase-stop`")
    print(f"store: {hbase.store_url}")
    return 0


def run_stop(args: argparse.Namespace) -> int:
    for line in stop(HBaseLayout(args.root), args.grace):
        print(line)
    return 0


def run_status(args: argparse.Namespace) -> int:
    hbase = load(HBaseLayout(args.root))
    if hbase is None:
        print(f"no HBase recorded under {args.root}")
        return 1
    for record in hbase.services:
        state = "running" if record.live_members() else "not running"
        print(f"{record.name:7} pid {record.pid:<8} {state}  log {record.log}")
    print(f"store: {hbase.store_url}")
    return 0 if all(hbase.alive().values()) else 1


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m airflow_partitions.demo.hbase",
        description="A standalone Apache HBase (master, RegionServer and ZooKeeper in one JVM) "
                    "and its Thrift1 server on 127.0.0.1, from Maven Central jars "
                    "(hbase/pom.xml). Data, logs and pids live under --root.")
    top.add_argument("--root", type=Path, default=Path(".hbase"),
                     help="folder for data, configuration, logs and pids (default: .hbase)")
    sub = top.add_subparsers(dest="command", required=True)
    up = sub.add_parser("start", help="start HBase and print its store URL")
    up.add_argument("--project", type=Path, default=Path("."),
                    help="the repository root, which holds hbase/pom.xml (default: .)")
    up.add_argument("--table-prefix", default=DEFAULT_PREFIX,
                    help=f"table_prefix in the printed store URL (default: {DEFAULT_PREFIX})")
    up.add_argument("--timeout", type=float, default=START_TIMEOUT,
                    help=f"seconds to wait for a healthy HBase (default: {START_TIMEOUT:.0f})")
    up.add_argument("--master-heap", default=JvmHeaps.master,
                    help=f"-Xmx of the master JVM (default: {JvmHeaps.master})")
    up.add_argument("--thrift-heap", default=JvmHeaps.thrift,
                    help=f"-Xmx of the Thrift server JVM (default: {JvmHeaps.thrift})")
    up.set_defaults(run=run_start)
    down = sub.add_parser("stop", help="stop what start started, by recorded pid (safe twice)")
    down.add_argument("--grace", type=float, default=30.0,
                      help="seconds to wait after SIGTERM before SIGKILL (default: 30)")
    down.set_defaults(run=run_stop)
    show = sub.add_parser("status", help="whether the recorded HBase is running")
    show.set_defaults(run=run_status)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    code: int = args.run(args)
    return code
