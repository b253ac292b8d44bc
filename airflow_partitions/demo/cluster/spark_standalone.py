"""Spark's standalone cluster manager, from the pyspark distribution: a master, two workers.

Started with ``spark-class org.apache.spark.deploy.master.Master`` and ``...worker.Worker``
in the foreground (not ``sbin/start-*.sh``, which the pyspark wheel lacks and which daemonise),
so each is a process group of ours; a worker's executors are its children, in its group.
Covered jobs are submitted to ``spark://127.0.0.1:PORT`` in client mode (standalone has no
cluster deploy mode for Python): the driver runs in the Celery worker's task process and reads
the manifest there; the executors, in other JVMs, read the partitions' files.

``spark-defaults.conf`` (``SPARK_CONF_DIR``, shared by every driver) gives each application one
single-core executor on each worker (``spark.cores.max=2``; the master spreads them out), and
turns on event logs: Spark's own record of which executor ran which task, and which failed.
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import TypedDict

from airflow_partitions.demo.services.environment import VENV_BIN
from airflow_partitions.demo.services.processes import ServicesFailed
from airflow_partitions.demo.spark_archive import FAST_JVM

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
#: What each worker offers; an application takes one core of each (``spark.cores.max``).
WORKER_CORES = 2
WORKER_MEMORY = "1g"


def spark_class() -> str:
    return str(VENV_BIN / "spark-class")


def defaults(events: Path) -> str:
    """``spark-defaults.conf`` for every application on this cluster."""
    return "\n".join([
        "spark.eventLog.enabled true",
        "spark.eventLog.compress false",
        "spark.eventLog.rolling.enabled false",
        f"spark.eventLog.dir {events.as_uri()}",
        "spark.executor.cores 1",
        "spark.cores.max 2",
        "spark.executor.memory 512m",
        f"spark.executor.extraJavaOptions {FAST_JVM}",
        "spark.ui.enabled false",
        "spark.master.rest.enabled false",  # else the master listens on 6066, a fixed port
        "",
    ])


def daemon_environment(host: str) -> dict[str, str]:
    """For the master, the workers and every driver: loopback only, small and quick JVMs."""
    return {"SPARK_LOCAL_IP": host, "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_DAEMON_JAVA_OPTS": FAST_JVM, "SPARK_NO_DAEMONIZE": "1"}


def master_argv(host: str, port: int, ui_port: int) -> list[str]:
    return [spark_class(), MASTER_CLASS, "--host", host, "--port", str(port),
            "--webui-port", str(ui_port)]


def worker_argv(master: str, host: str, ui_port: int, workdir: Path) -> list[str]:
    return [spark_class(), WORKER_CLASS, "--host", host, "--webui-port", str(ui_port),
            "--cores", str(WORKER_CORES), "--memory", WORKER_MEMORY, "--work-dir",
            str(workdir / "work"), master]


class SparkWorkerJson(TypedDict, total=False):
    """A worker in the master's ``/json/`` (the keys read here; Spark gives more)."""

    id: str
    state: str  # ALIVE, DEAD, DECOMMISSIONED, ...


class SparkMasterJson(TypedDict, total=False):
    """The Spark master's ``/json/`` (the keys read here; Spark gives more)."""

    workers: list[SparkWorkerJson]


def master_state(host: str, ui_port: int) -> SparkMasterJson:
    """The master's own view (``/json/``): workers, applications, their states."""
    with urllib.request.urlopen(f"http://{host}:{ui_port}/json/", timeout=5) as resp:
        doc: SparkMasterJson = json.loads(resp.read())
    return doc


def alive_workers(host: str, ui_port: int) -> list[SparkWorkerJson]:
    return [w for w in master_state(host, ui_port).get("workers", []) if w.get("state") == "ALIVE"]


def wait_ready(host: str, ui_port: int, workers: int, timeout: float = 180) -> None:
    """Until the master reports ``workers`` ALIVE workers."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            alive = alive_workers(host, ui_port)
        except OSError as exc:
            last = str(exc)
        else:
            last = f"{len(alive)} alive workers"
            if len(alive) >= workers:
                return
        time.sleep(0.5)
    raise ServicesFailed(f"Spark master on {host} (UI {ui_port}): {last} after {timeout:.0f} s")
