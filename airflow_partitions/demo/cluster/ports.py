"""The cluster's ports: every one a free port on loopback, chosen at start and recorded.

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
from airflow_partitions.demo.services.ports import LOOPBACK, free_port


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


def choose_cluster_ports(api_port: int = 0, workers: int = 2,
                         host: str = LOOPBACK) -> ClusterPorts:
    """Free ports for every part (``api_port`` for the api-server when given)."""
    taken: set[int] = {8793, 8794}

    def pick() -> int:
        port = free_port(host, frozenset(taken))
        taken.add(port)
        return port

    if api_port:
        taken.add(api_port)
    api = api_port or pick()
    airflow = ServicePorts(host, api, pick(), pick())
    postgres, redis = pick(), pick()
    hbase = DistributedPorts.choose(taken)
    taken.update(hbase.all())
    return ClusterPorts(host, postgres, redis, hbase, pick(), pick(),
                        tuple(pick() for _ in range(workers)), airflow)
