"""End to end through a real metadata DB: ``airflow`` subprocesses in one migrated home.

* the provider is listed, its connection type accepted, and ``airflow connections test``
  runs the hook (when Airflow's test_connection setting allows it);
* one ``airflow dags test`` of one DAG with three independent branches (each ``airflow dags
  test`` costs seconds of Airflow start-up, so the branches share one; each test below
  asserts on its own branch):
  - a poke-mode sensor waits while partitions get registered, then a deferrable sensor
    completes through its trigger;
  - ``CoveredSparkSubmitOperator`` runs a real ``spark-submit --master local[1]`` job that
    reads the manifest (one JVM), and its OpenLineage event lists exactly the manifest's
    partitions;
  - a range registration's asset events reach the metadata DB in time order, each with its
    key's facts;
  - OpenLineage (the provider's file transport): a registration's output subset and a
    covered job's input subset, checked against the catalog and the manifest. That job's
    spark-submit is a stand-in script (``spark_binary``) that checks the manifest it is
    given and exits 0: what is under test is the lineage Airflow emits after the job, not
    Spark (branch 2 runs the real spark-submit).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.cover import Cover
from airflow_partitions.operators.openlineage_facets import openlineage_available
from airflow_partitions.spark import job_path
from tests.helpers import AirflowHome

pytestmark = pytest.mark.e2e


def open_catalog(airflow_home: AirflowHome) -> Catalog:
    return Catalog(airflow_home.store_url, data_root=str(airflow_home.home / "data"),
                   cache=TimelineCache())


def test_providers_list_shows_the_provider(airflow_home: AirflowHome) -> None:
    listed = airflow_home.airflow("providers", "list")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "airflow-partitions" in listed.stdout


def test_connections_add_accepts_the_type(airflow_home: AirflowHome) -> None:
    extra = json.dumps({"backend": "hbase", "table_prefix": "prod_"})
    added = airflow_home.airflow(
        "connections", "add", "partitions_e2e", "--conn-type", "partition_catalog",
        "--conn-host", "thrift.example.com", "--conn-port", "9090", "--conn-extra", extra)
    assert added.returncode == 0, added.stderr[-3000:]
    got = airflow_home.airflow("connections", "get", "partitions_e2e", "-o", "json")
    assert got.returncode == 0, got.stderr[-3000:]
    [conn] = json.loads(got.stdout)
    assert conn["conn_type"] == "partition_catalog" and conn["host"] == "thrift.example.com"


def test_connections_test_uses_the_hook_when_enabled(airflow_home: AirflowHome,
                                                     tmp_path: Path) -> None:
    """Airflow 3.3 disables connection testing by default; enabled, ``airflow connections
    test`` runs the hook's test_connection. The URI form's ``partition-catalog://`` scheme is
    read back as the ``partition_catalog`` type."""
    store = tmp_path / "tested.db"
    env = {"AIRFLOW_CONN_PARTITIONS_TESTED":
           f"partition-catalog://?backend=sqlite&sqlite_path={store}"}
    disabled = airflow_home.airflow("connections", "test", "partitions_tested", env=env)
    assert "disabled" in (disabled.stdout + disabled.stderr).lower()
    tested = airflow_home.airflow("connections", "test", "partitions_tested",
                                  env={**env, "AIRFLOW__CORE__TEST_CONNECTION": "Enabled"})
    output = tested.stdout + tested.stderr
    assert tested.returncode == 0, output[-3000:]
    assert "Connection success" in output and store.exists()  # the hook opened the store
    broken = airflow_home.airflow(
        "connections", "test", "partitions_tested", env={
            "AIRFLOW_CONN_PARTITIONS_TESTED": "partition-catalog://?store_url=mysql%3A%2F%2Fx",
            "AIRFLOW__CORE__TEST_CONNECTION": "Enabled"})
    assert "Connection failed" in broken.stdout + broken.stderr, broken.stdout + broken.stderr
    assert "mysql" in broken.stdout + broken.stderr


REGISTRAR = '''
"""Registers the rest of the range when a sensor signals that it saw it missing."""
import sys, time
from pathlib import Path
from airflow_partitions.catalog import Catalog

signals, url = Path(sys.argv[1]), sys.argv[2]
deadline = time.monotonic() + 240
for signal, hours in (("poke", (2, 3)), ("deferred", (4, 5))):
    while not (signals / signal).exists():
        if time.monotonic() > deadline:
            sys.exit(1)
        time.sleep(0.2)
    with Catalog(url) as catalog:
        catalog.register("raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}", "region": "eu"}
                                           for h in hours])
    (signals / f"{signal}.registered").touch()
'''

#: One DAG, three independent branches: sensors waiting for registrations; a covered
#: spark-submit; asset events of an out-of-order registration.
DAG = '''
import subprocess, sys
from pathlib import Path

import pendulum
from airflow.sdk import DAG, Asset, task

from airflow_partitions.catalog import Catalog
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator
from airflow_partitions.sensors.coverage import PartitionCoverageSensor

SIGNALS = Path({signals!r})


class SignallingSensor(PartitionCoverageSensor):
    """Touches a file whenever a poke finds the range uncovered (the registrar waits on it)."""

    def __init__(self, *, signal, **kwargs):
        super().__init__(**kwargs)
        self.signal = signal

    def poke(self, context):
        result = super().poke(context)
        if not result:
            (SIGNALS / self.signal).touch()
        return result


with DAG("partitions_e2e", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    # 1. sensors waiting for registrations
    register = RegisterPartitionsOperator(
        task_id="register_first", storage="raw", period="HOURLY",
        values={{"range": ["{{{{ logical_date }}}}",
                           "{{{{ logical_date + macros.timedelta(hours=2) }}}}"],
                "region": "eu"}},
        outlets=[Asset(name="events_raw", uri="file:///data/events/raw")],
    )

    @task
    def start_registrar():
        subprocess.Popen([sys.executable, {registrar!r}, str(SIGNALS), {store!r}],
                         start_new_session=True)

    wait_poke = SignallingSensor(
        task_id="wait_poke", signal="poke", fact="events", poke_interval=0.5, timeout=200,
        start="{{{{ logical_date }}}}", end="{{{{ logical_date + macros.timedelta(hours=4) }}}}",
    )
    wait_deferred = SignallingSensor(
        task_id="wait_deferred", signal="deferred", fact="events", deferrable=True,
        poke_interval=0.5, timeout=200,
        start="{{{{ logical_date }}}}", end="{{{{ logical_date + macros.timedelta(hours=6) }}}}",
    )

    @task
    def report(ti=None):
        Path({result!r}).write_text(__import__("json").dumps({{
            "poke": ti.xcom_pull(task_ids="wait_poke"),
            "deferred": ti.xcom_pull(task_ids="wait_deferred"),
            "registered": ti.xcom_pull(task_ids="register_first"),
        }}))

    register >> start_registrar() >> wait_poke >> wait_deferred >> report()

    # 2. a covered spark-submit
    wait = PartitionCoverageSensor(
        task_id="wait", fact="sales", poke_interval=1, timeout=60,
        start="{{{{ logical_date }}}}",
        end="{{{{ logical_date + macros.timedelta(days=1, hours=3) }}}}",
    )
    count = CoveredSparkSubmitOperator(
        task_id="count_rows", cover_from="wait", application={job!r},
        application_args=["--output", {output!r}], residual_filter="amount > 0",
        manifest_dir={manifests!r}, keep_manifest=True, name="count_rows",
        conf={{"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}},
    )
    wait >> count

    # 3. asset events of a registration listed out of time order
    @task
    def define():
        with Catalog({store!r}) as catalog:
            catalog.create_fact("ordered", exist_ok=True)
            catalog.create_storage("ordered", "ordered_raw", ["HOURLY"],
                                   columns=["dt", "region"], exist_ok=True)

    register_ordered = RegisterPartitionsOperator(
        task_id="register_ordered", storage="ordered_raw", period="HOURLY",
        outlets=[Asset(name="events_raw_ordered", uri="file:///data/events/raw_ordered")],
        values=[{{"dt": "2024-01-01-0" + str(h), "region": r}}
                for h in (5, 1, 3, 0, 4, 2) for r in ("us", "eu")],
    )
    define() >> register_ordered

    # 4. OpenLineage subsets of a registration and of a covered job (a stand-in spark-submit)
    register_hours = RegisterPartitionsOperator(
        task_id="register_hours", storage="ol_hourly", period="HOURLY",
        values={{"range": ["{{{{ logical_date }}}}",
                           "{{{{ logical_date + macros.timedelta(hours=2) }}}}"],
                "region": ["eu", "us"]}},
    )
    read_hours = CoveredSparkSubmitOperator(
        task_id="read_hours", fact="lineage", application="job.py",
        start="{{{{ logical_date }}}}", end="{{{{ logical_date + macros.timedelta(hours=2) }}}}",
        spark_binary={fake_spark!r}, manifest_dir={ol_manifests!r},
    )
    register_hours >> read_hours
'''

FAKE_SPARK_SUBMIT = '''#!{python}
"""spark-submit stand-in: the manifest must be there and list the partitions; nothing runs."""
import json, pathlib, sys
args = sys.argv[1:]
manifest = json.load(open(args[args.index("--partitions-manifest") + 1]))
pathlib.Path({read!r}).write_text(json.dumps(manifest["partitions"]))
'''


def write_parquet(location: str, rows: list[dict[str, Any]]) -> None:
    Path(location).mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), f"{location}/part-0.parquet")


@dataclass(frozen=True)
class DagRun:
    """What the one ``airflow dags test`` left behind, for each branch's test."""

    home: AirflowHome
    tmp: Path
    output: str
    expected_rows: dict[str, int]  # location -> rows, of the spark branch's registered data


