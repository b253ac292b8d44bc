"""End to end: PrunedSparkSubmitOperator under ``airflow dags test`` with REAL spark-submits.

Two spark-submits (``local[1]``): the collect_keys step and the regional join on the pruned
manifest. The unpruned baseline runs in-process on the shared SparkSession, over every
partition of the cover. The results must be equal (and equal to the generator's totals), and
Spark's ``inputFiles()`` must list exactly the pruned partitions' files.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.demo.pruning import FACT, STORAGE, ensure_catalog
from airflow_partitions.spark import build_manifest, job_path, join_totals
from tests.helpers import AirflowHome
from tests.pruning.data import expected, write_dimension, write_regional

pytestmark = pytest.mark.e2e
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
END = T0 + dt.timedelta(hours=3)
WANTED = ("eu-west", "us-east")

DAG = '''
import pendulum
from airflow.sdk import DAG

from airflow_partitions.operators.pruned_spark import PrunedSparkSubmitOperator

with DAG("pruning_e2e", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    PrunedSparkSubmitOperator(
        task_id="pruned_join", fact={fact!r},
        start="{{{{ logical_date }}}}", end="{{{{ logical_date + macros.timedelta(hours=3) }}}}",
        joins=[{{"small": "regions_of_interest", "on": {{"region": "region"}}}}],
        small_tables={{"regions_of_interest": {dim!r}}},
        application={job!r},
        application_args=["join", "--dimension", {dim!r}, "--output", {out!r}],
        manifest_dir={manifests!r}, keys_dir={keys!r}, keep_manifest=True,
        name="regional_join",
        conf={{"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
               "spark.sql.session.timeZone": "UTC"}},
    )
'''


def test_pruned_run_equals_unpruned_and_reads_only_pruned_partitions(
        airflow_home: AirflowHome, spark: Any, tmp_path: Path) -> None:
    template = str(tmp_path / "events/dt={dt}/region={region}")
    dim = tmp_path / "regions_of_interest"
    write_dimension(dim, [{"region": "eu-west", "label": "EU"}, {"region": "us-east"},
                          {"region": None, "label": "unknown"}])
    with Catalog(airflow_home.store_url, data_root=str(tmp_path),
                 cache=TimelineCache()) as catalog:
        ensure_catalog(catalog, template)
        catalog.register(STORAGE, "HOURLY", write_regional(template, T0, END))
        everything = list(catalog.list_partitions(STORAGE))
    assert len(everything) == 24
    out = tmp_path / "report.json"
    output = airflow_home.test_dag("pruning_e2e", DAG.format(
        fact=FACT, dim=str(dim), job=job_path("regional_join"), out=str(out),
        manifests=str(tmp_path / "manifests"), keys=str(tmp_path / "keys")), timeout=500)
    assert "dynamic partition pruning: 24 -> 6 partition(s) (75.0% pruned)" in output

    report = json.loads(out.read_text())
    [manifest_file] = (tmp_path / "manifests").iterdir()
    manifest = json.loads(manifest_file.read_text())
    record = manifest["pruning"]
    assert record["pruned"] and (record["partitions_before"], record["partitions_after"]) == (24, 6)
    assert record["storages"][0]["pairs"][0]["nulls_dropped"] == 1
    [keys_file] = (tmp_path / "keys").iterdir()
    assert json.loads(keys_file.read_text())["sources"][0]["columns"]["region"]["values"] == [
        "eu-west", "us-east"]

    # only the pruned partitions were read: Spark's own input file listing
    read_dirs = {str(Path(f.removeprefix("file:")).parent) for f in report["input_files"]}
    assert read_dirs == {p["location"] for p in manifest["partitions"]}
    assert {Path(d).name for d in read_dirs} == {f"region={r}" for r in WANTED}
    assert report["partitions_read"] == 6 and len(report["input_files"]) == 6

    # the unpruned baseline, in-process over all 24 partitions, gives the same result
    baseline = join_totals(spark, build_manifest(
        FACT, T0.isoformat(), END.isoformat(), (p.to_json() for p in everything), "dt"),
        str(dim))
    assert len(baseline["input_files"]) == 24
    assert report["totals"] == baseline["totals"] == expected(T0, END, WANTED)
    assert report["bytes_read"] < baseline["bytes_read"]
