"""The environment of the cluster's Airflow processes, built in one place.

It starts from the single-machine environment (:func:`..services.environment
.airflow_environment`: the DAGs folder, the data root read when DAG files are imported, the
Python Spark runs) and moves every shared thing where a cluster keeps it:

* the metadata DB to PostgreSQL, the executor to Celery with Redis as the broker, and Celery's
  results to the metadata DB (``db+postgresql``);
* the ``partitions_default`` and ``spark_default`` connections **out of the environment**:
  they live in the metadata DB (:func:`connections`), where every worker and the triggerer
  read them as they would on other hosts. A caller's ``AIRFLOW_CONN_PARTITIONS_DEFAULT`` or
  ``AIRFLOW_CONN_SPARK_DEFAULT`` would shadow them, so both are removed (and named);
* the secrets the api-server and the scheduler must agree on, in the environment rather than
  in one ``airflow.cfg``, because each Celery worker has its own ``AIRFLOW_HOME``;
* covered jobs' manifests to the spark conf ``spark.airflow_partitions.manifest``
  (``AIRFLOW_PARTITIONS_MANIFEST_CONF=true``), the route a cluster deploy mode needs;
* task logs to one folder every worker writes (remote logging on real hosts);
* a task whose worker died is failed after 30 s without a heartbeat (default 300 s; a task
  heartbeats every 5 s, so that is six missed in a row; checked every 5 s instead of 10), and
  retried (``default_task_retries``), so a lost worker costs well under a minute, not five.
"""

from __future__ import annotations

from pathlib import Path

from airflow_partitions.defaults import ENV_MANIFEST_CONF
from airflow_partitions.demo.cluster import broker
from airflow_partitions.demo.cluster.layout import ClusterLayout
from airflow_partitions.demo.cluster.ports import ClusterPorts
from airflow_partitions.demo.cluster.spark_standalone import daemon_environment
from airflow_partitions.demo.services import postgres
from airflow_partitions.demo.services.environment import airflow_environment, service_settings
from airflow_partitions.demo.services.secrets import kept_secrets

#: Set by the single-machine environment, shadowing the metadata DB's connections here.
SHADOWING = ("AIRFLOW_CONN_PARTITIONS_DEFAULT", "AIRFLOW_CONN_SPARK_DEFAULT",
             "AIRFLOW_PARTITIONS_STORE")
#: Task slots per Celery worker: each covered job is a driver JVM in the task process.
WORKER_CONCURRENCY = 2
HEARTBEAT_TIMEOUT = 30
SECRET_NAMES = ("jwt_secret", "secret_key", "redis_password", "postgres_password")


def shared_secrets(state: Path) -> dict[str, str]:
    """The JWT secret, the API secret key, the broker's and the metadata DB's passwords
    (URL-safe), each made once and kept in an owner-only file in ``state``."""
    return kept_secrets(state, SECRET_NAMES)


def cluster_environment(layout: ClusterLayout, ports: ClusterPorts,
                        base: dict[str, str] | None = None) -> dict[str, str]:
    """What every Airflow process of the cluster shares (the Celery workers add their name)."""
    env = airflow_environment(layout.home, layout.dags, ports.catalog_url, layout.data,
                              spark_master=ports.spark_url, base=base)
    for name in SHADOWING:
        env.pop(name, None)
    keys = shared_secrets(layout.state)
    pg = postgres.sqlalchemy_url(ports.host, ports.postgres, keys["postgres_password"])
    env.update(service_settings(ports.airflow, parallelism=8))
    env.update({
        "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": pg,
        "AIRFLOW__CELERY__BROKER_URL": broker.broker_url(ports.host, ports.redis,
                                                         keys["redis_password"]),
        "AIRFLOW__CELERY__RESULT_BACKEND": f"db+{pg}",
        "AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS":
            "airflow_partitions.demo.cluster.celery_config.CELERY_CONFIG",
        "AIRFLOW__CELERY__WORKER_CONCURRENCY": str(WORKER_CONCURRENCY),
        "AIRFLOW__CORE__HOSTNAME_CALLABLE":
            "airflow_partitions.demo.cluster.hostname.worker_hostname",
        "AIRFLOW__CORE__DEFAULT_TASK_RETRIES": "2",
        "AIRFLOW__CORE__DEFAULT_TASK_RETRY_DELAY": "5",
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(HEARTBEAT_TIMEOUT),
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "5",
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(layout.logs),
        "AIRFLOW__API_AUTH__JWT_SECRET": keys["jwt_secret"],
        "AIRFLOW__API__SECRET_KEY": keys["secret_key"],
        "SPARK_CONF_DIR": str(layout.spark_conf),
        # Covered jobs get the manifest as the spark conf, as a cluster deploy mode needs.
        ENV_MANIFEST_CONF: "true",
        **daemon_environment(ports.host),
    })
    return env


def worker_environment(env: dict[str, str], layout: ClusterLayout, n: int) -> dict[str, str]:
    """A Celery worker's: its own ``AIRFLOW_HOME`` (its directory) and host name."""
    from airflow_partitions.catalog import HOST_ENV

    return {**env, "AIRFLOW_HOME": str(layout.celery_worker(n)), HOST_ENV: f"worker-{n}"}


def connections(ports: ClusterPorts, layout: ClusterLayout) -> dict[str, dict[str, object]]:
    """The connections stored in the metadata DB (``airflow connections import``)."""
    return {
        "partitions_default": {
            "conn_type": "partition_catalog",
            "extra": {"store_url": ports.catalog_url, "data_root": str(layout.data)},
        },
        "spark_default": {
            "conn_type": "spark", "host": f"spark://{ports.host}", "port": ports.spark_master,
            "extra": {"deploy-mode": "client"},
        },
    }
