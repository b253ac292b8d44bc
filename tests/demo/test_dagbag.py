"""Every example DAG imports cleanly through Airflow's own DagBag (over a catalog that has the
examples' fact: the daily rollup's coverage asset is checked against it when it is parsed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.demo.events import ensure_catalog
from tests.helpers import ROOT, load_dagbag


@pytest.fixture
def events_catalog(catalog: Catalog) -> Catalog:
    """The examples' fact and storages in the store the DAG files' hook finds."""
    ensure_catalog(catalog)
    return catalog

EXPECTED = ["events_by_region_pruned", "events_daily_rollup", "events_hourly_ingest",
            "events_monthly_rollup", "events_report"]


@pytest.mark.usefixtures("events_catalog")
def test_example_dags_import_without_errors(tmp_path: Path) -> None:
    result = load_dagbag(
        ROOT / "dags_examples", tmp_path,
        "{'ids': sorted(b.dag_ids), 'tasks': {d: sorted(t.task_id for t in b.dags[d].tasks) "
        "for d in b.dag_ids}}",
    )
    assert result["errors"] == {}
    assert [i for i in result["ids"] if i.startswith("events_")] == EXPECTED
    assert result["tasks"]["events_daily_rollup"] == ["register_day", "rollup_day"]


@pytest.mark.usefixtures("events_catalog")
def test_the_daily_rollup_is_scheduled_on_the_coverage_asset_and_takes_its_day_from_the_key(
        tmp_path: Path) -> None:
    """events_daily_rollup runs on ``CoverageAsset(fact="events", period="DAILY")``; its covered
    job covers the run's window (no start, end or cover_from), reads only the raw hours, and the
    day its templates name comes from the run's partition key, or from the conf of a run
    started by hand."""
    result = load_dagbag(
        ROOT / "dags_examples", tmp_path,
        "(lambda d: {'uri': d.timetable.asset_condition.uri, "
        "'window_from_run': d.get_task('rollup_day').window_from_run, "
        "'storages': d.get_task('rollup_day').storages, "
        "'days': [d.get_template_env().from_string(d.get_task('register_day').values['dt'])"
        ".render(dag_run=r) for r in ("
        "type('R', (), {'partition_key': '2015-01-31T00:00:00', 'conf': {}})(), "
        "type('R', (), {'partition_key': None, "
        "'conf': {'partition_key': '2015-02-01T00:00:00'}})())]})(b.dags['events_daily_rollup'])",
    )
    assert result.pop("errors") == {}
    assert result == {"uri": "x-airflow-partitions://coverage/events/DAILY",
                      "window_from_run": True, "storages": ["events_raw"],
                      "days": ["2015-01-31", "2015-02-01"]}


def test_the_daily_rollup_is_refused_over_a_catalog_without_its_fact(tmp_path: Path,
                                                                      store_url: str) -> None:
    """A coverage asset of an unknown fact fails the DAG file's import, in one line that names
    the catalog's facts."""
    del store_url  # an empty catalog
    result = load_dagbag(ROOT / "dags_examples", tmp_path, "{}")
    errors = {Path(path).name: text for path, text in result["errors"].items()}
    assert list(errors) == ["events_daily_rollup.py"]
    assert "the catalog has no fact 'events' (facts: none)" in errors["events_daily_rollup.py"]


@pytest.mark.usefixtures("events_catalog")
def test_unpausing_an_events_example_schedules_no_run(tmp_path: Path) -> None:
    """The events examples end with the demo data (EXAMPLE_END, catchup=False): the scheduler's
    own question, "the next run after none", has no answer, so unpausing starts no Spark job on
    hours that have no data; backfills inside the window still plan their runs."""
    result = load_dagbag(
        ROOT / "dags_examples", tmp_path,
        "(lambda TR, core: {d: [str(b.dags[d].end_date), str(core(b.dags[d].timetable)"
        ".next_dagrun_info(last_automated_data_interval=None, restriction=TR("
        "b.dags[d].start_date, b.dags[d].end_date, b.dags[d].catchup)))] for d in b.dag_ids "
        "if d.startswith('events_') and d != 'events_by_region_pruned'})("
        "__import__('airflow.timetables.base', fromlist=['x']).TimeRestriction, "
        "__import__('airflow.serialization.encoders', fromlist=['x']).coerce_to_core_timetable)",
    )
    assert result["errors"] == {}
    assert len(result) == 5  # four DAGs and the errors
    runs = {d: r for d, r in result.items() if d != "errors"}
    for dag_id, (end, next_run) in runs.items():
        assert end.startswith("2015-03-31 23:00:00") and next_run == "None", (dag_id, end)


@pytest.mark.usefixtures("events_catalog")
def test_the_hourly_ingest_writes_and_registers_the_regions_its_run_names(
        tmp_path: Path) -> None:
    """events_hourly_ingest renders, as Airflow renders its templates, to every region of the
    hour by default and to the regions of its ``regions`` param (a late region's hour): the
    Spark job writes those and the register task registers exactly those (dt, region)
    partitions."""
    result = load_dagbag(
        ROOT / "dags_examples", tmp_path,
        "(lambda d, t: {str(p): (lambda ctx: [d.get_template_env().from_string(a).render(**ctx) "
        "for a in [d.get_task('register_hour').values, *d.get_task('ingest_hour')"
        ".application_args]])({'params': p or d.params.dump(), 'logical_date': t}) "
        "for p in (None, {'regions': ['eu']})})(b.dags['events_hourly_ingest'], "
        "__import__('pendulum').datetime(2015, 1, 31, 5, tz='UTC'))",
    )
    assert result.pop("errors") == {}
    for params, regions in (("None", ["eu", "us"]), ("{'regions': ['eu']}", ["eu"])):
        values, *args = result[params]
        assert json.loads(values) == {"dt": "2015-01-31-05", "region": regions}
        assert args[args.index("--regions") + 1] == ",".join(regions)
        assert args[args.index("--location-template") + 1].endswith(
            "/events/events_raw/HOURLY/dt={dt}/region={region}")
