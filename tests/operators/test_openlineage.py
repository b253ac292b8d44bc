"""OpenLineage: dataset names per the naming spec, partition subset facets from the manifest
(covered and pruned) and from a registration, and nothing breaking without the provider."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from airflow_partitions.catalog import Catalog
from airflow_partitions.interop import (
    DatasetName,
    dataset_name,
    local_file_stats,
    storage_dataset,
    storage_root,
)
from airflow_partitions.operators import openlineage_facets
from airflow_partitions.operators.openlineage_facets import operator_lineage
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.operators.pruned_spark import PrunedSparkSubmitOperator
from airflow_partitions.pruning import JoinSpec
from airflow_partitions.spark import (
    column_entry,
    key_document,
    source_entry,
    write_key_file,
)
from tests.helpers import ROOT, T0, FakeTI, register_hours
from tests.operators.covered import covered_operator

serde = pytest.importorskip("openlineage.client.serde")


def as_json(lineage: Any) -> dict[str, Any]:
    """The datasets as they go on the wire (the client's own serialisation)."""
    return {"inputs": [serde.Serde.to_dict(d) for d in lineage.inputs],
            "outputs": [serde.Serde.to_dict(d) for d in lineage.outputs]}


@pytest.mark.parametrize(("location", "namespace", "name"), [
    ("/data/events/raw", "file", "/data/events/raw"),
    ("/data/events/raw/", "file", "/data/events/raw"),
    ("/data//events/./raw", "file", "/data/events/raw"),
    ("file:/data/events", "file", "/data/events"),
    ("file:///data/events", "file", "/data/events"),
    ("file://fileserver/data/events", "file://fileserver", "/data/events"),
    ("s3://lake/events/raw", "s3://lake", "events/raw"),
    ("s3a://lake/events/raw/", "s3://lake", "events/raw"),
    ("s3n://lake/events", "s3://lake", "events"),
    ("s3://lake", "s3://lake", "/"),
    ("gs://bucket/events", "gs://bucket", "events"),
    ("gcs://bucket/events", "gs://bucket", "events"),
    ("wasbs://c@acct.blob.core.windows.net/events", "wasbs://c@acct.blob.core.windows.net",
     "events"),
    ("hdfs://namenode:8020/warehouse/events/", "hdfs://namenode:8020", "/warehouse/events"),
    ("abfss://c@acct.dfs.core.windows.net/events", "abfss://c@acct.dfs.core.windows.net",
     "/events"),
    ("HDFS://nn:8020/w", "hdfs://nn:8020", "/w"),
])
def test_dataset_names_follow_the_naming_spec(location: str, namespace: str, name: str) -> None:
    assert dataset_name(location) == DatasetName(namespace, name)


def test_the_storage_root_is_its_table_not_the_data_root(events: Catalog) -> None:
    raw, rollup = events.get_storage("raw"), events.get_storage("rollup")
    assert storage_root(raw) == f"{events.data_root}/events/raw"
    assert storage_dataset(rollup) == DatasetName("file", f"{events.data_root}/events/rollup")
    events.create_storage("events", "lake", ["DAILY"],
                          location="s3a://lake/{fact}/dt={dt}/part")
    assert storage_dataset(events.get_storage("lake")) == DatasetName("s3://lake", "events")
    events.create_storage("events", "rooted", ["DAILY"], location="{dt}/x")
    assert storage_dataset(events.get_storage("rooted")) == DatasetName(
        "airflow-partitions", "events.rooted")


def test_file_statistics_only_when_known(tmp_path: Path) -> None:
    part = tmp_path / "dt=1"
    (part / "sub").mkdir(parents=True)
    (part / "a.parquet").write_bytes(b"12345")
    (part / "sub" / "b.parquet").write_bytes(b"123")
    (part / "_SUCCESS").write_bytes(b"")
    (part / ".a.parquet.crc").write_bytes(b"xx")
    single = tmp_path / "one.csv"
    single.write_bytes(b"1")
    assert local_file_stats([str(part), str(single)]) == (3, 9)
    assert local_file_stats([str(part), "s3://lake/x"]) is None  # not all local: unknown
    assert local_file_stats([str(tmp_path / "missing")]) is None


def test_covered_job_reports_exactly_the_manifest_partitions(
        events: Catalog, tmp_path: Path, launched: list[Any]) -> None:
    register_hours(events, 0, 2, regions=("eu", "us"))
    register_hours(events, 3, 5, regions=("eu",))  # outside the range: never reported
    op = covered_operator(tmp_path)
    assert op.get_openlineage_facets_on_complete(None) is None  # nothing launched yet
    ti = FakeTI()
    op.execute({"ti": ti})  # type: ignore[arg-type]
    assert not Path(ti.pushed["manifest"]).exists()  # removed after the job: lineage stays
    lineage = op.get_openlineage_facets_on_complete(None)
    assert lineage is not None and lineage.outputs == []
    [dataset] = as_json(lineage)["inputs"]
    root = f"{events.data_root}/events/raw"
    assert (dataset["namespace"], dataset["name"]) == ("file", root)
    subset = dataset["inputFacets"]["subset"]
    assert subset["_schemaURL"].endswith("#/$defs/InputSubsetInputDatasetFacet")
    assert subset["inputCondition"]["type"] == "partition"
    assert subset["inputCondition"]["partitions"] == [
        {"dimensions": {"dt": f"2024-01-01-{h:02d}", "region": r},
         "identifier": f"{root}/HOURLY/dt=2024-01-01-{h:02d}/region={r}"}
        for h in range(3) for r in ("eu", "us")]
    assert [p.values for p in op.manifest.partitions] == [  # type: ignore[union-attr]
        p["dimensions"] for p in subset["inputCondition"]["partitions"]]
    assert "inputStatistics" not in dataset["inputFacets"]  # no files there: unknown


def test_one_dataset_per_storage_with_file_statistics(
        events: Catalog, tmp_path: Path, launched: list[Any]) -> None:
    events.register("rollup", "DAILY", {"dt": "2024-01-01"})
    register_hours(events, 0, 1, day="2024-01-02")
    for part in [*events.list_partitions("rollup"), *events.list_partitions("raw")]:
        Path(part.location).mkdir(parents=True)
        (Path(part.location) / "part-0.parquet").write_bytes(b"x" * 10)
    op = covered_operator(tmp_path, start=T0, end=T0.add(days=1, hours=2))
    op.execute({"ti": FakeTI()})  # type: ignore[arg-type]
    inputs = as_json(op.get_openlineage_facets_on_complete(None))["inputs"]
    assert [d["name"].rsplit("/", 1)[1] for d in inputs] == ["rollup", "raw"]
    rollup, raw = (d["inputFacets"] for d in inputs)
    assert [p["dimensions"] for p in rollup["subset"]["inputCondition"]["partitions"]] == [
        {"dt": "2024-01-01"}]
    assert len(raw["subset"]["inputCondition"]["partitions"]) == 2
    assert rollup["inputStatistics"]["fileCount"] == 1 and rollup["inputStatistics"]["size"] == 10
    assert raw["inputStatistics"]["fileCount"] == 2 and raw["inputStatistics"]["size"] == 20


def test_pruned_job_reports_the_pruned_partitions(
        events: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_hours(events, 0, 1, regions=("eu", "us", "ap"))

    def submit(self: SparkSubmitHook, application: str = "", **kwargs: Any) -> None:
        args = list(self._application_args or [])
        values = column_entry("string", ["eu"], has_null=False, overflow=False)
        write_key_file(key_document([source_entry("dim", {"region": values})], 10_000),
                       args[args.index("--output") + 1])

    monkeypatch.setattr(SparkSubmitHook, "submit", submit)
    monkeypatch.setattr(SparkSubmitOperator, "execute", lambda self, context: None)
    op = PrunedSparkSubmitOperator(
        task_id="join", application="job.py", fact="events", start=T0, end=T0.add(hours=2),
        manifest_dir=str(tmp_path / "manifests"), joins=[JoinSpec.of("dim", "region")],
        small_tables={"dim": "/dims/regions"})
    op.execute({"ti": FakeTI()})  # type: ignore[arg-type]
    [dataset] = as_json(op.get_openlineage_facets_on_complete(None))["inputs"]
    assert [p["dimensions"] for p in dataset["inputFacets"]["subset"]["inputCondition"][
        "partitions"]] == [{"dt": "2024-01-01-00", "region": "eu"},
                           {"dt": "2024-01-01-01", "region": "eu"}]


def test_registration_reports_its_output_subset(events: Catalog) -> None:
    op = RegisterPartitionsOperator(
        task_id="register", storage="raw", period="HOURLY",
        values={"range": ["2024-01-01-00", "2024-01-01-02"], "region": ["eu", "us"]})
    assert op.get_openlineage_facets_on_complete(None) is None
    op.execute({"outlet_events": {}})  # type: ignore[arg-type]
    lineage = as_json(op.get_openlineage_facets_on_complete(None))
    assert lineage["inputs"] == []
    [dataset] = lineage["outputs"]
    root = f"{events.data_root}/events/raw"
    assert (dataset["namespace"], dataset["name"]) == ("file", root)
    subset = dataset["outputFacets"]["subset"]
    assert subset["_schemaURL"].endswith("#/$defs/OutputSubsetOutputDatasetFacet")
    assert subset["outputCondition"] == {"type": "partition", "partitions": [
        {"dimensions": {"dt": f"2024-01-01-{h:02d}", "region": r},
         "identifier": f"{root}/HOURLY/dt=2024-01-01-{h:02d}/region={r}"}
        for h in range(2) for r in ("eu", "us")]}
    registered = {(p.values["dt"], p.values["region"]) for p in events.list_partitions("raw")}
    assert registered == {(d["dimensions"]["dt"], d["dimensions"]["region"])
                          for d in subset["outputCondition"]["partitions"]}


def test_an_explicit_location_is_the_identifier(events: Catalog, tmp_path: Path) -> None:
    where = tmp_path / "elsewhere"
    where.mkdir()
    (where / "f.parquet").write_bytes(b"abc")
    op = RegisterPartitionsOperator(task_id="register", storage="rollup", period="DAILY",
                                    values={"dt": "2024-01-01"}, location=str(where))
    op.execute({"outlet_events": {}})  # type: ignore[arg-type]
    [dataset] = as_json(op.get_openlineage_facets_on_complete(None))["outputs"]
    [part] = dataset["outputFacets"]["subset"]["outputCondition"]["partitions"]
    assert part == {"dimensions": {"dt": "2024-01-01"}, "identifier": str(where)}
    assert dataset["name"] == f"{events.data_root}/events/rollup"  # still the table
    assert dataset["outputFacets"]["outputStatistics"]["fileCount"] == 1


def test_without_the_provider_lineage_is_none(
        events: Catalog, tmp_path: Path, launched: list[Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("airflow.providers.openlineage", "airflow.providers.openlineage.extractors",
                   "openlineage", "openlineage.client", "openlineage.client.event_v2"):
        monkeypatch.setitem(sys.modules, module, None)  # an import of it now fails
    assert not openlineage_facets.openlineage_available()
    assert operator_lineage() is None
    register_hours(events, 0, 2)
    op = covered_operator(tmp_path)
    op.execute({"ti": FakeTI()})  # type: ignore[arg-type]
    assert op.get_openlineage_facets_on_complete(None) is None
    register = RegisterPartitionsOperator(task_id="r", storage="rollup", period="DAILY",
                                          values={"dt": "2024-01-01"})
    register.execute({"outlet_events": {}})  # type: ignore[arg-type]
    assert register.get_openlineage_facets_on_complete(None) is None


def test_the_operators_import_without_the_provider() -> None:
    """A fresh interpreter where the OpenLineage client and the provider's extractors cannot
    be imported (the provider's metadata stays: Airflow's discovery still reads it)."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'openlineage' or name.startswith(('openlineage.',\n"
        "                'airflow.providers.openlineage.extractors')):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import airflow_partitions.operators.spark, airflow_partitions.operators.partitions\n"
        "import airflow_partitions.operators.pruned_spark\n"
        "from airflow_partitions.operators.openlineage_facets import operator_lineage\n"
        "assert operator_lineage() is None\n"
        "assert not any(m.startswith('openlineage') for m in sys.modules), 'imported'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def test_facets_json_matches_the_documented_example() -> None:
    """docs/observability.md shows a subset facet; keep it parseable and of the same shape."""
    text = (ROOT / "docs" / "observability.md").read_text()
    block = text.split("<!-- openlineage-example -->", 1)[1].split("```json", 1)[1]
    example = json.loads(block.split("```", 1)[0])
    [dataset] = example["inputs"]
    assert set(dataset["inputFacets"]) == {"subset", "inputStatistics"}
    assert dataset["inputFacets"]["subset"]["inputCondition"]["type"] == "partition"
