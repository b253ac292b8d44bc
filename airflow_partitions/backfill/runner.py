"""Drive a plan through Airflow: check, create backfills stage by stage, watch, verify.

Everything that can refuse is checked before the first backfill is created (unknown or
paused DAGs, a backfill already running, dates off a DAG's schedule), so a refusal leaves
nothing half-started. Then each stage's backfills run to the end before the next stage
starts (a rollup reads what the stage before produced), and the last word is the catalog's:
the range is coverable, or the report names what is still missing.

Slices (a storage with declared dimensions): each planned run's slices go to Airflow as the
run's ``dag_run_conf`` (:mod:`airflow_partitions.planning.slices`); runs of one DAG with
different confs are different backfills, run one after the other.

A producer scheduled on a coverage asset is not backfilled (Airflow cannot, and a run beside
the asset's announcements would run a window twice): its planned windows are announced through
the catalog's markers, each at most once, and its runs with those keys are watched
(:mod:`.announce`).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NotRequired, Protocol, TypedDict

from airflow_partitions.backfill.airflow_db import BackfillRefused, Progress
from airflow_partitions.backfill.announce import (
    Announced,
    Announcer,
    CoverageAirflow,
    WindowNotCoverable,
    WindowWatch,
    planned_windows,
    producer_spec,
)
from airflow_partitions.backfill.stages import Stage, Stretch, stages_of, stretches
from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import status_line
from airflow_partitions.coverage_events import CoverageAssetSpec, Window, slice_columns
from airflow_partitions.json_value import JsonValue
from airflow_partitions.planning import Instant, Plan, PlanJson, conf_text, plan

#: Without a state change for this long while runs wait, say the scheduler may be down.
STALL_SECONDS = 300.0
#: How long to wait for Airflow to mark a backfill whose runs all finished as complete.
SETTLE_SECONDS = 120.0


#: A stale partition a restate plan re-runs: (storage, period name, time value), and for a
#: storage with declared dimensions its slice, ``((column, value), ...)``.
StaleItem = tuple[str, str, str] | tuple[str, str, str, tuple[tuple[str, str], ...]]


class ConfFieldJson(TypedDict, total=False):
    """A backfill's run conf in the report: present only when it passes slices."""

    conf: dict[str, JsonValue]


#: A planned backfill in :meth:`BackfillReport.to_json`; for a producer scheduled on a
#: coverage asset also ``asset`` (its URI) and ``windows`` (the partition keys announced
#: instead of a backfill).
ReportBackfillJson = TypedDict("ReportBackfillJson", {
    "dag_id": str, "from": str, "to": str, "runs": int,
    "conf": NotRequired[dict[str, JsonValue]], "asset": NotRequired[str],
    "windows": NotRequired[list[str]]})


class ReportStageJson(TypedDict):
    period: str
    backfills: list[ReportBackfillJson]


class CreatedBackfillJson(TypedDict):
    dag_id: str
    backfill_id: int
    conf: NotRequired[dict[str, JsonValue]]


class AnnouncedWindowJson(TypedDict):
    """A window of a coverage asset's consumer in the report, announced instead of backfilled:
    ``announced`` (or ``restated``) by this backfill, or ``announced before`` / ``being
    announced`` by the follower or a writing task (not announced twice)."""

    dag_id: str
    asset: str
    key: str
    announced: str


class BackfillReportJson(TypedDict):
    """:meth:`BackfillReport.to_json`: what ``airflow-partitions backfill --json`` prints."""

    plan: PlanJson
    dry_run: bool
    stages: list[ReportStageJson]
    created: list[CreatedBackfillJson]
    announced: NotRequired[list[AnnouncedWindowJson]]
    failures: list[str]
    missing: str | None
    ok: bool


class Airflow(Protocol):
    """What the runner needs from Airflow (:class:`.airflow_db.AirflowBackfills`)."""

    def check_dag(self, dag_id: str) -> bool: ...
    def unpause(self, dag_id: str) -> None: ...
    def running_backfill(self, dag_id: str) -> int | None: ...
    def schedule(self, dag_id: str, first: dt.datetime, last: dt.datetime,
                 conf: Mapping[str, object] | None = None) -> list[dt.datetime]: ...
    def create(self, dag_id: str, first: dt.datetime, last: dt.datetime, max_active_runs: int,
               conf: Mapping[str, object] | None = None) -> int: ...
    def progress(self, backfill_id: int) -> Progress: ...
    def failed_tasks(self, dag_id: str, logical_dates: Sequence[dt.datetime]) -> list[str]: ...


