"""Every corruption is reported, never used, and reconcile repairs what it can (invariant 8).

On every backend: a corrupt timeline cell raises a typed ``CorruptTimeline`` that names the
timeline and says to run reconcile; ``reconcile`` and ``rebuild`` replace such a cell from the
partition rows without parsing it (check-and-put against the bytes they read) and report it;
corrupt definitions are ``CorruptDefinition``; a partition row in an unknown state is reported
and kept. The CLI turns each into one line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.rows.layout import (
    DEF,
    STATE,
    fact_row,
    storage_row,
    timeline_column,
    value_cell_column,
    value_column,
)
from airflow_partitions.cli import main
from airflow_partitions.errors import CorruptDefinition, CorruptTimeline
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import timeline_prefix
from tests.catalog.conftest import rows_truth, stored_values
from tests.helpers import register_hours

HOURLY, DAILY = UpdatePeriod.HOURLY, UpdatePeriod.DAILY
HP = timeline_prefix("HOURLY", "dt")
DP = timeline_prefix("DAILY", "dt")
DAY = "2024-01-01"


def at(hour: int) -> str:
    return f"{DAY}T{hour:02d}:00:00+00:00"


# -- writing behind the catalog's back ------------------------------------------------------------


def put_cell(cat: Catalog, storage: str, period: UpdatePeriod, raw: bytes) -> None:
    """Overwrite a timeline cell and bump the generation, so warm caches look again."""
    cat.rows.catalog.put(storage_row(storage), {timeline_column(period, "dt"): raw})
    cat.rows.bump_generation(cat.get_storage(storage).fact)


def cell_doc(cat: Catalog, storage: str, period: UpdatePeriod) -> dict[str, Any]:
    col = timeline_column(period, "dt")
    raw = cat.rows.catalog.get(storage_row(storage), [col])[col]
    doc: dict[str, Any] = json.loads(raw)
    return doc


def edit_cell(cat: Catalog, storage: str, period: UpdatePeriod,
              edit: Callable[[dict[str, Any]], None]) -> None:
    doc = cell_doc(cat, storage, period)
    edit(doc)
    put_cell(cat, storage, period, json.dumps(doc).encode())


def edit_props(**changes: str | None) -> Callable[[dict[str, Any]], None]:
    """Set (or, with None, delete) properties; keys are relative to the HOURLY dt prefix."""
    def edit(doc: dict[str, Any]) -> None:
        for key, value in changes.items():
            full = HP + key.replace("__", ".")
            if value is None:
                doc["properties"].pop(full)
            else:
                doc["properties"][full] = value
    return edit


def hours_with_a_hole(cat: Catalog) -> None:
    """raw HOURLY: hours 0-9 registered, 5 dropped: EndsAndHoles with ``holes0`` = hour 5."""
    register_hours(cat, 0, 9)
    cat.drop("raw", "HOURLY", {"dt": f"{DAY}-05", "region": "eu"})
    props = cell_doc(cat, "raw", HOURLY)["properties"]
    assert props[HP + "holes.size"] == "1" and props[HP + "holes0"] == f"{DAY}-05"


def hours_as_ranges(cat: Catalog) -> None:
    hours_with_a_hole(cat)
    cat.migrate_timeline("raw", "HOURLY", "dt", "Ranges")
    assert cell_doc(cat, "raw", HOURLY)["properties"][HP + "ranges.size"] == "1"


@dataclass(frozen=True)
class Corruption:
    """A corrupt HOURLY dt cell of ``raw``: how to make it, and what the error says."""

    name: str
    setup: Callable[[Catalog], None]
    corrupt: Callable[[Catalog], None]
    reason: str  # a regex the reason must match


def _edit(edit: Callable[[dict[str, Any]], None]) -> Callable[[Catalog], None]:
    return lambda cat: edit_cell(cat, "raw", HOURLY, edit)


def _to_daily_prefix(doc: dict[str, Any]) -> None:
    """A DAILY cell whose keys are prefixed for HOURLY (used on rollup's DAILY cell)."""
    doc["properties"] = {k.replace(DP, HP): v for k, v in doc["properties"].items()}


CORRUPTIONS = [
    # unrepairable before: reconcile, rebuild and migrate parsed the cell first
    Corruption("first after latest", hours_with_a_hole,
               _edit(edit_props(first=f"{DAY}-09", latest=f"{DAY}-00")), "after latest"),
    Corruption("not JSON", hours_with_a_hole,
               lambda cat: put_cell(cat, "raw", HOURLY, b"{\"version\": 3, \"prop"),
               "not a timeline's JSON"),
    Corruption("unknown kind", hours_with_a_hole,
               _edit(lambda d: d.update(kind="Nope")), "names no timeline implementation"),
    # read silently before
    Corruption("holes0 without holes.size", hours_with_a_hole,
               _edit(edit_props(holes__size=None)), r"holes\.size is missing"),
    Corruption("holes.size 0 with holes0", hours_with_a_hole,
               _edit(edit_props(holes__size="0")), r"chunk holes0 is not one of the 0 chunks"),
    Corruption("holes1 past holes.size", hours_with_a_hole,
               _edit(edit_props(holes1=f"{DAY}-07")), r"chunk holes1 is not one of the 1 chunks"),
    Corruption("holes.size with a space", hours_with_a_hole,
               _edit(edit_props(holes__size=" 1")), r"holes\.size is ' 1'"),
    Corruption("ranges0 without ranges.size", hours_as_ranges,
               _edit(edit_props(ranges__size=None)), r"ranges\.size is missing"),
    Corruption("ranges.size 0 with ranges0", hours_as_ranges,
               _edit(edit_props(ranges__size="0")), r"chunk ranges0 is not one of the 0"),
    Corruption("kind Ranges, storage.class EndsAndHoles", hours_with_a_hole,
               _edit(lambda d: d.update(kind="Ranges")), r"storage\.class"),
    Corruption("kind StoreAll, storage.class EndsAndHoles", hours_with_a_hole,
               _edit(lambda d: d.update(kind="StoreAll")), r"storage\.class"),
    Corruption("keys of another column", hours_with_a_hole,
               _edit(lambda d: d.update(properties={
                   k.replace(HP, timeline_prefix("HOURLY", "it")): v
                   for k, v in d["properties"].items()})), "outside this timeline's prefix"),
]
IDS = [c.name for c in CORRUPTIONS]


def _truth_hours(cat: Catalog) -> set[str]:
    return rows_truth(cat, "raw")[("HOURLY", "dt")]


# -- part 1 and 2: a corrupt timeline cell --------------------------------------------------------


@pytest.mark.parametrize("case", CORRUPTIONS, ids=IDS)
def test_a_corrupt_timeline_is_reported_never_used(events: Catalog, case: Corruption) -> None:
    case.setup(events)
    case.corrupt(events)
    events.cache.invalidate()
    for read in (lambda: events.timeline("raw", "HOURLY"),
                 lambda: events.cover("events", at(0), at(4))):
        with pytest.raises(CorruptTimeline, match=case.reason) as caught:
            read()
        message = str(caught.value)
        assert "the HOURLY dt timeline of storage 'raw' is corrupt" in message
        assert "run 'airflow-partitions reconcile raw'" in message
    with pytest.raises(CorruptTimeline, match="reconcile"):  # typed, and says what to do
        events.migrate_timeline("raw", "HOURLY", "dt", "StoreAll")
    with pytest.raises(CorruptTimeline, match=case.reason):  # writers do not use it either
        events.register("raw", "HOURLY", {"dt": f"{DAY}-12", "region": "eu"})


@pytest.mark.parametrize("case", CORRUPTIONS, ids=IDS)
def test_reconcile_replaces_a_corrupt_timeline_and_reports_it(events: Catalog,
                                                              case: Corruption) -> None:
    case.setup(events)
    case.corrupt(events)
    report = events.reconcile("raw")
    assert not report.consistent
    [diff] = report.corrupt_timelines
    assert (diff.storage, diff.period, diff.column) == ("raw", HOURLY, "dt")
    assert diff.corruption is not None and re.search(case.reason, diff.corruption)
    assert report.to_json()["timelines"][0]["corruption"] == diff.corruption
    assert stored_values(events, "raw") == rows_truth(events, "raw")
    assert events.reconcile("raw").consistent
    # the catalog works again
    events.register("raw", "HOURLY", {"dt": f"{DAY}-05", "region": "eu"})
    events.drop("raw", "HOURLY", {"dt": f"{DAY}-09", "region": "eu"})
    cover = events.cover("events", at(0), at(9))
    assert cover.coverable and len(cover.partitions) == 9
    assert stored_values(events, "raw") == rows_truth(events, "raw")


@pytest.mark.parametrize("case", CORRUPTIONS[:4], ids=IDS[:4])
def test_rebuild_replaces_a_corrupt_timeline(events: Catalog, case: Corruption,
                                             caplog: pytest.LogCaptureFixture) -> None:
    case.setup(events)
    case.corrupt(events)
    rebuilt = events.rebuild("raw")
    assert [p.value for p in rebuilt[(HOURLY, "dt")]] == sorted(_truth_hours(events))
    assert stored_values(events, "raw") == rows_truth(events, "raw")
    assert "replaced the corrupt HOURLY dt timeline of storage 'raw'" in caplog.text
    assert events.reconcile("raw").consistent


def test_a_daily_cell_with_hourly_keys_is_corrupt(events: Catalog) -> None:
    events.register("rollup", "DAILY", [{"dt": "2024-01-01"}, {"dt": "2024-01-02"}])
    edit_cell(events, "rollup", DAILY, _to_daily_prefix)
    events.cache.invalidate()
    with pytest.raises(CorruptTimeline, match="outside this timeline's prefix"):
        events.timeline("rollup", "DAILY")  # read as an empty timeline before
    report = events.reconcile("rollup")
    [diff] = report.corrupt_timelines
    assert (diff.period, diff.column) == (DAILY, "dt")
    assert stored_values(events, "rollup") == rows_truth(events, "rollup")


def test_rebuild_swaps_against_the_raw_bytes_it_read(events: Catalog,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that replaces the corrupt cell meanwhile is not overwritten blindly."""
    hours_with_a_hole(events)
    edit_cell(events, "raw", HOURLY, edit_props(first=f"{DAY}-09", latest=f"{DAY}-00"))
    sneaked = cell_doc(events, "raw", HOURLY)
    sneaked["properties"][HP + "latest"] = f"{DAY}-20"  # another (still wrong) cell
    sneaked["properties"][HP + "first"] = f"{DAY}-10"
    sneaked_raw = json.dumps(sneaked).encode()
    table = events.rows.catalog
    real = table.check_and_put
    swaps: list[tuple[bytes | None, bool]] = []

    def racing_check_and_put(row: bytes, column: bytes, expected: bytes | None,
                             value: bytes) -> bool:
        if column == timeline_column(HOURLY, "dt") and not swaps:
            real(row, column, expected, sneaked_raw)  # the concurrent writer gets in first
        done = real(row, column, expected, value)
        if column == timeline_column(HOURLY, "dt"):
            swaps.append((expected, done))
        return done

    monkeypatch.setattr(table, "check_and_put", racing_check_and_put)
    report = events.reconcile("raw")
    assert swaps[0][1] is False  # the first swap lost to the concurrent write ...
    assert swaps[-1] == (sneaked_raw, True)  # ... and the retry swapped what it then read
    [diff] = report.corrupt_timelines
    assert diff.corruption is not None
    monkeypatch.undo()
    assert stored_values(events, "raw") == rows_truth(events, "raw")


# -- part 3: StoreAll values, definitions, partition rows -----------------------------------------


@pytest.fixture
def store_all(events: Catalog) -> Catalog:
    events.create_storage("events", "snap", ["HOURLY"], timeline_classes={"HOURLY": "StoreAll"})
    events.register("snap", "HOURLY", [{"dt": f"{DAY}-{h:02d}"} for h in (1, 2, 7)])
    return events


@pytest.mark.parametrize("column", [
    value_column(HOURLY, "dt", 2**62),  # an ordinal in year ~10^14
    value_column(HOURLY, "dt", -(2**62)),
    b"v:HOURLY.dt:\x80\x00",  # not 8 ordinal bytes
], ids=["far future", "far past", "short qualifier"])
def test_a_store_all_value_out_of_range_is_reported_and_repaired(store_all: Catalog,
                                                                 column: bytes) -> None:
    cat = store_all
    cat.rows.catalog.put(storage_row("snap"), {column: b"whatever"})
    cat.rows.bump_generation("events")
    cat.cache.invalidate()
    with pytest.raises(CorruptTimeline, match="the HOURLY dt timeline of storage 'snap'"):
        list(cat.timeline("snap", "HOURLY"))
    report = cat.reconcile("snap")
    [diff] = report.corrupt_timelines
    assert "value column" in (diff.corruption or "")
    assert column not in cat.rows.catalog.get(storage_row("snap"))
    assert stored_values(cat, "snap") == rows_truth(cat, "snap")
    assert cat.reconcile("snap").consistent
    cover = cat.cover("events", at(1), at(3))
    assert cover.coverable


def _fresh(cat: Catalog) -> Catalog:
    """Another process's catalog on the same store (definitions are cached per catalog)."""
    return Catalog(cat.kv.url, data_root=cat.data_root, cache=TimelineCache())


def test_a_fact_definition_that_is_not_json_is_corrupt_definition(events: Catalog) -> None:
    events.rows.catalog.put(fact_row("events"), {DEF: b"{not json"})
    fresh = _fresh(events)
    try:
        for read in (fresh.list_facts, lambda: fresh.get_fact("events"),
                     lambda: fresh.timelines("raw")):
            with pytest.raises(CorruptDefinition, match=r"definition of fact 'events'.*not JSON"):
                read()
    finally:
        fresh.close()


@pytest.mark.parametrize(("raw", "reason"), [
    (b"[1, 2", "not JSON"),
    (b"[1, 2]", "not an object"),
    (None, "missing the field 'tz'"),
], ids=["not JSON", "not an object", "missing field"])
def test_a_storage_definition_that_does_not_decode_is_corrupt_definition(
        events: Catalog, raw: bytes | None, reason: str) -> None:
    if raw is None:
        doc = json.loads(events.rows.catalog.get(storage_row("raw"), [DEF])[DEF])
        del doc["tz"]
        raw = json.dumps(doc).encode()
    events.rows.catalog.put(storage_row("raw"), {DEF: raw})
    fresh = _fresh(events)
    try:
        for read in (lambda: fresh.get_storage("raw"), fresh.list_storages,
                     lambda: fresh.timelines("rollup")):  # the fact's cold load reads it too
            with pytest.raises(CorruptDefinition, match=f"storage 'raw'.*{reason}"):
                read()
    finally:
        fresh.close()


def _row_key(cat: Catalog, hour: int) -> bytes:
    [(_, key)] = cat.keyed_specs(cat.get_storage("raw"), "HOURLY",
                                 {"dt": f"{DAY}-{hour:02d}", "region": "eu"})
    return key


@pytest.mark.parametrize(("cells", "reason"), [
    ({STATE: b"zombie"}, "state b'zombie'"),
    ({value_cell_column("dt"): b"2024-13-45-00"}, "2024-13-45-00"),
], ids=["unknown state", "unparsable time value"])
def test_reconcile_reports_and_keeps_a_partition_row_it_cannot_read(
        events: Catalog, cells: dict[bytes, bytes], reason: str) -> None:
    register_hours(events, 0, 3)
    key = _row_key(events, 2)
    events.rows.partitions.put(key, cells)
    report = events.reconcile("raw")
    assert not report.consistent and report.finished_drops == 0
    [row] = report.corrupt_rows
    assert (row.storage, row.period) == ("raw", HOURLY) and reason in row.reason
    assert report.to_json()["corrupt_rows"][0]["reason"] == row.reason
    assert events.rows.partitions.get(key), "reconcile deleted a row it could not read"
    # it is not advertised: an under-report, never a false advertisement
    assert f"{DAY}-02" not in stored_values(events, "raw")[("HOURLY", "dt")]
    assert events.reconcile("raw").corrupt_rows  # reported again until a person fixes it


# -- the command line: one line each ------------------------------------------------------------


def _cli(cat: Catalog, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    TimelineCache.for_store(cat.kv.url).invalidate()
    code = main(["--store", cat.kv.url, "--data-root", cat.data_root, *args])
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(result: tuple[int, str, str]) -> str:
    code, out, err = result
    assert code == 1 and out == "", (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("airflow-partitions: error: ")
    assert "unexpected" not in lines[0]
    return lines[0]


def test_the_cli_reports_corruption_in_one_line_and_reconcile_repairs_it(
        events: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    hours_with_a_hole(events)
    edit_cell(events, "raw", HOURLY, edit_props(holes__size="0"))
    line = _one_error_line(_cli(events, capsys, "timeline", "show", "raw"))
    assert "HOURLY dt timeline of storage 'raw' is corrupt" in line and "reconcile" in line
    line = _one_error_line(_cli(events, capsys, "timeline", "migrate", "raw", "--period",
                                "HOURLY", "--to", "Ranges"))
    assert "reconcile raw" in line
    code, out, err = _cli(events, capsys, "reconcile", "raw")
    assert code == 0, err
    assert "replaced the corrupt HOURLY dt timeline (" in out
    assert "rebuilt it from the partition rows" in out
    code, out, _ = _cli(events, capsys, "timeline", "show", "raw", "--json")
    assert code == 0 and json.loads(out)[0]["count"] == 9


def test_the_cli_reports_corrupt_definitions_and_kept_rows_in_one_line(
        events: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    register_hours(events, 0, 3)
    events.rows.partitions.put(_row_key(events, 1), {STATE: b"zombie"})
    code, out, err = _cli(events, capsys, "reconcile", "raw")
    assert code == 0, err
    assert "kept a HOURLY partition row it cannot read (dt=2024-01-01-01, region=eu)" in out
    events.rows.catalog.put(fact_row("events"), {DEF: b"{not json"})
    line = _one_error_line(_cli(events, capsys, "fact", "list"))
    assert "the definition of fact 'events'" in line and "not JSON" in line
