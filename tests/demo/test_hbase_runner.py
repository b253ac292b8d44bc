"""``make hbase`` / ``make hbase-stop``: what a user sees when a tool is missing, when HBase
does not come up, and when there is nothing to stop; and that the jars are provisioned once.

A healthy start is what every ``make test`` run does first (tests/conftest.py starts the run's
HBase through the same ``runner.start``); ``test_the_runs_hbase_answers`` checks that one.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from airflow_partitions.demo.hbase import cli, provision, runner
from airflow_partitions.demo.hbase.site import HBaseLayout, site_properties
from tests.kv.conftest import REAL_HBASE_ENV, REAL_HBASE_SKIP

ROOT = Path(__file__).resolve().parents[2]


def path_with(tmp_path: Path, *tools: str) -> str:
    """A PATH holding only links to ``tools`` (the real ones), so the others are missing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in tools:
        found = shutil.which(tool)
        assert found, f"{tool} is needed on this machine for the test"
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def test_a_missing_java_is_one_line_naming_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", path_with(tmp_path))
    assert cli.main(["--root", str(tmp_path / "h"), "start", "--project", str(ROOT)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("cannot start HBase: `java` is not on PATH: install "
                       "openjdk-17-jre-headless (Debian: apt-get install "
                       "openjdk-17-jre-headless) and try again")
    assert runner.load(HBaseLayout(tmp_path / "h")) is None  # nothing was started


def test_a_missing_mvn_is_one_line_when_the_jars_are_not_there_yet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    (project / "hbase").mkdir(parents=True)
    shutil.copy(ROOT / "hbase" / "pom.xml", project / "hbase" / "pom.xml")
    monkeypatch.setenv("PATH", path_with(tmp_path, "java"))
    assert cli.main(["--root", str(tmp_path / "h"), "start", "--project", str(project)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "cannot start HBase: `mvn` is not on PATH: install maven (Debian: apt-get install "
        "maven) and try again")


def test_provisioned_jars_are_used_without_maven(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    lib = provision.lib_dir(ROOT)
    if not provision.provisioned(lib):
        pytest.skip("HBase's jars are not provisioned in this checkout (make hbase does it)")
    monkeypatch.setenv("PATH", path_with(tmp_path, "java"))  # no mvn: a call would fail
    assert provision.provision(ROOT, tmp_path / "maven.log") == lib
    assert not (tmp_path / "maven.log").exists()


def test_the_jar_folder_follows_the_pom(tmp_path: Path) -> None:
    """A changed pom (another version) gets a folder of its own; an unchanged one the same."""
    (tmp_path / "hbase").mkdir()
    pom = tmp_path / "hbase" / "pom.xml"
    pom.write_text("<project>2.6.1</project>")
    first = provision.lib_dir(tmp_path)
    assert provision.lib_dir(tmp_path) == first
    pom.write_text("<project>2.6.2</project>")
    assert provision.lib_dir(tmp_path) != first
    assert not provision.provisioned(first)  # no stamp, no jars: not complete


def test_an_unhealthy_start_shows_the_log_and_leaves_nothing_running(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lib = provision.lib_dir(ROOT)
    if not provision.provisioned(lib):
        pytest.skip("HBase's jars are not provisioned in this checkout (make hbase does it)")
    root = tmp_path / "h"
    # A 1 MB heap is refused by the JVM itself: the master exits at once.
    code = cli.main(["--root", str(root), "start", "--project", str(ROOT),
                     "--master-heap", "1m", "--timeout", "60"])
    out = capsys.readouterr().out
    assert code == 1
    assert "HBase failed to start; nothing is left running." in out
    assert "exited during start" in out
    assert f"--- {root / 'logs' / 'master.out'}" in out  # the tail of the master's output
    recorded = runner.load(HBaseLayout(root))
    assert recorded is not None
    assert not any(recorded.alive().values())
    assert cli.main(["--root", str(root), "stop"]) == 0
    assert cli.main(["--root", str(root), "stop"]) == 0  # safe twice
    assert capsys.readouterr().out.count("was not running") == 4


def test_stop_with_nothing_recorded_says_so(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--root", str(tmp_path), "stop"]) == 0
    assert capsys.readouterr().out == f"no HBase recorded under {tmp_path}\n"
    assert cli.main(["--root", str(tmp_path), "status"]) == 1


def test_every_listener_is_on_loopback_and_the_info_servers_are_off(tmp_path: Path) -> None:
    props = site_properties(HBaseLayout(tmp_path), zookeeper_port=2999)
    assert props["hbase.zookeeper.property.clientPort"] == "2999"
    assert {props[k] for k in ("hbase.master.ipc.address", "hbase.regionserver.ipc.address",
                               "hbase.zookeeper.quorum")} == {"127.0.0.1"}
    assert {props[k] for k in ("hbase.master.info.port", "hbase.regionserver.info.port",
                               "hbase.thrift.info.port")} == {"-1"}
    assert props["hbase.rootdir"] == f"file://{tmp_path.resolve()}/data/hbase"


def test_the_runs_hbase_answers() -> None:
    """The run's HBase (or the one named by the variable) creates, lists and drops a table."""
    target = os.environ.get(REAL_HBASE_ENV, "")
    if ":" not in target:
        pytest.skip(REAL_HBASE_SKIP)
    host, _, port = target.rpartition(":")
    assert runner.answers(int(port), host) is None
