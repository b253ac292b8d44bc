"""Where the cluster keeps each part under its root (``.cluster/``): one directory a part.

A part's directory is its working directory and holds its own files (the PostgreSQL data
directory, Spark's worker directory, a Celery worker's cwd), so two parts never share a
directory by accident; what they must share is named here too (the Airflow home with
``airflow.cfg``, the task logs, the data root, the Spark event logs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from airflow_partitions.demo.layout import REPO

#: The two Celery workers and the two Spark workers, by number.
WORKERS = (1, 2)


@dataclass(frozen=True)
class ClusterLayout:
    """The directories of one cluster under ``root``."""

    root: Path
    dags: Path = REPO / "dags_examples"

    @classmethod
    def at(cls, root: Path, dags: Path | None = None) -> ClusterLayout:
        return cls(root.resolve(), (dags or REPO / "dags_examples").resolve())

    @property
    def state(self) -> Path:
        """Pid files, ``cluster.json``, ``env.sh`` and every part's log."""
        return self.root / "run"

    @property
    def postgres(self) -> Path:
        return self.root / "postgres"

    @property
    def redis(self) -> Path:
        return self.root / "redis"

    @property
    def catalog(self) -> Path:
        """The catalog's HBase: its conf, and its data (HDFS's blocks, ZooKeeper's snapshots),
        kept across a stop. Its parts' pid files and logs are in :attr:`state` as the others'."""
        return self.root / "catalog"

    @property
    def spark(self) -> Path:
        return self.root / "spark"

    @property
    def spark_conf(self) -> Path:
        """``SPARK_CONF_DIR``: ``spark-defaults.conf`` for every driver and daemon."""
        return self.spark / "conf"

    @property
    def spark_events(self) -> Path:
        """Spark's event logs: which executor ran which task, and which failed (Spark's own
        records, read by the cluster test)."""
        return self.spark / "events"

    def spark_worker(self, n: int) -> Path:
        return self.spark / f"worker-{n}"

    @property
    def home(self) -> Path:
        """``AIRFLOW_HOME`` of the api-server, scheduler, dag-processor and triggerer."""
        return self.root / "airflow"

    @property
    def logs(self) -> Path:
        """Task logs, shared by every worker (a shared volume or remote logging on real hosts)."""
        return self.home / "logs"

    def celery_worker(self, n: int) -> Path:
        """A Celery worker's working directory and ``AIRFLOW_HOME`` (its own, as on a host)."""
        return self.root / f"celery-worker-{n}"

    @property
    def data(self) -> Path:
        """The data root every process reads and writes (a shared file system on real hosts)."""
        return self.root / "data"

    @property
    def pause_marker(self) -> Path:
        """Where a registration paused by ``AIRFLOW_PARTITIONS_PAUSE_AT`` says so (tests)."""
        return self.state / "paused-registration.json"

    def directories(self) -> list[Path]:
        return [self.state, self.postgres, self.redis, self.catalog, self.spark_conf,
                self.spark_events, *(self.spark_worker(n) for n in WORKERS), self.home,
                self.logs, *(self.celery_worker(n) for n in WORKERS), self.data]
