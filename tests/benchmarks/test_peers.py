"""benchmarks/peers.py's pure parts on a tiny dataset: the data it generates, the expected
missing hours, and our answer (and the os.path.exists loop's) against them; and the parts of
the questions a sensor asks: the absent hour, the regions and their truth, the registrations
before each call (undone at the end), the docs' hook example, the first-question memory.

Luigi and Dagster are not installed by ``make test`` (``make bench-peers`` puts them in their own
virtual environments), so their children are not run here; the smoke run of the whole benchmark
is ``make bench-peers BENCH_PEERS_ARGS=--quick``.
"""

from __future__ import annotations

import datetime as dt
import json
import mmap
import os
import sys
from pathlib import Path
from typing import Any

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
    assert len(ten.rollup_days) == round(0.5 * len(ten.days()))  # rollups on half the days


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


def test_the_source_fingerprint_names_the_package_whatever_was_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every source file of the package counts, not only the modules a tool imported (an
    HBase job imports more than a SQLite one), and a changed file changes it."""
    package = tmp_path / "fp_pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "rare.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fp_pkg  # type: ignore[import-not-found]

    first = peers_child.source_fingerprint("fp_pkg")
    assert len(first) == 12 and int(first, 16) >= 0
    import fp_pkg.sub.rare  # type: ignore[import-not-found]  # noqa: F401

    assert peers_child.source_fingerprint("fp_pkg") == first
    (package / "sub" / "rare.py").write_text("X = 2\n")
    assert peers_child.source_fingerprint("fp_pkg") != first
    assert peers_child.source_fingerprint("no_such_package") != first
    for name in ("fp_pkg.sub.rare", "fp_pkg.sub", "fp_pkg"):
        sys.modules.pop(name, None)


def test_the_absent_hour_is_a_hole_no_rollup_covers() -> None:
    ds = peers.years_dataset(1, 2015)
    hole = peers.absent_hour(ds)
    assert hole in ds.holes and hole.date() not in ds.rollup_days
    assert peers.expected_missing(ds, hole, hole + peers.HOUR, mixed=True) == [
        hole.strftime(peers.KEY_FORMAT)]


def test_regions_are_deterministic_and_their_truth_counts_holes_and_outside_hours() -> None:
    rds = peers.plan_regions(3, regions=4, hole_rate=0.01)
    assert rds == peers.plan_regions(3, regions=4, hole_rate=0.01)
    assert (rds.start, rds.end) == (peers.FIRST_HOUR, dt.datetime(2015, 2, 1, tzinfo=dt.UTC))
    assert rds.regions == ("r000", "r001", "r002", "r003")
    assert len(rds.holes) == round(744 * 4 * 0.01)
    assert len(rds.present()) == 744 * 4 - len(rds.holes)
    assert len(peers.expected_missing_slices(rds, rds.start, rds.end)) == len(rds.holes)
    hole, region = min(rds.holes)
    before = rds.start - peers.HOUR
    got = peers.expected_missing_slices(rds, before, hole + peers.HOUR)
    assert got[:4] == [f"2014-12-31-23 region=r00{i}" for i in range(4)]
    assert peers_child.slice_hours(hole, region) in got
    december = peers.plan_regions(3, regions=2, start=dt.datetime(2015, 12, 1, tzinfo=dt.UTC))
    assert december.end == dt.datetime(2016, 1, 1, tzinfo=dt.UTC)


def test_our_regions_answer_and_the_loop_equal_the_truth(tmp_path: Path) -> None:
    rds = peers.plan_regions(5, regions=3, hole_rate=0.01)
    manifest = peers.materialise_regions(rds, tmp_path)
    meta = json.loads(manifest.read_text())
    assert peers.materialise_regions(rds, tmp_path) == manifest  # reused
    loop, _ = peers_child.setup_exists(meta, {})
    for start, end in ((rds.start, rds.end), (rds.start + 5 * peers.HOUR, rds.start + 300 *
                                               peers.HOUR)):
        want = peers.expected_missing_slices(rds, start, end)
        assert want and peers.our_missing_slices(meta["catalog_url"], meta["root"],
                                                 start, end) == want
        assert loop(start, end) == want


def test_registrations_before_each_call_are_outside_the_data_and_undone(tmp_path: Path) -> None:
    ds = tiny()
    meta = json.loads(peers.materialise(ds, tmp_path).read_text())
    end = peers_child.parse_hour(meta["end"])
    assert [peers_child.extra_partition(meta, k) for k in range(2)] == [
        (end, None), (end + peers.HOUR, None)]
    regional = {**meta, "regions": ["a", "b"]}
    assert [peers_child.extra_partition(regional, k) for k in range(3)] == [
        (end, "a"), (end, "b"), (end + peers.HOUR, "a")]
    want = peers.expected_missing(ds, START, END, mixed=True)
    spec = {"tool": "ours", "dataset": str(tmp_path / "tiny" / "dataset.json"),
            "options": {"register": True, "fact": True},
            "ranges": [{"name": "all", "start": START.strftime(peers.KEY_FORMAT),
                        "end": END.strftime(peers.KEY_FORMAT)}],
            "min_repeats": 3, "max_repeats": 3, "budget_s": 0.0}
    out = peers_child.run(spec)
    assert out["ranges"]["all"]["missing"] == want
    assert len(out["ranges"]["all"]["cpu_times"]) == 3
    # the writer process registered three hours after the end, then dropped them
    from airflow_partitions.catalog import Catalog

    with Catalog(meta["catalog_url"], data_root=meta["root"]) as catalog:
        cover = catalog.cover(peers.FACT, START, end + 3 * peers.HOUR)
        assert peers_child.hours_of((m.start, m.end) for m in cover.missing)[-3:] == [
            (end + i * peers.HOUR).strftime(peers.KEY_FORMAT) for i in range(3)]
    loop = peers_child.run({**spec, "tool": "exists", "options": {"register": True}})
    assert loop["ranges"]["all"]["missing"] == peers.expected_missing(ds, START, END)
    assert not os.path.exists(peers_child.partition_dir(meta, end, None))


def test_on_hbase_our_cover_and_the_floor_equal_the_expected_hours(
        tmp_path: Path, hbase_test_server: Any) -> None:
    """``--hbase``: the same data in an HBase catalog (the double here), asked right after a
    registration by another process: our cover, the same reads and HBase's floor (the day's rows
    alone) answer the expected hours."""
    ds = tiny()
    meta = json.loads(peers.materialise(ds, tmp_path).read_text())
    url = f"{hbase_test_server.url}?table_prefix=peers_"
    peers.register(ds, url, meta["root"])
    day = (hour(3, 0), hour(4, 0))
    around = (min(ds.holes) - dt.timedelta(hours=13), min(ds.holes) + dt.timedelta(hours=2))
    spec = {"tool": "ours", "dataset": str(tmp_path / "tiny" / "dataset.json"),
            "options": {"register": True, "fact": True, "catalog_url": url},
            "ranges": [{"name": f"r{i}", "start": start.strftime(peers.KEY_FORMAT),
                        "end": end.strftime(peers.KEY_FORMAT)}
                       for i, (start, end) in enumerate([day, around])],
            "min_repeats": 2, "max_repeats": 2, "budget_s": 0.0}
    ours = peers_child.run(spec)
    floor = peers_child.run({**spec, "tool": "hbase_keys",
                             "options": {"register": True, "catalog_url": url}})
    day_only = peers_child.run({**spec, "tool": "hbase_keys",
                                "options": {"register": True, "catalog_url": url,
                                            "day_only": True}})
    for i, (start, end) in enumerate([day, around]):
        assert ours["ranges"][f"r{i}"]["missing"] == peers.expected_missing(
            ds, start, end, mixed=True)
        assert floor["ranges"][f"r{i}"]["missing"] == peers.expected_missing(ds, start, end)
        assert day_only["ranges"][f"r{i}"]["missing"] == peers.expected_missing(ds, start, end)
    assert floor["ranges"]["r1"]["missing"]  # the hole is there to be found


def test_the_docs_hook_example_is_found_split_and_read() -> None:
    text = (Path(peers.REPO) / "docs" / "airflow.md").read_text()
    snippet = peers.docs_hook_example(text)
    assert "PartitionCatalogHook" in snippet
    imports, body = peers_child.docs_snippet(snippet)
    assert imports.startswith(("from ", "import ")) and "import" not in body
    assert body.splitlines()[-1].startswith("_answer = ")
    doc = "# x\n\n## `PartitionCatalogHook`\n\ntext\n\n```python\nimport os\nos.sep\n```\n"
    assert peers.docs_hook_example(doc) == "import os\nos.sep\n"
    with pytest.raises(SystemExit):
        peers.docs_hook_example("## `PartitionCatalogHook`\n\n## Next\n```python\nx\n```")
    with pytest.raises(SystemExit):
        peers_child.docs_snippet("import os\nx = 1\n")
    hour = START + peers.HOUR
    assert peers_child.answer_of(True, START, hour) == []
    assert peers_child.answer_of(False, START, hour) == [START.strftime(peers.KEY_FORMAT)]
    with pytest.raises(SystemExit):
        peers_child.answer_of(3, START, hour)


def test_a_tool_s_own_answer_is_read_after_the_timed_calls() -> None:
    """A cover, Luigi's datetimes or Dagster's keys are read into hour strings once, after the
    timed calls, also through the hooks a writer adds; a plain answer is taken as it is."""
    events: list[str] = []

    def call(start: dt.datetime, end: dt.datetime) -> list[str]:
        events.append("call")
        return [start.strftime(peers.KEY_FORMAT)]

    def read(raw: list[str], start: dt.datetime, end: dt.datetime) -> list[str]:
        events.append("read")
        return [f"{raw[0]} read"]

    hooked = peers_child.WithHooks(peers_child.ReadLater(call, read), None, None)
    assert peers_child.timed_call(hooked, START, END, 1)[2] == ["2015-03-01-00 read"]
    assert events == ["call", "read"]
    assert peers_child.timed_call(hooked, START, END, 3)[2] == ["2015-03-01-00 read"]
    assert events[2:] == ["call", "call", "call", "read"]
    assert peers_child.timed_call(call, START, END, 1)[2] == ["2015-03-01-00"]


def test_a_first_question_reports_its_memory() -> None:
    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        # Fresh pages, written, so resident whatever the heap already holds: a large
        # allocation freed earlier in this process can serve a bytearray from resident memory.
        fresh = mmap.mmap(-1, 8 * 2**20)
        for _ in range(128):
            fresh.write(b"x" * 2**16)
        keep.append(fresh)
        keep.append(bytearray(8 * 2**20))  # what tracemalloc sees (it does not trace mmap)
        return ["x"]

    keep: list[object] = []
    out = peers_child.first_memory(query, START, END, traced=False)
    assert out["missing"] == ["x"] and out["rss_growth_bytes"] >= 7 * 2**20
    assert out["rss_peak_growth_bytes"] is None or out["rss_peak_growth_bytes"] >= 7 * 2**20
    traced = peers_child.first_memory(query, START, END, traced=True)
    assert traced["traced_peak_bytes"] >= 8 * 2**20


def test_a_wrong_answer_to_a_question_stops_the_benchmark() -> None:
    tool = peers.tools("luigi", "dagster")[0]
    ask = peers.Ask("1 year", START, END, ("2015-03-01-00",))
    job = peers.Job("idle", "x", "x", tool, Path("m"), (ask,))
    peers.check_ask(job, ask, ["2015-03-01-00"])
    with pytest.raises(SystemExit, match="WRONG ANSWER"):
        peers.check_ask(job, ask, [])


def test_the_verdict_names_each_history_it_holds_on() -> None:
    """Ahead on one history and behind on another is said so, not as "behind on every
    history"; a tie is not ahead."""
    names = ["1 year", "10 years"]
    assert peers.verdict("the loop", names, [(0.11, 0.10), (0.10, 0.12)]) == (
        "ahead of the loop on 1 year and behind it on 10 years")
    assert peers.verdict("the loop", names, [(0.10, 0.10), (0.10, 0.12)]) == (
        "behind the loop on every history")
    assert peers.verdict("Luigi", names, [(1.1, 0.1), (1.0, 0.1)]) == (
        "ahead of Luigi on every history")


def test_a_floor_is_said_against_the_loop_only_when_every_history_has_both() -> None:
    """The floor sentence divides each history's floor by its own loop figure, and is left
    out when any history lacks either (a run without --hbase has no HBase floor)."""
    figures = {("sqlite", "1 year"): 0.08, ("exists", "1 year"): 0.10,
               ("sqlite", "10 years"): 0.22, ("exists", "10 years"): 0.11}

    def med(_question: str, column: str, name: str) -> float | None:
        return figures.get((column, name))

    names = ["1 year", "10 years"]
    assert peers.floor_ratios(med, "sqlite", names) == "0.80x, 2.00x"
    assert peers.floor_ratios(med, "hbase_day", names) is None
    del figures[("exists", "10 years")]
    assert peers.floor_ratios(med, "sqlite", names) is None