@dataclass(frozen=True)
class BackfillOptions:
    """The command's switches (``airflow-partitions backfill --help``)."""

    max_active_runs: int = 10
    restate: bool = False
    unpause: bool = False
    dry_run: bool = False
    poll_interval: float = 10.0
    where: str | None = None  # only these slices of the declared dimensions


@dataclass
class BackfillReport:
    """What happened: the plan, the backfills created, what failed, what is still missing."""

    plan: Plan
    stages: list[tuple[Stage, list[Stretch]]]
    created: list[tuple[Stretch, int]] = field(default_factory=list)
    announced: list[tuple[Stretch, Announced]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    missing: str | None = None
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures and self.missing is None

    def to_json(self) -> BackfillReportJson:
        out: BackfillReportJson = {
            "plan": self.plan.to_json(),
            "dry_run": self.dry_run,
            "stages": [{"period": stage.period,
                        "backfills": [_planned_json(s) for s in parts]}
                       for stage, parts in self.stages],
            "created": [{"dag_id": s.dag_id, "backfill_id": backfill_id,
                         **_conf_field(s.conf_value())}
                        for s, backfill_id in self.created],
            "failures": list(self.failures),
            "missing": self.missing,
            "ok": self.ok,
        }
        if self.announced:  # only with a coverage asset's consumer: other reports unchanged
            out["announced"] = [{"dag_id": s.dag_id, "asset": s.asset or "", "key": a.key,
                                 "announced": a.outcome} for s, a in self.announced]
        return out


def _planned_json(part: Stretch) -> ReportBackfillJson:
    out: ReportBackfillJson = {"dag_id": part.dag_id, "from": part.first.isoformat(),
                               "to": part.last.isoformat(), "runs": part.runs}
    conf = part.conf_value()
    if conf is not None:
        out["conf"] = conf
    if part.asset is not None:
        out["asset"] = part.asset
        out["windows"] = list(part.windows)
    return out


def _conf_field(conf: dict[str, JsonValue] | None) -> ConfFieldJson:
    """``{"conf": ...}`` for a backfill that passes slices, else nothing: the report of a fact
    without dimensions keeps the fields it always had."""
    return {} if conf is None else {"conf": conf}


class BackfillRunner:
    """One backfill of a fact's range; ``say`` receives every progress line."""

    def __init__(self, catalog: Catalog, airflow: Airflow, say: Callable[[str], None], *,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.catalog, self.airflow, self.say = catalog, airflow, say
        self.sleep, self.clock = sleep, clock
        #: When :meth:`run` began: a consumer run queued since then is this backfill's.
        self.began = dt.datetime.now(dt.UTC)

    def run(self, fact: str, start: Instant, end: Instant,
            options: BackfillOptions) -> BackfillReport:
        self.began = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
        report = self.prepare(fact, start, end, options)
        the_plan, staged = report.plan, report.stages
        if options.dry_run or not the_plan.runs:
            return self._verify(report, fact, start, end, options) if not the_plan.runs \
                else report
        for number, (stage, parts) in enumerate(staged, 1):
            self.say(f"stage {number}/{len(staged)}: {stage.period}, {stage.runs} run(s)")
            self._run_stage(parts, options, report)
            if report.failures:
                self.say("stopped: the later stages need what failed")
                return report
        return self._verify(report, fact, start, end, options)

    def prepare(self, fact: str, start: Instant, end: Instant,
                options: BackfillOptions) -> BackfillReport:
        """The plan and its backfills, stage by stage, every refusal checked; nothing created
        (paused DAGs are unpaused unless ``dry_run``). What :meth:`run` starts from, and what
        the Partitions view shows before a user confirms (docs/view.md)."""
        stale = self._stale(fact, start, end) if options.restate else set()
        the_plan = plan(self.catalog, fact, start, end, restate=stale, where=options.where)
        for line in plan_summary(the_plan):
            self.say(line)
        staged = self._check(the_plan, options)
        return BackfillReport(the_plan, staged, dry_run=options.dry_run)

    # -- before anything is created -----------------------------------------------------------

    def _stale(self, fact: str, start: Instant, end: Instant) -> set[StaleItem]:
        """What the restate plan re-runs (:func:`stale_items`), each said."""
        items, lines = stale_items(self.catalog, fact, start, end)
        for line in lines:
            self.say(line)
        return items

    def _check(self, the_plan: Plan, options: BackfillOptions
               ) -> list[tuple[Stage, list[Stretch]]]:
        """Refuse now whatever Airflow would refuse or silently ignore later."""
        runs = [(r.period.name, r.dag_id, r.logical_date, conf_text(r.conf))
                for r in the_plan.runs]
        stages = stages_of(runs)
        dags = sorted({dag for stage in stages for dag in stage.dates})
        on_assets = self._coverage_dags(dags)
        paused = [dag for dag in dags if self.airflow.check_dag(dag)]
        if paused and not options.unpause:
            raise BackfillRefused(
                f"{', '.join(paused)} {'is' if len(paused) == 1 else 'are'} paused: Airflow "
                "would queue the backfill runs and never start them; unpause "
                f"{'it' if len(paused) == 1 else 'them'}, or pass --unpause")
        for dag in (d for d in dags if d not in on_assets):  # no backfill of the others
            running = self.airflow.running_backfill(dag)
            if running is not None and not self._settled(dag, running, options):
                raise BackfillRefused(
                    f"backfill {running} of {dag} is still running, and Airflow runs one "
                    "backfill per DAG: wait for it or cancel it (UI: Browse > Backfills)")
        staged = []
        for stage in stages:
            parts: list[Stretch] = []
            for (dag, conf), dates in stage.groups.items():  # a DAG's groups in plan order
                if dag in on_assets:
                    parts.append(self._announced_stretch(the_plan, stage.period, dag, conf,
                                                         on_assets[dag]))
                    continue
                if conf is None:  # no slices: called as before (no conf argument)
                    schedule = self.airflow.schedule(dag, dates[0], dates[-1])
                else:
                    schedule = self.airflow.schedule(dag, dates[0], dates[-1],
                                                     json.loads(conf))
                parts.extend(stretches(dag, dates, schedule, conf))
            staged.append((stage, parts))
        if not options.dry_run:
            for dag in paused:
                self.airflow.unpause(dag)
                self.say(f"unpaused {dag} (--unpause)")
        for number, (_, parts) in enumerate(staged, 1):
            for part in parts:
                verb = "announce" if part.announces else "backfill"
                self.say(f"  stage {number} {verb}: {part.describe()}")
        return staged

    def _coverage_dags(self, dags: Sequence[str]) -> dict[str, list[str]]:
        """The DAGs scheduled on coverage assets, with the assets' URIs (none when the Airflow
        adapter cannot say: every DAG is then time-scheduled)."""
        if not isinstance(self.airflow, CoverageAirflow):
            return {}
        found = {dag: self.airflow.coverage_assets(dag) for dag in dags}
        return {dag: uris for dag, uris in found.items() if uris}

    def _announced_stretch(self, the_plan: Plan, period: str, dag: str, conf: str | None,
                           uris: list[str]) -> Stretch:
        """The windows one (DAG, conf) group of a stage announces, in plan order."""
        spec = producer_spec(dag, uris, the_plan.fact, period)
        runs = [r for r in the_plan.runs if r.dag_id == dag and r.period.name == period
                and conf_text(r.conf) == conf]
        windows = planned_windows(self.catalog, spec, runs)
        return Stretch(dag, runs[0].logical_date, runs[-1].logical_date, len(windows), conf,
                       spec.uri, tuple(w.key for w in windows))

    def _settled(self, dag: str, backfill_id: int, options: BackfillOptions) -> bool:
        """Whether an open backfill has only finished runs: Airflow marks such a backfill
        complete on its next sweep (every 30 s), so wait for that rather than refuse (a dry
        run only says so)."""
        if self.airflow.progress(backfill_id).unfinished:
            return False
        self.say(f"backfill {backfill_id} of {dag} has finished its runs; Airflow marks it "
                 "complete within 30 s" + ("" if options.dry_run else ": waiting"))
        deadline = self.clock() + SETTLE_SECONDS
        while not options.dry_run and self.airflow.running_backfill(dag) is not None:
            if self.clock() > deadline:
                return False
            self.sleep(min(options.poll_interval, 5.0))
        return True

    # -- running ------------------------------------------------------------------------------

    def _run_stage(self, parts: list[Stretch], options: BackfillOptions,
                   report: BackfillReport) -> None:
        """Each DAG's stretches one after the other (one backfill per DAG), DAGs side by side."""
        queues: dict[str, list[Stretch]] = {}
        for part in parts:
            queues.setdefault(part.dag_id, []).append(part)
        active: dict[str, tuple[Stretch, int | WindowWatch]] = {}
        shown: dict[int | WindowWatch, str] = {}
        last_change = self.clock()
        warned = False
        while queues or active:
            for dag in list(queues) if not report.failures else ():  # a failure: no new ones
                if dag not in active and self._free(dag, report):
                    part = queues[dag].pop(0)
                    if not queues[dag]:
                        del queues[dag]
                    if part.announces:
                        active[dag] = (part, self._announce(part, options, report))
                        continue
                    backfill_id = self._create(part, options)
                    report.created.append((part, backfill_id))
                    active[dag] = (part, backfill_id)
                    self.say(f"{part.describe()}: backfill {backfill_id} created")
            for dag, (part, handle) in list(active.items()):
                if isinstance(handle, WindowWatch):
                    if self._watch(handle, shown, report):
                        last_change = self.clock()
                    if handle.done:
                        del active[dag]
                    continue
                backfill_id = handle
                progress = self.airflow.progress(backfill_id)
                line = progress.line()
                if shown.get(backfill_id) != line:
                    shown[backfill_id] = line
                    last_change = self.clock()
                    self.say(f"{part.dag_id} backfill {backfill_id}: {line}")
                if _done(progress, part):
                    del active[dag]
                    if progress.failed_dates:
                        report.failures.append(self._failure(part, progress))
            if report.failures and not active:
                return
            if not warned and self.clock() - last_change > STALL_SECONDS:
                warned = True
                self.say(f"no run changed state for {STALL_SECONDS / 60:.0f} minutes: is the "
                         "scheduler running? ('make airflow' starts one; "
                         "docs/operations.md)")
            if queues or active:
                self.sleep(options.poll_interval)

    def _announce(self, part: Stretch, options: BackfillOptions, report: BackfillReport
                  ) -> WindowWatch:
        """Announce the stretch's windows that were not announced (each claimed first, so
        never twice), and start watching their runs. A window the catalog cannot cover is not
        announced: a failure of the stage."""
        assert isinstance(self.airflow, CoverageAirflow) and part.asset is not None
        spec = CoverageAssetSpec.from_uri(part.asset)
        assert spec is not None
        tz = spec.check(self.catalog)
        columns = slice_columns(self.catalog, spec.fact)
        announcer = Announcer(self.catalog, self.airflow)
        watch = WindowWatch(part, self.began)
        blocked: list[str] = []
        for key in part.windows:
            start, end, slice_ = spec.window_of(key, tz, columns)
            try:
                done = announcer.announce(spec, Window(key, start, end, slice_),
                                          options.restate)
            except WindowNotCoverable as exc:
                blocked.append(str(exc))
                continue
            watch.windows.append(done)
            report.announced.append((part, done))
        counts = Counter(a.outcome for a in watch.windows)
        said = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        self.say(f"{part.describe()}: {said or 'nothing announced'}")
        if blocked:
            report.failures.append(f"{part.dag_id}: " + "; ".join(blocked[:3]) + (
                f" and {len(blocked) - 3} more" if len(blocked) > 3 else ""))
        return watch

    def _watch(self, watch: WindowWatch, shown: dict[int | WindowWatch, str],
               report: BackfillReport) -> bool:
        """One look at an announced stretch's runs; whether its line changed."""
        assert isinstance(self.airflow, CoverageAirflow)
        progress = watch.poll(self.airflow)
        line = progress.line()
        changed = shown.get(watch) != line
        if changed:
            shown[watch] = line
            self.say(f"{watch.part.dag_id} announced: {line}")
        if progress.done:
            watch.done = True
            tasks = self.airflow.run_failed_tasks(
                watch.part.dag_id, [r.run_id for r in progress.failed]) \
                if progress.failed else []
            failure = watch.failure(progress, tasks)
            if failure:
                report.failures.append(failure)
        return changed

    def _create(self, part: Stretch, options: BackfillOptions) -> int:
        """Create one backfill; its runs' ``dag_run_conf`` names their slices."""
        if part.conf is None:
            return self.airflow.create(part.dag_id, part.first, part.last,
                                       options.max_active_runs)
        return self.airflow.create(part.dag_id, part.first, part.last,
                                   options.max_active_runs, part.conf_value())

    def _free(self, dag: str, report: BackfillReport) -> bool:
        """Whether Airflow has marked the DAG's previous backfill complete (it does so every
        30 s); until then it refuses a new one."""
        return not any(s.dag_id == dag for s, _ in report.created) or \
            self.airflow.running_backfill(dag) is None

    def _failure(self, part: Stretch, progress: Progress) -> str:
        tasks = self.airflow.failed_tasks(part.dag_id, progress.failed_dates)
        dates = ", ".join(d.isoformat() for d in progress.failed_dates[:5])
        more = f" and {len(progress.failed_dates) - 5} more" if len(progress.failed_dates) > 5 \
            else ""
        return (f"{part.dag_id}: {len(progress.failed_dates)} run(s) failed ({dates}{more}); "
                f"failed tasks: {', '.join(tasks) or 'unknown'}")

    def _verify(self, report: BackfillReport, fact: str, start: Instant, end: Instant,
                options: BackfillOptions) -> BackfillReport:
        cover = self.catalog.cover(fact, start, end, fresh_only=options.restate,
                                   where=options.where)
        if cover.coverable:
            self.say(f"done: {status_line(cover)}")
        else:
            report.missing = status_line(cover)
            self.say(f"not coverable yet: {report.missing}")
        return report


def stale_items(catalog: Catalog, fact: str, start: Instant, end: Instant
                ) -> tuple[set[StaleItem], list[str]]:
    """(storage, period, time value) of each stale partition in the range, what a restate
    plan re-runs, and one ``stale: ...`` line each; for a storage with declared dimensions
    also the stale row's slice (only it is re-run). Cost: one :meth:`Catalog.stale`."""
    out: set[StaleItem] = set()
    lines: list[str] = []
    for stale in catalog.stale(fact, start, end):
        part = stale.partition
        sdef = catalog.get_storage(part.storage)
        column = sdef.time_columns[0]
        slice_ = tuple(sorted((d.column, part.values.get(d.column, ""))
                              for d in sdef.dimensions))
        key = (part.storage, part.period.name, part.values[column])
        out.add((*key, slice_) if slice_ else key)
        lines.append(f"stale: {stale.describe()}")
    return out, lines


def _done(progress: Progress, part: Stretch) -> bool:
    """All the stretch's runs finished (or Airflow says the backfill is over, e.g. because it
    skipped a run that was already in flight)."""
    return progress.unfinished == 0 and (progress.total >= part.runs or progress.completed)


def plan_summary(the_plan: Plan) -> list[str]:
    """The plan in a few lines: runs per DAG, and what no producer can fill."""
    lines = [f"plan: {len(the_plan.runs)} run(s) for {the_plan.fact} "
             f"[{the_plan.start.isoformat()}, {the_plan.end.isoformat()})"]
    for dag, runs in the_plan.by_dag().items():
        kinds = sorted({r.kind for r in runs})
        lines.append(f"  {dag}: {len(runs)} run(s) ({', '.join(kinds)})")
    for first, last, why in the_plan.unfillable:
        lines.append(f"  no producer can fill [{first.isoformat()}, {last.isoformat()}): {why}")
    return lines
