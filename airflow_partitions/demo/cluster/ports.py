"""The cluster's ports: every one a free port on loopback, chosen at the first start and
recorded in ``cluster.json``; a later start keeps each one that is still free.

Fixed well-known ports (5432, 6379, 7077, 8080, 9090, 2181, 8020, 16000) would collide with
anything else on a developer's machine or with a second cluster, and Spark's web UIs would claim
8080/8081.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypedDict, cast

from airflow_partitions.demo.hbase.distributed import DistributedPorts, DistributedPortsJson
from airflow_partitions.demo.services.environment import ServicePorts, ServicePortsJson
from airflow_partitions.demo.services.ports import LOOPBACK, kept_port, port_free


class ClusterPortsJson(TypedDict):
    """:class:`ClusterPorts` as the cluster's state file records it."""

    host: str
    postgres: int
    redis: int
    hbase: DistributedPortsJson
    spark_master: int
    spark_master_ui: int
    spark_worker_uis: Sequence[int]
    airflow: ServicePortsJson


@dataclass(frozen=True)
class ClusterPorts:
    """Every listening port of one cluster, all on ``host`` (loopback)."""

    host: str
    postgres: int
    redis: int
    #: The catalog's HBase: HDFS, ZooKeeper, the master, the RegionServers and Thrift.
    hbase: DistributedPorts
    spark_master: int
    spark_master_ui: int
    spark_worker_uis: tuple[int, ...]
    airflow: ServicePorts

    @property
    def spark_url(self) -> str:
        return f"spark://{self.host}:{self.spark_master}"

    @property
    def catalog_url(self) -> str:
        return f"hbase://{self.host}:{self.hbase.thrift}?table_prefix=partitions"

    def to_json(self) -> ClusterPortsJson:
        doc = cast(ClusterPortsJson, asdict(self))
        doc["hbase"] = self.hbase.to_json()
        return doc

    @classmethod
    def from_json(cls, doc: ClusterPortsJson) -> ClusterPorts:
        fields: dict[str, Any] = {**doc, "spark_worker_uis": tuple(doc["spark_worker_uis"]),
                                  "airflow": ServicePorts(**doc["airflow"]),
                                  "hbase": DistributedPorts.from_json(doc["hbase"])}
        return cls(**fields)


def choose_cluster_ports(api_port: int = 0, workers: int = 2, host: str = LOOPBACK,
                         previous: ClusterPorts | None = None) -> ClusterPorts:
    """Ports for every part (``api_port`` for the api-server when given): last start's
    (``previous``) where still free, so ``env.sh`` and bookmarks stay valid; free ones else.
    HBase's ports go together: all of last time's, or all new."""
    taken: set[int] = {8793, 8794}
    old = previous if previous is not None and previous.host == host and \
        len(previous.spark_worker_uis) == workers else None

    def pick(last: int | None = None) -> int:
        return kept_port(host, last, taken)

    if api_port:
        taken.add(api_port)  # asked for: that one
    api = api_port or pick(old.airflow.api if old else None)
    airflow = ServicePorts(host, api, pick(old.airflow.worker_logs if old else None),
                           pick(old.airflow.trigger_logs if old else None))
    postgres, redis = pick(old.postgres if old else None), pick(old.redis if old else None)
    if old and all(p not in taken and port_free(host, p) for p in old.hbase.all()):
        hbase = old.hbase
    else:
        hbase = DistributedPorts.choose(taken)
    taken.update(hbase.all())
    return ClusterPorts(host, postgres, redis, hbase, pick(old.spark_master if old else None),
                        pick(old.spark_master_ui if old else None),
                        tuple(pick(old.spark_worker_uis[n] if old else None)
                              for n in range(workers)), airflow)
