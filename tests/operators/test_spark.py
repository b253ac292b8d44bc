"""CoveredSparkSubmitOperator: verified cover -> manifest file -> --partitions-manifest."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk.exceptions import AirflowFailException

from airflow_partitions.catalog import Catalog
from airflow_partitions.errors import InvalidInput
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator, UncoverableRange
from airflow_partitions.spark import MANIFEST_CONF, load_manifest
from tests.helpers import T0, FakeTI, register_hours
from tests.operators.covered import covered_operator


def test_manifest_lists_every_registered_row(
        events: Catalog, tmp_path: Path, launched: list[Any]) -> None:
    register_hours(events, 0, 2, regions=("eu", "us"))
    op = covered_operator(tmp_path, application_args=["--output", "/out"], residual_filter="n > 1",
                  keep_manifest=True)
    ti = FakeTI()
    op.execute({"ti": ti})  # type: ignore[arg-type]
    assert launched == [op]
    path = ti.pushed["manifest"]
    assert op.application_args == ["--output", "/out", "--partitions-manifest", path]
    raw = json.loads(Path(path).read_text())
    assert raw["version"] == 1 and raw["fact"] == "events" and raw["residual"] == "n > 1"
    assert (raw["start"], raw["end"]) == ("2024-01-01T00:00:00+00:00", "2024-01-01T03:00:00+00:00")
    assert raw["partitions"][:2] == [
        {"storage": "raw", "period": "HOURLY", "value": "2024-01-01-00",
         "values": {"dt": "2024-01-01-00", "region": region},
         "location": f"{events.data_root}/events/raw/HOURLY/dt=2024-01-01-00/region={region}",
         "version": 1}
        for region in ("eu", "us")
    ]
    manifest = load_manifest(path)
    assert len(manifest.partitions) == 6 and not manifest.partial
    assert {p.values["region"] for p in manifest.partitions} == {"eu", "us"}


def test_the_command_line_carries_the_path_only(
        events: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps(
        {"conn_type": "spark", "host": "local[1]", "extra": {"deploy-mode": "client"}}))
    events.register("raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}", "region": f"r{i}"}
                                      for h in range(3) for i in range(300)])
    op = covered_operator(tmp_path)
    ti = FakeTI()
    op.prepare_submit({"ti": ti})  # type: ignore[arg-type]
    command = op._get_hook()._build_spark_submit_command(op.application)
    path = ti.pushed["manifest"]
    assert command[-3:] == ["job.py", "--partitions-manifest", path]
    assert not any(MANIFEST_CONF in word for word in command)
    assert max(len(word) for word in command) < 1000
    assert len(load_manifest(path).partitions) == 900


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_manifest_conf_passes_the_path_as_the_spark_conf_instead(
        events: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps(
        {"conn_type": "spark", "host": "local[1]", "extra": {"deploy-mode": "client"}}))
    if how == "environment":  # the cluster's setting, shared by every worker
        monkeypatch.setenv("AIRFLOW_PARTITIONS_MANIFEST_CONF", "true")
    register_hours(events, 0, 3)
    op = covered_operator(tmp_path, **({"manifest_conf": True} if how == "argument" else {}))
    ti = FakeTI()
    op.prepare_submit({"ti": ti})  # type: ignore[arg-type]
    op.prepare_submit({"ti": ti})  # type: ignore[arg-type]  # a retry: replaced, not added
    command = op._get_hook()._build_spark_submit_command(op.application)
    path = ti.pushed["manifest"]
    assert command[-1] == "job.py" and "--partitions-manifest" not in command
    assert [w for w in command if MANIFEST_CONF in w] == [f"{MANIFEST_CONF}={path}"]


def test_an_uncoverable_range_fails_with_the_missing_list(
        events: Catalog, tmp_path: Path, launched: list[Any]) -> None:
    register_hours(events, 0, 1)
    with pytest.raises(UncoverableRange, match="missing 2024-01-01T02:00/03:00: no HOURLY"):
        covered_operator(tmp_path).execute({"ti": FakeTI()})  # type: ignore[arg-type]
    assert not launched and not (tmp_path / "manifests").exists()


def test_allow_partial_launches_on_the_covered_part(
        events: Catalog, tmp_path: Path, launched: list[Any]) -> None:
    register_hours(events, 0, 1)
    ti = FakeTI()
    op = covered_operator(tmp_path, allow_partial=True, keep_manifest=True)
    op.execute({"ti": ti})  # type: ignore[arg-type]
    manifest = load_manifest(ti.pushed["manifest"])
    assert [p.value for p in manifest.partitions] == ["2024-01-01-00", "2024-01-01-01"]
    assert manifest.partial and "no HOURLY 2024-01-01-02" in manifest.missing[0]
    with pytest.raises(UncoverableRange, match="nothing"):  # nothing covered: nothing to run
        covered_operator(tmp_path, allow_partial=True, start=T0.add(days=1),
                 end=T0.add(days=1, hours=1)).execute({"ti": FakeTI()})  # type: ignore[arg-type]


def test_cover_from_an_upstream_sensor_is_reverified(
        events: Catalog, tmp_path: Path, launched: list[Any]) -> None:
    register_hours(events, 0, 2)
    pushed = events.cover("events", T0, T0.add(hours=3), storages=["raw"]).to_json()
    op = CoveredSparkSubmitOperator(task_id="spark", application="job.py", cover_from="wait",
                                    manifest_dir=str(tmp_path), keep_manifest=True)
    ti = FakeTI({"wait": pushed})
    op.execute({"ti": ti})  # type: ignore[arg-type]
    assert len(load_manifest(ti.pushed["manifest"]).partitions) == 3
    events.drop("raw", "HOURLY", {"dt": "2024-01-01-01", "region": "eu"})  # gone since the poke
    with pytest.raises(UncoverableRange, match="no HOURLY 2024-01-01-01"):
        op.execute({"ti": FakeTI({"wait": pushed})})  # type: ignore[arg-type]
    assert len(launched) == 1
    with pytest.raises(AirflowFailException, match="no cover"):
        op.execute({"ti": FakeTI()})  # type: ignore[arg-type]


def test_templating_and_defaults(tmp_path: Path) -> None:
    op = CoveredSparkSubmitOperator(task_id="spark", application="{{ params.app }}",
                                    fact="{{ params.fact }}", residual_filter="{{ params.f }}")
    assert (op.start, op.end) == ("{{ data_interval_start }}", "{{ data_interval_end }}")
    assert {"application", "application_args", "fact", "start", "end", "time_column", "periods",
            "storages", "align", "residual_filter", "manifest_dir", "cover_from"} <= set(
        op.template_fields)
    op.render_template_fields({"params": {"app": "a.py", "fact": "events", "f": "x = 1"},
                               "data_interval_start": T0, "data_interval_end": T0.add(days=1)})
    assert (op.application, op.fact, op.residual_filter) == ("a.py", "events", "x = 1")
    assert op.start == "2024-01-01 00:00:00+00:00"
    with pytest.raises(ValueError, match="cover_from= or fact="):
        CoveredSparkSubmitOperator(task_id="x", application="a.py")


def test_manifests_live_under_airflow_home_and_go_when_the_job_succeeds(
        events: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        launched: list[Any]) -> None:
    """Not a host-wide /tmp folder shared by every installation; removed after success, kept
    after a failure for a person to read."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AIRFLOW_PARTITIONS_MANIFEST_DIR", raising=False)
    register_hours(events, 0, 2)
    folder = tmp_path / "home" / "partitions-manifests"
    ti = FakeTI()
    covered_operator(tmp_path, manifest_dir=None).execute({"ti": ti})  # type: ignore[arg-type]
    path = Path(ti.pushed["manifest"])
    assert path.parent == folder and path.name.endswith(".manifest.json")
    assert launched and not path.exists()

    def failing(self: Any, context: Any) -> None:
        raise RuntimeError("spark-submit failed")

    monkeypatch.setattr(SparkSubmitOperator, "execute", failing)
    ti = FakeTI()
    with pytest.raises(RuntimeError):
        covered_operator(tmp_path, manifest_dir=None).execute({"ti": ti})  # type: ignore[arg-type]
    assert Path(ti.pushed["manifest"]).exists()
    monkeypatch.setenv("AIRFLOW_PARTITIONS_MANIFEST_DIR", str(tmp_path / "shared"))
    ti = FakeTI()
    covered_operator(tmp_path, manifest_dir=None, keep_manifest=True).prepare_submit(
        {"ti": ti})  # type: ignore[arg-type]
    assert Path(ti.pushed["manifest"]).parent == tmp_path / "shared"