def define_events(catalog: Catalog) -> None:
    """Branch 1: an empty hourly storage the DAG fills while its sensors wait."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])


def define_sales(catalog: Catalog, data: Path) -> dict[str, int]:
    """Branch 2: a daily and an hourly storage with parquet files, and unregistered siblings
    that must never be read; returns the registered locations' row counts."""
    catalog.create_fact("sales")
    catalog.create_storage("sales", "sales_hourly", ["HOURLY"], columns=["dt", "region"],
                           location=f"{data}/hourly/dt={{dt}}/region={{region}}")
    catalog.create_storage("sales", "sales_daily", ["DAILY"], priority=5,
                           location=f"{data}/daily/dt={{dt}}")
    expected: dict[str, int] = {}
    daily = f"{data}/daily/dt=2024-01-01"  # another schema: a 'source' column, no region
    write_parquet(daily, [{"id": i, "amount": 1.5, "source": "pos"} for i in range(5)])
    catalog.register("sales_daily", "DAILY", {"dt": "2024-01-01"})
    expected[daily] = 5
    for hour in range(3):
        for n, region in enumerate(("eu", "us"), start=1):
            location = f"{data}/hourly/dt=2024-01-02-{hour:02d}/region={region}"
            write_parquet(location, [{"id": i, "amount": 2.0} for i in range(hour + n)])
            expected[location] = hour + n
    catalog.register("sales_hourly", "HOURLY", [
        {"dt": f"2024-01-02-{h:02d}", "region": r} for h in range(3) for r in ("eu", "us")])
    # data that is NOT registered must never be read: a sibling region, a later hour
    write_parquet(f"{data}/hourly/dt=2024-01-02-00/region=ap", [{"id": 0, "amount": 9.0}])
    write_parquet(f"{data}/hourly/dt=2024-01-02-03/region=eu", [{"id": 0, "amount": 9.0}])
    return expected


