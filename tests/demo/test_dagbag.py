"""Every example DAG imports cleanly through Airflow's own DagBag."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import ROOT, load_dagbag

EXPECTED = ["events_by_region_pruned", "events_daily_rollup", "events_hourly_ingest",
            "events_monthly_rollup", "events_report"]


def test_example_dags_import_without_errors(tmp_path: Path) -> None:
    result = load_dagbag(
        ROOT / "dags_examples", tmp_path,
        "{'ids': sorted(b.dag_ids), 'tasks': {d: sorted(t.task_id for t in b.dags[d].tasks) "
        "for d in b.dag_ids}}",
    )
    assert result["errors"] == {}
    assert [i for i in result["ids"] if i.startswith("events_")] == EXPECTED
    assert result["tasks"]["events_daily_rollup"] == ["register_day", "rollup_day",
                                                      "wait_for_hours"]
