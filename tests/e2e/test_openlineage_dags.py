"""OpenLineage end to end: ``airflow dags test`` with the provider's file transport, and the
events it wrote checked against the catalog and the manifest.

The covered operator's spark-submit is a stand-in script (``spark_binary``) that checks the
manifest it is given and exits 0: what is under test is the lineage Airflow emits after the
job, not Spark (the real spark-submit runs in ``test_airflow_dags.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from tests.helpers import AirflowHome

pytestmark = pytest.mark.e2e
pytest.importorskip("airflow.providers.openlineage")

FAKE_SPARK_SUBMIT = '''#!{python}
"""spark-submit stand-in: the manifest must be there and list the partitions; nothing runs."""
import json, pathlib, sys
args = sys.argv[1:]
manifest = json.load(open(args[args.index("--partitions-manifest") + 1]))
pathlib.Path({read!r}).write_text(json.dumps(manifest["partitions"]))
'''

LINEAGE_DAG = '''
import pendulum
from airflow.sdk import DAG

from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator

with DAG("partitions_lineage", schedule=None,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    register = RegisterPartitionsOperator(
        task_id="register_hours", storage="ol_hourly", period="HOURLY",
        values={{"range": ["{{{{ logical_date }}}}",
                           "{{{{ logical_date + macros.timedelta(hours=2) }}}}"],
                "region": ["eu", "us"]}},
    )
    read = CoveredSparkSubmitOperator(
        task_id="read_hours", fact="lineage", application="job.py",
        start="{{{{ logical_date }}}}", end="{{{{ logical_date + macros.timedelta(hours=2) }}}}",
        spark_binary={spark!r}, manifest_dir={manifests!r},
    )
    register >> read
'''


def events_of(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def complete(events: list[dict[str, Any]], task_id: str) -> dict[str, Any]:
    [event] = [e for e in events if e["eventType"] == "COMPLETE"
               and e["job"]["name"] == f"partitions_lineage.{task_id}"]
    return event


def test_dags_test_emits_the_partition_subsets(airflow_home: AirflowHome,
                                               tmp_path: Path) -> None:
    data = tmp_path / "lake"
    with Catalog(airflow_home.store_url, cache=TimelineCache()) as catalog:
        catalog.create_fact("lineage")
        catalog.create_storage("lineage", "ol_hourly", ["HOURLY"], columns=["dt", "region"],
                               location=f"{data}/{{storage}}/dt={{dt}}/region={{region}}")
        # registered before: an hour outside the range (never reported) and a region the DAG
        # does not register (the job reads it, so it is an input, but no output)
        catalog.register("ol_hourly", "HOURLY", [{"dt": "2024-01-01-05", "region": "eu"},
                                                 {"dt": "2024-01-01-00", "region": "ap"}])
    for hour, region in [(0, "ap"), *((h, r) for h in range(2) for r in ("eu", "us"))]:
        part = data / "ol_hourly" / f"dt=2024-01-01-{hour:02d}" / f"region={region}"
        part.mkdir(parents=True)
        (part / "part-0.parquet").write_bytes(b"x" * (hour + 1))
        (part / "_SUCCESS").write_bytes(b"")
    spark = tmp_path / "spark-submit"
    read_by_job = tmp_path / "read.json"
    spark.write_text(FAKE_SPARK_SUBMIT.format(python=sys.executable, read=str(read_by_job)))
    spark.chmod(0o755)
    log = tmp_path / "openlineage.jsonl"
    manifests = tmp_path / "manifests"
    airflow_home.test_dag(
        "partitions_lineage",
        LINEAGE_DAG.format(spark=str(spark), manifests=str(manifests)),
        env={"AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                 {"type": "file", "log_file_path": str(log), "append": True}),
             "AIRFLOW__OPENLINEAGE__NAMESPACE": "partitions-e2e",
             "AIRFLOW__OPENLINEAGE__DISABLED": "False"})
    given = json.loads(read_by_job.read_text())  # what the job was launched on
    assert list(manifests.glob("*.manifest.json")) == []  # removed: lineage did not need it
    events = events_of(log)
    root = f"{data}/ol_hourly"
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
