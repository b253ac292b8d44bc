"""A class-data archive of Spark's JVM, so the short local Spark jobs of the demo and the tests
start in about a third less CPU.

Why: a small local Spark job loads about eighteen thousand classes (``-Xlog:class+load``
counted them), and the demo's and the tests' jobs last seconds, so starting the JVM is most
of their cost. Java 17 can keep the classes one run loaded in an archive (AppCDS,
``-XX:ArchiveClassesAtExit``) and map it into every later JVM (``-XX:SharedArchiveFile``): a
small local job then took 5.1 s of CPU instead of 8.1 (docs/testing.md). Building it costs
one such job run with the archive being written (about 25 s) and about 170 MB under the
virtual environment.

It is used only where it fits: the JVM checks that the archive was written by the same Java
from the same jars on the same class path, else ignores it and loads classes as usual (the
archive never fails a job). The class path starts with Spark's configuration directory, so a
job with its own ``SPARK_CONF_DIR`` (the cluster's) runs without it.

``python -m airflow_partitions.demo.spark_archive`` builds the archive if it is missing (what
``make demo`` and ``make test`` do first) and prints its path.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

#: The JVM flags of a job of seconds: the C1 JIT alone and the serial GC start faster.
FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
#: Where the archives are kept: beside the jars they were made from.
ARCHIVE_DIR = Path(sys.prefix) / "spark-class-archive"
#: The building job's own deadline (seconds); a stuck build leaves no archive.
BUILD_TIMEOUT = 600


class ArchiveFailed(RuntimeError):
    """The archive could not be built; Spark's jobs run as they would without it."""


def spark_jars() -> Path:
    """The jars directory of the installed ``pyspark`` (found without importing it)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ArchiveFailed("pyspark is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def java_binary(env: Mapping[str, str] | None = None) -> Path | None:
    """The ``java`` Spark's launcher runs (``JAVA_HOME``'s, else the one on ``PATH``)."""
    env = os.environ if env is None else env
    home = env.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.exists():
        on_path = shutil.which("java", path=env.get("PATH"))
        found = Path(on_path) if on_path else None
    return found.resolve() if found is not None else None


def archive_key(java: Path, jars: Path) -> str:
    """What the archive depends on: the Java binary, and every jar's name, size and time.

    The JVM refuses an archive when any of them changed; a new key builds a new archive
    instead of keeping one it would refuse.
    """
    digest = hashlib.sha256(str(java).encode())
    stat = java.stat()
    digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    for jar in sorted(jars.glob("*.jar")):
        stat = jar.stat()
        digest.update(f"{jar.name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return f"spark-{metadata.version('pyspark')}-{digest.hexdigest()[:16]}.jsa"


def archive_path(directory: Path = ARCHIVE_DIR, env: Mapping[str, str] | None = None
                 ) -> Path | None:
    """Where this machine's archive is or would be; None without Java."""
    java = java_binary(env)
    return None if java is None else directory / archive_key(java, spark_jars())


def submit_opts(env: Mapping[str, str] | None = None, directory: Path = ARCHIVE_DIR) -> str:
    """``SPARK_SUBMIT_OPTS`` for a short local job: :data:`FAST_JVM`, and the archive when it
    has been built."""
    try:
        found = archive_path(directory, env)
    except (ArchiveFailed, OSError):  # no pyspark, or a jar that cannot be read: no archive
        return FAST_JVM
    if found is not None and found.is_file():
        return f"{FAST_JVM} -XX:SharedArchiveFile={found}"
    return FAST_JVM


def build(directory: Path = ARCHIVE_DIR, *, spark_submit: Path | None = None) -> Path:
    """The archive, built by one small local job (:func:`warm_up`) unless it is there.

    Written to a file of its own, then renamed: two builds at once both succeed, and a
    build cut off leaves no archive. Archives of other keys in ``directory`` (older jars or
    Java) are removed. Raises :class:`ArchiveFailed` with the job's output's tail.
    """
    target = archive_path(directory)
    if target is None:
        raise ArchiveFailed("no java on PATH and no JAVA_HOME")
    if target.is_file():
        return target
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArchiveFailed(f"cannot create {directory}: {exc}") from None
    submit = spark_submit or Path(sys.executable).parent / "spark-submit"
    with tempfile.TemporaryDirectory(prefix="spark-archive-", dir=directory) as work:
        partial = Path(work) / target.name
        env = dict(os.environ, SPARK_SUBMIT_OPTS=f"{FAST_JVM} -XX:ArchiveClassesAtExit={partial}",
                   PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                   PATH=f"{submit.parent}{os.pathsep}{os.environ.get('PATH', '')}")
        env.pop("SPARK_CONF_DIR", None)  # the default class path, which local jobs have
        try:
            done = subprocess.run(  # noqa: S603 - an argument list of our own paths
                [str(submit), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
                 "--conf", "spark.sql.shuffle.partitions=2", __file__, "--warm-up", work],
                env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ArchiveFailed(f"the warm-up job did not run: {exc}") from None
        if done.returncode != 0 or not partial.is_file():
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-20:])
            raise ArchiveFailed(f"the warm-up job exited {done.returncode} without an "
                                f"archive:\n{tail}")
        os.replace(partial, target)
    for other in directory.glob("spark-*.jsa"):
        if other != target:
            other.unlink(missing_ok=True)
    return target


def warm_up(work: Path) -> None:
    """What the archive is made from: a job that loads what the project's jobs load (a frame
    from Arrow, an aggregation with a shuffle, Parquet written and read, a join)."""
    from pyspark.sql import SparkSession

    from airflow_partitions.spark import frame_of_rows

    spark = SparkSession.builder.appName("spark-class-archive").getOrCreate()
    try:
        rows = [("eu" if n % 2 else "us", n) for n in range(100)]
        frame = frame_of_rows(spark, rows, "region string, amount long")
        totals = frame.groupBy("region").sum("amount")
        totals.write.mode("overwrite").parquet(str(work / "totals"))
        back = spark.read.parquet(str(work / "totals"))
        joined = back.join(frame, "region").count()
        if joined != 100:
            raise SystemExit(f"the warm-up job counted {joined} rows, not 100")
    finally:
        spark.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m airflow_partitions.demo.spark_archive",
        description="Build the class-data archive of Spark's JVM for short local jobs (if "
                    "missing) and print its path; SPARK_SUBMIT_OPTS="
                    "'-XX:SharedArchiveFile=<path>' uses it.")
    parser.add_argument("--dir", type=Path, default=ARCHIVE_DIR,
                        help=f"where archives are kept (default {ARCHIVE_DIR})")
    parser.add_argument("--warm-up", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.warm_up is not None:  # inside spark-submit, while the archive is written
        warm_up(args.warm_up)
        return 0
    try:
        print(build(args.dir))
    except ArchiveFailed as exc:
        print(f"spark class archive not built ({exc}); Spark's jobs start without it",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
