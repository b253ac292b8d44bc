"""HDFS on one machine for the distributed HBase: one NameNode and one DataNode, on loopback.

Why HDFS at all: HBase's write-ahead log is durable only on a filesystem that can ``hflush``
it to another process. On the local filesystem a RegionServer killed with ``kill -9`` can lose
writes it already acknowledged (HBase refuses to start there unless told the stream
capabilities do not matter); over HDFS the log's edits are in the DataNode when a write is
acknowledged, so another RegionServer replays them after the crash.

The jars are the ones the real-HBase provisioning already copies (``hadoop-hdfs`` 3.3.5 comes
with ``hbase-server``): nothing more is downloaded. Every address is 127.0.0.1: the NameNode's
RPC on a port chosen at start, its web server and the DataNode's three ports on ports the
kernel picks (0). Replication is 1 (one DataNode), permissions are off (every part runs as the
same user), and the NameNode leaves safe mode as soon as the DataNode's blocks are reported.
"""

from __future__ import annotations

from pathlib import Path

from airflow_partitions.demo.hbase.site import LOOPBACK

NAMENODE_CLASS = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE_CLASS = "org.apache.hadoop.hdfs.server.datanode.DataNode"
#: ``hadoop-hdfs``'s jar as Maven Central serves it carries no ``webapps/`` folder, and the
#: NameNode's and DataNode's HTTP servers look their web app up on the class path: an empty
#: folder of each name in the conf folder (first on the class path) satisfies them.
WEBAPPS = ("hdfs", "datanode", "static")


def core_properties(namenode_port: int, data: Path) -> dict[str, str]:
    """core-site.xml: the default filesystem is this NameNode."""
    return {
        "fs.defaultFS": f"hdfs://{LOOPBACK}:{namenode_port}",
        "hadoop.tmp.dir": str(data / "hadoop-tmp"),
        # An HDFS client (the master, a RegionServer) tries to connect 10 times, a second
        # apart, by default, and a master that cannot reach HDFS exits: a NameNode restarting
        # on a loaded machine may take longer.
        "ipc.client.connect.max.retries": "60",
    }


def hdfs_properties(namenode_port: int, data: Path) -> dict[str, str]:
    """hdfs-site.xml, each setting here for a reason given beside it."""
    return {
        "dfs.namenode.name.dir": f"file://{data / 'namenode'}",
        "dfs.datanode.data.dir": f"file://{data / 'datanode'}",
        "dfs.replication": "1",  # one DataNode
        "dfs.namenode.rpc-address": f"{LOOPBACK}:{namenode_port}",
        "dfs.namenode.http-address": f"{LOOPBACK}:0",
        "dfs.datanode.address": f"{LOOPBACK}:0",
        "dfs.datanode.http.address": f"{LOOPBACK}:0",
        "dfs.datanode.ipc.address": f"{LOOPBACK}:0",
        "dfs.permissions.enabled": "false",  # every part runs as the same user
        # The default waits 30 s in safe mode after the blocks are reported, on every start.
        "dfs.namenode.safemode.extension": "0",
    }


def formatted(data: Path) -> bool:
    """Whether the NameNode's directory holds a formatted namespace (kept across restarts)."""
    return (data / "namenode" / "current" / "VERSION").is_file()


def format_argv(jvm: list[str]) -> list[str]:
    """Format a new namespace: only when :func:`formatted` is false, or data is erased."""
    return [*jvm, NAMENODE_CLASS, "-format", "-force", "-nonInteractive"]


def namenode_argv(jvm: list[str]) -> list[str]:
    return [*jvm, NAMENODE_CLASS]


def datanode_argv(jvm: list[str]) -> list[str]:
    return [*jvm, DATANODE_CLASS]