def define_lineage(catalog: Catalog, data: Path) -> None:
    """Branch 4: an hour outside the range (never reported) and a region the DAG does not
    register (the job reads it, so it is an input, but no output), with small files."""
    catalog.create_fact("lineage")
    catalog.create_storage("lineage", "ol_hourly", ["HOURLY"], columns=["dt", "region"],
                           location=f"{data}/{{storage}}/dt={{dt}}/region={{region}}")
    catalog.register("ol_hourly", "HOURLY", [{"dt": "2024-01-01-05", "region": "eu"},
                                             {"dt": "2024-01-01-00", "region": "ap"}])
    for hour, region in [(0, "ap"), *((h, r) for h in range(2) for r in ("eu", "us"))]:
        part = data / "ol_hourly" / f"dt=2024-01-01-{hour:02d}" / f"region={region}"
        part.mkdir(parents=True)
        (part / "part-0.parquet").write_bytes(b"x" * (hour + 1))
        (part / "_SUCCESS").write_bytes(b"")


@pytest.fixture(scope="module")
def dag_run(airflow_home: AirflowHome, tmp_path_factory: pytest.TempPathFactory) -> DagRun:
    tmp = tmp_path_factory.mktemp("dag_run")
    with open_catalog(airflow_home) as catalog:
        define_events(catalog)
        expected = define_sales(catalog, tmp / "sales")
        define_lineage(catalog, tmp / "lake")
    fake_spark = tmp / "spark-submit"
    fake_spark.write_text(FAKE_SPARK_SUBMIT.format(python=sys.executable,
                                                   read=str(tmp / "read.json")))
    fake_spark.chmod(0o755)
    (tmp / "signals").mkdir()
    registrar = tmp / "registrar.py"
    registrar.write_text(REGISTRAR)
    lineage = tmp / "openlineage.jsonl"  # the same run, with OpenLineage's file transport
    output = airflow_home.test_dag("partitions_e2e", DAG.format(
        signals=str(tmp / "signals"), registrar=str(registrar), store=airflow_home.store_url,
        result=str(tmp / "result.json"), job=job_path("count_rows"),
        output=str(tmp / "counts.json"), manifests=str(tmp / "manifests"),
        fake_spark=str(fake_spark), ol_manifests=str(tmp / "ol_manifests")),
        timeout=500, env={"AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
            {"type": "file", "log_file_path": str(lineage), "append": True}),
            "AIRFLOW__OPENLINEAGE__NAMESPACE": "partitions-e2e",
            "AIRFLOW__OPENLINEAGE__DISABLED": "False"})
    return DagRun(airflow_home, tmp, output, expected)