def test_old_manifests_are_pruned_when_a_new_one_is_written(
        events: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_hours(events, 0, 2)
    folder = tmp_path / "manifests"
    folder.mkdir()
    now = time.time()
    ages = {"old.manifest.json": 8, "young.manifest.json": 6, "notes.json": 30, "x.keys": 30,
            "old.keys.json": 8}
    for name, days in ages.items():
        (folder / name).write_text("{}")
        os.utime(folder / name, (now - days * 86400, now - days * 86400))
    covered_operator(tmp_path).prepare_submit({"ti": FakeTI()})  # type: ignore[arg-type]
    left = sorted(p.name for p in folder.iterdir() if not p.name.startswith("dag."))
    assert left == ["notes.json", "x.keys", "young.manifest.json"]  # 7 days by default
    monkeypatch.setenv("AIRFLOW_PARTITIONS_MANIFEST_RETENTION_DAYS", "5")
    covered_operator(tmp_path).prepare_submit({"ti": FakeTI()})  # type: ignore[arg-type]
    assert not (folder / "young.manifest.json").exists()
    ti = FakeTI()
    covered_operator(tmp_path, manifest_retention_days=0).prepare_submit({"ti": ti})  # type: ignore
    assert list(folder.glob("*.manifest.json")) == [Path(ti.pushed["manifest"])]
    monkeypatch.setenv("AIRFLOW_PARTITIONS_MANIFEST_RETENTION_DAYS", "a week")
    with pytest.raises(InvalidInput, match="not a number of days"):
        covered_operator(tmp_path).prepare_submit({"ti": FakeTI()})  # type: ignore[arg-type]


def test_a_run_with_a_partition_key_renders_no_data_interval(tmp_path: Path) -> None:
    """An asset-triggered run (Airflow 3.3) has no data interval: the defaults' template
    failed with UndefinedError before the window was taken from the key (make airflow-cluster's
    events_daily_rollup, found by its follower's first announcements)."""
    from airflow.sdk import DAG

    class Run:
        partition_key = "2024-01-02T00:00:00"
        conf: dict[str, Any] = {}

    with DAG("consumer", schedule=None):
        op = CoveredSparkSubmitOperator(task_id="spark", application="a.py", fact="events")
    op.render_template_fields({"dag_run": Run()})
    assert (op.start, op.end) == (None, None)
    with DAG("cron", schedule=None):
        interval = CoveredSparkSubmitOperator(task_id="spark", application="a.py", fact="events")
    interval.render_template_fields({"dag_run": None, "data_interval_start": T0,
                                     "data_interval_end": T0.add(days=1)})
    assert interval.start == "2024-01-01 00:00:00+00:00"
