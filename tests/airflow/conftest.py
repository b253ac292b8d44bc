"""Fixtures of the Airflow-layer tests: a fresh sqlite catalog per test, the hook's view of it.

Airflow reads ``AIRFLOW_HOME`` when first imported; unless the caller set one, the tests use a
throw-away directory so nothing lands in ``~/airflow``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pendulum
import pytest

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="airflow-partitions-unit-"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")

from airflow_partitions.catalog import Catalog
from airflow_partitions.hooks.catalog import forget_catalogs, shared_catalog

T0 = pendulum.datetime(2024, 1, 1, tz="UTC")


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh sqlite store that the hook finds through ``$AIRFLOW_PARTITIONS_STORE``."""
    url = f"sqlite:///{tmp_path}/catalog.db"
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", url)
    monkeypatch.setenv("AIRFLOW_PARTITIONS_DATA_ROOT", str(tmp_path / "data"))
    monkeypatch.delenv("AIRFLOW_CONN_PARTITIONS_DEFAULT", raising=False)
    forget_catalogs()
    yield url
    forget_catalogs()


@pytest.fixture
def catalog(store_url: str) -> Catalog:
    """The very catalog object the hook hands out in this process."""
    return shared_catalog(store_url)


@pytest.fixture
def events(catalog: Catalog) -> Catalog:
    """``events``: ``raw`` HOURLY by (dt, region), ``rollup`` DAILY (preferred)."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    catalog.create_storage("events", "rollup", ["DAILY"], priority=5)
    return catalog


def register_hours(catalog: Catalog, first: int, last: int, regions: tuple[str, ...] = ("eu",),
                   day: str = "2024-01-01") -> None:
    """Register ``raw`` hours ``first..last`` (inclusive) of ``day`` for each region."""
    catalog.register("raw", "HOURLY", [
        {"dt": f"{day}-{h:02d}", "region": r} for h in range(first, last + 1) for r in regions
    ])


# -- end-to-end: one migrated AIRFLOW_HOME per session ------------------------------------------

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

    def airflow(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(VENV_BIN / "airflow"), *args], capture_output=True, text=True,
                              env=self.env, timeout=timeout, cwd=self.home)

    def test_dag(self, dag_id: str, source: str, logical_date: str = LOGICAL_DATE,
                 timeout: float = 300) -> str:
        """Write ``dags/<dag_id>.py`` and run ``airflow dags test``; return its output."""
        (self.dags / f"{dag_id}.py").write_text(textwrap.dedent(source))
        result = self.airflow("dags", "test", dag_id, logical_date, timeout=timeout)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-6000:]
        return output


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory: pytest.TempPathFactory) -> AirflowHome:
    home = tmp_path_factory.mktemp("airflow_home")
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
    migrated = airflow.airflow("db", "migrate")
    assert migrated.returncode == 0, migrated.stderr[-4000:]
    return airflow
