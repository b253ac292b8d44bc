"""The files and command lines of one standalone HBase: hbase-site.xml, logging, two JVMs.

Standalone mode (``hbase.cluster.distributed=false``) runs the master, one RegionServer and
ZooKeeper in one JVM over the local filesystem; the Thrift1 server is a second JVM that finds
them through ZooKeeper. Every listener is on 127.0.0.1: ZooKeeper and Thrift on ports chosen
free at start, the master's and the RegionServer's RPC on ports the kernel picks (0), the info
(web) servers and ZooKeeper's admin server off. Memory: the master JVM ``-Xmx768m`` and the
Thrift JVM ``-Xmx256m`` (``JvmHeaps``), about 0.55 GB resident together at start and 1.3 GB
after a whole test run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

LOOPBACK = "127.0.0.1"
MASTER_CLASS = "org.apache.hadoop.hbase.master.HMaster"
THRIFT_CLASS = "org.apache.hadoop.hbase.thrift.ThriftServer"

#: What HBase's own ``bin/hbase`` adds on Java 11 and later, so its shaded Netty and its
#: off-heap buffers may reach JDK internals; a launcher without the script must pass them too.
JDK17_FLAGS = (
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
    "--add-modules", "jdk.unsupported",
    "--add-opens", "java.base/java.nio=ALL-UNNAMED",
    "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports", "java.security.jgss/sun.security.krb5=ALL-UNNAMED",
    "--add-exports", "java.base/sun.net.dns=ALL-UNNAMED",
    "--add-exports", "java.base/sun.net.util=ALL-UNNAMED",
)


@dataclass(frozen=True)
class JvmHeaps:
    """Maximum heaps, as ``-Xmx`` values: bounded, so a test run leaves room for Spark and
    Airflow."""

    master: str = "768m"
    thrift: str = "256m"


@dataclass(frozen=True)
class HBaseLayout:
    """Where one HBase keeps everything: ``root`` (``.hbase/`` for ``make hbase``)."""

    root: Path

    @property
    def conf(self) -> Path:
        return self.root / "conf"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def state(self) -> Path:
        """What was started: pids, ports, the store URL (JSON)."""
        return self.root / "hbase.json"

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"


def site_properties(layout: HBaseLayout, zookeeper_port: int) -> dict[str, str]:
    """hbase-site.xml's settings, each one here for a reason given beside it."""
    data = layout.data.resolve()
    return {
        "hbase.cluster.distributed": "false",  # master, RegionServer and ZooKeeper in one JVM
        "hbase.rootdir": f"file://{data}/hbase",
        "hbase.tmp.dir": str(data / "tmp"),  # not /tmp/hbase-<user>, shared by every instance
        "hbase.zookeeper.quorum": LOOPBACK,
        "hbase.zookeeper.property.clientPort": str(zookeeper_port),
        "hbase.zookeeper.property.dataDir": str(data / "zookeeper"),
        "hbase.master.ipc.address": LOOPBACK,
        "hbase.regionserver.ipc.address": LOOPBACK,
        "hbase.master.port": "0",
        "hbase.regionserver.port": "0",
        "hbase.master.info.port": "-1",
        "hbase.regionserver.info.port": "-1",
        "hbase.thrift.info.port": "-1",
        # The local filesystem cannot hflush/hsync the write-ahead log: without this a
        # standalone RegionServer refuses to start. Durability against a killed server needs HDFS.
        "hbase.unsafe.stream.capability.enforce": "false",
        # Table creation in about 0.5 s instead of 0.7, deletion in 0.3 instead of 0.45: the
        # master dispatches region assignments at once and the Thrift server's admin polls
        # often.
        "hbase.procedure.remote.dispatcher.delay.msec": "1",
        "hbase.client.pause": "20",
        # Hundreds of small tables live at once in a test run. With MSLAB on, every written
        # family of every region holds a 2 MB chunk of heap (600 families: 1.2 GB, an
        # OutOfMemoryError in a 768 MB heap); off, an idle region costs a few kilobytes.
        "hbase.hregion.memstore.mslab.enabled": "false",
        "hfile.block.cache.size": "0.2",
    }


def site_xml(properties: dict[str, str]) -> str:
    rows = "\n".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>"
                     for k, v in properties.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}\n</configuration>\n'


#: log4j2 writes each JVM's log to the file its ``-Dhbase.log.file`` names, at INFO.
LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:hbase.log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %m%n
rootLogger = INFO,file
logger.zookeeper.name = org.apache.zookeeper
logger.zookeeper.level = WARN
"""


def write_conf(layout: HBaseLayout, zookeeper_port: int) -> None:
    layout.conf.mkdir(parents=True, exist_ok=True)
    layout.logs.mkdir(parents=True, exist_ok=True)
    (layout.conf / "hbase-site.xml").write_text(site_xml(site_properties(layout, zookeeper_port)))
    (layout.conf / "log4j2.properties").write_text(LOG4J2)


def jvm_argv(java: str, layout: HBaseLayout, lib: Path, heap: str, name: str) -> list[str]:
    """``java`` with the heap, JDK 17 flags, logging to ``layout.log(name)`` and the class path
    (the conf folder first, so hbase-site.xml is found; then every jar of ``lib``)."""
    return [java, f"-Xmx{heap}", "-XX:+UseSerialGC", *JDK17_FLAGS,
            "-Dzookeeper.admin.enableServer=false",
            f"-Dhbase.log.file={layout.log(name).resolve()}",
            f"-Dlog4j2.configurationFile={(layout.conf / 'log4j2.properties').resolve()}",
            "-cp", f"{layout.conf.resolve()}:{lib.resolve()}/*"]


def master_argv(java: str, layout: HBaseLayout, lib: Path, heaps: JvmHeaps) -> list[str]:
    return [*jvm_argv(java, layout, lib, heaps.master, "master"), MASTER_CLASS, "start"]


def thrift_argv(java: str, layout: HBaseLayout, lib: Path, heaps: JvmHeaps,
                port: int) -> list[str]:
    """The Thrift1 server (not thrift2, which happybase does not speak): buffered transport,
    binary protocol, on ``LOOPBACK:port``, its info server off."""
    return [*jvm_argv(java, layout, lib, heaps.thrift, "thrift"), THRIFT_CLASS,
            "-b", LOOPBACK, "-p", str(port), "--infoport", "-1", "start"]
