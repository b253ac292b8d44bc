"""benchmarks/peers.py's pure parts on a tiny dataset: the data it generates, the expected
missing hours, and our answer (and the os.path.exists loop's) against them.

Luigi and Dagster are not installed by ``make test`` (``make bench-peers`` puts them in their own
virtual environments), so their children are not run here; the smoke run of the whole benchmark
is ``make bench-peers BENCH_PEERS_ARGS=--quick``.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import peers
import peers_child

START = dt.datetime(2015, 3, 1, tzinfo=dt.UTC)
END = START + dt.timedelta(days=10)


def tiny(seed: int = 7) -> peers.Dataset:
    """10 days, 2% holes (5 hours), rollups on half the days."""
    return peers.plan_dataset("tiny", START, END, seed, hole_rate=0.02, rollup_share=0.5)


def hour(day: int, h: int) -> dt.datetime:
    return START + dt.timedelta(days=day, hours=h)


def test_plan_is_deterministic_and_sized() -> None:
    ds = tiny()
    assert ds == tiny()
    assert ds.holes != tiny(seed=8).holes
    assert ds.hours == 240
    assert len(ds.holes) == 5 and all(START <= h < END for h in ds.holes)
    assert len(ds.rollup_days) == 5 and len(ds.days()) == 10
    assert len(ds.present_hours()) == 235


def test_years_dataset_matches_the_issue() -> None:
    ten = peers.years_dataset(10, 2015)
    assert (ten.start, ten.end) == (peers.FIRST_HOUR, dt.datetime(2025, 1, 1, tzinfo=dt.UTC))
    assert len(ten.holes) == round(ten.hours / 1000) == 88
    assert len(ten.rollup_days) == round(0.9 * len(ten.days()))


def test_expected_missing_with_and_without_rollups() -> None:
    holes = frozenset({hour(1, 5), hour(2, 7), hour(2, 8)})
    ds = peers.Dataset("t", START, END, 0, 0.0, 0.0, holes, frozenset({hour(2, 0).date()}))
    assert peers.expected_missing(ds, START, END) == [
        "2015-03-02-05", "2015-03-03-07", "2015-03-03-08"]
    assert peers.expected_missing(ds, START, END, mixed=True) == ["2015-03-02-05"]
    # The rollup covers its day only when the whole day lies in the range.
    assert peers.expected_missing(ds, hour(2, 6), END, mixed=True) == [
        "2015-03-03-07", "2015-03-03-08"]
    assert peers.expected_missing(ds, hour(1, 6), hour(2, 8)) == ["2015-03-03-07"]
    # Hours before or after the data are missing too.
    assert peers.expected_missing(ds, START - dt.timedelta(hours=2), hour(0, 1)) == [
        "2015-02-28-22", "2015-02-28-23"]


def test_short_ranges_hold_the_middle_hole() -> None:
    ds = peers.years_dataset(1, 2015)
    middle = peers.middle_hole(ds)
    for case in (peers.day_case(ds), peers.month_case(ds)):
        assert case.start <= middle < case.end
        assert peers.expected_missing(ds, case.start, case.end)
    day, month = peers.day_case(ds), peers.month_case(ds)
    assert day.end - day.start == dt.timedelta(days=1)
    assert month.start.day == 1 and month.end.day == 1
    assert [c.label for c in peers.cases(2015, quick=True)] == ["1 year, 1 day", "1 year, whole"]


def test_our_answer_and_the_loop_equal_the_expected_hours(tmp_path: Path) -> None:
    ds = tiny()
    manifest = peers.materialise(ds, tmp_path)
    meta = json.loads(manifest.read_text())
    assert peers.materialise(ds, tmp_path) == manifest  # reused, not rebuilt
    keys = Path(meta["present_keys"]).read_text().split()
    assert len(keys) == 235 and keys[0].endswith(":00")
    loop, _ = peers_child.setup_exists(meta, {})
    first_hole = min(ds.holes)
    around = (first_hole - dt.timedelta(hours=13), first_hole + dt.timedelta(hours=2))
    ranges = [(START, END), around, (hour(3, 0), hour(4, 0))]
    for start, end in ranges:
        want = peers.expected_missing(ds, start, end)
        mixed = peers.expected_missing(ds, start, end, mixed=True)
        assert peers.our_missing(meta["catalog_url"], meta["root"], start, end) == want
        assert peers.our_missing(meta["catalog_url"], meta["root"], start, end,
                                 verify=False) == want
        assert peers.our_missing(meta["catalog_url"], meta["root"], start, end,
                                 mixed=True) == mixed
        assert loop(start, end) == want
    assert len(peers.expected_missing(ds, START, END, mixed=True)) < len(ds.holes)


def test_a_wrong_answer_stops_the_benchmark() -> None:
    ds = tiny()
    case = peers.Case("tiny, whole", ds, START, END)
    tool = peers.tools("luigi", "dagster")[0]
    right = peers.expected_missing(ds, START, END)
    peers.check(tool, case, right)
    with pytest.raises(SystemExit, match="WRONG ANSWER"):
        peers.check(tool, case, right[1:])


def test_the_source_fingerprint_names_the_imported_code() -> None:
    import airflow_partitions.catalog  # noqa: F401  (what the "ours" child imports)

    first = peers_child.source_fingerprint()
    assert len(first) == 12 and int(first, 16) >= 0
    assert peers_child.source_fingerprint() == first
    assert peers_child.source_fingerprint("no_such_package") != first
