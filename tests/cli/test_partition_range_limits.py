"""``partition add|drop --range`` is counted before anything is listed, refused above a limit,
and written in batches with progress on stderr.

Before: ``--range 0001-01-01-00 9999-12-31-23`` listed 87.6 million hours in memory (13 GB after
12 minutes) before writing anything, with no progress and no way to stop it early.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.cli.partition_input import range_selection
from airflow_partitions.defaults import MAX_RANGE_PARTITIONS
from airflow_partitions.errors import RangeTooLarge
from airflow_partitions.interop import expand_values
from airflow_partitions.periods import UpdatePeriod
from tests.cli.conftest import Run, one_error_line

ADD = ("partition", "add", "raw", "--period", "HOURLY")
DROP = ("partition", "drop", "raw", "--period", "HOURLY")
EVERY_HOUR = ("0001-01-01-00", "9999-12-31-23")
HOURS = UpdatePeriod.HOURLY.parse_ordinal(EVERY_HOUR[1]) - UpdatePeriod.HOURLY.parse_ordinal(
    EVERY_HOUR[0])


def listed(run: Run) -> list[dict[str, str]]:
    result = run("partition", "list", "raw", "--json")
    assert result.code == 0, result.err
    return [p["values"] for p in result.json()]


def test_a_range_above_the_limit_is_refused_with_its_count(events: Run) -> None:
    assert HOURS == 87_649_415  # every hour from year 1 to the last of 9999, but one
    for command in (ADD, DROP):
        line = one_error_line(events(*command, "--range", *EVERY_HOUR, "region=us"), 2)
        assert f"{HOURS:,} HOURLY partitions" in line, line
        assert f"limit of {MAX_RANGE_PARTITIONS:,}" in line and "--max-partitions" in line
    assert listed(events) == []
    shown = events("timeline", "show", "raw", "--json")
    assert all(doc["ranges"] == [] for doc in shown.json()), shown.out


def test_max_partitions_lowers_and_raises_the_limit(events: Run) -> None:
    day = ("2015-01-01-00", "2015-01-02-00")
    line = one_error_line(events(*ADD, "--range", *day, "region=us", "--max-partitions", "23"), 2)
    assert "holds 24 HOURLY partitions, more than the limit of 23" in line
    assert listed(events) == []
    added = events(*ADD, "--range", *day, "region=us", "--max-partitions", "24")
    assert added.code == 0 and "registered 24 partitions" in added.out, added.err
    for bad in ("0", "-5", "many"):
        result = events(*ADD, "--range", *day, "region=us", "--max-partitions", bad)
        assert result.code == 2 and "--max-partitions" in result.err, result.err
    only_range = events(*ADD, "dt=2015-01-03-00", "region=us", "--max-partitions", "5")
    assert "only applies to --range" in one_error_line(only_range, 2)


def test_a_range_is_listed_a_batch_at_a_time(tmp_path: Path) -> None:
    """The whole calendar's hours, allowed: the first batch comes at once, none of the rest is
    built (the test would run out of memory or time if the range were listed first)."""
    with Catalog(f"sqlite:///{tmp_path}/c.db", data_root=str(tmp_path)) as catalog:
        catalog.create_fact("events")
        sdef = catalog.create_storage("events", "raw", ["HOURLY"], columns=["region"])
        selection = range_selection(catalog, sdef, UpdatePeriod.HOURLY, EVERY_HOUR, None,
                                    {"region": "us"}, limit=10**9, locations=True)
        assert selection.total == HOURS
        batches = selection.batches(10_000)
        first, second = next(batches), next(batches)
        assert [len(first), len(second)] == [10_000, 10_000]
        assert first[0] == {"dt": "0001-01-01-00", "region": "us"}
        assert second[0]["dt"] == "0002-02-21-16"  # hour 10,000
        assert selection.selects({"dt": "9999-12-31-22", "region": "us"})
        assert not selection.selects({"dt": "9999-12-31-23", "region": "us"})  # END excluded
        assert not selection.selects({"dt": "2015-01-01-00", "region": "eu"})


def test_a_long_range_streams_with_progress_lines(events: Run) -> None:
    """20,000 hours: written in batches, progress at each tenth on a non-terminal stderr, and
    every partition registered exactly once."""
    begin, end = "2015-01-01-00", "2017-04-13-08"  # 20,000 hours
    added = events(*ADD, "--range", begin, end, "region=us")
    assert added.code == 0, added.err
    assert "registered 20000 partitions of raw (HOURLY); 0 were already registered" in added.out
    lines = added.err.splitlines()
    assert lines[-1] == "adding to raw: 20,000 of 20,000 (100%)", added.err
    percents = [int(m.group(1)) for m in map(re.compile(r".*\((\d+)%\)$").match, lines) if m]
    assert len(percents) == len(lines) >= 2 and percents == sorted(percents), added.err
    values = listed(events)
    assert len(values) == 20_000 and {v["region"] for v in values} == {"us"}
    timeline = events("timeline", "show", "raw", "--json").json()
    hourly = next(doc for doc in timeline if doc["period"] == "HOURLY")
    assert hourly["ranges"] == [[begin, end]]


def test_a_range_that_meets_a_partition_elsewhere_writes_nothing(events: Run,
                                                                 tmp_path: Path) -> None:
    moved = events(*ADD, "dt=2015-01-10-05", "region=us", "--location", str(tmp_path / "x"))
    assert moved.code == 0, moved.err
    line = one_error_line(events(*ADD, "--range", "2015-01-01-00", "2015-03-01-00",
                                 "region=us"), 2)
    assert "registered elsewhere" in line and "2015-01-10-05" in line, line
    assert len(listed(events)) == 1
    other_region = events(*ADD, "--range", "2015-01-01-00", "2015-03-01-00", "region=eu")
    assert other_region.code == 0, other_region.err  # only the selected values can clash
    assert len(listed(events)) == 1 + 1416


def test_operator_ranges_are_limited_too(tmp_path: Path) -> None:
    with Catalog(f"sqlite:///{tmp_path}/c.db", data_root=str(tmp_path)) as catalog:
        catalog.create_fact("events")
        sdef = catalog.create_storage("events", "raw", ["HOURLY"], columns=["region"])
        with pytest.raises(RangeTooLarge, match=f"{HOURS:,} HOURLY partitions"):
            expand_values({"range": list(EVERY_HOUR), "region": "us"}, sdef, "HOURLY")


def test_a_huge_value_is_echoed_cut(events: Run) -> None:
    for args in [(*ADD, "dt=2015-01-01-00", "region=" + "x" * 100_000),
                 (*ADD, "dt=" + "2" * 100_000, "region=us"),
                 ("partition", "list", "raw", "--filter", "region = '" + "x" * 100_000),
                 ("cover", "events", "--start", "2" * 100_000, "--end", "2015-01-02T00:00Z")]:
        line = one_error_line(events(*args), 2)
        assert len(line) < 400 and re.search(r"\(1000\d\d characters\)", line), line[:500]


def test_partition_values_are_streamed_in_order(events: Run) -> None:
    """Batches meet exactly: no hour is skipped or repeated at a batch boundary, adding or
    dropping."""
    begin, end = "2015-01-01-00", "2016-02-21-17"  # 10,001 hours: two batches, the second of 1
    assert events(*ADD, "--range", begin, end, "region=us").code == 0
    hours = sorted(v["dt"] for v in listed(events))
    expected = [UpdatePeriod.HOURLY.format_ordinal(o) for o in itertools.islice(
        itertools.count(UpdatePeriod.HOURLY.parse_ordinal(begin)), 10_001)]
    assert hours == expected and hours[-1] < end
    dropped = events(*DROP, "--range", "2015-01-01-01", end, "region=us")
    assert dropped.code == 0 and "dropped 10000 partitions" in dropped.out, dropped.err
    assert [v["dt"] for v in listed(events)] == [begin]
