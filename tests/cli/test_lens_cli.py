"""``timeline import STORAGE --lens FILE`` and ``timeline export STORAGE --lens``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.cli.conftest import Run, one_error_line

LENS = "cube.storagetable.partition.timeline.cache"
EH = "org.apache.lens.cube.metadata.timeline.EndsAndHolesPartitionTimeline"
RANGES = "org.apache.lens.cube.metadata.timeline.RangesPartitionTimeline"
#: A Lens storage table's parameters as Lens writes them: HOURLY EndsAndHoles with its holes
#: in two chunks (the first ending with the separator), DAILY Ranges with brackets.
PARAMS = {
    f"{LENS}.present": "true",
    f"{LENS}.HOURLY.dt.storage.class": EH,
    f"{LENS}.HOURLY.dt.first": "2015-01-29-06",
    f"{LENS}.HOURLY.dt.latest": "2015-01-30-00",
    f"{LENS}.HOURLY.dt.holes.size": "2",
    f"{LENS}.HOURLY.dt.holes0": "2015-01-29-10,2015-01-29-11,",
    f"{LENS}.HOURLY.dt.holes1": "2015-01-29-20",
    f"{LENS}.DAILY.dt.storage.class": RANGES,
    f"{LENS}.DAILY.dt.ranges.size": "1",
    f"{LENS}.DAILY.dt.ranges0": "[2015-01-01, 2015-01-29),[2015-02-01, 2015-02-03)",
    "transient_lastDdlTime": "1422576000",
}


@pytest.fixture
def storage(run: Run) -> Run:
    assert run("fact", "create", "events").code == 0
    assert run("storage", "create", "events", "raw", "--periods", "HOURLY,DAILY").code == 0
    return run


def write(tmp_path: Path, params: dict[str, str], name: str = "raw.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(params))
    return str(path)


def shown(run: Run) -> list[dict[str, object]]:
    result = run("timeline", "show", "raw", "--json")
    assert result.code == 0, result.err
    docs: list[dict[str, object]] = result.json()
    return docs


def test_import_then_export(storage: Run, tmp_path: Path) -> None:
    run = storage
    assert run("partition", "add", "raw", "--period", "DAILY", "dt=2015-01-28").code == 0
    result = run("timeline", "import", "raw", "--lens", write(tmp_path, PARAMS))
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "imported the HOURLY dt timeline of raw: EndsAndHoles, 16 partitions: "
        "[2015-01-29-06, 2015-01-29-10) ∪ [2015-01-29-12, 2015-01-29-20) ∪ "
        "[2015-01-29-21, 2015-01-30-01)",
        "  16 without a registered partition row: [2015-01-29-06, 2015-01-29-10) ∪ "
        "[2015-01-29-12, 2015-01-29-20) ∪ [2015-01-29-21, 2015-01-30-01)",
        "imported the DAILY dt timeline of raw: Ranges, 30 partitions: "
        "[2015-01-01, 2015-01-29) ∪ [2015-02-01, 2015-02-03)",
        "  29 without a registered partition row: [2015-01-01, 2015-01-28) ∪ "
        "[2015-02-01, 2015-02-03)",
        "raw: 45 imported partition(s) have no registered row; covers and 'reconcile' withdraw "
        "them until they are registered ('partition add ... --file')",
    ]
    hourly, daily = shown(run)
    assert (hourly["class"], hourly["count"]) == ("EndsAndHoles", 16)
    assert daily["ranges"] == [["2015-01-01", "2015-01-29"], ["2015-02-01", "2015-02-03"]]
    exported = run("timeline", "export", "raw", "--lens")
    assert exported.code == 0 and exported.err == ""
    expected = {k: v for k, v in PARAMS.items() if k.startswith(LENS)}
    # Lens's chunking of 3 holes is one chunk: what Lens itself would write back
    expected[f"{LENS}.HOURLY.dt.holes.size"] = "1"
    expected[f"{LENS}.HOURLY.dt.holes0"] = "2015-01-29-10,2015-01-29-11,2015-01-29-20"
    del expected[f"{LENS}.HOURLY.dt.holes1"]
    assert exported.json() == expected


def test_export_then_import_elsewhere_round_trips(storage: Run, tmp_path: Path) -> None:
    run = storage
    run("partition", "add", "raw", "--period", "HOURLY", "--range", "2015-01-29-06",
        "2015-01-29-09")
    run("partition", "add", "raw", "--period", "DAILY", "--range", "2015-01-29", "2015-02-02")
    run("partition", "drop", "raw", "--period", "DAILY", "dt=2015-01-30")
    exported = run("timeline", "export", "raw", "--lens").out
    assert run("storage", "create", "events", "copy", "--periods", "HOURLY,DAILY").code == 0
    path = tmp_path / "copy.json"
    path.write_text(exported)
    assert run("timeline", "import", "copy", "--lens", str(path)).code == 0
    assert run("timeline", "export", "copy", "--lens").out == exported
    copy = run("timeline", "show", "copy", "--json").json()
    assert [d["ranges"] for d in copy] == [d["ranges"] for d in shown(run)]


def test_import_report_as_json_and_dry_run(storage: Run, tmp_path: Path) -> None:
    run = storage
    before = shown(run)
    result = run("timeline", "import", "raw", "--lens", write(tmp_path, PARAMS), "--dry-run",
                 "--json")
    assert result.code == 0, result.err
    doc = result.json()  # exactly one JSON document on stdout; the words go to stderr
    assert doc["dry_run"] is True and doc["without_rows"] == 46
    assert [t["class"] for t in doc["timelines"]] == ["EndsAndHoles", "Ranges"]
    assert doc["other_parameters"] == 1
    assert "raw: dry run, nothing written" in result.err
    assert shown(run) == before


def test_import_reads_stdin(storage: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(PARAMS)))
    assert storage("timeline", "import", "raw", "--lens", "-").code == 0
    assert shown(storage)[0]["count"] == 16


@pytest.mark.parametrize(("key", "value", "message"), [
    (f"{LENS}.HOURLY.dt.holes1", "2015-01-29-2",
     f"{LENS}.HOURLY.dt.holes1: property 'holes1' holds a bad value"),
    (f"{LENS}.HOURLY.dt.holes.size", "3",
     f"{LENS}.HOURLY.dt.holes2: holes.size says 3 chunks but holes2 is missing"),
    (f"{LENS}.HOURLY.dt.holes1", "2015-01-29-20,",
     f"{LENS}.HOURLY.dt.holes1: holes1 ends with ','"),
    (f"{LENS}.present", "false", f"{LENS}.present: is 'false', not 'true'"),
    (f"{LENS}.MONTHLY.dt.first", "2015-01",
     f"{LENS}.MONTHLY.dt.first: names a timeline this storage does not have"),
    (f"{LENS}.DAILY.dt.ranges0", "[2015-01-01, 2015-01-29),[2015-02-01",
     f"{LENS}.DAILY.dt.ranges0: the ranges list has an odd number of bounds"),
])
def test_bad_input_is_refused_naming_the_key_and_writes_nothing(
    storage: Run, tmp_path: Path, key: str, value: str, message: str
) -> None:
    run = storage
    before = shown(run)
    path = write(tmp_path, {**PARAMS, key: value})
    line = one_error_line(run("timeline", "import", "raw", "--lens", path), 2)
    assert message in line
    assert line.endswith(f"(in {path}); nothing was imported")
    assert shown(run) == before


def test_unreadable_or_not_an_object(storage: Run, tmp_path: Path) -> None:
    run = storage
    line = one_error_line(run("timeline", "import", "raw", "--lens", str(tmp_path / "no")), 2)
    assert "cannot read --lens" in line
    path = tmp_path / "list.json"
    path.write_text("[]")
    assert "holds a JSON list" in one_error_line(
        run("timeline", "import", "raw", "--lens", str(path)), 2)
    path.write_text("{")
    assert "is not JSON" in one_error_line(run("timeline", "import", "raw", "--lens",
                                               str(path)), 2)
    assert "--lens" in one_error_line(run("timeline", "export", "raw"), 2)
    assert "not in the catalog" in one_error_line(run("timeline", "export", "nope", "--lens"), 2)


def test_export_leaves_weekly_out_and_says_why(run: Run) -> None:
    assert run("fact", "create", "events").code == 0
    assert run("storage", "create", "events", "raw", "--periods", "DAILY,WEEKLY").code == 0
    run("partition", "add", "raw", "--period", "WEEKLY", "dt=2015-W07")
    result = run("timeline", "export", "raw", "--lens")
    assert result.code == 0
    assert not any(".WEEKLY." in k for k in result.json())
    assert f"{LENS}.present" not in result.json()
    assert "left out the WEEKLY dt timeline" in result.err


def test_export_says_when_offsets_stay(run: Run) -> None:
    """Berlin's 01:00 and the first 02:00 of the autumn night have no form without offsets
    that Lens reads as exactly those hours: the export keeps them and says so on stderr."""
    assert run("fact", "create", "berlin", "--time-zone", "Europe/Berlin").code == 0
    assert run("storage", "create", "berlin", "b_raw", "--periods", "HOURLY").code == 0
    for hour in ("2015-10-25-01", "2015-10-25-02+02:00"):
        assert run("partition", "add", "b_raw", "--period", "HOURLY", f"dt={hour}").code == 0
    exported = run("timeline", "export", "b_raw", "--lens")
    assert exported.code == 0, exported.err
    assert "2015-10-25-02+02:00" in exported.out
    assert exported.err.startswith("b_raw: HOURLY dt: kept DST offsets, which Lens cannot parse")
