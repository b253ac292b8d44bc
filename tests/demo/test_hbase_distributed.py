"""The distributed HBase's files and command lines, without starting it.

Starting it, and its faults, are ``tests/e2e/test_cluster.py``'s (the cluster's catalog). Here:
what every part is told, so that seven JVMs on one machine do not collide and stay on loopback.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from airflow_partitions.demo.hbase import distributed, hdfs
from airflow_partitions.demo.hbase.distributed import (
    PARTS,
    REGIONSERVERS,
    DistributedHBase,
    DistributedLayout,
    DistributedPorts,
    load_ports,
    part_argv,
    write_conf,
)


def site(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot()
    return {p.findtext("name") or "": p.findtext("value") or "" for p in root.iter("property")}


@pytest.fixture
def layout(tmp_path: Path) -> DistributedLayout:
    return DistributedLayout(tmp_path / "catalog", tmp_path / "run")


def test_every_part_has_its_own_port_and_all_are_on_loopback(layout: DistributedLayout) -> None:
    ports = DistributedPorts.choose()
    assert len(set(ports.all())) == len(ports.all()) == 6
    write_conf(layout, ports)
    hbase, core, hdfs_site = (site(layout.conf / name) for name in
                              ("hbase-site.xml", "core-site.xml", "hdfs-site.xml"))
    assert hbase["hbase.cluster.distributed"] == "true"
    assert hbase["hbase.rootdir"] == f"hdfs://127.0.0.1:{ports.namenode}/hbase"
    assert core["fs.defaultFS"] == f"hdfs://127.0.0.1:{ports.namenode}"
    assert hbase["hbase.zookeeper.property.clientPort"] == str(ports.zookeeper)
    # ZooKeeper grants at most 20 ticks: the RegionServers' session must fit in that.
    assert int(hbase["zookeeper.session.timeout"]) <= 20 * int(
        hbase["hbase.zookeeper.property.tickTime"])
    addresses = [v for k, v in {**hbase, **hdfs_site}.items()
                 if k.endswith(("address", "quorum"))]
    assert addresses and all(v.startswith("127.0.0.1") for v in addresses), addresses
    assert all(hbase[k] == "-1" for k in hbase if k.endswith("info.port"))  # no web UIs
    assert hdfs_site["dfs.replication"] == "1"
    assert load_ports(layout) == ports  # a restarted part finds its port again
    for name in hdfs.WEBAPPS:
        assert (layout.conf / "webapps" / name).is_dir()


def test_each_regionserver_gets_its_port_and_temp_dir_on_its_command_line(
        layout: DistributedLayout) -> None:
    ports = DistributedPorts.choose()
    lib = layout.root / "lib"
    argvs = {part: part_argv(part, "java", layout, lib, distributed.DistributedHeaps(), ports)
             for part in PARTS}
    for n, part in enumerate(REGIONSERVERS):
        argv = argvs[part]
        assert f"hbase.regionserver.port={ports.regionservers[n]}" in argv
        assert any(a.startswith("hbase.tmp.dir=") and a.endswith(part) for a in argv)
    thrift = argvs[distributed.THRIFT]
    assert thrift[thrift.index("-p") + 1] == str(ports.thrift)
    assert thrift[thrift.index("-b") + 1] == "127.0.0.1"
    assert argvs[distributed.NAMENODE][-1] == hdfs.NAMENODE_CLASS
    assert all(f"-Xmx{distributed.DistributedHeaps().of(p)}" in argvs[p] for p in PARTS)
    with pytest.raises(ValueError, match="no such part 'hbase-backup-master'"):
        part_argv("hbase-backup-master", "java", layout, lib, distributed.DistributedHeaps(),
                  ports)


def test_ports_survive_a_json_round_trip() -> None:
    ports = DistributedPorts.choose()
    assert DistributedPorts.from_json(json.loads(json.dumps(ports.to_json()))) == ports


def test_stop_stages_cover_every_part_once_hdfs_and_zookeeper_last() -> None:
    flat = [part for stage in distributed.STOP_STAGES for part in stage]
    assert sorted(flat) == sorted(PARTS)
    assert set(distributed.STOP_STAGES[-1]) == {distributed.ZOOKEEPER, distributed.DATANODE,
                                                distributed.NAMENODE}
    assert distributed.THRIFT in distributed.STOP_STAGES[0]


def test_a_regionserver_serves_only_once_its_new_log_says_so(layout: DistributedLayout) -> None:
    """A restarted RegionServer's log is appended to: the line from before does not count."""
    ports = DistributedPorts.choose()
    hbase = DistributedHBase(layout, ports)
    part = REGIONSERVERS[0]
    log = layout.log(part)
    log.parent.mkdir(parents=True)
    line = f"... Serving as localhost,{ports.regionservers[0]},1795863109435, RpcServer ...\n"
    log.write_text(line)
    hbase._log_offsets[part] = log.stat().st_size  # as start_part records it
    assert not hbase.serving(part)
    with log.open("a") as out:
        out.write(line)
    assert hbase.serving(part)
    assert not hbase.serving(REGIONSERVERS[1])


def test_stopping_nothing_recorded_is_safe(tmp_path: Path) -> None:
    assert distributed.stop(tmp_path) == []
