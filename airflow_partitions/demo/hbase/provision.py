"""HBase's jars from Maven Central, copied once per pinned version into ``hbase/lib/``.

``hbase/pom.xml`` pins the version; ``mvn dependency:copy-dependencies`` resolves everything a
master, a RegionServer, ZooKeeper and the Thrift1 server need (about 190 jars, 120 MB) into
``hbase/lib/<pom digest>/``. A folder whose stamp matches the pom is used as it is, with no
Maven call: the first provisioning costs a download (Maven's own cache, ``~/.m2``, keeps it for
other checkouts), every later start costs a file read.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

#: The Maven project, relative to the repository root.
POM = Path("hbase/pom.xml")
STAMP = ".complete"
#: Classes that must be on the class path, one per jar we start from.
NEEDED_JARS = ("hbase-server-", "hbase-thrift-", "hbase-zookeeper-", "zookeeper-3", "hadoop-hdfs-3")


class ProvisionError(RuntimeError):
    """HBase cannot be provisioned here; the message says what to install or fix."""


def require_tool(name: str, package: str) -> str:
    """The path of ``name`` on PATH, or a one-line error naming what to install."""
    found = shutil.which(name)
    if found is None:
        raise ProvisionError(f"`{name}` is not on PATH: install {package} (Debian: "
                             f"apt-get install {package}) and try again")
    return found


def java_major(java: str) -> int:
    """The major version of ``java`` (17 for ``openjdk version "17.0.15"``)."""
    out = subprocess.run([java, "-version"], capture_output=True, text=True,  # noqa: S603
                         check=False).stderr
    for token in out.split():
        token = token.strip('"')
        if token[:1].isdigit():
            head = token.split(".")[0]
            return int(head) if head.isdigit() else 0
    return 0


def lib_dir(project: Path) -> Path:
    """Where the jars of the pom as it is now live: ``hbase/lib/<first 12 hex of its sha256>``."""
    digest = hashlib.sha256((project / POM).read_bytes()).hexdigest()[:12]
    return project / POM.parent / "lib" / digest


def provisioned(lib: Path) -> bool:
    """Whether ``lib`` was copied completely (a killed copy leaves no stamp)."""
    if not (lib / STAMP).is_file():
        return False
    names = [p.name for p in lib.glob("*.jar")]
    return all(any(n.startswith(prefix) for n in names) for prefix in NEEDED_JARS)


def provision(project: Path, log: Path) -> Path:
    """The folder of HBase's jars, downloading them with Maven only if they are not there yet.

    Raises ProvisionError on a missing ``java``/``mvn``, a Java other than 17 or later, or a
    failed resolution (with the end of Maven's output, kept whole in ``log``).
    """
    java = require_tool("java", "openjdk-17-jre-headless")
    if java_major(java) < 17:
        raise ProvisionError(f"{java} is not Java 17 or later: HBase here runs on Java 17 "
                             "(install openjdk-17-jre-headless)")
    project = project.resolve()
    lib = lib_dir(project)
    if provisioned(lib):
        return lib
    mvn = require_tool("mvn", "maven")
    if lib.exists():
        shutil.rmtree(lib)
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = [mvn, "-B", "-q", "-f", str(project / POM), "dependency:copy-dependencies",
            f"-DoutputDirectory={lib}", "-DincludeScope=runtime"]
    with log.open("wb") as out:
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False)  # noqa: S603
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise ProvisionError(f"mvn could not resolve HBase's jars (exit {done.returncode}; "
                             f"whole output in {log}):\n{tail}")
    (lib / STAMP).write_text(" ".join(argv) + "\n")
    if not provisioned(lib):
        raise ProvisionError(f"mvn finished but {lib} lacks one of {', '.join(NEEDED_JARS)}")
    return lib
