"""PrunedSparkSubmitOperator without a JVM: the collect step and the launch are faked."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk.exceptions import AirflowFailException

from airflow_partitions.catalog import Catalog
from airflow_partitions.demo.pruning import FACT, STORAGE, ensure_catalog
from airflow_partitions.hooks.catalog import shared_catalog
from airflow_partitions.operators.pruned_spark import PrunedSparkSubmitOperator
from airflow_partitions.pruning import JoinSpec
from airflow_partitions.spark import (
    REGIONS,
    column_entry,
    key_document,
    load_manifest,
    source_entry,
    write_key_file,
)
from tests.helpers import T0, FakeTI


@pytest.fixture
def regional(store_url: str, tmp_path: Path) -> Catalog:
    catalog = shared_catalog(store_url)
    ensure_catalog(catalog, str(tmp_path / "ev/dt={dt}/region={region}"))
    catalog.register(STORAGE, "HOURLY", [{"dt": f"2024-01-01-{h:02d}", "region": r}
                                         for h in range(3) for r in REGIONS])
    return catalog


@pytest.fixture
def submits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """Collect-job submits write a key file; the main launch is recorded, not run."""
    calls: list[tuple[str, list[str]]] = []

    def submit(self: SparkSubmitHook, application: str = "", **kwargs: Any) -> None:
        args = list(self._application_args or [])
        calls.append((application, args))
        output = args[args.index("--output") + 1]
        region = column_entry("string", ["eu-west", "us-east"], has_null=True, overflow=False)
        write_key_file(key_document([source_entry("dim", {"region": region})], 10_000), output)

    monkeypatch.setattr(SparkSubmitHook, "submit", submit)
    monkeypatch.setattr(SparkSubmitOperator, "execute",
                        lambda self, context: calls.append(("main", self.application_args)))
    return calls


def operator(tmp_path: Path, **kwargs: Any) -> PrunedSparkSubmitOperator:
    args: dict[str, Any] = {
        "task_id": "join", "application": "job.py", "fact": FACT, "start": T0,
        "end": T0.add(hours=2), "manifest_dir": str(tmp_path / "manifests"),
        "keep_manifest": True,
        "joins": [JoinSpec.of("dim", "region")], "small_tables": {"dim": "/dims/regions"},
        "application_args": ["join", "--output", "/out"],
    }
    args.update(kwargs)
    return PrunedSparkSubmitOperator(**args)


def test_collects_prunes_and_launches_on_the_pruned_manifest(
        regional: Catalog, tmp_path: Path, submits: list[Any],
        capsys: pytest.CaptureFixture[str]) -> None:
    op = operator(tmp_path)
    ti = FakeTI()
    op.execute({"ti": ti})  # type: ignore[arg-type]
    (app, collect_args), (main, main_args) = submits
    assert app.endswith("collect_keys.py") and main == "main"
    assert collect_args[:8] == ["--source", "/dims/regions", "--name", "dim", "--format",
                                "parquet", "--kind", "auto"]
    assert collect_args[8:10] == ["--column", "region"]
    assert main_args[:3] == ["join", "--output", "/out"]
    raw = json.loads(Path(ti.pushed["manifest"]).read_text())
    assert {p["values"]["region"] for p in raw["partitions"]} == {"eu-west", "us-east"}
    assert len(raw["partitions"]) == 4
    record = raw["pruning"]
    assert record == ti.pushed["pruning"]
    assert record["pruned"] and record["partitions_before"] == 16
    assert record["partitions_after"] == 4 and record["cover"]["fact"] == FACT
    assert record["storages"][0]["pairs"][0]["nulls_dropped"] == 1
    assert len(load_manifest(ti.pushed["manifest"]).partitions) == 4  # v1 readers still work
    logged = capsys.readouterr().out
    assert "dynamic partition pruning: 16 -> 4 partition(s) (75.0% pruned)" in logged
    assert f"cover: {FACT} [2024-01-01T00:00:00+00:00, 2024-01-01T02:00:00+00:00)" in logged


def test_bail_out_collects_nothing_and_reads_the_whole_cover(
        regional: Catalog, tmp_path: Path, submits: list[Any]) -> None:
    op = operator(tmp_path, joins=[{"small": "dim", "on": {"region": "region"},
                                    "how": "left", "big_side": "left"}])
    ti = FakeTI()
    op.execute({"ti": ti})  # type: ignore[arg-type]
    assert [s[0] for s in submits] == ["main"]
    raw = json.loads(Path(ti.pushed["manifest"]).read_text())
    assert len(raw["partitions"]) == 16 and not raw["pruning"]["pruned"]
    assert "outer_join_preserves_big" in raw["pruning"]["bail_out"]


def test_a_small_table_without_a_source_fails(
        regional: Catalog, tmp_path: Path, submits: list[Any]) -> None:
    op = operator(tmp_path, small_tables={})
    with pytest.raises(AirflowFailException, match="give its source in small_tables"):
        op.execute({"ti": FakeTI()})  # type: ignore[arg-type]


def test_malformed_joins_fail_when_the_dag_is_parsed(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="join type"):
        operator(tmp_path, joins=[{"small": "dim", "on": "region", "how": "cross"}])
    templated = operator(tmp_path, joins=[{"small": "dim", "on": "{{ params.key }}"}])
    assert "joins" in templated.template_fields and "small_tables" in templated.template_fields


def test_a_successful_run_leaves_neither_key_file_nor_manifest_behind(
        regional: Catalog, tmp_path: Path, submits: list[Any]) -> None:
    (tmp_path / "keys").mkdir()
    stale = tmp_path / "keys" / "failed-last-month.keys.json"
    stale.write_text("{}")
    os.utime(stale, (time.time() - 30 * 86400,) * 2)
    op = operator(tmp_path, keep_manifest=False, keys_dir=str(tmp_path / "keys"))
    ti = FakeTI()
    op.execute({"ti": ti})  # type: ignore[arg-type]
    assert [s[0] for s in submits][-1] == "main"
    assert ti.pushed["manifest"].startswith(str(tmp_path / "manifests"))
    assert list((tmp_path / "keys").iterdir()) == []
    assert list((tmp_path / "manifests").iterdir()) == []
