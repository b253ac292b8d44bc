"""The pruning example DAG imports through Airflow's DagBag with the expected tasks."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import ROOT, load_dagbag


def test_example_dag_imports(tmp_path: Path) -> None:
    result = load_dagbag(
        ROOT / "dags_examples" / "events_by_region_pruned.py", tmp_path,
        "(lambda d, j: {'tasks': sorted(t.task_id for t in d.tasks), 'joins': j.joins, "
        "'small': sorted(j.small_tables)})(b.dags['events_by_region_pruned'], "
        "b.dags['events_by_region_pruned'].get_task('pruned_join'))",
    )
    assert result["errors"] == {}
    assert result["tasks"] == ["ensure_tables", "pruned_join", "register_events", "write_events"]
    assert result["joins"][0]["small"] == "regions_of_interest"
    assert result["small"] == ["regions_of_interest"]
