"""Every example DAG imports cleanly through Airflow's own DagBag."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = ["events_by_region_pruned", "events_daily_rollup", "events_hourly_ingest",
            "events_monthly_rollup", "events_report"]


def test_example_dags_import_without_errors(tmp_path: Path) -> None:
    code = (
        "import json; from airflow.dag_processing.dagbag import DagBag; "
        f"b = DagBag(dag_folder={str(ROOT / 'dags_examples')!r}); "
        "print(json.dumps({'ids': sorted(b.dag_ids), 'errors': {k: str(v) for k, v in "
        "b.import_errors.items()}, 'tasks': {d: sorted(t.task_id for t in b.dags[d].tasks) "
        "for d in b.dag_ids}}))"
    )
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW_PARTITIONS_DATA_ROOT": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == {}
    assert [i for i in result["ids"] if i.startswith("events_")] == EXPECTED
    assert result["tasks"]["events_daily_rollup"] == ["register_day", "rollup_day",
                                                      "wait_for_hours"]
