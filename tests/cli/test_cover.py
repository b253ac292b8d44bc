"""``airflow-partitions cover`` and ``coverage``: exit codes, JSON shape, text bars, the PNG."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Run, one_error_line

RANGE = ["--start", "2015-01-29T06:00:00Z", "--end", "2015-03-01T06:00:00Z"]


@pytest.fixture
def lens(events: Run) -> Run:
    """Hourly edges in raw, a rollup storage with DAILY (one day missing) and MONTHLY."""
    assert events("storage", "create", "events", "rollup", "--periods", "DAILY,MONTHLY",
                  "--priority", "5").code == 0
    for a, b in (("2015-01-29-06", "2015-01-30-00"), ("2015-02-10-00", "2015-02-11-00"),
                 ("2015-03-01-00", "2015-03-01-06")):
        assert events("partition", "add", "raw", "--period", "HOURLY", "--range", a, b,
                      "region=us").code == 0
    assert events("partition", "add", "rollup", "--period", "DAILY", "--range", "2015-01-30",
                  "2015-02-10").code == 0
    assert events("partition", "add", "rollup", "--period", "DAILY", "--range", "2015-02-11",
                  "2015-03-01").code == 0
    return events


def test_cover_json_is_the_documented_shape(lens: Run) -> None:
    result = lens("cover", "events", *RANGE, "--json")
    assert result.code == 0, result.err
    doc = result.json()
    assert set(doc) == {"fact", "start", "end", "coverable", "partitions", "missing", "notes"}
    assert doc["coverable"] is True and doc["missing"] == []
    assert doc["notes"] == ["region: not a dimension, any value counts"]  # raw's region
    assert doc["start"] == "2015-01-29T06:00:00+00:00"
    first = doc["partitions"][0]
    assert set(first) == {"storage", "period", "value", "start", "end", "location"}
    assert (first["storage"], first["period"], first["value"]) == ("raw", "HOURLY",
                                                                   "2015-01-29-06")
    periods = [p["period"] for p in doc["partitions"]]
    assert periods.count("DAILY") == 29 and periods.count("HOURLY") == 18 + 24 + 6


def test_uncoverable_exits_1_and_still_prints(lens: Run) -> None:
    assert lens("partition", "drop", "raw", "--period", "HOURLY", "dt=2015-02-10-05",
                "region=us").code == 0
    result = lens("cover", "events", *RANGE)
    assert result.code == 1
    assert "NOT coverable" in result.out
    assert ("missing 2015-02-10T05:00/06:00: no HOURLY 2015-02-10-05, no DAILY 2015-02-10, "
            "no MONTHLY 2015-02") in result.out
    doc = lens("cover", "events", *RANGE, "--json")
    assert doc.code == 1 and doc.json()["coverable"] is False


def test_bad_bounds_exit_2_with_one_line(lens: Run) -> None:
    misaligned = one_error_line(lens("cover", "events", "--start", "2015-01-29T06:30:00Z",
                                     "--end", "2015-03-01T06:00:00Z"), 2)
    assert "HOURLY" in misaligned and "06:30" in misaligned
    assert lens("cover", "events", "--start", "2015-01-29T06:30:00Z", "--end",
                "2015-03-01T06:00:00Z", "--align", "outer").code == 0
    assert "not an ISO-8601" in one_error_line(lens("cover", "events", "--start", "yesterday",
                                                    "--end", "2015-03-01"), 2)
    assert "nope" in one_error_line(lens("cover", "nope", *RANGE), 2)


def test_coverage_draws_bars_and_a_png(lens: Run, tmp_path: Path) -> None:
    png = tmp_path / "out" / "coverage.png"
    png.parent.mkdir()  # --plot creates no directories
    result = lens("coverage", "events", *RANGE, "--plot", str(png), "--width", "31")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    rollup_daily = next(line for line in lines if line.startswith("rollup DAILY"))
    bar = rollup_daily.split("|")[1]
    # One cell per day: the missing 2015-02-10 leaves the two cells it straddles partly empty.
    assert len(bar) == 31 and bar[11:13] == "▒▒" and bar[2:10] == "█" * 8
    assert next(line for line in lines if line.startswith("cover")).count("!") == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
