"""Apache HBase distributed over HDFS on one machine: seven processes, as on seven hosts.

``make airflow-cluster`` serves its partition catalog from this. The parts, in start order:
a NameNode and a DataNode (:mod:`.hdfs`), ZooKeeper (HBase's own ``HQuorumPeer``), one HMaster,
two RegionServers and the Thrift1 server the catalog talks to. Each is a JVM in a process group
of its own with its own log, recorded as a pid file in the caller's records folder (the
cluster's ``run/``), so the cluster stops, reports and restarts them like its other parts.
Every listener is on 127.0.0.1: the NameNode's, ZooKeeper's, the master's, each
RegionServer's and Thrift's ports are chosen free at start and kept in the conf; web UIs are
off. The data (HDFS's blocks, ZooKeeper's snapshots) stays under the root across a stop, so a
start after a stop serves the same catalog.

Faults it is built to survive (``tests/e2e/test_cluster.py``): a RegionServer killed with
``kill -9`` is declared dead when its ZooKeeper session expires (:data:`SESSION_TIMEOUT_MS`,
5 s here against HBase's 90 s default), the master splits its write-ahead log from HDFS and
reopens its regions on the other RegionServer: a client's call waits 10 to 20 s (the longer
when ``hbase:meta`` moves too) and then succeeds, with every acknowledged write there. The
Thrift server and the master can stop and start again on their ports; reads and writes go on
without the master.

Memory, by default heaps (:class:`DistributedHeaps`): about 1.7 GB resident for the seven
JVMs right after start.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from airflow_partitions.demo.hbase import hdfs
from airflow_partitions.demo.hbase.provision import provision, require_tool
from airflow_partitions.demo.hbase.runner import answers
from airflow_partitions.demo.hbase.site import (
    JDK17_FLAGS,
    LOOPBACK,
    MASTER_CLASS,
    THRIFT_CLASS,
    site_xml,
)
from airflow_partitions.demo.layout import REPO
from airflow_partitions.demo.services.ports import free_port
from airflow_partitions.demo.services.processes import ServiceRecord, recorded, spawn_recorded
from airflow_partitions.demo.services.runner import log_tail

NAMENODE, DATANODE, ZOOKEEPER = "hdfs-namenode", "hdfs-datanode", "zookeeper"
MASTER, THRIFT = "hbase-master", "hbase-thrift"
REGIONSERVERS = ("hbase-regionserver-1", "hbase-regionserver-2")
#: Start order: HDFS and ZooKeeper; once the NameNode listens, the master, the RegionServers
#: and Thrift (each of those retries until what it needs answers).
PARTS = (NAMENODE, DATANODE, ZOOKEEPER, MASTER, *REGIONSERVERS, THRIFT)
#: Stop order, a tuple per stage stopped together: Thrift and the RegionServers (they flush
#: their memstores to HDFS, so the next start replays no log), the master, then ZooKeeper and
#: HDFS, which nothing needs any more.
STOP_STAGES = ((THRIFT, *REGIONSERVERS), (MASTER,), (ZOOKEEPER, DATANODE, NAMENODE))
REGIONSERVER_CLASS = "org.apache.hadoop.hbase.regionserver.HRegionServer"
ZOOKEEPER_CLASS = "org.apache.hadoop.hbase.zookeeper.HQuorumPeer"
#: How long a RegionServer may be silent before ZooKeeper ends its session and the master
#: reassigns its regions. HBase's default is 90 s; 5 s makes a killed RegionServer cost 10 to
#: 20 s of waiting. Shorter risks a RegionServer starved of CPU for that long being declared
#: dead (it then aborts; its regions move, nothing is lost).
SESSION_TIMEOUT_MS = 5000
START_TIMEOUT = 300.0
#: A RegionServer's log says this once it has joined the cluster.
SERVING = "Serving as "

LOG4J2 = """status = warn
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_OUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %m%n
rootLogger = INFO,console
logger.zookeeper.name = org.apache.zookeeper
logger.zookeeper.level = WARN
logger.statechange.name = org.apache.hadoop.hdfs.StateChange
logger.statechange.level = WARN
logger.blockstatechange.name = BlockStateChange
logger.blockstatechange.level = WARN
"""


class DistributedFailed(RuntimeError):
    """A part did not start or did not become ready; the message has the end of its log."""


@dataclass(frozen=True)
class DistributedHeaps:
    """Maximum heap of each JVM (``-Xmx``): what the catalog needs, with room for Airflow and
    Spark beside it on one machine."""

    namenode: str = "256m"
    datanode: str = "192m"
    zookeeper: str = "128m"
    master: str = "384m"
    regionserver: str = "384m"
    thrift: str = "256m"

    def of(self, part: str) -> str:
        if part in REGIONSERVERS:
            return self.regionserver
        return {NAMENODE: self.namenode, DATANODE: self.datanode, ZOOKEEPER: self.zookeeper,
                MASTER: self.master, THRIFT: self.thrift}[part]


class DistributedPortsJson(TypedDict):
    namenode: int
    zookeeper: int
    master: int
    regionservers: list[int]
    thrift: int


@dataclass(frozen=True)
class DistributedPorts:
    """The ports every part listens on, all on 127.0.0.1 (the DataNode's are the kernel's)."""

    namenode: int
    zookeeper: int
    master: int
    regionservers: tuple[int, ...]
    thrift: int

    @classmethod
    def choose(cls, taken: Iterable[int] = ()) -> DistributedPorts:
        used = set(taken)

        def pick() -> int:
            port = free_port(LOOPBACK, frozenset(used))
            used.add(port)
            return port

        return cls(pick(), pick(), pick(), tuple(pick() for _ in REGIONSERVERS), pick())

    def all(self) -> list[int]:
        return [self.namenode, self.zookeeper, self.master, *self.regionservers, self.thrift]

    def to_json(self) -> DistributedPortsJson:
        return {"namenode": self.namenode, "zookeeper": self.zookeeper, "master": self.master,
                "regionservers": list(self.regionservers), "thrift": self.thrift}

    @classmethod
    def from_json(cls, doc: DistributedPortsJson) -> DistributedPorts:
        return cls(int(doc["namenode"]), int(doc["zookeeper"]), int(doc["master"]),
                   tuple(int(p) for p in doc["regionservers"]), int(doc["thrift"]))


@dataclass(frozen=True)
class DistributedLayout:
    """``root`` holds the conf and the data; ``records`` each part's pid file and log."""

    root: Path
    records: Path

    @property
    def conf(self) -> Path:
        return self.root / "conf"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def log(self, part: str) -> Path:
        return self.records / f"{part}.log"

    def pid_file(self, part: str) -> Path:
        return self.records / f"{part}.pid"


