"""A slice reaches Airflow as the backfill runs' ``dag_run_conf``, in a real metadata DB.

Airflow 3.3's backfill takes no partition key from its caller (its runs get the keys the DAG's
timetable generates), so the slices travel in the conf (docs/backfill.md, "Slices"). Here,
against a migrated metadata DB with a serialized DAG (no scheduler: a backfill creates its runs
at once, queued): the dry run validates the conf against the DAG's params (a region outside the
param's enum is refused before anything is created), and every run the backfill creates
carries the conf. One ``dags reserialize`` and one Python process in the session's migrated home.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.helpers import AirflowHome

DAG = """
import datetime as dt

from airflow.sdk import DAG, CronDataIntervalTimetable, Param, task

with DAG("slice_conf_ingest", schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
         start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC), catchup=False,
         params={"regions": Param(["eu", "us"], type="array",
                                  items={"type": "string", "enum": ["eu", "us"]})}):
    @task
    def ingest(): ...

    ingest()
"""

SCRIPT = """
import datetime as dt, json
from airflow_partitions.backfill.airflow_db import AirflowBackfills, BackfillRefused
from airflow_partitions.planning import run_conf

airflow = AirflowBackfills()
first = dt.datetime(2024, 1, 1, 5, tzinfo=dt.UTC)
last = first + dt.timedelta(hours=1)
conf = run_conf([(("region", "eu"),)], "regions")
out = {"dates": [d.isoformat() for d in airflow.schedule("slice_conf_ingest", first, last, conf)]}
try:
    airflow.schedule("slice_conf_ingest", first, last, {"regions": ["apac"]})
except BackfillRefused as exc:
    out["refused"] = str(exc)
backfill_id = airflow.create("slice_conf_ingest", first, last, 1, conf)
from airflow.models import DagRun
from airflow.utils.session import create_session
from sqlalchemy import select
with create_session() as session:
    runs = session.execute(select(DagRun.logical_date, DagRun.conf, DagRun.run_type)
                           .where(DagRun.backfill_id == backfill_id)
                           .order_by(DagRun.logical_date)).all()
out["runs"] = [[d.isoformat(), c, str(t)] for d, c, t in runs]
print("RESULT " + json.dumps(out))
"""


def test_the_slice_conf_reaches_every_backfill_run(airflow_home: AirflowHome) -> None:
    (airflow_home.dags / "slice_conf_ingest.py").write_text(textwrap.dedent(DAG))
    done = airflow_home.airflow("dags", "reserialize")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=airflow_home.env, cwd=airflow_home.home, timeout=300, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    [line] = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    out = json.loads(line.removeprefix("RESULT "))
    assert out["dates"] == ["2024-01-01T05:00:00+00:00", "2024-01-01T06:00:00+00:00"]
    assert "Airflow refuses a backfill of slice_conf_ingest" in out["refused"]
    assert "apac" in out["refused"]
    assert out["runs"] == [["2024-01-01T05:00:00+00:00", {"regions": ["eu"]}, "backfill"],
                           ["2024-01-01T06:00:00+00:00", {"regions": ["eu"]}, "backfill"]]
