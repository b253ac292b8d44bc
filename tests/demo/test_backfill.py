"""Backfills: ``airflow backfill create`` plans one run per day of the range for the examples."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

AIRFLOW = Path(sys.executable).with_name("airflow")


@pytest.mark.e2e
def test_backfill_dry_run_plans_one_run_per_day(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW__")}
    env.update({"AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags_examples"),
                "AIRFLOW_PARTITIONS_DATA_ROOT": str(tmp_path / "data")})

    def airflow(*args: str) -> str:
        done = subprocess.run([str(AIRFLOW), *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return done.stdout

    airflow("db", "migrate")
    airflow("dags", "reserialize")
    out = airflow("backfill", "create", "--dag-id", "events_report", "--from-date", "2015-02-01",
                  "--to-date", "2015-02-03", "--dry-run")
    planned = [line for line in out.splitlines() if line.startswith("| 2015-")]
    assert [line.split("|")[1].strip()[:10] for line in planned] == [
        "2015-02-01", "2015-02-02", "2015-02-03"]
