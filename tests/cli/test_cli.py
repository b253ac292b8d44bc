"""The ``airflow-partitions`` command, driven in-process through ``main(argv)`` and, for the
crash-repair and Airflow-connection paths, as the real console script in a subprocess."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions import __version__
from airflow_partitions.cli import airflow_connection_url, entry_point, resolve_store_url
from airflow_partitions.cli import base as cli_base
from airflow_partitions.cli import partitions as partition_commands
from tests.cli.conftest import Run, one_error_line

SCRIPT = Path(sys.executable).with_name("airflow-partitions")
LENS = "cube.storagetable.partition.timeline.cache"


def listed(run: Run, storage: str = "raw", *extra: str) -> list[dict[str, Any]]:
    result = run("partition", "list", storage, "--json", *extra)
    assert result.code == 0, result.err
    docs: list[dict[str, Any]] = result.json()
    return docs


# -- definitions ----------------------------------------------------------------------------------


def test_fact_create_and_list(run: Run) -> None:
    assert run("fact", "create", "events", "--time-column", "dt").code == 0
    made = run("fact", "create", "sales", "--time-column", "dt", "--time-column", "it",
               "--time-zone", "Europe/Paris")
    assert made.code == 0
    assert "sales: time columns dt, it; zone Europe/Paris" in made.out
    assert run("fact", "list", "--json").json() == [
        {"name": "events", "time_columns": ["dt"], "tz": "UTC"},
        {"name": "sales", "time_columns": ["dt", "it"], "tz": "Europe/Paris"},
    ]
    table = run("fact", "list").out
    assert "events" in table and "Europe/Paris" in table and "dt, it" in table


def test_fact_create_exist_ok_and_conflict(run: Run) -> None:
    assert run("fact", "create", "events").code == 0
    assert run("fact", "create", "events", "--exist-ok").code == 0
    line = one_error_line(run("fact", "create", "events", "--time-column", "it"), 2)
    assert "'events' already exists" in line
    line = one_error_line(run("fact", "create", "bad-name"), 2)
    assert "'bad-name'" in line
    line = one_error_line(run("fact", "create", "x", "--time-zone", "Mars/Base"), 2)
    assert "'Mars/Base'" in line


def test_storage_create_and_list(events: Run, tmp_path: Path) -> None:
    run = events
    made = run("storage", "create", "events", "rollup", "--periods", "daily,MONTHLY",
               "--priority", "3", "--location", str(tmp_path / "r/{period}/{dt}"),
               "--timeline-class", "daily=Ranges", "--timeline-class", "MONTHLY.dt=StoreAll")
    assert made.code == 0, made.err
    docs = run("storage", "list", "events", "--json").json()
    assert [d["name"] for d in docs] == ["raw", "rollup"]
    raw, rollup = docs
    assert raw == {
        "name": "raw",
        "fact": "events",
        "columns": [["dt", "string"], ["region", "string"]],
        "time_columns": ["dt"],
        "periods": ["HOURLY", "DAILY"],
        "location": str(tmp_path / "data") + "/{fact}/{storage}/{period}/dt={dt}/region={region}",
        "tz": "UTC",
        "priority": 0,
        "timeline_classes": {},
    }
    assert rollup["priority"] == 3
    assert rollup["columns"] == [["dt", "string"]]
    assert rollup["timeline_classes"] == {"DAILY": "Ranges", "MONTHLY.dt": "StoreAll"}
    assert "rollup" in run("storage", "list").out
    assert run("fact", "list", "--json").code == 0
    assert "2" in run("fact", "list").out  # two storages of events


def test_storage_errors_name_the_bad_value(events: Run) -> None:
    run = events
    assert "'nope'" in one_error_line(run("storage", "list", "nope"), 2)
    assert "'FOO'" in one_error_line(
        run("storage", "create", "events", "s", "--periods", "HOURLY,FOO"), 2)
    assert "'HOURLY:Ranges'" in one_error_line(
        run("storage", "create", "events", "s", "--periods", "HOURLY",
            "--timeline-class", "HOURLY:Ranges"), 2)
    assert "'Foo'" in one_error_line(
        run("storage", "create", "events", "s", "--periods", "HOURLY",
            "--timeline-class", "HOURLY=Foo"), 2)
    assert "'nofact'" in one_error_line(
        run("storage", "create", "nofact", "s", "--periods", "HOURLY"), 2)
    assert "'raw' already exists" in one_error_line(
        run("storage", "create", "events", "raw", "--periods", "DAILY"), 2)
    assert run("storage", "create", "events", "raw", "--periods", "HOURLY,DAILY",
               "--partition-columns", "dt,region:string", "--exist-ok").code == 0


# -- partitions -----------------------------------------------------------------------------------


def test_partition_add_one_and_list_json_shape(events: Run, tmp_path: Path) -> None:
    run = events
    added = run("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-30", "region=us")
    assert added.code == 0
    assert "registered 1 partition of raw (DAILY); 0 were already registered" in added.out
    again = run("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-30", "region=us")
    assert "registered 0 partitions of raw (DAILY); 1 was already registered" in again.out
    assert listed(run) == [{
        "storage": "raw",
        "period": "DAILY",
        "values": {"dt": "2015-01-30", "region": "us"},
        "location": f"{tmp_path}/data/events/raw/DAILY/dt=2015-01-30/region=us",
        "version": 1,
    }]
    table = run("partition", "list", "raw").out
    assert "storage" in table and "location" in table
    assert "dt=2015-01-30 region=us" in table and "1 partition" in table


def test_options_may_follow_the_values_and_globals_the_subcommand(
        events: Run, store_args: list[str]) -> None:
    run = events
    result = run("partition", "add", "raw", "dt=2015-01-30", "--period", "DAILY", "region=us",
                 *store_args, store=False)
    assert result.code == 0, result.err
    assert len(listed(run)) == 1


def test_range_adds_every_partition_of_the_period(events: Run) -> None:
    run = events
    added = run("partition", "add", "raw", "--period", "HOURLY",
                "--range", "2015-01-29-06", "2015-01-30-00", "region=us")
    assert added.code == 0, added.err
    assert "registered 18 partitions" in added.out
    docs = listed(run, "raw", "--period", "HOURLY")
    assert len(docs) == 18
    assert docs[0]["values"] == {"dt": "2015-01-29-06", "region": "us"}
    assert docs[-1]["values"] == {"dt": "2015-01-29-23", "region": "us"}
    assert listed(run, "raw", "--period", "DAILY") == []
    [timeline] = run("timeline", "show", "raw", "--period", "HOURLY", "--json").json()
    assert timeline == {
        "storage": "raw", "period": "HOURLY", "column": "dt", "class": "EndsAndHoles",
        "count": 18, "first": "2015-01-29-06", "latest": "2015-01-29-23",
        "ranges": [["2015-01-29-06", "2015-01-30-00"]],
    }


def test_range_errors(events: Run) -> None:
    run = events
    add = ("partition", "add", "raw", "--period", "HOURLY")
    assert "missing: region" in one_error_line(
        run(*add, "--range", "2015-01-29-06", "2015-01-30-00"), 2)
    assert "reversed" in one_error_line(
        run(*add, "--range", "2015-01-30-00", "2015-01-29-06", "region=us"), 2)
    assert "empty" in one_error_line(
        run(*add, "--range", "2015-01-30-00", "2015-01-30-00", "region=us"), 2)
    assert "'2015-01-30'" in one_error_line(
        run(*add, "--range", "2015-01-29-06", "2015-01-30", "region=us"), 2)
    assert "--range" in one_error_line(
        run(*add, "--range", "2015-01-29-06", "2015-01-30-00", "dt=2015-01-29-06", "region=us"),
        2)
    assert "'region'" in one_error_line(
        run(*add, "--range", "2015-01-29-06", "2015-01-30-00", "--column", "region",
            "region=us"), 2)
    assert "--file" in one_error_line(
        run(*add, "--range", "a", "b", "--file", "-"), 2)
    assert listed(run) == []


def test_range_on_a_second_time_column(run: Run) -> None:
    assert run("fact", "create", "sales", "--time-column", "dt", "--time-column", "it").code == 0
    assert run("storage", "create", "sales", "s", "--periods", "DAILY").code == 0
    result = run("partition", "add", "s", "--period", "DAILY", "--column", "it",
                 "--range", "2015-01-01", "2015-01-04", "dt=2015-01-05")
    assert result.code == 0, result.err
    assert [d["values"] for d in listed(run, "s")] == [
        {"dt": "2015-01-05", "it": f"2015-01-0{i}"} for i in (1, 2, 3)
    ]
    shown = {d["column"]: d["ranges"] for d in run("timeline", "show", "s", "--json").json()}
    assert shown == {"dt": [["2015-01-05", "2015-01-06"]], "it": [["2015-01-01", "2015-01-04"]]}


FILE_TEXT = """\
# regions of the first days
dt=2015-01-30 region='a b'

   dt=2015-01-31 region="us"   # trailing comment
