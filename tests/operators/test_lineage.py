"""Versions and lineage in the Airflow layer: the Spark operator hands its inputs (with
versions) to the register operator, which records them; restated partitions say so in their
asset events; a ``fresh_only`` Spark operator skips stale partitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset
from airflow.sdk.exceptions import AirflowFailException
from airflow.sdk.execution_time.context import OutletEventAccessors

from airflow_partitions.catalog import Catalog
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator, UncoverableRange
from airflow_partitions.spark import load_manifest
from tests.helpers import T0, FakeTI, register_hours

ROLLUP = Asset(name="events_rollup", uri="file:///data/events/rollup")
DAY = {"dt": "2024-01-01"}


class KeyedTI(FakeTI):
    """A task instance whose XCom also answers ``key=``."""

    def xcom_pull(self, task_ids: str, key: str = "return_value") -> Any:
        return self.xcom.get(task_ids if key == "return_value" else f"{task_ids}.{key}")


def ctx(ti: FakeTI, **more: Any) -> Any:
    """A task context holding just what these operators read."""
    return {"ti": ti, **more}


@pytest.fixture(autouse=True)
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SparkSubmitOperator, "execute", lambda self, context: None)


def spark(tmp_path: Path, **kwargs: Any) -> CoveredSparkSubmitOperator:
    return CoveredSparkSubmitOperator(
        task_id="spark", application="job.py", fact="events", start=T0, end=T0.add(days=1),
        manifest_dir=str(tmp_path), keep_manifest=True, storages=["raw"], **kwargs)


def register(ti: FakeTI, **kwargs: Any) -> tuple[dict[str, Any], OutletEventAccessors]:
    op = RegisterPartitionsOperator(task_id="register", storage="rollup", period="DAILY",
                                    values=DAY, outlets=[ROLLUP], **kwargs)
    outlet_events = OutletEventAccessors()
    result = op.execute(ctx(ti, outlet_events=outlet_events))
    return result, outlet_events


def test_the_job_inputs_become_the_lineage_of_what_it_registers(
        events: Catalog, tmp_path: Path) -> None:
    register_hours(events, 0, 23, regions=("eu", "us"))
    events.register("raw", "HOURLY", {"dt": "2024-01-01-05", "region": "eu"}, restate=True)
    ti = KeyedTI()
    spark(tmp_path).execute(ctx(ti))
    inputs = ti.pushed["inputs"]
    assert inputs == load_manifest(ti.pushed["manifest"]).inputs and len(inputs) == 48
    assert {"storage": "raw", "period": "HOURLY", "values": {"dt": "2024-01-01-05",
            "region": "eu"}, "version": 2} in inputs
    assert sum(i["version"] == 1 for i in inputs) == 47
    ti.xcom["spark.inputs"] = inputs
    result, outlet_events = register(ti, inputs_from="spark")
    assert result["changed"] == 1 and events.stale("events") == []
    extra: Any = outlet_events[ROLLUP].extra["airflow_partitions"]
    assert extra["batch"]["restated"] == 0
    assert extra["by_key"]["2024-01-01T00:00:00"]["restated"] is False
    # the hour changes again: the day is stale, and names the hour
    events.register("raw", "HOURLY", {"dt": "2024-01-01-05", "region": "eu"}, restate=True)
    [stale] = events.stale("events")
    assert stale.reason() == "input raw HOURLY 2024-01-01-05 eu restated"
    # the retried register task records the same lineage: unchanged
    assert register(ti, inputs_from="spark")[0]["unchanged"] == 1


def test_a_restated_registration_says_so_in_its_asset_events(events: Catalog) -> None:
    ti = KeyedTI()
    register(ti)
    result, outlet_events = register(ti, restate=True)
    assert result["changed"] == 1
    extra: Any = outlet_events[ROLLUP].extra["airflow_partitions"]
    assert extra["batch"]["restated"] == 1 and extra["batch"]["changed"] == 1
    assert extra["by_key"]["2024-01-01T00:00:00"]["restated"] is True
    assert events.get_partition("rollup", "DAILY", DAY).version == 2  # type: ignore[union-attr]


def test_inputs_from_a_task_that_pushed_none_fails_the_task(events: Catalog) -> None:
    with pytest.raises(AirflowFailException, match="pushed no 'inputs'"):
        register(KeyedTI(), inputs_from="spark")
    assert "inputs_from" in RegisterPartitionsOperator.template_fields
    with pytest.raises(ValueError, match="restate must be True or False"):
        RegisterPartitionsOperator(task_id="r", storage="rollup", period="DAILY", values=DAY,
                                   restate="yes")  # type: ignore[arg-type]


def test_fresh_only_skips_stale_partitions_and_says_why(events: Catalog, tmp_path: Path) -> None:
    register_hours(events, 0, 23)
    hours = [{"storage": "raw", "period": "HOURLY", "values": p.values, "version": 1}
             for p in events.list_partitions("raw")]
    events.register("rollup", "DAILY", DAY, inputs=hours)
    events.register("raw", "HOURLY", {"dt": "2024-01-01-07", "region": "eu"}, restate=True)
    everything: dict[str, Any] = {"storages": None}
    ti = KeyedTI()
    op = CoveredSparkSubmitOperator(
        task_id="spark", application="job.py", fact="events", start=T0, end=T0.add(days=1),
        manifest_dir=str(tmp_path), keep_manifest=True, fresh_only=True, **everything)
    op.execute(ctx(ti))
    assert {i["period"] for i in ti.pushed["inputs"]} == {"HOURLY"}
    plain = KeyedTI()
    CoveredSparkSubmitOperator(task_id="spark", application="job.py", fact="events", start=T0,
                               end=T0.add(days=1), manifest_dir=str(tmp_path),
                               keep_manifest=True).execute(ctx(plain))
    assert {i["period"] for i in plain.pushed["inputs"]} == {"DAILY"}
    events.drop("raw", "HOURLY", {"dt": "2024-01-01-09", "region": "eu"})
    with pytest.raises(UncoverableRange, match="DAILY 2024-01-01 of rollup skipped: stale"):
        CoveredSparkSubmitOperator(
            task_id="spark", application="job.py", fact="events", start=T0, end=T0.add(days=1),
            manifest_dir=str(tmp_path), fresh_only=True).execute(ctx(KeyedTI()))
