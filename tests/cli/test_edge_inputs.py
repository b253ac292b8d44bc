"""Edges of the calendar and of the inputs: each one typed and short, nothing written, or answered
where it failed.

On SQLite (the inputs are refused before any store is touched; the calendar edges are pure
arithmetic over the timelines).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from airflow_partitions.catalog import (
    Catalog,
    InvalidProducer,
    Producer,
    TimelineCache,
    UnsafeLocation,
    parse_rule,
)
from airflow_partitions.cover import format_instant
from airflow_partitions.errors import InvalidRange, WrongType
from airflow_partitions.periods import UpdatePeriod
from tests.helpers import run_cli


@pytest.fixture
def ev(tmp_path: Path) -> Catalog:
    cat = Catalog(f"sqlite:///{tmp_path}/c.db", data_root=str(tmp_path / "data"),
                  cache=TimelineCache())
    cat.create_fact("ev")
    cat.create_storage("ev", "raw", ["HOURLY", "DAILY"], columns=["dt", "region"])
    cat.register("raw", "HOURLY", [{"dt": f"2015-01-01-{h:02d}", "region": "us"}
                                   for h in range(9)])
    return cat


@pytest.mark.parametrize("location", [
    "/data/ev/raw/../../../../etc", "../etc", "s3://bucket/ev/../../x", "/data/./..",
])
def test_an_explicit_location_climbing_out_is_refused(ev: Catalog, location: str) -> None:
    """``--location /data/ev/raw/../../../../etc`` is refused, never registered as given."""
    with pytest.raises(UnsafeLocation, match=r"'\.\.' segment"):
        ev.register("raw", "HOURLY", {"dt": "2015-01-01-10", "region": "us"}, location=location)
    assert ev.get_partition("raw", "HOURLY", {"dt": "2015-01-01-10", "region": "us"}) is None


def test_an_explicit_location_is_normalised(ev: Catalog,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    ev.register("raw", "HOURLY", {"dt": "2015-01-01-10", "region": "us"},
                location="/data//ev/./raw/x/")
    part = ev.get_partition("raw", "HOURLY", {"dt": "2015-01-01-10", "region": "us"})
    assert part is not None and part.location == "/data/ev/raw/x"
    code, _, err = run_cli(ev, capsys, "partition", "add", "raw", "--period", "HOURLY",
                       "dt=2015-01-01-11", "region=us", "--location", "/data/ev/raw/../../etc")
    assert code == 2 and "'..' segment" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("rule", ["start-P10000Y", "end+P1201M", "start+PT999999999999H",
                                  "start-P5218W"])
def test_a_producer_rule_past_a_century_is_refused_at_input(
        ev: Catalog, rule: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``start-P10000Y`` is refused by set-producer, not left for ``plan`` to raise an untyped
    ``ValueError``."""
    with pytest.raises(InvalidProducer, match="more than 36,525 days"):
        parse_rule(rule)
    code, _, err = run_cli(ev, capsys, "storage", "set-producer", "raw", f"HOURLY=ingest@{rule}")
    assert code == 2 and "36,525 days" in err
    assert ev.get_storage("raw").producers == {}


def test_a_producer_near_the_ends_of_the_calendar_is_typed() -> None:
    assert parse_rule("start-P100Y").calendar == (("years", 100),)
    early = UpdatePeriod.DAILY.parse_ordinal("0050-01-01")
    with pytest.raises(InvalidRange, match="outside the calendar"):
        Producer("d", "start-P99Y").logical_date_of(UpdatePeriod.DAILY, early, "UTC")


def test_the_last_day_of_the_calendar_breaks_no_command(
        ev: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    """With ``DAILY 9999-12-31`` registered, coverage and metrics answer (no exit 2) over
    ranges inside the calendar."""
    ev.register("raw", "DAILY", {"dt": "9999-12-31", "region": "us"})
    inside = ("--start", "2015-01-01T00:00:00Z", "--end", "2015-01-01T09:00:00Z")
    last = ("--start", "9999-12-01T00:00:00Z", "--end", "9999-12-31T00:00:00Z")
    for args in (("coverage", "ev", *inside), ("coverage", "ev", *last),
                 ("metrics", "ev", *inside, "--json")):
        code, out, err = run_cli(ev, capsys, *args)
        assert code == 0 or (code == 1 and "NOT coverable" in out), (args, out, err)
    code, out, _ = run_cli(ev, capsys, "metrics", "ev", *inside, "--json")
    lateness = json.loads(out)["lateness"]
    assert any(late["latest_end"].startswith("9999-12-31T23:59:59") for late in lateness)


def test_coverage_plot_creates_no_directory_tree(ev: Catalog, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "dir" / "c.png"
    code, _, err = run_cli(ev, capsys, "coverage", "ev", "--start", "2015-01-01T00:00:00Z",
                       "--end", "2015-01-01T09:00:00Z", "--plot", str(target))
    assert code == 2 and "does not exist" in err
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_a_poll_interval_that_is_not_a_finite_positive_number_is_refused(
        ev: Catalog, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(ev, capsys, "backfill", "ev", "--start", "2015-01-01T00:00:00Z",
                       "--end", "2015-01-02T00:00:00Z", "--dry-run", "--poll-interval", value)
    assert code == 2 and "--poll-interval" in err


def test_cover_refuses_one_string_where_a_list_is_meant(ev: Catalog) -> None:
    for kwargs in ({"periods": "HOURLY"}, {"storages": "raw"}):
        with pytest.raises(WrongType, match="not the one string"):
            ev.cover("ev", "2015-01-01T00:00:00Z", "2015-01-01T09:00:00Z", **kwargs)  # type: ignore[arg-type]
    assert ev.cover("ev", "2015-01-01T00:00:00Z", "2015-01-01T09:00:00Z",
                    periods=["HOURLY"]).coverable


def test_year_one_prints_with_four_digits(ev: Catalog,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert format_instant(dt.datetime(1, 1, 1, tzinfo=dt.UTC)) == "0001-01-01T00:00"
    code, out, _ = run_cli(ev, capsys, "cover", "ev", "--start", "0001-01-01T00:00:00Z",
                       "--end", "0001-01-02T00:00:00Z")
    assert code == 1 and "[0001-01-01T00:00, 0001-01-02T00:00)" in out
    assert " 1-01-01" not in out
