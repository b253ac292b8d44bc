"""Test helpers shared by every folder: clocks, fakes, module-wide catalogs, the Airflow-home
runner, the DagBag check.

Fixtures that wrap these live in ``tests/conftest.py``; a folder's own ``conftest.py`` may
override a fixture of the same name for that folder (e.g. ``tests/catalog`` runs ``catalog``
on every backend).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pendulum
import pytest

from airflow_partitions.catalog import Catalog, TimelineCache

ROOT = Path(__file__).resolve().parents[1]
T0 = pendulum.datetime(2024, 1, 1, tz="UTC")
_counter = itertools.count()


def run_cli(cat: Catalog, capsys: pytest.CaptureFixture[str], *args: str
            ) -> tuple[int, str, str]:
    """``airflow-partitions ARGS`` in this process on ``cat``'s store (its cache dropped
    first, as a new process would start): exit code, stdout, stderr."""
    from airflow_partitions.cli import main

    TimelineCache.for_store(cat.kv.url).invalidate()
    code = main(["--store", cat.kv.url, "--data-root", cat.data_root, *args])
    out, err = capsys.readouterr()
    return code, out, err


T = TypeVar("T")


def impatient_sqlite_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A SQLite catalog file whose writers give up on its lock at once (``lock_timeout=0``),
    made the hooks' fallback store (no ``partitions_default`` connection): another connection
    holding the lock is then an outage to every writing task. Returns (the file, its URL)."""
    from airflow_partitions.hooks.catalog import forget_catalogs

    path = tmp_path / "catalog.db"
    url = f"sqlite:///{path}?busy_timeout=1&lock_timeout=0"
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", url)
    monkeypatch.setenv("AIRFLOW_PARTITIONS_DATA_ROOT", str(tmp_path / "data"))
    monkeypatch.delenv("AIRFLOW_CONN_PARTITIONS_DEFAULT", raising=False)
    forget_catalogs()
    return path, url


def poll(what: str, check: Callable[[], T | None], timeout: float, every: float = 1.0) -> T:
    """``check()`` until it returns something, or fail saying what was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got is not None:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def unique(prefix: str) -> str:
    """A name no other test in this process uses (module-scoped catalogs are shared)."""
    return f"{prefix}{next(_counter)}"


def register_hours(catalog: Catalog, first: int, last: int, regions: tuple[str, ...] = ("eu",),
                   day: str = "2024-01-01") -> None:
    """Register ``raw`` hours ``first..last`` (inclusive) of ``day`` for each region."""
    catalog.register("raw", "HOURLY", [
        {"dt": f"{day}-{h:02d}", "region": r} for h in range(first, last + 1) for r in regions
    ])


def regions_fact(catalog: Catalog) -> Catalog:
    """``ev``: ``ev_raw`` HOURLY by (dt, region), ``region`` a dimension with domain eu, us
    (docs/dimensions.md); us has hours 00..03 of :data:`T0`'s day, eu 00..01 (eu lacks two)."""
    catalog.create_fact("ev")
    catalog.create_storage("ev", "ev_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"])
    region_hours(catalog, "us", 0, 3)
    region_hours(catalog, "eu", 0, 1)
    return catalog


def region_hours(catalog: Catalog, region: str, first: int, last: int) -> None:
    """Register ``ev_raw`` hours ``first..last`` (inclusive) of :data:`T0`'s day for ``region``."""
    catalog.register("ev_raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}", "region": region}
                                          for h in range(first, last + 1)])


def module_catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                   name: str, backend: str = "sqlite") -> Catalog:
    """A catalog with the fact ``ev``, for a module-scoped ``catalog`` fixture to yield and close.

    Module scoped, so hypothesis examples and module-level storages share one store instead of
    paying for a fresh one each; tests name their storages with ``unique()``. ``backend`` is
    ``sqlite`` (in a fresh directory) or ``hbase-testserver`` (the in-process HBase test double,
    under a fresh table prefix).
    """
    tmp = tmp_path_factory.mktemp(name)
    if backend == "sqlite":
        url = f"sqlite:///{tmp}/catalog.db"
    else:
        server: Any = request.getfixturevalue("hbase_test_server")
        url = f"{server.url}?table_prefix={unique(name)}_"
    catalog = Catalog(url, data_root=str(tmp / "data"), cache=TimelineCache())
    catalog.create_fact("ev")
    return catalog