def site_properties(layout: DistributedLayout, ports: DistributedPorts) -> dict[str, str]:
    """hbase-site.xml for every HBase part (RegionServers get their port on the command line)."""
    data = layout.data.resolve()
    return {
        "hbase.cluster.distributed": "true",
        "hbase.rootdir": f"hdfs://{LOOPBACK}:{ports.namenode}/hbase",
        "hbase.tmp.dir": str(data / "tmp"),
        "hbase.zookeeper.quorum": LOOPBACK,
        "hbase.zookeeper.property.clientPort": str(ports.zookeeper),
        "hbase.zookeeper.property.dataDir": str(data / "zookeeper"),
        # ZooKeeper grants sessions between 2 and 20 ticks: a 1 s tick allows the 5 s below.
        "hbase.zookeeper.property.tickTime": "1000",
        "zookeeper.session.timeout": str(SESSION_TIMEOUT_MS),
        "hbase.master.ipc.address": LOOPBACK,
        "hbase.regionserver.ipc.address": LOOPBACK,
        "hbase.master.port": str(ports.master),
        "hbase.master.info.port": "-1",
        "hbase.regionserver.info.port": "-1",
        "hbase.thrift.info.port": "-1",
        "hbase.procedure.remote.dispatcher.delay.msec": "1",
        # The master waits this long for more RegionServers before it assigns regions (4.5 s
        # by default, on every start); both are usually there within it.
        "hbase.master.wait.on.regionservers.timeout": "1500",
        # Each written family of each region would hold a 2 MB chunk of heap with MSLAB on.
        "hbase.hregion.memstore.mslab.enabled": "false",
        "hfile.block.cache.size": "0.2",
    }


