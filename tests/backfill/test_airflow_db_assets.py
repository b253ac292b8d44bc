"""The metadata DB adapter and a producer scheduled on a coverage asset, in a real metadata DB.

Against a migrated metadata DB with serialized DAGs (no scheduler): a DAG scheduled with
``PartitionedAssetTimetable`` on a coverage asset's URI is told apart from a time-scheduled one
(Airflow's ``DagModel`` records whether the timetable is partitioned and periodic, and the
asset expression); posting an event goes through Airflow's own asset manager and lands as a
partitioned asset event; and Airflow itself refuses to backfill such a DAG, which is why the
runner announces instead. One ``dags reserialize`` and one Python process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from airflow_partitions.coverage_events import CoverageAssetSpec
from tests.helpers import AirflowHome

URI = CoverageAssetSpec.of("events", "DAILY").uri

DAGS = f"""
import datetime as dt

from airflow.sdk import DAG, Asset, CronDataIntervalTimetable, PartitionedAssetTimetable, task

COVERAGE = Asset(name="events daily coverage", uri={URI!r}, group="airflow-partitions")

with DAG("on_coverage", schedule=PartitionedAssetTimetable(assets=COVERAGE),
         start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC), catchup=False):
    @task
    def rollup(): ...

    rollup()

with DAG("on_cron", schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
         start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC), catchup=False):
    @task
    def ingest(): ...

    ingest()
"""

SCRIPT = f"""
import datetime as dt, json
from airflow_partitions.backfill.airflow_db import AirflowBackfills, BackfillRefused

airflow = AirflowBackfills()
out = {{"on_coverage": airflow.coverage_assets("on_coverage"),
        "on_cron": airflow.coverage_assets("on_cron"),
        "unknown": airflow.coverage_assets("no_such_dag")}}
airflow.post_event({URI!r}, "2024-01-02T00:00:00", {{"restated": False}})
from airflow.models.asset import AssetEvent, AssetModel
from airflow.utils.session import create_session
from sqlalchemy import select
with create_session() as session:
    rows = session.execute(select(AssetEvent.partition_key, AssetEvent.extra)
                           .join(AssetModel, AssetModel.id == AssetEvent.asset_id)
                           .where(AssetModel.uri == {URI!r})).all()
out["events"] = [[key, extra] for key, extra in rows]
out["runs"] = [r.run_id for r in airflow.partition_runs("on_coverage", ["2024-01-02T00:00:00"])]
airflow.trigger_partition_run("on_coverage", "2024-01-03T00:00:00")
out["by_hand"] = [[r.partition_key, r.state]
                  for r in airflow.partition_runs("on_coverage", ["2024-01-03T00:00:00"])]
day = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)
try:
    airflow.schedule("on_coverage", day, day)
except BackfillRefused as exc:
    out["refused"] = str(exc)
print("RESULT " + json.dumps(out))
"""


def test_a_coverage_asset_consumer_is_detected_and_announced(airflow_home: AirflowHome) -> None:
    (airflow_home.dags / "coverage_consumer.py").write_text(textwrap.dedent(DAGS))
    done = airflow_home.airflow("dags", "reserialize")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=airflow_home.env, cwd=airflow_home.home, timeout=300, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    [line] = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    out = json.loads(line.removeprefix("RESULT "))
    assert out["on_coverage"] == [URI]
    assert out["on_cron"] == [] and out["unknown"] == []
    assert [key for key, _ in out["events"]] == ["2024-01-02T00:00:00"]
    assert out["events"][0][1]["restated"] is False
    assert out["runs"] == []  # the scheduler creates the run; none runs here
    assert out["by_hand"] == [["2024-01-03T00:00:00", "queued"]]  # a run started by hand
    assert "Airflow refuses a backfill of on_coverage" in out["refused"]
