"""Versions, lineage and staleness on the command line: ``stale``, ``partition add --restate``,
``cover --fresh-only``
and the version in ``partition list``."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_partitions.catalog import Catalog, TimelineCache
from tests.cli.conftest import Run, one_error_line

DAY = ["--start", "2015-01-02T00:00:00Z", "--end", "2015-01-03T00:00:00Z"]


@pytest.fixture
def built(events: Run, tmp_path: Path) -> Run:
    """raw HOURLY 2015-01-02 (region us) and a rollup DAILY 2015-01-02 built from it."""
    assert events("storage", "create", "events", "rollup", "--periods", "DAILY",
                  "--priority", "5").code == 0
    assert events("partition", "add", "raw", "--period", "HOURLY", "--range", "2015-01-02-00",
                  "2015-01-03-00", "region=us").code == 0
    catalog = Catalog(f"sqlite:///{tmp_path}/p.db", data_root=str(tmp_path / "data"),
                      cache=TimelineCache())
    catalog.register("rollup", "DAILY", {"dt": "2015-01-02"}, inputs=[
        {"storage": "raw", "period": "HOURLY", "values": p.values, "version": p.version}
        for p in catalog.list_partitions("raw")])
    catalog.close()
    return events


def test_restate_bumps_the_version_shown_by_list(built: Run) -> None:
    hour = ["partition", "add", "raw", "--period", "HOURLY", "dt=2015-01-02-05", "region=us"]
    assert "0 partitions" in built(*hour).out
    restated = built(*hour, "--restate")
    assert restated.code == 0
    assert ("registered 1 partition of raw (HOURLY) (1 of them restated with a new version); "
            "0 were already registered") in restated.out
    listing = built("partition", "list", "raw", "--json").json()
    versions = {p["values"]["dt"]: p["version"] for p in listing}
    assert versions["2015-01-02-05"] == 2 and versions["2015-01-02-04"] == 1
    assert "version" in built("partition", "list", "raw").out


def test_stale_lists_what_a_restate_made_stale(built: Run) -> None:
    clean = built("stale", "events")
    assert clean.code == 0 and clean.out.strip() == "no stale partitions of events"
    assert built("partition", "add", "raw", "--period", "HOURLY", "dt=2015-01-02-05",
                 "region=us", "--restate").code == 0
    text = built("stale", "events")
    assert text.code == 1
    assert text.out.splitlines() == [
        "rollup DAILY 2015-01-02 (version 1): input raw HOURLY 2015-01-02-05 us restated "
        "(version 1 -> 2)",
        "1 stale partition of events",
    ]
    doc = built("stale", "events", *DAY, "--json").json()
    assert set(doc) == {"fact", "start", "end", "stale"}
    [stale] = doc["stale"]
    assert (stale["storage"], stale["period"], stale["values"], stale["version"]) == (
        "rollup", "DAILY", {"dt": "2015-01-02"}, 1)
    assert stale["changed"] == [{
        "storage": "raw", "period": "HOURLY", "values": {"dt": "2015-01-02-05", "region": "us"},
        "version": 1, "reason": "restated", "current_version": 2, "via": []}]
    later = built("stale", "events", "--start", "2015-01-03", "--end", "2015-01-04", "--json")
    assert later.code == 0 and later.json()["stale"] == []


def test_cover_fresh_only_falls_back_and_says_why(built: Run) -> None:
    assert built("partition", "add", "raw", "--period", "HOURLY", "dt=2015-01-02-05",
                 "region=us", "--restate").code == 0
    plain = built("cover", "events", *DAY, "--json").json()
    assert [p["period"] for p in plain["partitions"]] == ["DAILY"] and "skipped" not in plain
    fresh = built("cover", "events", *DAY, "--fresh-only", "--json")
    assert fresh.code == 0
    doc = fresh.json()
    assert {p["period"] for p in doc["partitions"]} == {"HOURLY"}
    assert doc["skipped"] == [{"storage": "rollup", "period": "DAILY", "value": "2015-01-02",
                               "reason": "input raw HOURLY 2015-01-02-05 us restated"}]
    text = built("cover", "events", *DAY, "--fresh-only").out
    assert ("DAILY 2015-01-02 of rollup skipped: stale (input raw HOURLY 2015-01-02-05 us "
            "restated)") in text


def test_bad_input_is_exit_2(built: Run) -> None:
    assert "not an ISO-8601 instant" in one_error_line(
        built("stale", "events", "--start", "yesterday"), 2)
    assert "nope" in one_error_line(built("stale", "nope"), 2)
    assert "reversed" in one_error_line(
        built("stale", "events", "--start", "2015-01-03", "--end", "2015-01-02"), 2)
    assert "time column" in one_error_line(built("stale", "events", "--time-column", "x"), 2)
