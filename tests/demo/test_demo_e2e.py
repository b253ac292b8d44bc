"""A shortened ``make demo`` (2 days of (dt, region) events, eu's 05:00 on the second day late),
checked against values computed here, independently; then ``airflow backfill create`` planning
over the example DAGs in the Airflow home it left."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.demo.layout import DemoLayout
from airflow_partitions.demo.services.environment import VENV_BIN
from airflow_partitions.spark import SLICE_REGIONS, expected_slice_totals

pytestmark = pytest.mark.e2e

D0 = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
LATE = "missing 2015-01-31T05:00/06:00: no HOURLY 2015-01-31-05 for region=eu"


def _table_totals(path: Path) -> dict[str, tuple[int, int]]:
    rows = pq.read_table(path).to_pylist()
    return {r["region"]: (r["events"], r["amount_cents"]) for r in sorted(
        rows, key=lambda r: r["region"])}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo's root after ``python -m airflow_partitions.demo --days 2``, and its output."""
    root = tmp_path_factory.mktemp("demo")
    done = subprocess.run(
        [sys.executable, "-m", "airflow_partitions.demo", "--root", str(root), "--days", "2"],
        capture_output=True, text=True, timeout=1500, check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-5000:]
    return root, done.stdout


def test_shortened_demo(demo: tuple[Path, str]) -> None:
    root, output = demo
    assert "demo complete" in output
    # While eu's hour is late, the day's cover names the region; us has the hour.
    # (Words, not lines: the demo folds at $COLUMNS, which a test process may inherit.)
    words = " ".join(output.split())
    assert ("the cover of the day: events [2015-01-31T00:00, 2015-02-01T00:00): 95.8% covered by "
            f"47 partition(s); {LATE} ") in words
    assert "✓ 2015-01-31-05 is registered for region=us" in words
    assert f"at first: {LATE}" in words
    # The rollup's coverage asset announces the first day once it is ingested, nothing for the
    # day eu's hour holds back, and that day once the hour is registered, each once.
    first = "✓ announced events daily coverage 2015-01-30T00:00:00"
    nothing = ("✓ announced nothing: events daily coverage 2015-01-31T00:00:00 waits for eu's "
               "hour")
    then = "✓ announced events daily coverage 2015-01-31T00:00:00"
    step4 = words.index("[4/7]")
    assert words.count(first) == 1 and words.index(first) < words.index(nothing) < step4
    assert words.count(then) == 1 and step4 < words.index(then) < words.index("[5/7]")
    for day in ("2015-01-30", "2015-01-31"):
        assert (f"airflow dags test events_daily_rollup {day} "
                f"-c '{{\"partition_key\": \"{day}T00:00:00\"}}'") in words

    catalog = Catalog(f"sqlite:///{root}/partitions.db", data_root=str(root / "data"),
                      cache=TimelineCache())
    slices = sorted((p.values["dt"], p.values["region"])
                    for p in catalog.list_partitions("events_raw", "HOURLY"))
    assert slices == [((D0 + i * HOUR).strftime("%Y-%m-%d-%H"), region) for i in range(48)
                      for region in SLICE_REGIONS]
    late = catalog.get_partition("events_raw", "HOURLY", {"dt": "2015-01-31-05", "region": "eu"})
    assert late is not None and late.location.endswith("/dt=2015-01-31-05/region=eu")
    days = [p.values["dt"] for p in catalog.list_partitions("events_rollup", "DAILY")]
    assert days == ["2015-01-30", "2015-01-31"]

    # Each daily rollup equals the raw events of its day.
    for day in days:
        start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)
        part = catalog.get_partition("events_rollup", "DAILY", {"dt": day})
        assert part is not None
        assert _table_totals(Path(part.location)) == expected_slice_totals(
            start, start + 24 * HOUR, SLICE_REGIONS)

    # The report's range needs a mixed cover: 12 hours of the first day, then the second day.
    start, end = D0 + 12 * HOUR, D0 + 48 * HOUR
    cover = catalog.cover("events", start, end)
    # Each region's hours are its own partitions; the rollup (no region column) serves both.
    assert sorted((p.storage, p.period.name, p.value, p.dimensions)
                  for p in cover.partitions) == sorted(
        [("events_raw", "HOURLY", f"2015-01-30-{h:02d}", (("region", region),))
         for h in range(12, 24) for region in SLICE_REGIONS]
        + [("events_rollup", "DAILY", "2015-01-31", ())])
    report = json.loads((root / "data" / "reports" / "demo_report.json").read_text())
    assert report["partitions_read"] == {"HOURLY": 12 * len(SLICE_REGIONS), "DAILY": 1}
    got = {r: (t["events"], t["amount_cents"]) for r, t in report["totals"].items()}
    assert got == expected_slice_totals(start, end, SLICE_REGIONS)
    assert sorted(got) == sorted(SLICE_REGIONS)
    assert (root / "coverage.png").read_bytes()[:4] == b"\x89PNG"


def test_backfill_dry_run_plans_one_run_per_day(demo: tuple[Path, str]) -> None:
    """The example DAGs as the demo serialized them: a backfill of the report plans a run a day
    (``--dry-run``: nothing is created)."""
    root, _ = demo
    done = subprocess.run(
        [str(VENV_BIN / "airflow"), "backfill", "create", "--dag-id", "events_report",
         "--from-date", "2015-02-01", "--to-date", "2015-02-03", "--dry-run"],
        capture_output=True, text=True, env=DemoLayout.at(root).environment(), timeout=300,
        check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    planned = [line for line in done.stdout.splitlines() if line.startswith("| 2015-")]
    assert [line.split("|")[1].strip()[:10] for line in planned] == [
        "2015-02-01", "2015-02-02", "2015-02-03"]
