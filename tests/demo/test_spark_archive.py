"""The class-data archive of Spark's JVM: keyed by what the JVM checks, built whole or not at
all, used by a real job, and harmless when it does not fit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_partitions.demo import spark_archive
from airflow_partitions.demo.services.environment import VENV_BIN, airflow_environment
from airflow_partitions.demo.spark_archive import (
    FAST_JVM,
    ArchiveFailed,
    archive_key,
    archive_path,
    build,
    java_binary,
    spark_jars,
    submit_opts,
)

JOB = """
import sys
from pathlib import Path
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
groups = spark.range(10).selectExpr("id % 2 AS k").groupBy("k").count().count()
Path(sys.argv[1]).write_text(f"counted {groups}")
spark.stop()
"""


def fake_jars(root: Path) -> Path:
    jars = root / "jars"
    jars.mkdir()
    for name in ("a.jar", "b.jar"):
        (jars / name).write_bytes(b"jar " + name.encode())
    return jars


def test_the_key_follows_every_jar_and_the_java_binary(tmp_path: Path) -> None:
    jars = fake_jars(tmp_path)
    java = tmp_path / "java"
    java.write_bytes(b"a java")
    first = archive_key(java, jars)
    assert first == archive_key(java, jars)
    assert first.startswith("spark-") and first.endswith(".jsa")

    (jars / "b.jar").write_bytes(b"another build of b")  # a reinstalled pyspark
    second = archive_key(java, jars)
    assert second != first
    (jars / "c.jar").write_bytes(b"c")  # one more jar
    assert archive_key(java, jars) != second
    other = tmp_path / "other-java"
    other.write_bytes(b"a java")  # another Java, same bytes
    assert archive_key(other, jars) != archive_key(java, jars)


def test_submit_opts_add_the_archive_only_once_it_is_built(tmp_path: Path) -> None:
    assert submit_opts(directory=tmp_path) == FAST_JVM
    target = archive_path(tmp_path)
    assert target is not None and target.parent == tmp_path
    target.write_bytes(b"built")
    assert submit_opts(directory=tmp_path) == f"{FAST_JVM} -XX:SharedArchiveFile={target}"


def test_without_java_there_is_no_archive_and_a_build_says_why(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert java_binary() is None
    assert submit_opts(directory=tmp_path) == FAST_JVM
    with pytest.raises(ArchiveFailed, match="no java"):
        build(tmp_path)


def test_a_failed_build_leaves_nothing_behind(tmp_path: Path) -> None:
    submit = tmp_path / "spark-submit"
    submit.write_text("#!/bin/sh\necho 'Exception in thread main: no cluster' >&2\nexit 3\n")
    submit.chmod(0o755)
    kept = tmp_path / "archives"
    with pytest.raises(ArchiveFailed, match=r"exited 3 without an archive:\n.*no cluster"):
        build(kept, spark_submit=submit)
    assert list(kept.iterdir()) == []


def test_a_build_keeps_an_archive_already_there(tmp_path: Path) -> None:
    target = archive_path(tmp_path)
    assert target is not None
    target.write_bytes(b"built before")
    stale = tmp_path / "spark-0.0.0-0000000000000000.jsa"
    stale.write_bytes(b"for older jars")
    assert build(tmp_path, spark_submit=tmp_path / "never-run") == target
    assert target.read_bytes() == b"built before"
    assert stale.exists()  # only a new build removes other keys


def test_a_new_build_is_renamed_into_place_and_replaces_other_keys(tmp_path: Path) -> None:
    """A stand-in ``spark-submit`` writes the archive where the JVM would at its exit (the
    path in ``SPARK_SUBMIT_OPTS``): it is moved to its key's name, and nothing else stays."""
    submit = tmp_path / "spark-submit"
    submit.write_text('#!/bin/sh\nfor opt in $SPARK_SUBMIT_OPTS; do case "$opt" in '
                      '-XX:ArchiveClassesAtExit=*) echo archived > "${opt#*=}";; esac; done\n')
    submit.chmod(0o755)
    kept = tmp_path / "archives"
    kept.mkdir()
    stale = kept / "spark-0.0.0-0000000000000000.jsa"
    stale.write_bytes(b"for older jars")
    built = build(kept, spark_submit=submit)
    assert built == archive_path(kept)
    assert built.read_text() == "archived\n"
    assert list(kept.iterdir()) == [built]


def test_the_services_environment_starts_short_jobs_fast_unless_the_caller_chose(
        tmp_path: Path) -> None:
    env = airflow_environment(tmp_path, tmp_path, "sqlite:///x.db", tmp_path,
                              base={"PATH": os.environ.get("PATH", "")})
    assert env["SPARK_SUBMIT_OPTS"].startswith(FAST_JVM)
    mine = airflow_environment(tmp_path, tmp_path, "sqlite:///x.db", tmp_path,
                               base={"SPARK_SUBMIT_OPTS": "-Xmx2g"})
    assert mine["SPARK_SUBMIT_OPTS"] == "-Xmx2g"


def test_a_damaged_archive_never_fails_a_jvm(tmp_path: Path) -> None:
    java = java_binary()
    assert java is not None
    damaged = tmp_path / "damaged.jsa"
    damaged.write_bytes(b"\x00" * 4096)
    done = subprocess.run([str(java), f"-XX:SharedArchiveFile={damaged}", "-version"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.e2e
def test_a_local_job_loads_spark_from_the_archive(tmp_path: Path) -> None:
    """The archive of this virtual environment (``make test`` built it first; built here
    otherwise): a real ``spark-submit`` maps Spark's classes from it."""
    archive = build()
    job = tmp_path / "job.py"
    job.write_text(JOB)
    answer, loaded = tmp_path / "answer.txt", tmp_path / "classes.log"
    env = dict(os.environ, SPARK_SUBMIT_OPTS=f"{submit_opts()} "
               f"-Xlog:class+load=info:file={loaded}",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("SPARK_CONF_DIR", None)
    done = subprocess.run([str(VENV_BIN / "spark-submit"), "--master", "local[1]", "--conf",
                           "spark.ui.enabled=false", str(job), str(answer)], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert answer.read_text() == "counted 2"
    loads = [line for line in loaded.read_text().splitlines()
             if "org.apache.spark.SparkContext " in line]
    assert loads and "shared objects file (top)" in loads[0], (archive, loads)
    assert spark_jars().is_dir() and archive.stat().st_size > 10_000_000


@pytest.mark.e2e
def test_the_warm_up_job_runs_what_the_archive_is_made_of(tmp_path: Path) -> None:
    """What ``build`` runs under ``spark-submit`` while the archive is written: the module
    itself with ``--warm-up``, a job that writes and reads Parquet (a failing one would leave
    every job without the archive)."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([str(VENV_BIN / "spark-submit"), "--master", "local[1]", "--conf",
                           "spark.ui.enabled=false", spark_archive.__file__, "--warm-up",
                           str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "totals").glob("*.parquet"))
    help_text = subprocess.run([sys.executable, "-m", "airflow_partitions.demo.spark_archive",
                                "--help"], capture_output=True, text=True, check=True).stdout
    assert "--warm-up" not in help_text and "--dir" in help_text
