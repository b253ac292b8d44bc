"""The pruning example DAG imports through Airflow's DagBag with the expected tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_example_dag_imports(tmp_path: Path) -> None:
    path = ROOT / "dags_examples" / "events_by_region_pruned.py"
    code = (
        "import json; from airflow.dag_processing.dagbag import DagBag; "
        f"b = DagBag(dag_folder={str(path)!r}); "
        "d = b.dags['events_by_region_pruned']; j = d.get_task('pruned_join'); "
        "print(json.dumps({'errors': {k: str(v) for k, v in b.import_errors.items()}, "
        "'tasks': sorted(t.task_id for t in d.tasks), 'joins': j.joins, "
        "'small': sorted(j.small_tables)}))"
    )
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW_PARTITIONS_DATA_ROOT": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == {}
    assert result["tasks"] == ["ensure_tables", "pruned_join", "register_events", "write_events"]
    assert result["joins"][0]["small"] == "regions_of_interest"
    assert result["small"] == ["regions_of_interest"]
