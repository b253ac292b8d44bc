"""``make demo``: the events pipeline end to end, on the embedded sqlite catalog and local Spark.

1. A local Airflow home under ``.demo/`` (migrated metadata DB, the example DAGs, connections
   ``spark_default`` = ``local[*]`` and ``partitions_default`` = the sqlite catalog).
2. Ingest several days of synthetic hourly events per region (``eu``, ``us``: a declared
   dimension of ``events_raw``) with Spark, one region's hour deliberately late.
3. Show what the late region holds back: the cover's line names it, and the coverage asset
   ``events daily coverage`` (which schedules the daily rollup DAG) announces every other day
   but not that one. A :class:`~airflow_partitions.coverage_events.CoverageEmitter` runs
   in-process and prints what it announces, as ``airflow-partitions assets follow`` posts it
   to Airflow beside a scheduler.
4. Run the real ingest DAG for the late hour; the emitter then announces its day.
5. Run the daily rollup DAG for every day, with its window's key as the scheduler would pass it,
   and the report DAG over a range that needs a mixed cover (hourly edges, daily middle).
6. Print the cover, what was missing and how it resolved, the report's totals checked against
   the raw events, and where the coverage picture was written.

Re-runnable: data is overwritten, registrations are idempotent, DAG runs get fresh run ids;
days a run announced are not announced again (the markers are in the catalog), and every day
is rolled up again all the same.
``make demo-clean`` removes ``.demo/``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.cli import console_for, coverage_lanes, plot_coverage
from airflow_partitions.cover import status_line
from airflow_partitions.coverage_events import CoverageAssetSpec, CoverageEmitter, Emission
from airflow_partitions.demo.layout import DemoLayout
from airflow_partitions.json_value import JsonObject
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.spark import SLICE_REGIONS, Report, expected_slice_totals, job_path

REPO = Path(__file__).resolve().parents[2]  # airflow_partitions/demo/run.py -> the checkout
VENV_BIN = Path(sys.executable).parent
HOUR = dt.timedelta(hours=1)
DAY = dt.timedelta(days=1)


#: Where the Partitions view's pages are on the api-server (airflow_partitions/ui).
VIEW_ROUTE = "/partitions"


class DemoFailed(RuntimeError):
    """A step of the demo failed; the message says which and shows the end of its output."""


@dataclass
class DemoPlan:
    """What the demo ingests and reports on."""

    first_day: dt.datetime
    days: int
    late_hour: dt.datetime
    regions: tuple[str, ...] = SLICE_REGIONS
    late_region: str = SLICE_REGIONS[0]

    @property
    def late_slice(self) -> str:
        """The late hour of the late region, as ``events_ingest --skip`` takes it."""
        return f"{hourly(self.late_hour)}/region={self.late_region}"

    @property
    def end(self) -> dt.datetime:
        return self.first_day + self.days * DAY

    @property
    def report_range(self) -> tuple[dt.datetime, dt.datetime]:
        """Half a day of hours, whole days in the middle, and a ragged end when there is room."""
        start = self.first_day + 12 * HOUR
        end = self.end - 6 * HOUR if self.days >= 3 else self.end
        return start, end


def plan(days: int) -> DemoPlan:
    first = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)
    return DemoPlan(first, days, first + DAY + 5 * HOUR)


def hourly(instant: dt.datetime) -> str:
    period: UpdatePeriod = UpdatePeriod.HOURLY  # typed: mypy mistakes Enum.format for str.format
    return period.format(instant, "UTC")


def iso(instant: dt.datetime) -> str:
    return instant.isoformat()


class Demo:
    """Runs the steps, printing progress for a person."""

    def __init__(self, root: Path, demo_plan: DemoPlan, console: Console, dags: Path):
        self.root = root.resolve()
        self.plan = demo_plan
        self.console = console
        layout = DemoLayout.at(self.root, dags)
        self.home = layout.home
        self.data = layout.data
        self.store_url = layout.store_url
        self.dags = layout.dags
        self.steps = 7
        self.env = self._environment()
        self.catalog: Catalog | None = None
        self.story: list[str] = []
        #: The rollup DAG's coverage asset, and what the emitter announced of it, in order.
        self.asset = CoverageAssetSpec.of("events", "DAILY")
        self.announced: list[str] = []

    def _environment(self) -> dict[str, str]:
        return DemoLayout.at(self.root, self.dags).environment()

    # -- helpers -----------------------------------------------------------------------------------

    def step(self, n: int, title: str) -> None:
        """A step's header: a rule when it fits the width, else one unfolded line (a long path
        is never cut)."""
        text = f"[{n}/{self.steps}] {title}"
        if cell_len(text) + 4 <= self.console.width:
            self.console.rule(f"[bold]{escape(text)}", align="left")
        else:
            self.console.print(f"[bold]── {escape(text)}", soft_wrap=True)

    def run(self, what: str, command: Sequence[str], timeout: float = 900) -> str:
        """Run a command with a spinner; raise DemoFailed with its output's tail on failure."""
        started = time.monotonic()
        with self.console.status(f"{what} ..."):
            done = subprocess.run(list(command), env=self.env, cwd=self.root, text=True,  # noqa: S603
                                  capture_output=True, timeout=timeout, check=False)
        output = done.stdout + done.stderr
        if done.returncode != 0:
            tail = "\n".join(output.splitlines()[-40:])
            raise DemoFailed(f"{what} failed (exit {done.returncode}):\n{tail}")
        self.console.print(f"  ✓ {what} [dim]({time.monotonic() - started:.0f} s)[/]")
        return output

    def airflow(self, what: str, *args: str) -> str:
        return self.run(what, [str(VENV_BIN / "airflow"), *args])

    def dag_test(self, what: str, dag_id: str, logical_date: dt.datetime,
                 conf: JsonObject | None = None) -> str:
        args = ["dags", "test", dag_id, iso(logical_date)]
        if conf:
            args += ["--conf", json.dumps(conf)]
        return self.airflow(what, *args)

    def open_catalog(self) -> Catalog:
        if self.catalog is None:
            self.catalog = Catalog(self.store_url, data_root=str(self.data), cache=TimelineCache())
        return self.catalog

    def announce(self) -> list[Emission]:
        """The coverage asset's due windows, announced once each, printed as announced (the
        follower would post each to Airflow, starting a run of the rollup DAG)."""
        catalog = self.open_catalog()
        catalog.cache.invalidate()

        def post(emission: Emission) -> None:
            self.console.print(f"  ✓ announced {emission.spec.name} {emission.key}"
                               f"{' (restated)' if emission.restated else ''}")

        emitted = CoverageEmitter(catalog).emit(self.asset, post)
        self.announced += [e.key for e in emitted if e.key not in self.announced]
        return emitted

    # -- the steps ---------------------------------------------------------------------------------

    def setup(self) -> None:
        self.step(1, f"Airflow home {self.home}, catalog {self.store_url}")
        self.home.mkdir(parents=True, exist_ok=True)
        self.data.mkdir(parents=True, exist_ok=True)
        self.airflow("migrate the Airflow metadata DB", "db", "migrate")
        # airflow_partitions.demo.events reads the data root when it is imported
        os.environ["AIRFLOW_PARTITIONS_DATA_ROOT"] = str(self.data)
        from airflow_partitions.catalog import AlreadyExists
        from airflow_partitions.demo.events import ensure_catalog

        try:
            ensure_catalog(self.open_catalog())
        except AlreadyExists as exc:  # a catalog an older demo made
            raise DemoFailed(str(exc)) from exc
        from airflow_partitions.demo.events import REGION_DIMENSION

        self.console.print(f"  ✓ fact events: storages events_raw (HOURLY; dt, region with "
                           f"dimension {REGION_DIMENSION}), events_rollup (DAILY, MONTHLY, "
                           "priority 10; no region column)")
        # after the fact exists: the rollup DAG's coverage asset is checked when it is parsed
        self.airflow("load the example DAGs", "dags", "reserialize")
        if CoverageEmitter(self.open_catalog()).follow(self.asset):
            self.console.print(f"  ✓ following the coverage asset {self.asset.name!r} "
                               f"({self.asset.uri}): events_daily_rollup's schedule")

    def ingest(self) -> None:
        p = self.plan
        regions = ", ".join(p.regions)
        self.step(2, f"ingest {p.days * 24} hours x {len(p.regions)} regions ({regions}) from "
                     f"{hourly(p.first_day)} with Spark, {p.late_region}'s "
                     f"{hourly(p.late_hour)} late")
        from airflow_partitions.demo.events import RAW, RAW_LOCATION

        slices = [(hourly(p.first_day + i * HOUR), region) for i in range(p.days * 24)
                  for region in p.regions]
        written = [s for s in slices if f"{s[0]}/region={s[1]}" != p.late_slice]
        self.run(f"spark-submit events_ingest ({len(written)} hour-region partitions)", [
            str(VENV_BIN / "spark-submit"), "--master", "local[*]",
            "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.session.timeZone=UTC",
            job_path("events_ingest"), "--start", iso(p.first_day), "--end", iso(p.end),
            "--regions", ",".join(p.regions), "--location-template", RAW_LOCATION,
            "--skip", p.late_slice,
        ])
        result = self.open_catalog().register(
            RAW, "HOURLY", [{"dt": hour, "region": region} for hour, region in written])
        self.console.print(f"  ✓ registered {result.changed} HOURLY (dt, region) partitions "
                           f"({result.unchanged} were already registered)")
        self.announce()

    def show_missing(self) -> None:
        p = self.plan
        late_day = UpdatePeriod.DAILY.truncate(p.late_hour)
        self.step(3, f"{p.late_region}'s late hour holds back its day")
        from airflow_partitions.demo.events import FACT, RAW

        catalog = self.open_catalog()
        late = {"dt": hourly(p.late_hour), "region": p.late_region}
        if catalog.get_partition(RAW, "HOURLY", late) is not None:
            self.console.print("  (the late hour is already registered from an earlier run)")
            self.story.append(f"{p.late_slice} was already registered (re-run)")
            return
        others = [r for r in p.regions if r != p.late_region
                  and catalog.get_partition(RAW, "HOURLY", {**late, "region": r}) is not None]
        if others:
            self.console.print(f"  ✓ {hourly(p.late_hour)} is registered for region="
                               f"{', region='.join(others)}")
        cover = catalog.cover(FACT, late_day, late_day + DAY, storages=[RAW])
        for gap in cover.missing:
            self.console.print(f"  ✗ {late_day:%Y-%m-%d} is not coverable: {gap.describe()}")
            self.story.append(f"at first: {gap.describe()}")
        self.console.print(f"  the cover of the day: {status_line(cover)}")
        if not self.announce():
            self.console.print(f"  ✓ announced nothing: {self.asset.name} "
                               f"{self.asset.key(late_day, 'UTC')} waits for "
                               f"{p.late_region}'s hour, and events_daily_rollup does not start")

    def late_hour(self) -> None:
        p = self.plan
        self.step(4, f"{p.late_region}'s late hour arrives: DAG events_hourly_ingest for "
                     f"{hourly(p.late_hour)}, region {p.late_region} only")
        conf = {"regions": [p.late_region]}
        self.dag_test(f"airflow dags test events_hourly_ingest {iso(p.late_hour)} "
                      f"--conf '{json.dumps(conf)}'", "events_hourly_ingest", p.late_hour, conf)
        late_key = self.asset.key(UpdatePeriod.DAILY.truncate(p.late_hour), "UTC")
        announced = [e.key for e in self.announce()]
        self.story.append(f"then: events_hourly_ingest wrote and registered "
                          f"{hourly(p.late_hour)} for region={p.late_region}; "
                          "the day became coverable"
                          + (f" and {self.asset.name} {late_key} was announced"
                             if late_key in announced else ""))

    def rollups(self) -> None:
        p = self.plan
        self.step(5, f"daily rollups: DAG events_daily_rollup for {p.days} days, one run per "
                     "announced day")
        if len(self.announced) < p.days:  # a re-run: the days were announced by an earlier one
            self.console.print("  (days announced by an earlier run are not announced again; "
                               "each is rolled up again here)")
        for i in range(p.days):
            day = p.first_day + i * DAY
            conf: JsonObject = {"partition_key": self.asset.key(day, "UTC")}
            self.dag_test(f"airflow dags test events_daily_rollup {day:%Y-%m-%d} "
                          f"-c '{json.dumps(conf)}'",
                          "events_daily_rollup", day, conf)
        self.console.print("  (a monthly rollup needs a whole month of data; this demo ingests "
                           f"{p.days} days, so events_monthly_rollup is not run)")

    def report(self) -> Report:
        start, end = self.plan.report_range
        self.step(6, f"report over [{iso(start)}, {iso(end)}): DAG events_report")
        output = "demo_report.json"
        self.dag_test("airflow dags test events_report (mixed cover)", "events_report", start,
                      conf={"start": iso(start), "end": iso(end), "output": output})
        from airflow_partitions.demo.events import REPORTS

        doc: Report = json.loads(Path(REPORTS, output).read_text())
        return doc

    def summarise(self, doc: Report) -> None:
        start, end = self.plan.report_range
        self.step(7, "summary")
        from airflow_partitions.demo.events import FACT

        catalog = self.open_catalog()
        catalog.cache.invalidate()
        cover = catalog.cover(FACT, start, end)
        self.console.print("[bold]The cover the report read[/] (largest partitions first):")
        self.console.print(str(cover))
        self.console.print("\n[bold]What was missing at first, and how it resolved[/]:")
        for line in self.story:
            self.console.print(f"  {line}")
        expected = expected_slice_totals(start, end, self.plan.regions)
        table = Table(title="Report totals (read from the mixed cover) vs the raw events")
        for column in ("region", "events", "amount", "raw events", "raw amount", "match"):
            table.add_column(column, justify="right" if column != "region" else "left")
        all_match = True
        for region, (events, cents) in expected.items():
            got = doc["totals"].get(region, {"events": 0, "amount_cents": 0})
            match = got["events"] == events and got["amount_cents"] == cents
            all_match &= match
            table.add_row(region, str(got["events"]), f"{got['amount_cents'] / 100:,.2f}",
                          str(events), f"{cents / 100:,.2f}", "✓" if match else "✗")
        self.console.print(table)
        self.console.print(f"partitions read by period: {doc['partitions_read']}")
        state = catalog.fact_state(FACT)
        picture = plot_coverage(coverage_lanes(state, cover, "dt"), cover,
                                self.root / "coverage.png")
        self.console.print(f"coverage picture: {picture} (made like "
                           f"`airflow-partitions coverage {FACT} --start ... --plot ...`)")
        if not all_match:
            raise DemoFailed("the report's totals differ from the raw events")
        self.console.print("[bold green]demo complete:[/] the report equals the raw data.")
        self.console.print("the same in Airflow's UI: `make airflow`, then the Partitions "
                           f"button in its navigation bar, or <Airflow address>{VIEW_ROUTE}"
                           f"/facts/{FACT}")

    def run_all(self) -> Report:
        self.setup()
        self.ingest()
        self.show_missing()
        self.late_hour()
        self.rollups()
        doc = self.report()
        self.summarise(doc)
        return doc


def demo_console(file: IO[str]) -> Console:
    """The demo's console, by the CLI's rule: in a log or a pipe, 200 columns instead of rich's
    80, so headers keep their paths."""
    return console_for(file, highlight=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m airflow_partitions.demo",
        description="Run the events pipeline end to end: Spark ingest, a coverage asset, daily "
                    "rollups and a mixed-cover report, on a local sqlite catalog.",
    )
    parser.add_argument("--root", type=Path, default=Path(".demo"),
                        help="where the demo's Airflow home, catalog and data live (.demo)")
    parser.add_argument("--days", type=int, default=3, help="days of hourly data (default 3)")
    parser.add_argument("--dags", type=Path, default=REPO / "dags_examples",
                        help="the example DAGs folder")
    args = parser.parse_args(argv)
    if args.days < 2:
        parser.error("--days must be at least 2 (the late hour is on the second day)")
    console = demo_console(sys.stdout)
    started = time.monotonic()
    demo = Demo(args.root, plan(args.days), console, args.dags)
    try:
        demo.run_all()
    except DemoFailed as exc:
        console.print(f"[bold red]demo failed:[/] {exc}")
        return 1
    console.print(f"[dim]({time.monotonic() - started:.0f} s)[/]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