def test_sensors_wait_for_registrations(dag_run: DagRun) -> None:
    signals = dag_run.tmp / "signals"
    # both sensors saw the range uncovered first, then the registrar filled it
    assert (signals / "poke.registered").exists() and (signals / "deferred.registered").exists()
    assert "missing 2024-01-01T02:00/04:00: no HOURLY 2024-01-01-02..03 (2)" in dag_run.output
    assert "PartitionCoverageTrigger" in dag_run.output  # the deferrable sensor went through it
    pushed = json.loads((dag_run.tmp / "result.json").read_text())
    assert pushed["registered"]["keys"] == ["2024-01-01T00:00:00", "2024-01-01T01:00:00"]
    poke, deferred = Cover.from_json(pushed["poke"]), Cover.from_json(pushed["deferred"])
    assert poke.coverable and [p.value for p in poke.partitions] == [
        f"2024-01-01-{h:02d}" for h in range(4)]
    assert deferred.coverable and len(deferred.partitions) == 6


def test_covered_spark_submit_reads_exactly_the_manifest(dag_run: DagRun) -> None:
    data, expected = dag_run.tmp / "sales", dag_run.expected_rows
    daily = f"{data}/daily/dt=2024-01-01"
    counts = json.loads((dag_run.tmp / "counts.json").read_text())
    assert counts["fact"] == "sales" and counts["total"] == sum(expected.values())
    assert {p["location"]: p["rows"] for p in counts["partitions"]} == expected
    assert [p["storage"] for p in counts["partitions"]] == ["sales_daily"] + ["sales_hourly"] * 6
    assert counts["partitions"][1]["values"] == {"dt": "2024-01-02-00", "region": "eu"}
    [manifest] = (dag_run.tmp / "manifests").iterdir()
    assert json.loads(manifest.read_text())["residual"] == "amount > 0"
    # OpenLineage: one input dataset per storage, each with exactly its manifest partitions
    if openlineage_available():  # the provider is installed (the lineage extra)
        lineage = (dag_run.tmp / "openlineage.jsonl").read_text()
        [event] = [json.loads(line) for line in lineage.splitlines()
                   if '"COMPLETE"' in line and '"partitions_e2e.count_rows"' in line]
        inputs = {d["name"]: d["inputFacets"] for d in event["inputs"]}
        assert set(inputs) == {f"{data}/hourly", f"{data}/daily"}
        read = {p["identifier"]: p["dimensions"] for facets in inputs.values()
                for p in facets["subset"]["inputCondition"]["partitions"]}
        assert set(read) == set(expected)  # never the unregistered siblings
        assert read[daily] == {"dt": "2024-01-01"}
        assert inputs[f"{data}/hourly"]["inputStatistics"]["fileCount"] == 6


