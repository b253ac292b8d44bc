"""The environment every Airflow process of one installation must share, built in one place.

``make demo``, ``make airflow`` and the scheduler-level tests all start ``airflow`` subprocesses;
they must agree on the catalog, the data root (read when DAG files are imported), the Spark
connection (Airflow's own ``spark_default`` is YARN) and the Python Spark runs, or a task sees a
different catalog from the sensor that waited for it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The venv's ``bin``: ``airflow`` and ``spark-submit`` live there.
VENV_BIN = Path(sys.executable).parent
#: Environment variables of the caller that would silently reconfigure the installation.
FOREIGN_PREFIXES = ("AIRFLOW_CONN_", "AIRFLOW__", "AIRFLOW_PARTITIONS_")


def spark_connection(master: str) -> str:
    """``AIRFLOW_CONN_SPARK_DEFAULT`` in the JSON form (the URI form cannot say ``local[*]``)."""
    return json.dumps({"conn_type": "spark", "host": master, "extra": {"deploy-mode": "client"}})


def catalog_connection(store_url: str, data_root: Path) -> str:
    """``AIRFLOW_CONN_PARTITIONS_DEFAULT``: the catalog every task, sensor and trigger opens."""
    return json.dumps({"conn_type": "partition_catalog",
                       "extra": {"store_url": store_url, "data_root": str(data_root)}})


def airflow_environment(home: Path, dags: Path, store_url: str, data_root: Path, *,
                        spark_master: str = "local[*]",
                        base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The shared environment: ``base`` (default ``os.environ``) minus foreign Airflow settings."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith(FOREIGN_PREFIXES)}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW_PARTITIONS_STORE": store_url,
        "AIRFLOW_PARTITIONS_DATA_ROOT": str(data_root),
        "AIRFLOW_CONN_SPARK_DEFAULT": spark_connection(spark_master),
        "AIRFLOW_CONN_PARTITIONS_DEFAULT": catalog_connection(store_url, data_root),
        "PATH": f"{VENV_BIN}{os.pathsep}{source.get('PATH', '')}",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    })
    return env


@dataclass(frozen=True)
class ServicePorts:
    """The ports one installation's services use; all on ``host``."""

    host: str
    api: int
    worker_logs: int
    trigger_logs: int

    @property
    def api_url(self) -> str:
        return f"http://{self.host}:{self.api}"


def service_settings(ports: ServicePorts, parallelism: int = 4) -> dict[str, str]:
    """``AIRFLOW__*`` settings for running the four services on one machine.

    * LocalExecutor on the sqlite metadata DB (works in 3.3; small ``parallelism`` for 2 cores);
    * the api-server on ``host:port``, and the execution API the workers call at the same place;
    * log-server ports away from 8793/8794, which collide with common api-server ports.
    """
    return {
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__PARALLELISM": str(parallelism),
        "AIRFLOW__API__HOST": ports.host,
        "AIRFLOW__API__PORT": str(ports.api),
        "AIRFLOW__API__BASE_URL": ports.api_url,
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{ports.api_url}/execution/",
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(ports.worker_logs),
        "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(ports.trigger_logs),
    }
