"""``storage create --producer``, ``storage set-producer``, ``storage show`` and ``plan``."""

from __future__ import annotations

from tests.cli.conftest import Run, one_error_line


def pipeline(run: Run) -> None:
    assert run("fact", "create", "events").code == 0
    made = run("storage", "create", "events", "events_raw", "--periods", "HOURLY",
               "--producer", "HOURLY=events_hourly_ingest")
    assert made.code == 0, made.err
    assert "producers HOURLY=events_hourly_ingest" in made.out
    assert run("storage", "create", "events", "events_rollup", "--periods", "DAILY,MONTHLY",
               "--priority", "10", "--producer",
               "DAILY=events_daily_rollup,MONTHLY=events_monthly_rollup@end-PT1H").code == 0


def test_producers_are_created_shown_changed_and_removed(run: Run) -> None:
    pipeline(run)
    shown = run("storage", "show", "events_rollup", "--json").json()
    assert shown["producers"] == {
        "DAILY": {"dag_id": "events_daily_rollup", "logical_date": "start"},
        "MONTHLY": {"dag_id": "events_monthly_rollup", "logical_date": "end-PT1H"}}
    assert "MONTHLY: events_monthly_rollup (logical date: end-PT1H)" in run(
        "storage", "show", "events_rollup").out
    changed = run("storage", "set-producer", "events_rollup", "daily=rollup2@start+PT2H",
                  "--remove", "MONTHLY")
    assert changed.code == 0, changed.err
    assert "producers DAILY=rollup2@start+PT2H" in changed.out
    assert run("storage", "show", "events_raw", "--json").json()["producers"] == {
        "HOURLY": {"dag_id": "events_hourly_ingest", "logical_date": "start"}}
    assert "rollup2@start+PT2H" in run("storage", "list").out
    assert "MONTHLY: -" in run("storage", "show", "events_rollup").out


def test_producer_errors_are_one_line(run: Run) -> None:
    pipeline(run)
    assert "'bad dag'" in one_error_line(
        run("storage", "set-producer", "events_raw", "HOURLY=bad dag"), 2)
    assert "no DAILY period" in one_error_line(
        run("storage", "set-producer", "events_raw", "DAILY=x"), 2)
    assert "'start+1H'" in one_error_line(
        run("storage", "set-producer", "events_raw", "HOURLY=x@start+1H"), 2)
    assert "PERIOD=DAG" in one_error_line(run("storage", "set-producer", "events_raw"), 2)
    assert "'nope'" in one_error_line(run("storage", "show", "nope"), 2)
    assert "'FOO'" in one_error_line(
        run("storage", "create", "events", "s", "--periods", "HOURLY", "--producer", "FOO=x"), 2)


def test_plan_text_and_json(run: Run) -> None:
    pipeline(run)
    assert run("partition", "add", "events_raw", "--period", "HOURLY", "--range",
               "2015-01-05-00", "2015-01-06-00").code == 0
    text = run("plan", "events", "--start", "2015-01-05T00:00:00Z",
               "--end", "2015-01-06T02:00:00Z")
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert lines[0].startswith("plan for events [2015-01-05T00:00:00+00:00")
    assert "3 runs (3 gap, 0 input, 0 restate) in 2 DAGs" in lines[0]
    assert "events_daily_rollup @ 2015-01-05T00:00:00+00:00  events_rollup DAILY 2015-01-05" \
        in text.out
    assert lines[-1] == "after these runs the range is coverable: the cover has 3 partitions"
    data = run("plan", "events", "--start", "2015-01-05T00:00:00Z",
               "--end", "2015-01-06T02:00:00Z", "--json").json()
    assert [r["value"] for r in data["runs"]] == ["2015-01-06-00", "2015-01-06-01", "2015-01-05"]
    assert data["coverable_after"] is True and len(data["cover_after"]) == 3


def test_plan_says_when_the_range_stays_uncoverable(run: Run) -> None:
    assert run("fact", "create", "events").code == 0
    assert run("storage", "create", "events", "raw", "--periods", "HOURLY").code == 0
    result = run("plan", "events", "--start", "2015-01-05T00:00:00Z",
                 "--end", "2015-01-05T03:00:00Z")
    assert result.code == 0
    assert "unfillable [2015-01-05T00:00:00+00:00, 2015-01-05T03:00:00+00:00)" in result.out
    assert "no producer for HOURLY" in result.out and "NOT coverable" in result.out
    assert "'x'" in one_error_line(run("plan", "events", "--start", "x", "--end", "y"), 2)
    assert "not aligned" in one_error_line(
        run("plan", "events", "--start", "2015-01-05T00:30:00Z", "--end", "2015-01-06"), 2)


def test_slice_conf_is_set_shown_and_reaches_the_plan(run: Run) -> None:
    """``--slice-conf`` names the run-conf key of a producer that takes several
    slices; ``plan`` then names the slices and the conf of each run."""
    assert run("fact", "create", "events").code == 0
    made = run("storage", "create", "events", "raw", "--periods", "HOURLY",
               "--partition-columns", "dt,region", "--dimension", "region=eu,us",
               "--producer", "HOURLY=ingest", "--slice-conf", "HOURLY=regions")
    assert made.code == 0, made.err
    assert run("storage", "show", "raw", "--json").json()["producers"] == {
        "HOURLY": {"dag_id": "ingest", "logical_date": "start", "slice_conf": "regions"}}
    assert "HOURLY: ingest (logical date: start; slices in conf 'regions')" in run(
        "storage", "show", "raw").out
    assert run("partition", "add", "raw", "--period", "HOURLY", "dt=2015-01-01-00",
               "region=us").code == 0
    planned = run("plan", "events", "--start", "2015-01-01T00:00:00Z", "--end",
                  "2015-01-01T02:00:00Z", "--json").json()
    assert [(r["value"], r["slices"], r["conf"]) for r in planned["runs"]] == [
        ("2015-01-01-00", [{"region": "eu"}], {"regions": ["eu"]}),
        ("2015-01-01-01", [{"region": "eu"}, {"region": "us"}], {"regions": ["eu", "us"]})]
    text = run("plan", "events", "--start", "2015-01-01T00:00:00Z", "--end",
               "2015-01-01T02:00:00Z", "--where", "region = 'us'").out
    assert "raw HOURLY 2015-01-01-01 for region=us  [gap]" in text and "for region=eu" not in text
    reset = run("storage", "set-producer", "raw", "--slice-conf", "HOURLY=")
    assert reset.code == 0, reset.err
    assert "slice_conf" not in run("storage", "show", "raw", "--json").json()["producers"][
        "HOURLY"]
    assert "no producer of DAILY" in one_error_line(
        run("storage", "set-producer", "raw", "--slice-conf", "DAILY=x"), 2)
    assert "'1x'" in one_error_line(
        run("storage", "set-producer", "raw", "--slice-conf", "HOURLY=1x"), 2)
