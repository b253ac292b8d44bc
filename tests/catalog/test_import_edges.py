"""Imports and repairs stay bounded and atomic, at the edges of the calendar and of DST.

On sqlite and the HBase test double: a Lens import reaching past the calendar writes nothing;
reconcile of a timeline of 87.6 million hours no row backs is O(ranges) and its report is
bounded; a Lens table holding the repeated fall-back hour imports as Lens meant it, and says
what was ambiguous.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.repair import REPORT_VALUES
from airflow_partitions.catalog.rows.layout import storage_row
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    PRESENT_KEY,
    LensParameterError,
    read_lens_table,
    timeline_prefix,
)
from tests.helpers import run_cli

H = UpdatePeriod.HOURLY
HP, DP = timeline_prefix("HOURLY", "dt"), timeline_prefix("DAILY", "dt")
LENS = "org.apache.lens.cube.metadata.timeline."
EAH, ALL = LENS + "EndsAndHolesPartitionTimeline", LENS + "StoreAllPartitionTimeline"


def ends(prefix: str, first: str, latest: str, *holes: str) -> dict[str, str]:
    out = {prefix + "storage.class": EAH, prefix + "first": first, prefix + "latest": latest,
           prefix + "holes.size": "1" if holes else "0"}
    if holes:
        out[prefix + "holes0"] = ",".join(holes)
    return out


@pytest.fixture
def ev(catalog: Catalog) -> Catalog:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "raw", ["HOURLY", "DAILY"], columns=["dt", "region"])
    catalog.register("raw", "HOURLY", [{"dt": f"2015-01-01-{h:02d}", "region": "us"}
                                       for h in range(9)])
    return catalog


def test_an_import_past_the_calendar_writes_nothing(ev: Catalog, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``latest = 10000-01-01-00`` is refused before either cell is rewritten."""
    before = ev.rows.catalog.get(storage_row("raw"))
    params = {PRESENT_KEY: "true", **ends(HP, "2015-01-01-00", "10000-01-01-00"),
              **ends(DP, "2015-01-01", "2015-01-01")}
    path = tmp_path / "f.json"
    path.write_text(json.dumps(params))
    code, out, err = run_cli(ev, capsys, "timeline", "import", "raw", "--lens", str(path))
    assert code == 2, (out, err)
    assert "HOURLY.dt.latest" in err and "9999" in err and "nothing was imported" in err
    assert ev.rows.catalog.get(storage_row("raw")) == before
    code, out, _ = run_cli(ev, capsys, "timeline", "show", "raw", "--json")
    assert code == 0 and json.loads(out)[0]["count"] == 9
    assert ev.reconcile("raw").consistent


def test_reconcile_of_the_whole_calendar_is_bounded(ev: Catalog) -> None:
    """A valid import of every hour from year 1 to 9999 (87.6M partitions, no rows) is
    reconciled in O(ranges): no set or string per hour, no death by memory."""
    params: dict[str, Any] = {PRESENT_KEY: "true",
                              **ends(HP, "0001-01-01-00", "9999-12-31-22"),
                              **ends(DP, "2015-01-01", "2015-01-01")}
    ev.import_lens_timelines("raw", params)
    report = ev.reconcile("raw")
    hourly = next(d for d in report.diffs if d.period is H)
    assert hourly.over_count == 87_649_415 - 9
    assert [(b, e) for b, e in hourly.over_ranges][:1] == [
        (H.parse_ordinal("0001-01-01-00"), H.parse_ordinal("2015-01-01-00"))]
    doc = hourly.to_json()
    assert len(doc["over_reported"]) == REPORT_VALUES
    assert doc["over_reported_count"] == hourly.over_count
    assert doc["over_reported_ranges"][-1] == ["2015-01-01-09", "9999-12-31-23"]
    assert ev.reconcile("raw").consistent


BERLIN_PARTITIONS = "2015-10-25-01,2015-10-25-02,2015-10-25-02,2015-10-25-03"


@pytest.mark.parametrize(("props", "values", "said"), [
    ({HP + "storage.class": ALL, HP + "partitions.size": "1", HP + "partitions0":
      BERLIN_PARTITIONS},
     ["2015-10-25-01", "2015-10-25-02+02:00", "2015-10-25-02+01:00", "2015-10-25-03"],
     "listed twice"),
    (ends(HP, "2015-10-25-02", "2015-10-25-02"), ["2015-10-25-02+02:00", "2015-10-25-02+01:00"],
     "the later 2015-10-25-02+01:00"),
    (ends(HP, "2015-10-25-01", "2015-10-25-03", "2015-10-25-02"),
     ["2015-10-25-01", "2015-10-25-03"], "(a hole)"),
], ids=["partitions twice", "first and latest", "a hole"])
def test_the_repeated_fall_back_hour_reads_as_lens_meant(props: dict[str, str],
                                                         values: list[str], said: str) -> None:
    table = read_lens_table({PRESENT_KEY: "true", **props}, [(H, "dt")], "Europe/Berlin")
    assert [p.value for p in table.timelines[(H, "dt")]] == values
    assert any("'2015-10-25-02' occurs twice in Europe/Berlin" in n and said in n
               for n in table.ambiguous), table.ambiguous


def test_the_fall_back_hour_imports_and_is_reported(catalog: Catalog, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    catalog.create_fact("b", tz="Europe/Berlin")
    catalog.create_storage("b", "raw", ["HOURLY"])
    path = tmp_path / "f.json"
    path.write_text(json.dumps({PRESENT_KEY: "true", HP + "storage.class": ALL,
                                HP + "partitions.size": "1",
                                HP + "partitions0": BERLIN_PARTITIONS}))
    code, out, err = run_cli(catalog, capsys, "timeline", "import", "raw", "--lens", str(path))
    assert code == 0, err
    assert "ambiguous in Lens: HOURLY.dt.partitions: '2015-10-25-02' occurs twice" in out
    assert len(catalog.timeline("raw", "HOURLY")) == 4


def test_a_timeline_a_day_past_the_calendar_is_refused_before_reading() -> None:
    with pytest.raises(LensParameterError, match=r"HOURLY\.dt\.first: reaches"):
        read_lens_table({PRESENT_KEY: "true", **ends(HP, "10000-01-01-00", "10000-01-01-00")},
                        [(H, "dt")])