dt=2015-01-31 region=us
"""


def test_file_with_quoting_comments_and_blank_lines(events: Run, tmp_path: Path) -> None:
    run = events
    path = tmp_path / "days.txt"
    path.write_text(FILE_TEXT)
    result = run("partition", "add", "raw", "--period", "DAILY", "--file", str(path))
    assert result.code == 0, result.err
    assert "registered 2 partitions" in result.out  # the repeated line counts once
    assert [d["values"] for d in listed(run)] == [
        {"dt": "2015-01-30", "region": "a b"},
        {"dt": "2015-01-31", "region": "us"},
    ]
    assert listed(run)[0]["location"].endswith("/DAILY/dt=2015-01-30/region=a b")
    dropped = run("partition", "drop", "raw", "--period", "DAILY", "--file", str(path))
    assert "dropped 2 partitions" in dropped.out
    assert listed(run) == []


def test_file_from_stdin(events: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    run = events
    monkeypatch.setattr(sys, "stdin", io.StringIO("dt=2015-02-01 region=eu\n"
                                                   "dt=2015-02-02 region='e u'\n"))
    result = run("partition", "add", "raw", "--period", "DAILY", "--file", "-")
    assert result.code == 0, result.err
    assert [d["values"]["region"] for d in listed(run)] == ["eu", "e u"]


@pytest.mark.parametrize(("bad_line", "named"), [
    ("dt=2015-02-0x region=us", "'2015-02-0x'"),
    ("dt=2015-02-03 region=..", "'..'"),
    ("dt=2015-02-03 region=a/b", "'a/b'"),
    ("dt=2015-02-03", "missing: region"),
    ("dt=2015-02-03 region=us colour=red", "unknown: colour"),
    ("dt=2015-02-03 region='unterminated", "No closing quotation"),
    ("dt=2015-02-03 region", "'region'"),
    ("dt=2015-02-03 dt=2015-02-04 region=us", "'dt' is given twice"),
])
def test_a_bad_line_in_a_file_writes_nothing(events: Run, tmp_path: Path, bad_line: str,
                                            named: str) -> None:
    run = events
    assert run("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-01",
               "region=us").code == 0
    before = listed(run)
    path = tmp_path / "bad.txt"
    path.write_text(f"# header\ndt=2015-02-01 region=us\n{bad_line}\ndt=2015-02-02 region=us\n")
    for command in ("add", "drop"):
        line = one_error_line(
            run("partition", command, "raw", "--period", "DAILY", "--file", str(path)), 2)
        assert line.startswith("airflow-partitions: error: line 3: ")
        assert named in line
        assert listed(run) == before


def test_file_errors(events: Run, tmp_path: Path) -> None:
    run = events
    add = ("partition", "add", "raw", "--period", "DAILY")
    assert "'/nonexistent/x'" in one_error_line(run(*add, "--file", "/nonexistent/x"), 2)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    assert "no partitions" in one_error_line(run(*add, "--file", str(empty)), 2)
    assert "'region=us'" in one_error_line(run(*add, "--file", str(empty), "region=us"), 2)


@pytest.mark.parametrize("value", ["..", "a/b", ".", "~x", ""])
def test_unsafe_values_are_refused(events: Run, value: str) -> None:
    run = events
    line = one_error_line(
        run("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-30", f"region={value}"), 2)
    assert repr(value) in line
    assert listed(run) == []


def test_bulk_add_checks_conflicts_before_the_first_chunk(
        events: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    run = events
    monkeypatch.setattr(partition_commands, "CHUNK", 5)
    moved = run("partition", "add", "raw", "--period", "HOURLY", "dt=2015-01-29-20", "region=us",
                "--location", str(tmp_path / "elsewhere"))
    assert moved.code == 0, moved.err
    add = ("partition", "add", "raw", "--period", "HOURLY",
           "--range", "2015-01-29-06", "2015-01-30-00", "region=us")
    line = one_error_line(run(*add), 2)
    assert "registered elsewhere" in line and "2015-01-29-20" in line and "--overwrite" in line
    assert len(listed(run)) == 1  # the first chunks were not written either
    result = run(*add, "--overwrite")
    assert result.code == 0, result.err
    assert "registered 18 partitions" in result.out
    assert all("elsewhere" not in d["location"] for d in listed(run))
    dropped = run("partition", "drop", "raw", "--period", "HOURLY",
                  "--range", "2015-01-29-00", "2015-01-29-12", "region=us")
    assert "dropped 6 partitions of raw (HOURLY); 6 were not registered" in dropped.out
    assert len(listed(run)) == 12


def test_location_and_overwrite(events: Run, tmp_path: Path) -> None:
    run = events
    one = ("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-30", "region=us")
    assert run(*one, "--location", str(tmp_path / "a")).code == 0
    assert "elsewhere" in one_error_line(run(*one, "--location", str(tmp_path / "b")), 2)
    assert run(*one, "--location", str(tmp_path / "b"), "--overwrite").code == 0
    assert listed(run)[0]["location"] == str(tmp_path / "b")
    line = one_error_line(run("partition", "add", "raw", "--period", "HOURLY", "--range",
                              "2015-01-29-06", "2015-01-29-08", "region=us",
                              "--location", "/x"), 2)
    assert "--location" in line and "2 are given" in line


def test_drop_one(events: Run) -> None:
    run = events
    run("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-30", "region=us")
    gone = run("partition", "drop", "raw", "--period", "DAILY", "dt=2015-01-30", "region=us")
    assert "dropped 1 partition of raw (DAILY); 0 were not registered" in gone.out
    again = run("partition", "drop", "raw", "--period", "DAILY", "dt=2015-01-30", "region=us")
    assert "dropped 0 partitions of raw (DAILY); 1 was not registered" in again.out
    assert listed(run) == []


def test_partition_command_errors(events: Run) -> None:
    run = events
    assert "'nope'" in one_error_line(run("partition", "list", "nope"), 2)
    assert "'nope'" in one_error_line(
        run("partition", "add", "nope", "--period", "DAILY", "dt=2015-01-30"), 2)
    assert "WEEKLY" in one_error_line(
        run("partition", "add", "raw", "--period", "WEEKLY", "dt=2015-W01", "region=us"), 2)
    assert "'FORTNIGHTLY'" in one_error_line(run("partition", "list", "raw", "--period",
                                                 "FORTNIGHTLY"), 2)
    assert "dt=... region=..." in one_error_line(
        run("partition", "add", "raw", "--period", "DAILY"), 2)
    assert "'oops'" in one_error_line(
        run("partition", "add", "raw", "--period", "DAILY", "oops", "region=us"), 2)
    assert "--column only applies to --range" in one_error_line(
        run("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-30", "region=us",
            "--column", "dt"), 2)
    assert listed(run) == []


# -- timelines and reconcile ----------------------------------------------------------------------


def test_timeline_properties_for_store_all_and_ends_and_holes(run: Run) -> None:
    assert run("fact", "create", "events").code == 0
    assert run("storage", "create", "events", "raw", "--periods", "HOURLY,DAILY",
               "--timeline-class", "HOURLY=StoreAll").code == 0
    run("partition", "add", "raw", "--period", "HOURLY", "--range", "2015-01-29-06",
        "2015-01-29-09")
    run("partition", "add", "raw", "--period", "DAILY", "--range", "2015-01-29", "2015-02-02")
    run("partition", "drop", "raw", "--period", "DAILY", "dt=2015-01-30")
    hourly, daily = run("timeline", "show", "raw", "--json", "--properties").json()
    assert set(hourly) == {"storage", "period", "column", "class", "count", "first", "latest",
                           "ranges", "properties"}
    assert hourly["class"] == "StoreAll" and hourly["count"] == 3
    assert hourly["properties"] == {
        f"{LENS}.HOURLY.dt.partitions.size": "1",
        f"{LENS}.HOURLY.dt.partitions0": "2015-01-29-06,2015-01-29-07,2015-01-29-08",
        f"{LENS}.HOURLY.dt.storage.class":
            "org.apache.lens.cube.metadata.timeline.StoreAllPartitionTimeline",
    }
    assert daily["ranges"] == [["2015-01-29", "2015-01-30"], ["2015-01-31", "2015-02-02"]]
    assert daily["properties"][f"{LENS}.DAILY.dt.first"] == "2015-01-29"
    assert daily["properties"][f"{LENS}.DAILY.dt.latest"] == "2015-02-01"
    assert daily["properties"][f"{LENS}.DAILY.dt.holes0"] == "2015-01-30"
    assert "properties" not in run("timeline", "show", "raw", "--json").json()[0]
    text = run("timeline", "show", "raw", "--period", "HOURLY", "--properties").out
    assert f"{LENS}.HOURLY.dt.storage.class = org.apache.lens" in text


def test_timeline_show_table_is_compact(events: Run) -> None:
    run = events
    for day in range(1, 13, 2):  # six separate one-day ranges
        run("partition", "add", "raw", "--period", "DAILY", f"dt=2015-01-{day:02d}", "region=us")
    out = run("timeline", "show", "raw", "--period", "DAILY", "--column", "dt").out
    assert "[2015-01-01, 2015-01-02) ∪ [2015-01-03, 2015-01-04) ∪" in out
    assert "... 2 more" in out and "2015-01-11, 2015-01-12" not in out
    assert "EndsAndHoles" in out and "HOURLY" not in out
    empty = run("timeline", "show", "raw", "--period", "HOURLY").out
    assert "(empty)" in empty
    assert "'region'" in one_error_line(run("timeline", "show", "raw", "--column", "region"), 2)
    assert "MONTHLY" in one_error_line(run("timeline", "show", "raw", "--period", "MONTHLY"), 2)


def test_timeline_migrate_keeps_contents(events: Run) -> None:
    run = events
    run("partition", "add", "raw", "--period", "HOURLY", "--range", "2015-01-29-06",
        "2015-01-30-00", "region=us")
    run("partition", "drop", "raw", "--period", "HOURLY", "dt=2015-01-29-12", "region=us")
    before = run("timeline", "show", "raw", "--period", "HOURLY", "--json").json()[0]
    for kind in ("StoreAll", "Ranges", "EndsAndHoles"):
        result = run("timeline", "migrate", "raw", "--period", "HOURLY", "--column", "dt",
                     "--to", kind)
        assert result.code == 0, result.err
        assert f"to {kind}; 17 partitions kept" in result.out
        after = run("timeline", "show", "raw", "--period", "HOURLY", "--json").json()[0]
        assert after == {**before, "class": kind}
    assert after["ranges"] == [["2015-01-29-06", "2015-01-29-12"], ["2015-01-29-13",
                                                                   "2015-01-30-00"]]
    assert run("reconcile", "raw", "--json").json()["consistent"] is True
    assert "'Nope'" in one_error_line(
        run("timeline", "migrate", "raw", "--period", "HOURLY", "--to", "Nope"), 2)
    assert "MONTHLY" in one_error_line(
        run("timeline", "migrate", "raw", "--period", "MONTHLY", "--to", "Ranges"), 2)


def test_reconcile_is_consistent_after_normal_use(events: Run) -> None:
    run = events
    run("partition", "add", "raw", "--period", "HOURLY", "--range", "2015-01-29-06",
        "2015-01-30-00", "region=us")
    run("partition", "drop", "raw", "--period", "HOURLY", "dt=2015-01-29-12", "region=us")
    run("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-30", "region=eu")
    result = run("reconcile", "raw", "--json")
    assert result.code == 0
    assert result.json() == {
        "storage": "raw",
        "consistent": True,
        "finished_drops": 0,
        "timelines": [
            {"storage": "raw", "period": p, "column": "dt", "under_reported": [],
             "over_reported": []}
            for p in ("HOURLY", "DAILY")
        ],
    }
    assert "2 timelines consistent" in result.err  # people's text stays off the JSON stdout
    text = run("reconcile", "raw")
    assert text.code == 0 and "raw: 2 timelines consistent with the partition rows" in text.out
    assert "'nope'" in one_error_line(run("reconcile", "nope"), 2)


# -- errors, help, store resolution ---------------------------------------------------------------


def test_store_errors(run: Run) -> None:
    line = one_error_line(run("--store", "bogus://x", "fact", "list", store=False), 2)
    assert "'bogus://x'" in line
    line = one_error_line(run("--store", "sqlite://", "fact", "list", store=False), 2)
    assert "sqlite://" in line
    line = one_error_line(run("--store", "hbase://127.0.0.1:1", "fact", "list", store=False), 1)
    assert "hbase://127.0.0.1:1 is unavailable" in line


def test_debug_shows_a_traceback(run: Run) -> None:
    result = run("--debug", "--store", "hbase://127.0.0.1:1", "fact", "list", store=False)
    assert result.code == 1
    assert "Traceback (most recent call last)" in result.err
    assert "StoreUnavailable" in result.err
    assert result.err.rstrip().splitlines()[-1].startswith("airflow-partitions: error: store")
    bad = run("partition", "list", "nope", "--debug")
    assert bad.code == 2 and "Traceback" in bad.err and "UnknownStorage" in bad.err


def test_unexpected_errors_are_one_line_exit_1(run: Run, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    def boom(*_: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cli_base.Context, "catalog", property(boom))
    line = one_error_line(run("fact", "list"), 1)
    assert "unexpected RuntimeError: kaboom" in line and "--debug" in line


def test_argparse_errors_are_one_line(run: Run) -> None:
    line = one_error_line(run("partition", "add", "raw"), 2)
    assert "--period" in line and "partition add --help" in line
    assert "'bogus'" in one_error_line(run("bogus"), 2)
    assert "COMMAND" in one_error_line(run("fact"), 2)
    assert "--bogus" in one_error_line(run("partition", "list", "raw", "--bogus"), 2)
    assert "'x'" in one_error_line(run("storage", "create", "f", "s", "--periods", "DAILY",
                                       "--priority", "x"), 2)


COMMANDS = [
    [], ["fact"], ["fact", "create"], ["fact", "list"], ["storage"], ["storage", "create"],
    ["storage", "list"], ["partition"], ["partition", "add"], ["partition", "drop"],
    ["partition", "list"], ["timeline"], ["timeline", "show"], ["timeline", "migrate"],
    ["reconcile"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "top")
def test_help_of_every_command_has_examples(run: Run, command: list[str]) -> None:
    result = run(*command, "--help", store=False)
    assert result.code == 0
    assert "examples:" in result.out
    assert f"airflow-partitions {' '.join(command)}".strip() in result.out.split("examples:")[1]
    assert "--store" in result.out


def test_version(run: Run) -> None:
    result = run("--version", store=False)
    assert result.code == 0 and result.out.strip() == f"airflow-partitions {__version__}"


def test_connection_from_a_json_env_var_needs_no_airflow(tmp_path: Path) -> None:
    env = {"AIRFLOW_HOME": str(tmp_path), "AIRFLOW_CONN_PARTITIONS_DEFAULT": json.dumps(
        {"conn_type": "partition_catalog", "host": "hb", "port": 9091,
         "extra": {"table_prefix": "p", "transport": "framed"}})}
    assert airflow_connection_url(environ=env) == "hbase://hb:9091?table_prefix=p&transport=framed"
    env["AIRFLOW_CONN_PARTITIONS_DEFAULT"] = json.dumps(
        {"conn_type": "partition_catalog", "extra": {"backend": "sqlite",
                                                     "sqlite_path": "/x/p.db"}})
    assert airflow_connection_url(environ=env) == "sqlite:///x/p.db"
    # No variable and no configured Airflow home: Airflow is not consulted (nor initialised).
    assert airflow_connection_url(environ={"AIRFLOW_HOME": str(tmp_path)}) is None
    assert not (tmp_path / "airflow.db").exists()


def test_store_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry_point, "airflow_connection_url", lambda: None)
    env = {"AIRFLOW_PARTITIONS_STORE": "sqlite:///env.db", "AIRFLOW_HOME": "/ah"}
    assert resolve_store_url("sqlite:///explicit.db", env) == "sqlite:///explicit.db"
    assert resolve_store_url(None, env) == "sqlite:///env.db"
    assert resolve_store_url(None, {"AIRFLOW_HOME": "/ah"}) == "sqlite:///ah/partitions.db"
    monkeypatch.setattr(entry_point, "airflow_connection_url", lambda: "sqlite:///conn.db")
    assert resolve_store_url(None, env) == "sqlite:///conn.db"
    assert resolve_store_url("sqlite:///explicit.db", env) == "sqlite:///explicit.db"


# -- the real console script ----------------------------------------------------------------------


def script(*args: str, env: dict[str, str] | None = None,
           stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, input=stdin, check=False)


def test_console_script_repairs_a_crashed_register(tmp_path: Path) -> None:
    """A crash between the partition rows and the timeline under-reports; reconcile repairs."""
    store = ["--store", f"sqlite:///{tmp_path}/p.db", "--data-root", str(tmp_path / "data")]
    assert script(*store, "fact", "create", "events").returncode == 0
    assert script(*store, "storage", "create", "events", "raw", "--periods", "DAILY"
                  ).returncode == 0
    crashed = script(*store, "partition", "add", "raw", "--period", "DAILY", "--file", "-",
                     stdin="dt=2015-01-30\ndt=2015-01-31\n",
                     env={"AIRFLOW_PARTITIONS_CRASH_AT": "register:after-rows"})
    assert crashed.returncode == 86
    assert len(json.loads(script(*store, "partition", "list", "raw", "--json").stdout)) == 2
    repaired = script(*store, "reconcile", "raw", "--json")
    assert repaired.returncode == 0, repaired.stderr
    report = json.loads(repaired.stdout)
    assert report["consistent"] is False
    assert report["timelines"][0]["under_reported"] == ["2015-01-30", "2015-01-31"]
    assert "repaired the DAILY dt timeline: 2 under-reported" in repaired.stderr
    again = script(*store, "reconcile", "raw", "--json")
    assert json.loads(again.stdout)["consistent"] is True
    shown = json.loads(script(*store, "timeline", "show", "raw", "--json").stdout)
    assert shown[0]["ranges"] == [["2015-01-30", "2015-02-01"]]
    failed = script("--store", "hbase://127.0.0.1:1", "fact", "list")
    assert failed.returncode == 1 and len(failed.stderr.splitlines()) == 1


def test_console_script_uses_the_airflow_connection(tmp_path: Path) -> None:
    """``partitions_default`` wins over ``$AIRFLOW_PARTITIONS_STORE``; airflow is never imported
    at module import time."""
    conn_db, env_db = tmp_path / "conn.db", tmp_path / "env.db"
    assert script("--store", f"sqlite:///{conn_db}", "fact", "create", "from_conn").returncode == 0
    env = {
        "AIRFLOW_HOME": str(tmp_path / "airflow_home"),
        "AIRFLOW_PARTITIONS_STORE": f"sqlite:///{env_db}",
        "AIRFLOW_CONN_PARTITIONS_DEFAULT": json.dumps(
            {"conn_type": "partition_catalog", "extra": {"store_url": f"sqlite:///{conn_db}"}}),
    }
    result = script("fact", "list", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert [f["name"] for f in json.loads(result.stdout)] == ["from_conn"]  # stdout is pure JSON
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, airflow_partitions.cli; "
                               "print('airflow' in sys.modules)"],
        capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "False"
