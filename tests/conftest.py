"""Fixtures every test folder may use: a fresh sqlite catalog per test (the hook's view of it),
a migrated Airflow home and a local SparkSession, both one per session.

Airflow reads ``AIRFLOW_HOME`` when first imported; unless the caller set one, the tests use a
throw-away directory so nothing lands in ``~/airflow``. Helpers live in ``tests/helpers.py``.

The hooks below decide the tiers and the order: which tests are ``e2e`` (``make check`` leaves
them out), which modules share a pytest-xdist worker, which run first (docs/testing.md).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="airflow-partitions-unit-"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
# pytest-xdist's workers (``make test`` runs ``pytest -n``) start with COLUMNS=80, which the CLI
# honours as the user's width; a serial run has no COLUMNS, so the CLI's own piped width applies.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
# Every Spark JVM the tests start (spark-submit, and the in-process session's gateway) runs a
# job of seconds: the C1 JIT alone halves its start-up CPU, and the class-data archive `make
# test` builds first cuts about a third again (docs/testing.md). A caller's own setting wins.
from airflow_partitions.demo import spark_archive  # after AIRFLOW_HOME

os.environ.setdefault("SPARK_SUBMIT_OPTS", spark_archive.submit_opts())

import tests.hypothesis_budget  # noqa: F401  (registers and loads the Hypothesis profile)
from airflow_partitions.catalog import Catalog
from airflow_partitions.demo.hbase import runner as hbase_runner
from airflow_partitions.demo.hbase.site import HBaseLayout
from airflow_partitions.hooks.catalog import forget_catalogs, shared_catalog
from tests.helpers import AirflowHome, make_airflow_home
from tests.xdist_scheduling import END_TO_END, is_background, run_in_background

#: ``AIRFLOW_PARTITIONS_TEST_HBASE=start`` (what ``make test`` sets): the run starts one real
#: HBase before the workers and points every ``hbase-real`` test at it; ``host:port`` uses a
#: running one; unset, those tests are skipped.
REAL_HBASE_ENV = "AIRFLOW_PARTITIONS_TEST_HBASE"
_session_hbase: list[HBaseLayout] = []


def pytest_configure(config: pytest.Config) -> None:
    """Start the run's real HBase once, in the controller, before pytest-xdist's workers start
    (they inherit its address in the environment); a background worker lowers its priority."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and is_background(worker, int(os.environ["PYTEST_XDIST_WORKER_COUNT"])):
        run_in_background()
    if os.environ.get(REAL_HBASE_ENV, "").strip() != "start" or hasattr(config, "workerinput"):
        return
    layout = HBaseLayout(Path(tempfile.mkdtemp(prefix="airflow-partitions-hbase-")))
    try:
        hbase = hbase_runner.start(Path(__file__).resolve().parents[1], layout)
    except Exception as exc:  # a run asked for HBase: failing to start it fails the run
        raise pytest.UsageError(f"{REAL_HBASE_ENV}=start: HBase did not start: {exc}") from exc
    _session_hbase.append(layout)
    subprocess.Popen([sys.executable, "-m", "tests.hbase_watchdog", str(os.getpid()),
                      str(layout.root)], cwd=Path(__file__).resolve().parents[1],
                     start_new_session=True, stdin=subprocess.DEVNULL)
    os.environ[REAL_HBASE_ENV] = hbase.thrift_address
    print(f"real HBase for this run: {hbase.thrift_address} (under {layout.root})")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the run's HBase and delete its data (a throw-away HBase: no graceful flush)."""
    while _session_hbase:
        layout = _session_hbase.pop()
        hbase_runner.stop(layout, grace=5)
        shutil.rmtree(layout.root, ignore_errors=True)  # the watchdog then ends too


#: Fixtures that make a test end-to-end: a Spark JVM, or ``airflow`` commands in a migrated home.
E2E_FIXTURES = frozenset({"spark", "airflow_home"})


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which reads the groups into ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests that use an end-to-end fixture ``e2e`` (``make check`` leaves them out) and
    put the modules that use the Spark session in one ``xdist_group``, and every other module
    with end-to-end tests in one of its own (``tests/xdist_scheduling.py``); then run the modules
    with end-to-end tests first (a stable sort, so each module's tests stay together): under
    ``pytest -n`` (``make test``) the long ones start at once and the short ones fill in
    around them, instead of one long module ending the run alone."""
    spark_modules = {module_of(item) for item in items
                     if "spark" in getattr(item, "fixturenames", ())}
    for item in items:
        if E2E_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)
        if module_of(item) in spark_modules:
            item.add_marker(pytest.mark.xdist_group(f"{END_TO_END}spark"))
    heavy = {module_of(item) for item in items if item.get_closest_marker("e2e")}
    for item in items:  # every end-to-end module is a group: background workers leave them
        if module_of(item) in heavy and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(f"{END_TO_END}{module_of(item)}"))
    items.sort(key=lambda item: (0, LONGEST.get(module_of(item), len(LONGEST)))
               if module_of(item) in heavy else (1, 0))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Refuse a ``--dist loadgroup`` run whose groups did not reach the test ids: pytest-xdist
    schedules by the ``@group`` suffix, and without it every module would be on its own (the
    Spark session started per worker, the services per module), with no error."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [item.nodeid for item in session.items
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
    if lost:
        raise pytest.UsageError(f"pytest-xdist's loadgroup did not mark {len(lost)} grouped "
                                f"tests, {lost[0]} first: is pytest newer than pyproject.toml "
                                "allows?")


#: The longest end-to-end modules, longest first (docs/testing.md has their times): each
#: worker starts on one of them, and the shorter ones fill in after, so no worker takes the
#: cluster after an hour's worth of others. (``xdist_group`` members share their group's rank.)
LONGEST = {
    "tests/e2e/test_cluster.py": 0,
    "tests/e2e/test_scheduler.py": 1,
    "tests/e2e/test_coverage_assets.py": 1,
    "tests/demo/test_demo_e2e.py": 2,
}


def module_of(item: pytest.Item) -> str:
    """The test file of an item (``tests/e2e/test_scheduler.py``)."""
    return item.nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (``make test``): whole modules per worker, and modules sharing the
    Spark session on one worker (``tests/xdist_scheduling.py``)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from tests.xdist_scheduling import ModulesAndGroups

    return ModulesAndGroups(config, log)


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


@pytest.fixture
def produced(events: Catalog) -> Catalog:
    """``events`` with producers (``ingest`` for raw HOURLY, ``rollup`` for DAILY) and 20 eu
    hours of 2015-01-02 registered: what the backfill runner's and the view's tests plan."""
    from airflow_partitions.catalog import Producer

    events.set_producers("raw", {"HOURLY": Producer("ingest")})
    events.set_producers("rollup", {"DAILY": Producer("rollup")})
    events.register("raw", "HOURLY", [{"dt": f"2015-01-02-{h:02d}", "region": "eu"}
                                      for h in range(20)])
    return events


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory: pytest.TempPathFactory) -> AirflowHome:
    """One migrated Airflow home per session (``airflow db migrate`` takes seconds)."""
    return make_airflow_home(tmp_path_factory.mktemp("airflow_home"))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One small local SparkSession for every job-level test (JVM start-up is the cost)."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("airflow-partitions-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    yield session
    session.stop()
    # py4j says at INFO that it closes each connection, some while the interpreter exits,
    # after pytest closed the stream its log went to: a "Logging error" at the end of a run.
    logging.getLogger("py4j").setLevel(logging.WARNING)
