"""Start one standalone HBase and its Thrift1 server, wait until it answers, stop exactly it.

``start`` provisions the jars (``provision``), writes the configuration (``site``), starts the
master JVM and the Thrift JVM each in a process group of its own, and waits until a table can be
created, listed and dropped through happybase: only then is the store URL handed out. A start
that is not healthy in ``timeout`` seconds raises ``HBaseFailed`` with the tail of HBase's logs,
after stopping what it started. ``stop`` signals the recorded groups (a pid that now belongs to
another process is left alone) and is safe to call twice.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from airflow_partitions.demo.hbase.provision import provision, require_tool
from airflow_partitions.demo.hbase.site import (
    LOOPBACK,
    HBaseLayout,
    JvmHeaps,
    master_argv,
    thrift_argv,
    write_conf,
)
from airflow_partitions.demo.services.ports import free_port
from airflow_partitions.demo.services.processes import (
    ServiceRecord,
    ServiceRecordJson,
    spawn,
    stop_groups,
)

DEFAULT_HEAPS = JvmHeaps()
#: The services in the order they start; they stop in the reverse order.
SERVICES = ("master", "thrift")
DEFAULT_PREFIX = "partitions"
#: How long a start may take before it counts as failed (a cold JVM on a slow 2-core
#: machine takes about 15 s; the first provisioning's download is not counted).
START_TIMEOUT = 180.0


class HBaseFailed(RuntimeError):
    """HBase did not start, or not healthily; the message carries the end of its logs."""


class HBaseStateJson(TypedDict):
    """What ``start`` records in ``hbase.json`` for ``stop`` and ``status``."""

    thrift_port: int
    zookeeper_port: int
    table_prefix: str
    services: list[ServiceRecordJson]


@dataclass(frozen=True)
class RunningHBase:
    """A started HBase: where its Thrift1 server listens and what runs it."""

    layout: HBaseLayout
    thrift_port: int
    zookeeper_port: int
    table_prefix: str
    services: tuple[ServiceRecord, ...]

    @property
    def thrift_address(self) -> str:
        """``127.0.0.1:PORT``, as ``AIRFLOW_PARTITIONS_TEST_HBASE`` takes it."""
        return f"{LOOPBACK}:{self.thrift_port}"

    @property
    def store_url(self) -> str:
        return f"hbase://{self.thrift_address}?table_prefix={self.table_prefix}"

    def to_json(self) -> HBaseStateJson:
        return {"thrift_port": self.thrift_port, "zookeeper_port": self.zookeeper_port,
                "table_prefix": self.table_prefix,
                "services": [s.to_json() for s in self.services]}

    def alive(self) -> dict[str, bool]:
        return {s.name: bool(s.live_members()) for s in self.services}


def load(layout: HBaseLayout) -> RunningHBase | None:
    """What the last ``start`` under ``layout`` recorded, or None."""
    try:
        doc: HBaseStateJson = json.loads(layout.state.read_text())
    except (OSError, ValueError):
        return None
    return RunningHBase(layout, int(doc["thrift_port"]), int(doc["zookeeper_port"]),
                        str(doc["table_prefix"]),
                        tuple(ServiceRecord.from_json(s) for s in doc["services"]))


def log_tail(layout: HBaseLayout, lines: int = 30) -> str:
    """The last ``lines`` lines of each JVM's log and console output, for a failed start."""
    parts = []
    for name in SERVICES:
        for path in (layout.log(name), layout.logs / f"{name}.out"):
            if path.is_file() and path.stat().st_size:
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path} (last {len(text)} lines)\n" + "\n".join(text))
    return "\n".join(parts) or f"(no log in {layout.logs})"


def answers(port: int, host: str = LOOPBACK, timeout_ms: int = 5000) -> str | None:
    """None when a table can be created, listed and dropped through happybase on
    ``host:port``, else why not (one line)."""
    import happybase

    name = f"_ready_{port}"
    try:
        conn = happybase.Connection(host, port, timeout=timeout_ms, autoconnect=True)
        try:
            if name.encode() not in conn.tables():
                conn.create_table(name, {"cf": {"max_versions": 1}})
            if name.encode() not in conn.tables():
                return "a created table is not listed"
            conn.delete_table(name, disable=True)
            return None
        finally:
            conn.close()
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc)[:200]}"


def start(project: Path, layout: HBaseLayout, *, table_prefix: str = DEFAULT_PREFIX,
          heaps: JvmHeaps = DEFAULT_HEAPS, timeout: float = START_TIMEOUT,
          progress: Callable[[str], None] = lambda line: None) -> RunningHBase:
    """Provision, configure and start HBase under ``layout``; return it once it answers.

    Raises ProvisionError (nothing started) or HBaseFailed (what was started is stopped).
    """
    java = require_tool("java", "openjdk-17-jre-headless")
    began = time.monotonic()
    lib = provision(project, layout.logs / "maven.log")
    progress(f"HBase jars in {lib} ({time.monotonic() - began:.0f} s)")
    began = time.monotonic()
    zookeeper_port = free_port(LOOPBACK)
    thrift_port = free_port(LOOPBACK, frozenset({zookeeper_port}))
    write_conf(layout, zookeeper_port)
    records: list[ServiceRecord] = []
    try:
        for name, argv in (("master", master_argv(java, layout, lib, heaps)),
                           ("thrift", thrift_argv(java, layout, lib, heaps, thrift_port))):
            _, record = spawn(name, argv, env=_java_env(), log=layout.logs / f"{name}.out",
                              cwd=layout.root)
            records.append(record)
        hbase = RunningHBase(layout, thrift_port, zookeeper_port, table_prefix, tuple(records))
        layout.state.write_text(json.dumps(hbase.to_json(), indent=2))
        _wait_healthy(hbase, began + timeout)
    except BaseException as exc:
        stop_groups(list(reversed(records)), grace=10)
        if isinstance(exc, HBaseFailed | KeyboardInterrupt):
            raise
        raise HBaseFailed(f"{type(exc).__name__}: {exc}\n{log_tail(layout)}") from exc
    progress(f"HBase master, RegionServer and ZooKeeper (127.0.0.1:{zookeeper_port}) and "
             f"Thrift1 ({hbase.thrift_address}) answer ({time.monotonic() - began:.0f} s)")
    return hbase


def _java_env() -> dict[str, str]:
    """This environment without HBASE_* and CLASSPATH settings meant for another HBase."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HBASE_", "CLASSPATH"))}
    env.setdefault("LANG", "C.UTF-8")
    return env


def _wait_healthy(hbase: RunningHBase, deadline: float) -> None:
    why: str | None = "not tried yet"
    while time.monotonic() < deadline:
        dead = [name for name, up in hbase.alive().items() if not up]
        if dead:
            raise HBaseFailed(f"HBase's {' and '.join(dead)} exited during start\n"
                              f"{log_tail(hbase.layout)}")
        why = answers(hbase.thrift_port)
        if why is None:
            return
        time.sleep(0.5)
    raise HBaseFailed(f"HBase did not answer within the start timeout (last: {why})\n"
                      f"{log_tail(hbase.layout)}")


def stop(layout: HBaseLayout, grace: float = 30.0) -> list[str]:
    """Stop what ``start`` recorded under ``layout``, Thrift first; a line per service."""
    hbase = load(layout)
    if hbase is None:
        return [f"no HBase recorded under {layout.root}"]
    return stop_groups(list(reversed(hbase.services)), grace)

