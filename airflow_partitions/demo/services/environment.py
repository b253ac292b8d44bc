"""The environment every Airflow process of one installation must share, built in one place.

``make demo``, ``make airflow`` and the scheduler-level tests all start ``airflow`` subprocesses;
they must agree on the catalog, the data root (read when DAG files are imported), the Spark
connection (Airflow's own ``spark_default`` is YARN) and the Python Spark runs, or a task sees a
different catalog from the sensor that waited for it.

The caller's own settings (``AIRFLOW__*``, ``AIRFLOW_CONN_*``, ``AIRFLOW_PARTITIONS_*``: metrics,
OpenLineage, a database, more connections) are passed through to every service, because
docs/observability.md tells users to turn features on exactly that way. Only the
values the installation cannot work without replace theirs, and :func:`overridden` names the
replaced ones so ``make airflow`` can say so instead of dropping them silently.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from airflow_partitions.demo import spark_archive

#: The venv's ``bin``: ``airflow`` and ``spark-submit`` live there.
VENV_BIN = Path(sys.executable).parent
#: The caller's Airflow and provider settings: passed through, named when replaced.
USER_PREFIXES = ("AIRFLOW_CONN_", "AIRFLOW__", "AIRFLOW_PARTITIONS_")
#: Set by the harness but extended, not replaced (the venv's ``bin`` goes first).
EXTENDED = frozenset({"PATH"})


def spark_connection(master: str) -> str:
    """``AIRFLOW_CONN_SPARK_DEFAULT`` in the JSON form (the URI form cannot say ``local[*]``)."""
    return json.dumps({"conn_type": "spark", "host": master, "extra": {"deploy-mode": "client"}})


def catalog_connection(store_url: str, data_root: Path) -> str:
    """``AIRFLOW_CONN_PARTITIONS_DEFAULT``: the catalog every task, sensor and trigger opens."""
    return json.dumps({"conn_type": "partition_catalog",
                       "extra": {"store_url": store_url, "data_root": str(data_root)}})


#: The REST API connection the provider's writing operators announce coverage events through.
API_CONNECTION = "AIRFLOW_CONN_AIRFLOW_API_DEFAULT"


def api_settings(api_url: str, user: str, password: str) -> dict[str, str]:
    """The api-server's address and a user, for the coverage-event announcers: the follower
    (``AIRFLOW_PARTITIONS_API_*``) and every task (the ``airflow_api_default`` connection)."""
    from urllib.parse import urlsplit

    parts = urlsplit(api_url)
    connection = {"conn_type": "http", "host": f"{parts.scheme}://{parts.hostname}",
                  "port": parts.port, "login": user, "password": password}
    return {
        "AIRFLOW_PARTITIONS_API_URL": api_url,
        "AIRFLOW_PARTITIONS_API_USER": user,
        "AIRFLOW_PARTITIONS_API_PASSWORD": password,
        API_CONNECTION: json.dumps(connection),
    }


def follower_argv(*options: str) -> list[str]:
    """``airflow-partitions assets follow`` (the address and user from the environment)."""
    return [str(VENV_BIN / "airflow-partitions"), *options, "assets", "follow"]


def airflow_environment(home: Path, dags: Path, store_url: str, data_root: Path, *,
                        spark_master: str = "local[*]",
                        base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The shared environment: ``base`` (default ``os.environ``), the caller's settings included,
    with the values this installation needs on top (they win: see :func:`overridden`)."""
    source = os.environ if base is None else base
    env = dict(source)
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
    # The example DAGs' jobs last seconds: start their JVMs for that (the caller's setting wins).
    env.setdefault("SPARK_SUBMIT_OPTS", spark_archive.submit_opts(env))
    return env


def overridden(user: Mapping[str, str], env: Mapping[str, str]) -> list[str]:
    """Names of the caller's settings that ``env`` replaced with another value, sorted.

    Only names: values may hold passwords (``AIRFLOW_CONN_*``). ``PATH`` is extended, not
    replaced, so it is never listed.

    >>> overridden({"AIRFLOW__CORE__EXECUTOR": "CeleryExecutor", "AIRFLOW__METRICS__STATSD_ON":
    ...             "True"}, {"AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
    ...                       "AIRFLOW__METRICS__STATSD_ON": "True"})
    ['AIRFLOW__CORE__EXECUTOR']
    """
    return sorted(k for k, v in user.items()
                  if k not in EXTENDED and k in env and env[k] != v)


def passed_through(user: Mapping[str, str], env: Mapping[str, str]) -> list[str]:
    """Names of the caller's Airflow and provider settings that reach the services unchanged
    (a metadata DB among them changes where the installation lives: worth a line)."""
    return sorted(k for k, v in user.items() if k.startswith(USER_PREFIXES) and env.get(k) == v)


def override_notice(user: Mapping[str, str], env: Mapping[str, str]) -> str | None:
    """One line for a person when the harness replaced some of their settings, else None."""
    names = overridden(user, env)
    if not names:
        return None
    return (f"your {', '.join(names)} {'was' if len(names) == 1 else 'were'} replaced by this "
            "installation's own value (docs/operations.md, \"The environment every process must "
            "share\"); your other AIRFLOW__*, AIRFLOW_CONN_* and AIRFLOW_PARTITIONS_* settings "
            "are passed through")


class ServicePortsJson(TypedDict):
    """:class:`ServicePorts` as the state files record it."""

    host: str
    api: int
    worker_logs: int
    trigger_logs: int


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

    * LocalExecutor (small ``parallelism`` for 2 cores; the metadata DB is the runner's);
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
