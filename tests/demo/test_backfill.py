"""Backfills: ``airflow backfill create`` plans one run per day of the range for the examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ROOT, make_airflow_home


@pytest.mark.e2e
def test_backfill_dry_run_plans_one_run_per_day(tmp_path: Path) -> None:
    home = make_airflow_home(tmp_path)
    examples = {"AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags_examples")}

    def airflow(*args: str) -> str:
        done = home.airflow(*args, env=examples)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return done.stdout

    airflow("dags", "reserialize")
    out = airflow("backfill", "create", "--dag-id", "events_report", "--from-date", "2015-02-01",
                  "--to-date", "2015-02-03", "--dry-run")
    planned = [line for line in out.splitlines() if line.startswith("| 2015-")]
    assert [line.split("|")[1].strip()[:10] for line in planned] == [
        "2015-02-01", "2015-02-02", "2015-02-03"]