class FakeTI:
    dag_id, task_id, run_id, try_number = "dag", "spark", "manual__2024-01-01T00:00:00", 1

    def __init__(self, xcom: dict[str, Any] | None = None) -> None:
        self.xcom = dict(xcom or {})
        self.pushed: dict[str, Any] = {}

    def xcom_pull(self, task_ids: str) -> Any:
        return self.xcom.get(task_ids)

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value


def load_dagbag(dag_folder: Path, home: Path, report: str) -> dict[str, Any]:
    """Import ``dag_folder`` through Airflow's own DagBag in a fresh process.

    ``report`` is a Python expression over the DagBag ``b`` whose value is printed as JSON;
    ``errors`` (the import errors) is always added. A fresh process, because Airflow reads its
    configuration once per process.
    """
    code = (
        "import json; from airflow.dag_processing.dagbag import DagBag; "
        f"b = DagBag(dag_folder={str(dag_folder)!r}); "
        f"r = {report}; r['errors'] = {{k: str(v) for k, v in b.import_errors.items()}}; "
        "print(json.dumps(r))"
    )
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW_PARTITIONS_DATA_ROOT": str(home / "data")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- end-to-end: a migrated AIRFLOW_HOME -------------------------------------------------------

VENV_BIN = Path(sys.executable).parent
LOGICAL_DATE = "2024-01-01T00:00:00+00:00"


@dataclass
class AirflowHome:
    """A migrated Airflow home whose DAGs run in subprocesses (no global state leaks here)."""

    home: Path
    dags: Path
    env: dict[str, str]

    @property
    def store_url(self) -> str:
        return self.env["AIRFLOW_PARTITIONS_STORE"]

    def airflow(self, *args: str, timeout: float = 300, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
        """Run the ``airflow`` command in this home; ``env`` adds to its environment."""
        return subprocess.run([str(VENV_BIN / "airflow"), *args], capture_output=True, text=True,
                              env={**self.env, **(env or {})}, timeout=timeout, cwd=self.home)

    def test_dag(self, dag_id: str, source: str, logical_date: str = LOGICAL_DATE,
                 timeout: float = 300, env: dict[str, str] | None = None) -> str:
        """Write ``dags/<dag_id>.py`` and run ``airflow dags test`` (``env`` adds to its
        environment); return its output."""
        (self.dags / f"{dag_id}.py").write_text(textwrap.dedent(source))
        result = self.airflow("dags", "test", dag_id, logical_date, timeout=timeout, env=env)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-6000:]
        return output


def make_airflow_home(home: Path) -> AirflowHome:
    """A fresh Airflow home in ``home`` with a migrated metadata DB, whose DAGs run ``airflow
    dags test``; the first call in a process migrates, later ones copy it (``MigratedHome``)."""
    dags = home / "dags"
    dags.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AIRFLOW_CONN_", "AIRFLOW__", "AIRFLOW_PARTITIONS_"))}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW_PARTITIONS_STORE": f"sqlite:///{home}/partitions.db",
        "AIRFLOW_PARTITIONS_DATA_ROOT": str(home / "data"),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(
            {"conn_type": "spark", "host": "local[1]", "extra": {"deploy-mode": "client"}}),
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    })
    airflow = AirflowHome(home, dags, env)
    global _MIGRATED
    if _MIGRATED is not None:
        _MIGRATED.copy_to(home)
        return airflow
    migrated = airflow.airflow("db", "migrate")
    assert migrated.returncode == 0, migrated.stderr[-4000:]
    _MIGRATED = MigratedHome.keep(home)
    return airflow


@dataclass(frozen=True)
class MigratedHome:
    """The metadata DB and ``airflow.cfg`` of the first home this process migrated.

    Later homes start from copies (``airflow db migrate`` costs seconds of CPU each time, a
    copy milliseconds). The ``airflow.cfg`` comes along, its paths moved to the new home:
    without one, services starting together each write their own with a different JWT
    secret, and refuse each other's tokens.
    """

    home: Path
    database: bytes
    config: str

    @classmethod
    def keep(cls, home: Path) -> MigratedHome:
        return cls(home, (home / "airflow.db").read_bytes(), (home / "airflow.cfg").read_text())

    def copy_to(self, home: Path) -> None:
        (home / "airflow.db").write_bytes(self.database)
        moved = re.sub(rf"{re.escape(str(self.home))}(?=/|$)", str(home), self.config,
                       flags=re.MULTILINE)
        (home / "airflow.cfg").write_text(moved)


_MIGRATED: MigratedHome | None = None