def test_asset_events_are_created_in_time_order_with_their_own_facts(dag_run: DagRun) -> None:
    """Partitions listed out of order still reach the metadata DB as events in time order, and
    each event's extra holds its own key's facts under by_key."""
    with sqlite3.connect(dag_run.home.home / "airflow.db") as db:
        rows = db.execute(
            "SELECT e.partition_key, e.extra FROM asset_event e JOIN asset a ON a.id = e.asset_id"
            " WHERE a.name = 'events_raw_ordered' ORDER BY e.id").fetchall()
    keys = [key for key, _ in rows]
    assert keys == [f"2024-01-01T0{h}:00:00" for h in range(6)]
    for key, extra in rows:
        facts = json.loads(extra)["airflow_partitions"]
        assert facts["batch"] == {"keys": 6, "partitions": 12, "changed": 12, "unchanged": 0,
                                  "restated": 0, "first": keys[0], "last": keys[-1]}
        own = facts["by_key"][key]
        assert own["partitions"] == 2 and own["value"] == key[:10] + "-" + key[11:13]
        assert own["restated"] is False
        assert own["start"] == key + "+00:00"


def lineage_events(dag_run: DagRun) -> list[dict[str, Any]]:
    log = dag_run.tmp / "openlineage.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def complete(events: list[dict[str, Any]], task_id: str) -> dict[str, Any]:
    [event] = [e for e in events if e["eventType"] == "COMPLETE"
               and e["job"]["name"] == f"partitions_e2e.{task_id}"]
    return event


def test_dags_test_emits_the_partition_subsets(dag_run: DagRun) -> None:
    pytest.importorskip("airflow.providers.openlineage")
    given = json.loads((dag_run.tmp / "read.json").read_text())  # what the job was launched on
    assert list((dag_run.tmp / "ol_manifests").glob("*.manifest.json")) == []  # removed
    events = lineage_events(dag_run)
    root = f"{dag_run.tmp / 'lake'}/ol_hourly"
    written_parts = [{"dimensions": {"dt": f"2024-01-01-{h:02d}", "region": r},
                      "identifier": f"{root}/dt=2024-01-01-{h:02d}/region={r}"}
                     for h in range(2) for r in ("eu", "us")]

    registered = complete(events, "register_hours")
    assert registered["job"]["namespace"] == "partitions-e2e"
    assert registered["inputs"] == []
    [written] = registered["outputs"]
    assert (written["namespace"], written["name"]) == ("file", root)
    subset = written["outputFacets"]["subset"]
    assert subset["outputCondition"] == {"type": "partition", "partitions": written_parts}
    assert written["outputFacets"]["outputStatistics"]["fileCount"] == 4

    read = complete(events, "read_hours")
    assert read["outputs"] == []
    [dataset] = read["inputs"]
    assert (dataset["namespace"], dataset["name"]) == ("file", root)
    condition = dataset["inputFacets"]["subset"]["inputCondition"]
    assert condition["type"] == "partition"
    assert condition["partitions"] == [{"dimensions": p["values"], "identifier": p["location"]}
                                       for p in given]
    assert {p["values"]["region"] for p in given} == {"ap", "eu", "us"} and len(given) == 5
    stats = dataset["inputFacets"]["inputStatistics"]
    assert (stats["fileCount"], stats["size"]) == (5, 1 + 1 + 1 + 2 + 2)  # _SUCCESS: no data
