"""Our cover beside Luigi, Dagster and an ``os.path.exists`` loop, in one run.

The question: "which hours of the range are missing?", asked of the same data by

- us: ``Catalog.cover`` on a SQLite catalog file, verified (the normal path) over the hourly
  storage; the same with ``verify=False`` (the cover computation alone, the baseline for what
  verifying costs); and verified over the hourly storage plus daily rollups (mixed
  granularity: a rollup covers its day's holes, so fewer hours are missing);
- Luigi's ``RangeHourlyBase.missing_datetimes`` (one ``complete()`` per hour). Luigi's
  ``RangeHourly`` infers completeness from a file-system listing instead; it is run once per
  range and its (wrong) answer reported as a note, not timed;
- Dagster's partition subsets: ``HourlyPartitionsDefinition``, the subset of present hours
  built from their key set, then the range's keys minus it;
- a plain ``os.path.exists`` loop over the hour directories.

Data (``--seed``, deterministic): 1 year and 10 years of hourly partitions from 2015-01-01T00
UTC with 0.1% holes, and daily rollups for half the days (chosen independently of the
holes), laid out as directories with a ``_SUCCESS`` file (``<root>/events_raw/dt=...``) for
Luigi and the loop, registered in our catalog with bulk ``register`` calls, and listed as
keys for Dagster. Datasets are built once under ``--workdir`` and reused while their parameters
match. Ranges: a day and the whole of the 1-year data, a month and the whole of the 10-year data
(the day and the month are those of the data's middle hole, so each has something missing).

Beside the range tables (``--cases ranges``), the questions a sensor on a busy catalog asks
(``--cases registration,idle,hook,regions,memory``; the text in ``QUESTIONS_TEXT``), each in
fresh processes, rounds interleaved, CPU time (``time.process_time``) and every answer checked:

- ``registration``: a day of the data's middle hole right after one registration of the same
  fact by another process (the hour after the data's end; undone when the process ends), on
  1 and 10 years: us (the fact's cover, and the hourly storage), the loop, Luigi; with
  ``--hbase`` (or ``--store-url``) also our cover on the same data in an HBase catalog;
- ``idle``: one absent hour asked again while nothing changes: our
  ``PartitionCoverageSensor.poke`` against ``luigi.LocalTarget(path).exists()``, a
  ``glob.glob`` and one ``os.path.exists``;
- ``hook``: docs/airflow.md's ``PartitionCatalogHook`` example, read from the docs at the
  start of the run, against Airflow's ``FileSensor.poke`` (kept, and new per call);
- ``regions``: 100 regions x 1 month (a declared dimension, 74,400 partitions, one directory
  each for the loop) right after one registration, against the loop;
- ``memory``: the RSS growth of the first question (whole history and one day) in a fresh
  process after imports and setup: us, Dagster, Luigi (and tracemalloc peaks).

The one-hour checks and the memory question use the largest dataset of the run.

Each tool runs in a fresh process per dataset and round (``benchmarks/peers_child.py``, with
the tool's own Python: Luigi and Dagster live in their own virtual environments so nothing
clashes with Airflow's pins); in it each range is answered once (warm-up), then timed. A
round's figure is the median of the timed calls; the table shows the median of ``--rounds``
rounds, the tools interleaved in each. Every answer is checked against the expected missing
hours and a wrong one stops the benchmark. Cost: the range tables about 20 minutes with 10 years
on 2 cores (Luigi alone spends 15-20 s a call on the whole 10 years), the questions about 10
more, plus two minutes to build the data once (``--quick``: 1 year, 3 rounds, under 3 minutes;
``--cases`` runs only the named parts). Our package is imported from the work tree:
when its sources change during a run (each child hashes them), the report says so.

    python benchmarks/peers.py --hbase --write docs/benchmarks-peers.md   # or --quick

``make bench-peers`` creates the two environments (``benchmarks/.peers/luigi-venv`` and
``dagster-venv``, whose Pythons are the defaults of ``--luigi-python`` and ``--dagster-python``)
and runs exactly that.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # peers_child beside this file
from peers_child import DAGSTER_FORMAT, DIR_FORMAT, HOUR, KEY_FORMAT, hours_of, slice_hours

CHILD = Path(__file__).resolve().parent / "peers_child.py"
REPO = Path(__file__).resolve().parents[1]
DEFAULT_WORKDIR = REPO / "benchmarks" / ".peers" / "data"
FACT, HOURLY, DAILY = "events", "events_raw", "events_daily"
DAY = dt.timedelta(days=1)
FIRST_HOUR = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
#: The datasets' seed unless ``--seed`` says otherwise.
DEFAULT_SEED = 2015
#: Bump when the layout on disk changes, so old datasets are rebuilt.
LAYOUT_VERSION = 2


# --- data: pure functions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """Hourly partitions over ``[start, end)`` minus ``holes``; daily rollups on ``rollup_days``."""

    name: str
    start: dt.datetime
    end: dt.datetime
    seed: int
    hole_rate: float
    rollup_share: float
    holes: frozenset[dt.datetime] = field(repr=False)
    rollup_days: frozenset[dt.date] = field(repr=False)

    @property
    def hours(self) -> int:
        return (self.end - self.start) // HOUR

    @property
    def slug(self) -> str:
        """The dataset's folder name under the work directory."""
        return self.name.replace(" ", "-")

    def present_hours(self) -> list[dt.datetime]:
        """Every hour that has a partition, in order: O(hours)."""
        return [h for h in (self.start + i * HOUR for i in range(self.hours))
                if h not in self.holes]

    def days(self) -> list[dt.date]:
        """Every day of the data, in order."""
        first = self.start.date()
        return [first + dt.timedelta(days=i) for i in range((self.end - self.start) // DAY)]

    def params(self) -> dict[str, Any]:
        """What identifies the data on disk (a built dataset is reused while these match)."""
        return {"layout": LAYOUT_VERSION, "name": self.name, "seed": self.seed,
                "start": self.start.strftime(KEY_FORMAT), "end": self.end.strftime(KEY_FORMAT),
                "hole_rate": self.hole_rate, "rollup_share": self.rollup_share}


def plan_dataset(name: str, start: dt.datetime, end: dt.datetime, seed: int, *,
                 hole_rate: float = 0.001, rollup_share: float = 0.5) -> Dataset:
    """Pick the holes (``round(hours * hole_rate)`` distinct hours) and the rollup days
    (``round(days * rollup_share)``) with ``random.Random(seed)``: deterministic, O(hours)."""
    rng = random.Random(seed)
    hours = (end - start) // HOUR
    holes = frozenset(start + i * HOUR for i in rng.sample(range(hours), round(hours * hole_rate)))
    days = (end - start) // DAY
    rollups = frozenset(start.date() + dt.timedelta(days=i)
                        for i in rng.sample(range(days), round(days * rollup_share)))
    return Dataset(name, start, end, seed, hole_rate, rollup_share, holes, rollups)


def years_dataset(years: int, seed: int) -> Dataset:
    """``years`` calendar years of hours from 2015-01-01T00 UTC, 0.1% holes, rollups on half
    the days."""
    end = FIRST_HOUR.replace(year=FIRST_HOUR.year + years)
    return plan_dataset(f"{years} year{'s' if years != 1 else ''}", FIRST_HOUR, end, seed)


def expected_missing(ds: Dataset, start: dt.datetime, end: dt.datetime, *,
                     mixed: bool = False) -> list[str]:
    """The right answer: the holes in ``[start, end)`` and its hours outside the data; with
    ``mixed``, less the holes whose day has a rollup lying wholly inside the range (the cover
    reads the day instead). O(holes + hours outside the data)."""
    outside = [h for h in (start + i * HOUR for i in range((end - start) // HOUR))
               if not ds.start <= h < ds.end] if start < ds.start or end > ds.end else []
    inside = []
    for hole in (h for h in ds.holes if start <= h < end):
        day_start = dt.datetime.combine(hole.date(), dt.time(), tzinfo=dt.UTC)
        rolled_up = hole.date() in ds.rollup_days and start <= day_start <= end - DAY
        if not (mixed and rolled_up):
            inside.append(hole)
    return [h.strftime(KEY_FORMAT) for h in sorted(outside + inside)]


@dataclass(frozen=True)
class Case:
    """One range asked of one dataset."""

    label: str
    dataset: Dataset
    start: dt.datetime
    end: dt.datetime

    @property
    def key(self) -> str:
        return self.label


def middle_hole(ds: Dataset) -> dt.datetime:
    """The median hole (or the middle hour when there is none): where the short ranges sit."""
    holes = sorted(ds.holes)
    return holes[len(holes) // 2] if holes else ds.start + (ds.hours // 2) * HOUR


def day_case(ds: Dataset) -> Case:
    """The day of the dataset's middle hole."""
    start = dt.datetime.combine(middle_hole(ds).date(), dt.time(), tzinfo=dt.UTC)
    return Case(f"{ds.name}, 1 day", ds, start, start + DAY)


def month_case(ds: Dataset) -> Case:
    """The calendar month of the dataset's middle hole."""
    h = middle_hole(ds)
    start = dt.datetime(h.year, h.month, 1, tzinfo=dt.UTC)
    end = dt.datetime(h.year + h.month // 12, h.month % 12 + 1, 1, tzinfo=dt.UTC)
    return Case(f"{ds.name}, 1 month", ds, start, end)


def whole_case(ds: Dataset) -> Case:
    return Case(f"{ds.name}, whole", ds, ds.start, ds.end)


def cases(seed: int, quick: bool) -> list[Case]:
    """1 year: a day and the whole; 10 years (not with ``quick``): a month and the whole."""
    one = years_dataset(1, seed)
    out = [day_case(one), whole_case(one)]
    if not quick:
        ten = years_dataset(10, seed)
        out += [month_case(ten), whole_case(ten)]
    return out


# --- the questions a user asks: pure parts --------------------------------------------------------

#: What ``--cases`` selects: the range tables, and the questions a user measured.
QUESTIONS = ("ranges", "registration", "idle", "hook", "regions", "memory")
REGIONAL_FACT, REGIONAL_STORAGE = "regional", "regional_raw"


def absent_hour(ds: Dataset) -> dt.datetime:
    """The median hole whose day has no rollup, so the fact's cover lacks it too (what a
    sensor waiting on one hour waits for); the middle hole when every hole's day is rolled
    up."""
    bare = sorted(h for h in ds.holes if h.date() not in ds.rollup_days)
    return bare[len(bare) // 2] if bare else middle_hole(ds)


@dataclass(frozen=True)
class RegionsDataset:
    """One calendar month of hourly partitions for each of ``regions`` (a declared region
    dimension) minus ``holes``, which are (hour, region) pairs."""

    name: str
    start: dt.datetime
    end: dt.datetime
    seed: int
    regions: tuple[str, ...]
    hole_rate: float
    holes: frozenset[tuple[dt.datetime, str]] = field(repr=False)

    @property
    def hours(self) -> int:
        return (self.end - self.start) // HOUR

    @property
    def slug(self) -> str:
        return self.name.replace(" ", "-").replace(",", "")

    def present(self) -> list[tuple[dt.datetime, str]]:
        """Every (hour, region) that has a partition, hour by hour: O(hours x regions)."""
        return [(h, r) for h in (self.start + i * HOUR for i in range(self.hours))
                for r in self.regions if (h, r) not in self.holes]

    def params(self) -> dict[str, Any]:
        return {"layout": LAYOUT_VERSION, "name": self.name, "seed": self.seed,
                "start": self.start.strftime(KEY_FORMAT), "end": self.end.strftime(KEY_FORMAT),
                "regions": list(self.regions), "hole_rate": self.hole_rate}


def plan_regions(seed: int, *, regions: int = 100, start: dt.datetime = FIRST_HOUR,
                 hole_rate: float = 0.001) -> RegionsDataset:
    """The calendar month from ``start``, ``regions`` regions ``r000``..., and
    ``round(hours * regions * hole_rate)`` distinct (hour, region) holes drawn with
    ``random.Random(seed)``: deterministic."""
    end = dt.datetime(start.year + start.month // 12, start.month % 12 + 1, 1, tzinfo=dt.UTC)
    names = tuple(f"r{i:03d}" for i in range(regions))
    hours = (end - start) // HOUR
    rng = random.Random(seed)
    cells = rng.sample(range(hours * regions), round(hours * regions * hole_rate))
    holes = frozenset((start + (c // regions) * HOUR, names[c % regions]) for c in cells)
    return RegionsDataset(f"{regions} regions, 1 month", start, end, seed, names, hole_rate,
                          holes)


def expected_missing_slices(ds: RegionsDataset, start: dt.datetime,
                            end: dt.datetime) -> list[str]:
    """The right answer for the regions: ``YYYY-MM-DD-HH region=rNNN`` for each hole in
    ``[start, end)`` and for every region of each hour outside the data, sorted."""
    out = [slice_hours(h, r) for h, r in ds.holes if start <= h < end]
    out += [slice_hours(h, r) for h in (start + i * HOUR for i in range((end - start) // HOUR))
            if not ds.start <= h < ds.end for r in ds.regions]
    return sorted(out)


def docs_hook_example(markdown: str) -> str:
    """The first ``python`` code block under the ``PartitionCatalogHook`` heading of
    docs/airflow.md: the hook call the docs show, measured as written."""
    heading = markdown.find("## `PartitionCatalogHook`")
    if heading < 0:
        raise SystemExit("docs/airflow.md has no `PartitionCatalogHook` section")
    start = markdown.find("```python\n", heading)
    stop = markdown.find("```", start + 10)
    if start < 0 or stop < 0 or markdown.find("\n## ", heading + 1, start) >= 0:
        raise SystemExit("docs/airflow.md's `PartitionCatalogHook` section has no python block")
    return markdown[start + len("```python\n"):stop]


# --- data: on disk and in the catalog -------------------------------------------------------------


def laid_out(root: Path, params: dict[str, Any]) -> bool:
    """Whether ``root`` holds a dataset laid out with ``params`` (its ``dataset.json``, written
    last); if not, ``root`` is emptied for a new layout."""
    manifest = root / "dataset.json"
    if manifest.exists() and json.loads(manifest.read_text()).get("params") == params:
        return True
    if root.exists():
        shutil.rmtree(root)
    return False


def materialise(ds: Dataset, workdir: Path) -> Path:
    """Lay ``ds`` out under ``workdir/<slug>`` and return its ``dataset.json``.

    Hour and day directories each with an empty ``_SUCCESS``, a SQLite catalog with both
    storages registered in one bulk ``register`` call each, and the present hours as Dagster
    keys. Costs about 10 s per 100,000 hours; skipped when ``dataset.json`` (written last)
    already describes the same parameters."""
    root = (workdir / ds.slug).resolve()
    manifest = root / "dataset.json"
    if laid_out(root, ds.params()):
        return manifest
    hourly_root, daily_root = root / HOURLY, root / DAILY
    present = ds.present_hours()
    for h in present:
        d = hourly_root / h.strftime(DIR_FORMAT)
        d.mkdir(parents=True)
        (d / "_SUCCESS").touch()
    for day in sorted(ds.rollup_days):
        d = daily_root / f"dt={day.isoformat()}"
        d.mkdir(parents=True)
        (d / "_SUCCESS").touch()
    url = f"sqlite:///{root / 'catalog.db'}"
    register(ds, url, str(root))
    keys = root / "present_keys.txt"
    keys.write_text("".join(h.strftime(DAGSTER_FORMAT) + "\n" for h in present))
    manifest.write_text(json.dumps({
        "params": ds.params(), "start": ds.start.strftime(KEY_FORMAT),
        "end": ds.end.strftime(KEY_FORMAT), "root": str(root), "hourly_root": str(hourly_root),
        "catalog_url": url, "fact": FACT, "hourly_storage": HOURLY, "daily_storage": DAILY,
        "present_keys": str(keys), "holes": len(ds.holes), "rollup_days": len(ds.rollup_days),
    }, indent=2))
    return manifest


def register(ds: Dataset, url: str, root: str) -> None:
    """The fact, its hourly and daily storages (rollups at priority 10, as in the demo), and
    every partition of ``ds``, through the bulk ``register`` API (docs/catalog.md)."""
    from airflow_partitions.catalog import Catalog

    catalog = Catalog(url, data_root=root)
    try:
        catalog.create_fact(FACT)
        catalog.create_storage(FACT, HOURLY, ["HOURLY"], location=f"{root}/{HOURLY}/dt={{dt}}")
        catalog.create_storage(FACT, DAILY, ["DAILY"], priority=10,
                               location=f"{root}/{DAILY}/dt={{dt}}")
        catalog.register(HOURLY, "HOURLY",
                         [{"dt": h.strftime(KEY_FORMAT)} for h in ds.present_hours()])
        catalog.register(DAILY, "DAILY",
                         [{"dt": d.isoformat()} for d in sorted(ds.rollup_days)])
    finally:
        catalog.close()


def materialise_regions(ds: RegionsDataset, workdir: Path) -> Path:
    """Lay the regions out under ``workdir/<slug>``: ``dt=.../region=.../_SUCCESS`` for the
    loop (one directory per present partition, only that month on disk), and a SQLite catalog
    whose fact has one hourly storage with the declared dimension ``region`` (one bulk
    ``register``). Reused while ``dataset.json`` describes the same parameters."""
    from airflow_partitions.catalog import Catalog

    root = (workdir / ds.slug).resolve()
    manifest = root / "dataset.json"
    if laid_out(root, ds.params()):
        return manifest
    hourly_root = root / REGIONAL_STORAGE
    present = ds.present()
    for h, r in present:
        d = hourly_root / h.strftime(DIR_FORMAT) / f"region={r}"
        d.mkdir(parents=True)
        (d / "_SUCCESS").touch()
    url = f"sqlite:///{root / 'catalog.db'}"
    catalog = Catalog(url, data_root=str(root))
    try:
        catalog.create_fact(REGIONAL_FACT)
        catalog.create_storage(REGIONAL_FACT, REGIONAL_STORAGE, ["HOURLY"],
                               columns=["dt", "region"],
                               dimensions=[f"region={','.join(ds.regions)}"],
                               location=f"{root}/{REGIONAL_STORAGE}/dt={{dt}}/region={{region}}")
        catalog.register(REGIONAL_STORAGE, "HOURLY",
                         [{"dt": h.strftime(KEY_FORMAT), "region": r} for h, r in present])
    finally:
        catalog.close()
    manifest.write_text(json.dumps({
        "params": ds.params(), "start": ds.start.strftime(KEY_FORMAT),
        "end": ds.end.strftime(KEY_FORMAT), "root": str(root), "hourly_root": str(hourly_root),
        "catalog_url": url, "fact": REGIONAL_FACT, "hourly_storage": REGIONAL_STORAGE,
        "regions": list(ds.regions), "holes": len(ds.holes),
    }, indent=2))
    return manifest


def our_missing_slices(url: str, root: str, start: dt.datetime, end: dt.datetime) -> list[str]:
    """Our answer for the regions in this process (the child's query, for the tests)."""
    from peers_child import missing_slices

    from airflow_partitions.catalog import Catalog

    catalog = Catalog(url, data_root=root)
    try:
        return missing_slices(catalog.cover(REGIONAL_FACT, start, end))
    finally:
        catalog.close()


def our_missing(url: str, root: str, start: dt.datetime, end: dt.datetime, *,
                mixed: bool = False, verify: bool = True) -> list[str]:
    """Our answer in this process (the child's query, for the tests): the hours of
    ``Catalog.cover``'s missing ranges, over the hourly storage (and the rollups if ``mixed``)."""
    from airflow_partitions.catalog import Catalog

    catalog = Catalog(url, data_root=root)
    try:
        storages = [HOURLY, DAILY] if mixed else [HOURLY]
        cover = catalog.cover(FACT, start, end, storages=storages, verify=verify)
        return hours_of((m.start, m.end) for m in cover.missing)
    finally:
        catalog.close()


# --- the run --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    """One column of the tables: which child tool, with which Python and options."""

    key: str
    label: str
    child_tool: str
    python: str
    options: dict[str, Any] = field(default_factory=dict)
    memory: bool = False
    mixed: bool = False


def tools(luigi_python: str, dagster_python: str) -> list[Tool]:
    ours = sys.executable
    return [
        Tool("ours", "us, verified", "ours", ours, {"verify": True}, memory=True),
        Tool("ours-moved", "us, verified after a write", "ours", ours,
             {"verify": True, "moved": True}),
        Tool("ours-unverified", "us, `verify=False`", "ours", ours, {"verify": False},
             memory=True),
        Tool("ours-mixed", "us, verified, hourly + daily", "ours", ours,
             {"verify": True, "mixed": True}, memory=True, mixed=True),
        Tool("luigi", "Luigi `RangeHourlyBase`", "luigi", luigi_python),
        Tool("dagster", "Dagster partition subset", "dagster", dagster_python),
        Tool("exists", "`os.path.exists` loop", "exists", ours),
    ]


@dataclass(frozen=True)
class Settings:
    rounds: int
    min_repeats: int
    max_repeats: int
    budget_s: float


def run_child(tool: Tool, manifest: Path, group: Sequence[Case | Ask], settings: Settings,
              spec_path: Path, *, options: dict[str, Any] | None = None,
              untimed: bool = False) -> dict[str, Any]:
    """Run one fresh child process for ``tool`` over ``group``'s ranges; fail loudly if it does."""
    spec = {
        "tool": tool.child_tool, "dataset": str(manifest),
        "options": tool.options if options is None else options,
        "ranges": [{"name": c.key, "start": c.start.strftime(KEY_FORMAT),
                    "end": c.end.strftime(KEY_FORMAT)} for c in group],
        "min_repeats": 0 if untimed else settings.min_repeats,
        "max_repeats": 0 if untimed else settings.max_repeats,
        "budget_s": 0.0 if untimed else settings.budget_s,
        "memory": tool.memory and not untimed,
    }
    spec_path.write_text(json.dumps(spec))
    proc = subprocess.run([tool.python, str(CHILD), str(spec_path)], capture_output=True,
                          text=True, check=False, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"{tool.label} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def check(tool: Tool, case: Case, answer: list[str]) -> None:
    """Stop the benchmark when a tool's answer is not the expected missing hours."""
    expected = expected_missing(case.dataset, case.start, case.end, mixed=tool.mixed)
    if answer != expected:
        extra = sorted(set(answer) - set(expected))[:5]
        lacking = sorted(set(expected) - set(answer))[:5]
        raise SystemExit(
            f"WRONG ANSWER: {tool.label} on {case.label}: {len(answer)} missing hours, "
            f"expected {len(expected)} (extra {extra}, not found {lacking})"
        )


@dataclass
class Measured:
    """Per (tool, case): each round's median and the memory figures."""

    seconds: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    traced: list[int] = field(default_factory=list)
    missing: int = 0


def measure(all_cases: list[Case], all_tools: list[Tool], settings: Settings,
            workdir: Path) -> tuple[dict[tuple[str, str], Measured], dict[str, set[str]],
                                    list[str], list[str]]:
    """Build the data, then run every tool in ``settings.rounds`` interleaved rounds; returns
    the measures, each tool's versions, Luigi ``RangeHourly``'s answers and warnings."""
    groups: dict[str, list[Case]] = {}
    for c in all_cases:
        groups.setdefault(c.dataset.name, []).append(c)
    manifests = {}
    for name, group in groups.items():
        print(f"data: {name} ({group[0].dataset.hours:,} hours) under {workdir}", flush=True)
        manifests[name] = materialise(group[0].dataset, workdir)
    results: dict[tuple[str, str], Measured] = {}
    versions: dict[str, set[str]] = {}
    spec_path = workdir / "spec.json"
    for rnd in range(settings.rounds):
        order = all_tools[rnd % len(all_tools):] + all_tools[:rnd % len(all_tools)]
        for name, group in groups.items():
            for tool in order:
                out = run_child(tool, manifests[name], group, settings, spec_path)
                versions.setdefault(tool.label, set()).add(out["version"])
                for c in group:
                    r = out["ranges"][c.key]
                    check(tool, c, r["missing"])
                    m = results.setdefault((tool.key, c.key), Measured())
                    m.seconds.append(r["median_s"])
                    m.first.append(r["first_s"])
                    if r["traced_peak_bytes"] is not None:
                        m.traced.append(r["traced_peak_bytes"])
                    m.missing = len(r["missing"])
                    print(f"  round {rnd + 1}/{settings.rounds} {c.label:<20} {tool.label:<32} "
                          f"{r['median_s'] * 1e3:10.2f} ms  missing {len(r['missing'])}",
                          flush=True)
    notes = []
    luigi = next(t for t in all_tools if t.key == "luigi")
    for name, group in groups.items():  # Luigi's RangeHourly: its answer, untimed
        out = run_child(luigi, manifests[name], group, settings, spec_path,
                        options={"glob": True}, untimed=True)
        for c in group:
            got = out["ranges"][c.key]["missing"]
            want = expected_missing(c.dataset, c.start, c.end)
            total = (c.end - c.start) // HOUR
            verdict = "right" if got == want else "WRONG"
            notes.append(f"{c.label}: `RangeHourly` reports {len(got):,} of {total:,} hours "
                         f"missing, expected {len(want):,} ({verdict})")
    spec_path.unlink(missing_ok=True)
    return results, versions, notes, changed_code(versions)


def changed_code(versions: dict[str, set[str]]) -> list[str]:
    """A warning per tool whose rounds ran different code (its version line changed)."""
    warnings = []
    for tool_name, seen in versions.items():
        if len(seen) > 1:
            warning = (f"the code behind \"{tool_name}\" changed during the run "
                       f"({'; '.join(sorted(seen))}): its rounds measured different code; "
                       "re-run on a quiet work tree")
            print(f"WARNING: {warning}", file=sys.stderr, flush=True)
            warnings.append(warning)
    return warnings


# --- the questions: the run ----------------------------------------------------------------------


@dataclass(frozen=True)
class Ask:
    """One range asked in a question, with its expected answer (computed independently)."""

    key: str
    start: dt.datetime
    end: dt.datetime
    expected: tuple[str, ...]


@dataclass(frozen=True)
class Job:
    """One column of a question's table: ``tool`` with ``options``, asked ``asks`` of one
    dataset in a fresh process per round; ``figure`` is the child's result field shown."""

    question: str
    column: str
    label: str
    tool: Tool
    manifest: Path
    asks: tuple[Ask, ...]
    options: dict[str, Any] = field(default_factory=dict)
    figure: str = "median_cpu_s"

    @property
    def key(self) -> str:
        return f"{self.question}:{self.column}"


#: Per (job key, ask key): the result of each round (the child's dict for that range).
Rounds = dict[tuple[str, str], list[dict[str, Any]]]


def check_ask(job: Job, ask: Ask, answer: list[str]) -> None:
    """Stop the benchmark when an answer is not the expected one."""
    if tuple(answer) != ask.expected:
        extra = sorted(set(answer) - set(ask.expected))[:5]
        lacking = sorted(set(ask.expected) - set(answer))[:5]
        raise SystemExit(
            f"WRONG ANSWER: {job.label} on {ask.key} ({job.question}): {len(answer)} missing, "
            f"expected {len(ask.expected)} (extra {extra}, not found {lacking})")


def run_jobs(jobs: list[Job], settings: Settings, spec_path: Path,
             versions: dict[str, set[str]]) -> Rounds:
    """Every job once per round, in ``settings.rounds`` rounds, the order rotated each round;
    every answer checked. Timed jobs run with ``settings``' repeats (a ``batch`` job's figure
    is per call, each timed sample being that many calls)."""
    out: Rounds = {}
    for rnd in range(settings.rounds):
        order = jobs[rnd % len(jobs):] + jobs[:rnd % len(jobs)] if jobs else []
        for job in order:
            result = run_child(job.tool, job.manifest, job.asks, settings, spec_path,
                               options=job.options)
            versions.setdefault(job.tool.label, set()).add(result["version"])
            for ask in job.asks:
                r = result["ranges"][ask.key]
                check_ask(job, ask, r["missing"])
                out.setdefault((job.key, ask.key), []).append(r)
                value = r[job.figure]
                shown = (f"{value / 2**20:10.2f} MiB" if job.figure.endswith("bytes")
                         else f"{value * 1e3:10.4f} ms")
                print(f"  round {rnd + 1}/{settings.rounds} {job.question:<12} {ask.key:<22} "
                      f"{job.label[:40]:<40} {shown}", flush=True)
    return out


def question_jobs(selected: Sequence[str], datasets: dict[str, tuple[Dataset, Path]],
                  regions: tuple[RegionsDataset, Path] | None, luigi_python: str,
                  dagster_python: str, airflow_home: Path, snippet: str,
                  hbase_urls: dict[str, str] | None = None) -> list[Job]:
    """The jobs of the selected questions. The one-hour checks and the memory question use the
    largest dataset of the run (10 years, or 1 year with ``--quick``). With ``hbase_urls``
    (per dataset, the same data in an HBase catalog), the registration question also asks our
    cover on HBase and the same reads through happybase."""
    ours, home = sys.executable, str(airflow_home)
    t_ours = Tool("ours", "airflow-partitions", "ours", ours)
    t_exists = Tool("exists", "`os.path.exists` loop", "exists", ours)
    t_luigi = Tool("luigi", "Luigi `RangeHourlyBase`", "luigi", luigi_python)
    t_sqlite = Tool("sqlite", "one SELECT of the day's keys", "sqlite_keys", ours)
    t_watch = Tool("watch", "us, a sensor's check", "watch", ours)
    jobs: list[Job] = []
    if "registration" in selected:
        for name, (ds, manifest) in datasets.items():
            day = day_case(ds)
            asks = {m: (Ask(name, day.start, day.end,
                            tuple(expected_missing(ds, day.start, day.end, mixed=m))),)
                    for m in (False, True)}
            reg = {"register": True}
            jobs += [
                Job("registration", "fact", "us, the fact's cover (hourly + rollups)", t_ours,
                    manifest, asks[True], {**reg, "fact": True}),
                Job("registration", "hourly", "us, the hourly storage", t_ours, manifest,
                    asks[False], reg),
                Job("registration", "exists", "`os.path.exists` loop", t_exists, manifest,
                    asks[False], reg),
                Job("registration", "luigi", "Luigi `RangeHourlyBase`", t_luigi, manifest,
                    asks[False], reg),
                Job("registration", "sqlite", "one SELECT of the day's keys", t_sqlite,
                    manifest, asks[False], reg),
                Job("registration", "watch", "us, a sensor's check", t_watch, manifest,
                    asks[True], reg),
            ]
            if hbase_urls:
                on_hbase = {**reg, "catalog_url": hbase_urls[name]}
                jobs += [
                    Job("registration", "hbase", "us on HBase, the fact's cover", t_ours,
                        manifest, asks[True], {**on_hbase, "fact": True}),
                    Job("registration", "hbase_keys", "happybase, the same reads",
                        Tool("hbase_keys", "the day's rows through happybase", "hbase_keys",
                             ours), manifest, asks[False], on_hbase),
                    Job("registration", "hbase_day", "happybase, the day's rows alone",
                        Tool("hbase_keys", "the day's rows through happybase", "hbase_keys",
                             ours), manifest, asks[False], {**on_hbase, "day_only": True}),
                ]
    big, big_manifest = list(datasets.values())[-1]
    hole = absent_hour(big)
    one = (Ask(big.name, hole, hole + HOUR, (hole.strftime(KEY_FORMAT),)),)
    if "idle" in selected:
        batch = {"batch": 2000}
        jobs += [
            Job("idle", "sensor", "us, `PartitionCoverageSensor.poke`",
                Tool("sensor", "our sensor", "sensor", ours), big_manifest, one,
                {**batch, "airflow_home": home}),
            Job("idle", "luigi", "Luigi `LocalTarget(path).exists()`",
                Tool("luigi_target", "Luigi `LocalTarget`", "luigi_target", luigi_python),
                big_manifest, one, batch),
            Job("idle", "glob", "`glob.glob(hour + '/*')`",
                Tool("glob", "glob", "glob", ours), big_manifest, one, batch),
            Job("idle", "exists", "one `os.path.exists`",
                Tool("exists_one", "one exists", "exists_one", ours), big_manifest, one, batch),
        ]
    if "hook" in selected:
        jobs += [
            Job("hook", "hook", "us, the docs' hook call",
                Tool("hook", "the docs' hook call", "hook", ours), big_manifest, one,
                {"batch": 200, "airflow_home": home, "snippet": snippet}),
            Job("hook", "filesensor", "Airflow `FileSensor.poke`",
                Tool("filesensor", "FileSensor", "filesensor", ours), big_manifest, one,
                {"batch": 200, "airflow_home": home}),
            Job("hook", "filesensor-fresh", "a new `FileSensor`, then `poke`",
                Tool("filesensor", "FileSensor", "filesensor", ours), big_manifest, one,
                {"batch": 200, "airflow_home": home, "fresh": True}),
        ]
    if "regions" in selected and regions is not None:
        rds, rmanifest = regions
        month = (Ask(rds.name, rds.start, rds.end,
                     tuple(expected_missing_slices(rds, rds.start, rds.end))),)
        jobs += [
            Job("regions", "ours", "us, the fact's cover", t_ours, rmanifest, month,
                {"register": True}),
            Job("regions", "exists", "`os.path.exists` loop", t_exists, rmanifest, month,
                {"register": True}),
        ]
    if "memory" in selected:
        whole, day = whole_case(big), day_case(big)
        for case in (whole, day):  # each range the first question of its own process
            asks = {m: (Ask(case.label, case.start, case.end,
                            tuple(expected_missing(big, case.start, case.end, mixed=m))),)
                    for m in (False, True)}
            first = {"first_memory": True}
            traced = {"first_memory": True, "traced": True}
            jobs += [
                Job("memory", "ours", "us, the fact's cover", t_ours, big_manifest, asks[True],
                    {**first, "fact": True}, "rss_growth_bytes"),
                Job("memory", "ours-traced", "us, traced", t_ours, big_manifest, asks[True],
                    {**traced, "fact": True}, "traced_peak_bytes"),
                Job("memory", "dagster", "Dagster subset",
                    Tool("dagster", "Dagster partition subset", "dagster", dagster_python),
                    big_manifest, asks[False], first, "rss_growth_bytes"),
                Job("memory", "dagster-traced", "Dagster, traced",
                    Tool("dagster", "Dagster partition subset", "dagster", dagster_python),
                    big_manifest, asks[False], traced, "traced_peak_bytes"),
                Job("memory", "luigi", "Luigi `RangeHourlyBase`", t_luigi, big_manifest,
                    asks[False], first, "rss_growth_bytes"),
            ]
    return jobs


# --- the report -----------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    v = seconds * 1e3
    return (f"{v:,.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 0.1
            else f"{v:.3f}")


def verdict(label: str, names: list[str], pairs: list[tuple[float, float]]) -> str:
    """Where we stand against one peer over the histories: ``pairs`` are (peer, us) medians
    per name, and above the peer's we are behind.

    >>> verdict("the loop", ["1 year", "10 years"], [(0.11, 0.10), (0.10, 0.12)])
    'ahead of the loop on 1 year and behind it on 10 years'
    >>> verdict("Luigi", ["1 year", "10 years"], [(1.1, 0.1), (1.1, 0.1)])
    'ahead of Luigi on every history'
    """
    ahead = [name for name, (peer, us) in zip(names, pairs, strict=True) if peer > us]
    if len(ahead) == len(names):
        return f"ahead of {label} on every history"
    if not ahead:
        return f"behind {label} on every history"
    behind = [name for name in names if name not in ahead]
    return f"ahead of {label} on {', '.join(ahead)} and behind it on {', '.join(behind)}"


def ratio(x: float) -> str:
    return f"{x:,.0f}x" if x >= 100 else f"{x:.1f}x" if x >= 10 else f"{x:.2f}x"


def mib(n: float) -> str:
    v = n / 2**20
    return f"{v:,.1f}" if v >= 10 else f"{v:.2f}"


def render(command: str, all_cases: list[Case], results: dict[tuple[str, str], Measured] | None,
           versions: dict[str, set[str]], notes: list[str], warnings: list[str],
           settings: Settings, load: tuple[tuple[float, ...], tuple[float, ...]],
           questions: tuple[list[Job], Rounds, RegionsDataset | None] | None = None) -> str:
    """The markdown fragment (docs/benchmarks-peers.md): the header, the range tables (when
    measured), the questions (when measured)."""
    datasets = {c.dataset.name: c.dataset for c in all_cases}
    shown_versions = {v.split(" (source ")[0] for seen in versions.values() for v in seen}
    data = "; ".join(
        f"{d.name}: {d.hours:,} hours from {d.start:%Y-%m-%d}, {len(d.holes)} holes, "
        f"daily rollups on {len(d.rollup_days):,} of {len(d.days()):,} days"
        for d in datasets.values())
    lines = [
        "## Peers: which hours are missing? (`benchmarks/peers.py`)",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average {load[0][0]:.1f} at the start, "
        f"{load[1][0]:.1f} at the end (the machine is shared: compare ratios, measured in the "
        f"same run). Versions: {', '.join(sorted(shown_versions))}.",
        "",
        f"Data (seed {all_cases[0].dataset.seed}): {data}. Hour directories with a `_SUCCESS` "
        "file for Luigi and the loop, the same partitions in a SQLite catalog for us, their keys "
        "for Dagster. The day and the month are those of the data's middle hole.",
        "",
        *(f"- **Warning**: {w}." for w in warnings),
    ]
    if results is not None:
        lines += render_ranges(all_cases, results, notes, settings)
    if questions is not None:
        lines += render_questions(*questions, settings)
    return "\n".join(lines) + "\n"


def render_ranges(all_cases: list[Case], results: dict[tuple[str, str], Measured],
                  notes: list[str], settings: Settings) -> list[str]:
    """The range tables: every tool on each range, then mixed granularity and memory."""
    def med(tool: str, case: Case) -> float:
        return statistics.median(results[(tool, case.key)].seconds)

    lines = [
        "### Which hours of a range are missing?",
        "",
        f"Each tool in a fresh process per dataset and round, warm (each range answered once, "
        f"then timed: the median of at least {settings.min_repeats} calls and "
        f"{settings.budget_s:g} s); the median of {settings.rounds} interleaved rounds. Every "
        "answer was checked against the expected missing hours. Us, verified: *unchanged*, "
        "the SQLite store proves nothing changed since the same question was answered (its "
        "change stamp) and the answer is given again; *after a write*, another table of the "
        "same file was written before each timed call (untimed), so the rows are read and "
        "checked (invariant 2), as after any registration. Ratio = peer ÷ us, verified after a "
        "write (above 1: we are faster).",
        "",
        "| range | hours | missing | us, verified, unchanged (ms) | us, verified after a "
        "write (ms) | us, `verify=False` (ms) | after a write ÷ unverified | Luigi "
        "`RangeHourlyBase` (ms) | Dagster subset (ms) | `os.path.exists` loop (ms) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in all_cases:
        us = med("ours-moved", c)
        peers = [f"{ms(med(t, c))} ({ratio(med(t, c) / us)})"
                 for t in ("luigi", "dagster", "exists")]
        lines.append(
            f"| {c.label} | {(c.end - c.start) // HOUR:,} | {results[('ours', c.key)].missing} | "
            f"{ms(med('ours', c))} | {ms(us)} | {ms(med('ours-unverified', c))} | "
            f"{ratio(us / med('ours-unverified', c))} | " + " | ".join(peers) + " |")
    lines += [
        "",
        "Mixed granularity (only we have it): the same verified cover over the hourly storage "
        "and the daily rollups; and our memory: the peak growth of Python allocations during "
        "one warm call (tracemalloc, median over the rounds; SQLite's own memory is not in it):",
        "",
        "| range | mixed, verified (ms) | mixed ÷ hourly-only | missing hours: hourly → "
        "mixed | verified, peak growth (MiB) | `verify=False` (MiB) | mixed, verified (MiB) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in all_cases:
        traced = {t: statistics.median(results[(t, c.key)].traced)
                  for t in ("ours", "ours-unverified", "ours-mixed")}
        lines.append(
            f"| {c.label} | {ms(med('ours-mixed', c))} | "
            f"{ratio(med('ours-mixed', c) / med('ours', c))} | "
            f"{results[('ours', c.key)].missing} → {results[('ours-mixed', c.key)].missing} | "
            f"{mib(traced['ours'])} | {mib(traced['ours-unverified'])} | "
            f"{mib(traced['ours-mixed'])} |")
    lines += [
        "",
        "Notes:",
        "- Luigi's `RangeHourly` (the bulk path, completeness inferred from a file-system "
        "listing) was run once per range, untimed: " + "; ".join(notes) + ". Each hour's "
        "output is its directory, so the glob Luigi derives from the output paths is their "
        "parent directory, whose listing (`LocalFileSystem.listdir`, a walk) yields the "
        "`_SUCCESS` files and never a directory: no hour is found. With the `_SUCCESS` file "
        "as the output the derived glob keeps its `[0-9]` wildcards, which "
        "`LocalFileSystem.exists` tests as a literal path: again nothing is found. The "
        "working Luigi path is `RangeHourlyBase`.",
        "- What each tool does per call: us, `Catalog.cover` (the store's change stamp; unless "
        "it proves the store unchanged, one read of both change feeds, which may prove the "
        "write left the answer true; else a generation read, the cover, and with verification "
        "one read of the chosen partitions' rows) and the hours of its "
        "missing ranges; Luigi, one `Hour` task per hour and its `complete()` (an "
        "`os.path.exists` of the hour directory; the warm calls reuse Luigi's cached task "
        "instances); Dagster, the subset of present hours from the whole key set (so even a "
        "one-day question pays for every key), the range as a subset, their difference's keys; "
        "the loop, one `os.path.exists` per hour.",
        "- Process start-up and imports are not in the times (they are the warm-up's "
        "business); none of the peers verifies anything beyond the existence of a directory "
        "or a key. These tables are wall-clock time (`time.perf_counter`); the questions "
        "below are CPU time.",
        "",
    ]
    return lines


QUESTIONS_TEXT = """\
### The questions a sensor asks

The range tables above ask each range of a catalog that is otherwise quiet. A sensor on a
busy catalog does not: it asks a small range (an hour, a day) again and again while producers
register partitions of the same fact, each registration moving the fact's change stamp so our
answer is worked out again. These questions measure that, and the other costs a user compares
before choosing a tool:

- **A day right after one registration**: before each timed call (untimed), another process
  registers the next hour after the data's end (a producer appending; the asked day is not
  touched, so the answer stays checkable), then the day of the data's middle hole is asked.
  The peers' writer creates the same hour's directory. On 1 and 10 years of history: a small
  range should cost the same however long the history is. A sensor's check is what
  `PartitionCoverageSensor.poke` and the deferrable trigger run (`CoverageWatch`, the stamp,
  then the fact's generation, then the catalog's kept answer). The last column is not a peer but
  SQLite's floor: one indexed SELECT of the day's keys in the same file on a plain
  connection, nothing checked, after the same registration. With `--hbase` (what
  `make bench-peers` runs), the same data is also registered in an HBase catalog, and our
  cover is asked there too after the same registration, beside the two reads that cover
  makes (the catalog rows, the day's rows by key) through happybase, one call after the
  other, with nothing checked, and HBase's floor: the day's rows alone (their locations), one
  request through happybase, nothing checked.
- **An idle check of one absent hour**: the sensor's poke while nothing changes, the cost
  every poke interval of a long wait pays. Against one `LocalTarget(path).exists()` (what one
  Luigi output costs), a `glob.glob` of the hour's files and one `os.path.exists`.
- **The hook call the docs show**: the `PartitionCatalogHook` example of
  [airflow.md](airflow.md#partitioncataloghook) run as written (its imports once), against
  Airflow's own `FileSensor.poke` on the hour's directory: what a user who writes a
  `PythonSensor` around our hook pays per poke. Both are timed to their own answer (the
  cover, the poke's bool); the harness reads the missing hour out of it after the timer.
- **100 regions x 1 month right after a write**: a fact with a declared region dimension
  ([dimensions.md](dimensions.md)), 74,400 partitions, one registration (the next hour of the
  next region, after the month) before each call; against one `os.path.exists` per (hour,
  region) directory.
- **Memory of a first question in a fresh process**: the RSS growth across the first
  question after imports and setup (a worker or a triggerer starting), for the whole history
  and for one day of it.

Every figure is CPU time (`time.process_time`, this process only: the writer's work is not
in it), the median of the timed calls of a process, then the median over the rounds, every
tool in a fresh process per round, the tools interleaved; every answer checked against the
truth computed from the planned data. Each call is timed to the tool's own answer: our cover,
Luigi's missing datetimes and Dagster's keys are read into the missing hours after the timer
(the loop's answer is its list: formatting each hour is how it names the directory).
"""


def hbase_registration(names: list[str], med: Callable[..., float | None],
                       cell: Callable[..., str]) -> list[str]:
    """The registration question on HBase (``--hbase`` or ``--store-url``): our cover there,
    the same peers (they read directories, whatever our store), and the same reads through
    happybase."""
    lines = [
        "", "On HBase (the same data in an HBase catalog, the same registration before each "
        "call, by another process; ratio = peer ÷ us on HBase):", "",
        "| history | us on HBase, the fact's cover | `os.path.exists` loop | "
        "Luigi `RangeHourlyBase` | the same two reads through happybase, one after the "
        "other, nothing checked | the day's rows alone through happybase, one request, "
        "nothing checked (HBase's floor) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in names:
        us = med("registration", "hbase", name)
        lines.append(f"| {name} | {cell(us)} | {cell(med('registration', 'exists', name), us)} "
                     f"| {cell(med('registration', 'luigi', name), us)} "
                     f"| {cell(med('registration', 'hbase_keys', name), us)} "
                     f"| {cell(med('registration', 'hbase_day', name), us)} |")
    verdicts = []
    for peer, label in (("exists", "the `os.path.exists` loop"),
                        ("luigi", "Luigi `RangeHourlyBase`")):
        pairs = [(med("registration", peer, n), med("registration", "hbase", n)) for n in names]
        if all(p and u for p, u in pairs):
            verdicts.append(verdict(label, names, pairs))
    if verdicts:
        lines += ["", "On HBase we are " + "; ".join(verdicts) + ". "
                  "Every answer there reads the catalog rows and the day's partition rows "
                  "(HBase keeps no change stamp or feed): ours sends both requests in one "
                  "write and decodes only the replies that changed since the last proof; "
                  "the fourth column reads the same rows through happybase, one call after "
                  "the other, with nothing checked."]
    floor = floor_ratios(med, "hbase_day", names)
    if floor:
        lines += ["", "HBase's floor (the day's rows alone, one request through happybase, "
                  f"right after the same registration, nothing checked) costs {floor} the "
                  "`os.path.exists` loop: one request over loopback, its encoding and the "
                  "reply's decoding, is the least any answer read from HBase pays."]
    return lines


def floor_ratios(med: Callable[..., float | None], column: str, names: list[str]) -> str | None:
    """A floor column's cost ÷ the ``os.path.exists`` loop's on the registration question, per
    history ("0.73x, 0.74x"); None when either is missing for a history."""
    pairs = [(med("registration", column, n), med("registration", "exists", n)) for n in names]
    if not all(f and e for f, e in pairs):
        return None
    return ", ".join(ratio(f / e) for f, e in pairs if f and e)


def render_questions(jobs: list[Job], rounds: Rounds, regions: RegionsDataset | None,
                     settings: Settings) -> list[str]:
    """One table per question measured (see ``QUESTIONS_TEXT``)."""
    def med(question: str, column: str, ask: str, figure: str = "median_cpu_s") -> float | None:
        got = rounds.get((f"{question}:{column}", ask))
        return statistics.median(r[figure] for r in got) if got else None

    def cell(v: float | None, base: float | None = None) -> str:
        if v is None:
            return "-"
        return ms(v) + (f" ({ratio(v / base)})" if base else "")

    def mem(v: float | None) -> str:
        return "-" if v is None else mib(v)

    asked = {j.question for j in jobs}
    lines = [QUESTIONS_TEXT]
    if "registration" in asked:
        names = list(dict.fromkeys(a.key for j in jobs if j.question == "registration"
                                   for a in j.asks))
        lines += [
            "#### A day right after one registration (CPU ms per call; ratio = peer ÷ us, "
            "the fact's cover)",
            "",
            "| history | missing: fact / hourly | us, the fact's cover (hourly + rollups) | "
            "us, the hourly storage | us, a sensor's check of the fact (`CoverageWatch`) | "
            "`os.path.exists` loop | Luigi `RangeHourlyBase` | "
            "one SELECT of the day's keys in the same file, nothing checked (SQLite's floor) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name in names:
            us = med("registration", "fact", name)
            miss = {c: len(j.asks[0].expected) for j in jobs if j.question == "registration"
                    for c in [j.column] if j.asks[0].key == name}
            lines.append(
                f"| {name} | {miss.get('fact', '-')} / {miss.get('hourly', '-')} | {cell(us)} | "
                f"{cell(med('registration', 'hourly', name))} | "
                f"{cell(med('registration', 'watch', name))} | "
                f"{cell(med('registration', 'exists', name), us)} | "
                f"{cell(med('registration', 'luigi', name), us)} | "
                f"{cell(med('registration', 'sqlite', name), us)} |")
        if len(names) > 1:
            growth = []
            for column, label in (("fact", "the fact's cover"), ("hourly", "the hourly storage")):
                a, b = med("registration", column, names[0]), med("registration", column,
                                                                  names[-1])
                if a and b:
                    growth.append(f"{label} {ratio(b / a)}")
            lines += ["", f"Our cost on {names[-1]} ÷ on {names[0]}: " + ", ".join(growth)
                      + " (goal: at most 1.5x; and ahead of the loop and Luigi on both)."]
        verdicts = []
        for peer, label in (("exists", "the `os.path.exists` loop"),
                            ("luigi", "Luigi `RangeHourlyBase`")):
            pairs = [(med("registration", peer, n), med("registration", "fact", n))
                     for n in names]
            if all(p and u for p, u in pairs):
                verdicts.append(verdict(label, names, pairs))
        if verdicts:
            lines += ["", "We are " + "; ".join(verdicts) + "."]
        floor = floor_ratios(med, "sqlite", names)
        if floor:
            lines += ["", "SQLite's floor (one indexed SELECT of the day's keys on a plain "
                      "connection, right after the same registration, nothing checked) costs "
                      f"{floor} the `os.path.exists` loop. Every timed call here starts after a "
                      "`gc.collect()`, which walks the whole heap, after which a call finds "
                      "less of its code and data near the CPU. Our answer runs more Python "
                      "than either (the change stamp, the feeds' read, the catalog cells "
                      "checked) and pays for that most, where the loop's time is in the "
                      "kernel's `stat`. How much depends on what the process holds and ran "
                      "before (`benchmarks/cache_state.py`, in [benchmarks.md](benchmarks.md)): "
                      "with the caches warm the same answer is furthest ahead of the loop; in "
                      "a process that imported Airflow's SDK, after the same collection, even "
                      "one SELECT costs what the loop does, and the answer is behind."]
        if any(med("registration", "hbase", n) for n in names):
            lines += hbase_registration(names, med, cell)
        lines.append("")
    if "idle" in asked or "hook" in asked:
        name = next(a.key for j in jobs if j.question in ("idle", "hook") for a in j.asks)
        hour = next(a.start for j in jobs if j.question in ("idle", "hook") for a in j.asks)
        base = med("idle", "luigi", name)
        lines += [
            f"#### One absent hour ({hour:%Y-%m-%dT%H:00}, {name} of history), checked again "
            "while nothing changes (per call)",
            "",
            "| check | CPU (ms) | wall (ms) | ÷ Luigi `LocalTarget.exists()` (CPU) |",
            "| --- | ---: | ---: | ---: |",
        ]
        for question, column, label in (
                ("idle", "sensor", "us, `PartitionCoverageSensor.poke` (JSON connection)"),
                ("idle", "luigi", "Luigi `LocalTarget(path).exists()`"),
                ("idle", "glob", "`glob.glob(hour_dir + '/*')`"),
                ("idle", "exists", "one `os.path.exists`"),
                ("hook", "hook", "us, the docs' hook call (below)"),
                ("hook", "filesensor", "Airflow `FileSensor.poke`, the sensor kept (its "
                 "connection resolved once)"),
                ("hook", "filesensor-fresh", "a new `FileSensor`, then `poke` (its connection "
                 "resolved per call, as the hook call resolves its hook's)")):
            cpu = med(question, column, name)
            if cpu is None:
                continue
            lines.append(f"| {label} | {cell(cpu)} | "
                         f"{cell(med(question, column, name, 'median_s'))} | "
                         f"{ratio(cpu / base) if base else '-'} |")
        hook, files = med("hook", "hook", name), med("hook", "filesensor", name)
        fresh = med("hook", "filesensor-fresh", name)
        snippet = next((j.options["snippet"] for j in jobs if j.column == "hook"), None)
        lines.append("")
        if base and med("idle", "sensor", name):
            lines.append(f"The poke costs {ratio(med('idle', 'sensor', name) / base)} Luigi's "
                         "`exists()` (goal: at most 2x).")
        if hook and files and fresh and snippet:
            lines += [
                f"The docs' hook call costs {ratio(hook / fresh)} a new `FileSensor`'s poke "
                f"and {ratio(hook / files)} a kept one's (goal: below 1x). It is "
                "docs/airflow.md's example as the run found it, its imports run once and the "
                "rest per call:", "", "```python", snippet.rstrip(), "```"]
        lines.append("")
    if "regions" in asked and regions is not None:
        us, loop = (med("regions", c, regions.name) for c in ("ours", "exists"))
        lines += [
            "#### 100 regions x 1 month right after a write (CPU ms per call)",
            "",
            "| partitions | missing | us, the fact's cover | `os.path.exists` loop | "
            "loop ÷ us |",
            "| ---: | ---: | ---: | ---: | ---: |",
            f"| {regions.hours * len(regions.regions):,} | {len(regions.holes)} | {cell(us)} | "
            f"{cell(loop)} | {ratio(loop / us) if us and loop else '-'} |",
            "",
            "Goal: the loop ÷ us at least 10x.",
            "",
        ]
    if "memory" in asked:
        lines += [
            "#### Memory of a first question in a fresh process (MiB; after imports and setup)",
            "",
            "| range | missing | us: RSS growth | us: peak RSS growth | us: tracemalloc peak | "
            "Dagster: RSS growth | Dagster: peak | Dagster: tracemalloc peak | "
            "Luigi: RSS growth | Luigi: peak | Dagster ÷ us (RSS growth) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for ask in dict.fromkeys(a.key for j in jobs if j.question == "memory" for a in j.asks):
            miss = next(len(j.asks[0].expected) for j in jobs
                        if j.question == "memory" and j.column == "ours" and j.asks[0].key == ask)
            us = med("memory", "ours", ask, "rss_growth_bytes")
            dag = med("memory", "dagster", ask, "rss_growth_bytes")
            lines.append(
                f"| {ask} | {miss} | {mem(us)} | "
                f"{mem(med('memory', 'ours', ask, 'rss_peak_growth_bytes'))} | "
                f"{mem(med('memory', 'ours-traced', ask, 'traced_peak_bytes'))} | {mem(dag)} | "
                f"{mem(med('memory', 'dagster', ask, 'rss_peak_growth_bytes'))} | "
                f"{mem(med('memory', 'dagster-traced', ask, 'traced_peak_bytes'))} | "
                f"{mem(med('memory', 'luigi', ask, 'rss_growth_bytes'))} | "
                f"{mem(med('memory', 'luigi', ask, 'rss_peak_growth_bytes'))} | "
                f"{ratio(dag / us) if us and dag and us > 0 else '-'} |")
        lines += [
            "",
            "Goal: our RSS growth on the whole 10 years at most Dagster's. RSS is the "
            "process's resident memory (`VmRSS`), growth = after the question − before it; "
            "the peak is `VmHWM` reset just before the question (`/proc/self/clear_refs`); "
            "the tracemalloc peak (Python allocations only) is from another fresh process, "
            "since tracing inflates the RSS. Our setup opens the catalog object (no query); "
            "Dagster's reads the present keys into a list (its event log's answer) and builds "
            "the partitions definition; Luigi's defines the task class.",
            "",
        ]
    lines += [
        f"Timed calls per process: at least {settings.min_repeats} and "
        f"{settings.budget_s:g} s (a one-hour check's figure is the mean of 2,000 calls, the "
        "hook call's and `FileSensor`'s of 200, each such batch one timed sample); "
        f"{settings.rounds} rounds.",
    ]
    return lines


@contextmanager
def hbase_copies(datasets: dict[str, tuple[Dataset, Path]], wanted: bool,
                 store_url: str | None) -> Iterator[dict[str, str] | None]:
    """Per dataset, the URL of the same data registered in an HBase catalog (a table prefix of
    its own), on the HBase started here or ``store_url``'s; None when not ``wanted``. Its
    tables are dropped at the end. Registering costs about 15 s per 100,000 partitions."""
    if not wanted:
        yield None
        return
    from hbase_real import hbase_server, with_prefix  # starts a JVM: imported when asked

    with hbase_server(store_url, None) as server:
        urls = {}
        for i, (name, (ds, manifest)) in enumerate(datasets.items()):
            url = with_prefix(server.url, f"peers{i}")  # dropped with the run's tables
            print(f"data: {name} in {url}", flush=True)
            register(ds, url, json.loads(manifest.read_text())["root"])
            urls[name] = url
        yield urls


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--luigi-python",
                        default=str(REPO / "benchmarks/.peers/luigi-venv/bin/python"),
                        help="the Python of Luigi's virtual environment")
    parser.add_argument("--dagster-python",
                        default=str(REPO / "benchmarks/.peers/dagster-venv/bin/python"),
                        help="the Python of Dagster's virtual environment")
    parser.add_argument("--quick", action="store_true",
                        help="1 year only, 3 rounds, shorter timing: a smoke run")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 3)")
    parser.add_argument("--min-repeats", type=int,
                        help="timed calls per range and process at least (default 3, --quick 2)")
    parser.add_argument("--budget", type=float,
                        help="seconds of timed calls per range and process "
                        "(default 1, --quick 0.2)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR,
                        help="where the datasets are built and kept")
    parser.add_argument("--write", type=Path, help="write the markdown fragment to this path")
    parser.add_argument("--hbase", action="store_true",
                        help="also ask the registration question of the same data on HBase "
                        "(started here through airflow_partitions.demo.hbase, stopped at the end)")
    parser.add_argument("--store-url", help="as --hbase, on this running HBase (hbase://...)")
    parser.add_argument("--cases", default=",".join(QUESTIONS),
                        help="comma-separated, of: " + ", ".join(QUESTIONS) + " (default: all; "
                        "`ranges` is the range tables, the others the questions a user asked)")
    args = parser.parse_args(argv)
    selected = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(selected) - set(QUESTIONS))
    if unknown:
        parser.error(f"unknown --cases {unknown}: choose among {', '.join(QUESTIONS)}")
    args_list = sys.argv[1:] if argv is None else list(argv)
    command = "python benchmarks/peers.py " + shlex.join(args_list)
    for python in (args.luigi_python, args.dagster_python):
        if not Path(python).exists():
            raise SystemExit(f"{python} does not exist: run `make peer-venvs` first")
    settings = Settings(
        rounds=args.rounds or (3 if args.quick else 5),
        min_repeats=args.min_repeats or (2 if args.quick else 3),
        max_repeats=50,
        budget_s=args.budget if args.budget is not None else (0.2 if args.quick else 1.0),
    )
    print(command, flush=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()
    all_cases = cases(args.seed, args.quick)
    results: dict[tuple[str, str], Measured] | None = None
    versions: dict[str, set[str]] = {}
    notes: list[str] = []
    warnings: list[str] = []
    if "ranges" in selected:
        results, versions, notes, warnings = measure(
            all_cases, tools(args.luigi_python, args.dagster_python), settings, args.workdir)
    questions = None
    if set(selected) - {"ranges"}:
        datasets = {}
        for c in all_cases:
            if c.dataset.name not in datasets:
                print(f"data: {c.dataset.name} under {args.workdir}", flush=True)
                datasets[c.dataset.name] = (c.dataset, materialise(c.dataset, args.workdir))
        regions = None
        if "regions" in selected:
            rds = plan_regions(args.seed)
            print(f"data: {rds.name} under {args.workdir}", flush=True)
            regions = (rds, materialise_regions(rds, args.workdir))
        home = args.workdir / "airflow-home"
        home.mkdir(exist_ok=True)
        snippet = docs_hook_example((REPO / "docs" / "airflow.md").read_text())
        seen: dict[str, set[str]] = {}
        on_hbase = (args.hbase or args.store_url is not None) and "registration" in selected
        with hbase_copies(datasets, on_hbase, args.store_url) as hbase_urls:
            jobs = question_jobs(selected, datasets, regions, args.luigi_python,
                                 args.dagster_python, home, snippet, hbase_urls)
            rounds = run_jobs(jobs, settings, args.workdir / "spec.json", seen)
        for label, got in seen.items():
            versions.setdefault(label, set()).update(got)
        warnings += changed_code(seen)
        questions = (jobs, rounds, regions[0] if regions else None)
    text = render(command.strip(), all_cases, results, versions, notes, warnings, settings,
                  (load_start, os.getloadavg()), questions)
    print(text)
    if args.write:
        args.write.write_text(text)
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