def write_conf(layout: DistributedLayout, ports: DistributedPorts) -> None:
    """hbase-site.xml, core-site.xml, hdfs-site.xml and the logging configuration."""
    conf, data = layout.conf, layout.data.resolve()
    conf.mkdir(parents=True, exist_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    layout.records.mkdir(parents=True, exist_ok=True)
    for name in hdfs.WEBAPPS:
        (conf / "webapps" / name).mkdir(parents=True, exist_ok=True)
    (conf / "hbase-site.xml").write_text(site_xml(site_properties(layout, ports)))
    (conf / "core-site.xml").write_text(site_xml(hdfs.core_properties(ports.namenode, data)))
    (conf / "hdfs-site.xml").write_text(site_xml(hdfs.hdfs_properties(ports.namenode, data)))
    (conf / "log4j2.properties").write_text(LOG4J2)
    (conf / "ports.json").write_text(json.dumps(ports.to_json()) + "\n")


def load_ports(layout: DistributedLayout) -> DistributedPorts | None:
    """The ports the last start wrote into the conf (a restarted part keeps its port)."""
    try:
        return DistributedPorts.from_json(json.loads((layout.conf / "ports.json").read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def jvm(java: str, layout: DistributedLayout, lib: Path, heap: str) -> list[str]:
    """``java`` with the heap, the JDK 17 flags, C1 only (a fraction of the start-up CPU of the
    full JIT, ample for a catalog's load), and the conf folder before every jar."""
    conf = layout.conf.resolve()
    return [java, f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Djava.net.preferIPv4Stack=true", *JDK17_FLAGS,
            "-Dzookeeper.admin.enableServer=false",
            f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}",
            "-cp", f"{conf}:{lib.resolve()}/*"]


def part_argv(part: str, java: str, layout: DistributedLayout, lib: Path,
              heaps: DistributedHeaps, ports: DistributedPorts) -> list[str]:
    """The command line of one part."""
    if part not in PARTS:
        raise ValueError(f"no such part {part!r}; the parts are {', '.join(PARTS)}")
    base = jvm(java, layout, lib, heaps.of(part))
    if part == NAMENODE:
        return hdfs.namenode_argv(base)
    if part == DATANODE:
        return hdfs.datanode_argv(base)
    if part == ZOOKEEPER:
        return [*base, ZOOKEEPER_CLASS, "start"]
    if part == MASTER:
        return [*base, MASTER_CLASS, "start"]
    if part in REGIONSERVERS:
        n = REGIONSERVERS.index(part)
        tmp = layout.data.resolve() / "tmp" / part
        return [*base, REGIONSERVER_CLASS,
                "-D", f"hbase.regionserver.port={ports.regionservers[n]}",
                "-D", f"hbase.tmp.dir={tmp}", "start"]
    return [*base, THRIFT_CLASS, "-b", LOOPBACK, "-p", str(ports.thrift),
            "--infoport", "-1", "start"]


def java_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment without HBASE_*, HADOOP_* and CLASSPATH settings meant for another
    installation."""
    env = {k: v for k, v in (base if base is not None else os.environ).items()
           if not k.startswith(("HBASE_", "HADOOP_", "CLASSPATH"))}
    env.setdefault("LANG", "C.UTF-8")
    return env


class DistributedHBase:
    """One distributed HBase under ``layout``: start it whole, start a part again, check it."""

    def __init__(self, layout: DistributedLayout, ports: DistributedPorts,
                 heaps: DistributedHeaps | None = None) -> None:
        self.layout = layout
        self.ports = ports
        self.heaps = heaps or DistributedHeaps()
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._log_offsets: dict[str, int] = {}
        self._java: str | None = None
        self._lib: Path | None = None

    @property
    def store_url(self) -> str:
        return f"hbase://{LOOPBACK}:{self.ports.thrift}?table_prefix=partitions"

    def start(self, project: Path, progress: Callable[[str], None] = lambda line: None,
              timeout: float = START_TIMEOUT) -> None:
        """Provision the jars, write the conf, format HDFS the first time, start every part,
        and return once both RegionServers serve and a table can be created through Thrift.

        Raises ProvisionError (nothing started) or DistributedFailed (the caller stops what
        its records folder holds)."""
        java = self._java = require_tool("java", "openjdk-17-jre-headless")
        began = time.monotonic()
        self._lib = provision(project, self.layout.records / "maven.log")
        write_conf(self.layout, self.ports)
        if not hdfs.formatted(self.layout.data.resolve()):
            self._format(java)
            progress(f"HDFS formatted in {self.layout.data}")
        for part in (NAMENODE, DATANODE, ZOOKEEPER):
            self.start_part(part)
        # The master gives up (and exits) when HDFS does not answer within its client's
        # retries; on a loaded machine a NameNode can take longer than that to listen.
        self.wait_listening(NAMENODE, self.ports.namenode, began + timeout)
        for part in (MASTER, *REGIONSERVERS, THRIFT):
            self.start_part(part)
        self.wait_ready(began + timeout)
        progress(f"HBase on HDFS (NameNode {LOOPBACK}:{self.ports.namenode}, ZooKeeper "
                 f"{LOOPBACK}:{self.ports.zookeeper}, master, 2 RegionServers, Thrift1 "
                 f"{LOOPBACK}:{self.ports.thrift}) ready in {time.monotonic() - began:.0f} s")

    def _format(self, java: str) -> None:
        assert self._lib is not None
        log = self.layout.log("hdfs-format")
        argv = hdfs.format_argv(jvm(java, self.layout, self._lib, self.heaps.namenode))
        with log.open("ab") as out:
            done = subprocess.run(argv, env=java_env(), stdout=out,  # noqa: S603
                                  stderr=subprocess.STDOUT, timeout=300, check=False)
        if done.returncode != 0:
            raise DistributedFailed(f"formatting HDFS failed (exit {done.returncode})\n"
                                    f"{tail(log)}")

    def start_part(self, part: str) -> ServiceRecord:
        """Start ``part`` on its ports and record it (its pid file); its log is appended to."""
        if self._java is None:
            self._java = require_tool("java", "openjdk-17-jre-headless")
        if self._lib is None:
            self._lib = provision(REPO, self.layout.records / "maven.log")
        log = self.layout.log(part)
        self._log_offsets[part] = log.stat().st_size if log.exists() else 0
        workdir = self.layout.data / "work" / part
        workdir.mkdir(parents=True, exist_ok=True)
        argv = part_argv(part, self._java, self.layout, self._lib, self.heaps, self.ports)
        # its spec beside its pid file: the supervisor starts it again alike
        proc, record = spawn_recorded(self.layout.records, part, argv, java_env(), workdir,
                                      log=log)
        self.procs[part] = proc
        return record

    def new_log(self, part: str) -> str:
        """What ``part`` logged since it was last started by this object."""
        log = self.layout.log(part)
        try:
            with log.open("rb") as f:
                f.seek(self._log_offsets.get(part, 0))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def serving(self, part: str) -> bool:
        """Whether a RegionServer started by this object has joined the cluster."""
        return SERVING + f"localhost,{self.ports.regionservers[REGIONSERVERS.index(part)]}," \
            in self.new_log(part)

    def wait_ready(self, deadline: float, parts: Iterable[str] = REGIONSERVERS) -> None:
        """Until the RegionServers among ``parts`` serve and Thrift creates, lists and drops a
        table; DistributedFailed with the log's end if a part exits or the deadline passes."""
        waiting = [p for p in parts if p in REGIONSERVERS]
        why: str | None = "not tried yet"
        while time.monotonic() < deadline:
            self.check_alive()
            waiting = [p for p in waiting if not self.serving(p)]
            if not waiting:
                why = answers(self.ports.thrift)
                if why is None:
                    return
            time.sleep(0.5)
        raise DistributedFailed(
            f"HBase not ready before the deadline (waiting for {', '.join(waiting) or 'Thrift'}"
            f"; last: {why})\n" + "\n".join(tail(self.layout.log(p)) for p in PARTS))

    def wait_listening(self, part: str, port: int, deadline: float) -> None:
        """Until ``part`` accepts connections on ``port``; DistributedFailed if it exits or
        the deadline passes."""
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                with socket.create_connection((LOOPBACK, port), timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        raise DistributedFailed(f"{part} is not listening on {LOOPBACK}:{port} before the "
                                f"deadline\n{tail(self.layout.log(part))}")

    def check_alive(self) -> None:
        """DistributedFailed naming the first part started here that has exited."""
        for part, proc in self.procs.items():
            code = proc.poll()
            if code is not None:
                raise DistributedFailed(f"{part} exited with status {code}; the end of its log "
                                        f"({self.layout.log(part)}):\n"
                                        f"{tail(self.layout.log(part))}")

    def forget(self, part: str) -> None:
        """Stop watching ``part`` (it was stopped or killed on purpose) and reap it."""
        proc = self.procs.pop(part, None)
        if proc is not None:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass

    def region_servers(self, tables: Iterable[bytes]) -> dict[str, int]:
        """How many regions of ``tables`` each RegionServer part holds now (HBase's own
        answer, through Thrift's ``getTableRegions``)."""
        import happybase

        by_port = {port: part for part, port in zip(REGIONSERVERS, self.ports.regionservers,
                                                    strict=True)}
        counts = dict.fromkeys(REGIONSERVERS, 0)
        conn = happybase.Connection(LOOPBACK, self.ports.thrift, timeout=30_000)
        try:
            for table in tables:
                for region in conn.client.getTableRegions(table):
                    part = by_port.get(int(region.port))
                    if part is not None:
                        counts[part] += 1
        finally:
            conn.close()
        return counts


def tail(log: Path, lines: int = 25) -> str:
    """The end of one part's log, under a line naming the file (a failure shows several)."""
    return f"--- {log}\n{log_tail(log, lines)}"


def stop(records: Path, grace: float = 30.0) -> list[str]:
    """Stop the parts recorded in ``records`` stage by stage (:data:`STOP_STAGES`), removing
    the pid files of what is gone; a line per part. Safe to call twice."""
    from airflow_partitions.demo.services.processes import stop_groups

    lines: list[str] = []
    for stage in STOP_STAGES:
        records_now = [r for r in recorded(records) if r.name in stage]
        lines += stop_groups(records_now, grace)
        for record in records_now:
            if not record.live_members():
                (records / f"{record.name}.pid").unlink(missing_ok=True)
    return lines
