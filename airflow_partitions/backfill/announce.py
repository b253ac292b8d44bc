"""Producers scheduled on a coverage asset: their windows are announced, not backfilled.

A DAG scheduled with ``PartitionedAssetTimetable(assets=CoverageAsset(...))`` runs once per
window the provider announces, with the window's key as ``dag_run.partition_key``. Airflow
cannot backfill such a DAG (its timetable is not periodic: it has no logical dates to create
runs for), and it should not run one outside the announcements either: the follower and the
writing tasks announce each window once, through markers in the catalog
(:mod:`airflow_partitions.coverage_events.markers`), and a run made beside them would run the
window a second time. So for such a producer the backfill goes through the same markers:

* a window whose marker says it was announced (``emitted``, or ``claimed`` by a live process)
  is not announced again; its run is watched. A restate plan announces it again (restated)
  when the window's inputs moved since that announcement, exactly as the follower would;
* any other window (no marker, a ``known`` one: coverable before the asset was followed, or a
  claim whose process died) is claimed by check-and-put, then announced: one partitioned asset
  event with the window's key;
* then the runs of the DAG with those keys are watched until each has finished.

Pure apart from the catalog: Airflow is reached through :class:`CoverageAirflow`.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, runtime_checkable

import pendulum

from airflow_partitions.backfill.stages import Stretch
from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import (
    CoverageAssetSpec,
    CoverageEmitter,
    EmissionExtraJson,
    EmissionMarkers,
    Marker,
    Window,
    WindowState,
    restatement_of,
    window_state,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.json_value import JsonValue
from airflow_partitions.planning import PlannedRun

#: How long after its announcement a window with no run of the producer DAG counts as lost
#: to it (the scheduler makes a consumer's run within seconds of the event; Airflow makes none
#: for a consumer paused at that moment), so the backfill starts that DAG's run by hand.
LOST_AFTER: Final = dt.timedelta(seconds=30)
#: Run states after which a run will not change by itself.
FINISHED: Final = frozenset({"success", "failed"})

#: What the backfill did with one window: posted its event (``announced``, ``restated``), or
#: left it to whoever announced it (``announced before``, ``being announced``).
Outcome = Literal["announced", "restated", "announced before", "being announced"]


class WindowNotCoverable(InvalidInput):
    """A planned window the catalog cannot cover yet: announcing it would run its consumer on
    missing inputs."""


@dataclass(frozen=True)
class PartitionRun:
    """One run of a consumer DAG: its partition key, state, and when it was last queued
    (created, or cleared to run again)."""

    run_id: str
    partition_key: str
    state: str
    queued: dt.datetime


@runtime_checkable
class CoverageAirflow(Protocol):
    """What announcing needs from Airflow, beside the backfill calls
    (:class:`.airflow_db.AirflowBackfills`, :class:`.rest_api.RestBackfills`). An adapter
    without these methods treats every producer as time-scheduled."""

    def coverage_assets(self, dag_id: str) -> list[str]:
        """The coverage asset URIs the DAG's partitioned-asset schedule names; ``[]`` for a
        DAG scheduled any other way."""
        ...

    def post_event(self, uri: str, key: str, extra: EmissionExtraJson) -> None:
        """One partitioned asset event of the asset ``uri`` with ``partition_key=key``."""
        ...

    def partition_runs(self, dag_id: str, keys: Sequence[str]) -> list[PartitionRun]:
        """Every run of the DAG whose partition key is one of ``keys``."""
        ...

    def trigger_partition_run(self, dag_id: str, key: str) -> None:
        """Start one run of the DAG for ``key`` by hand."""
        ...

    def run_failed_tasks(self, dag_id: str, run_ids: Sequence[str]) -> list[str]:
        """``task_id`` of the failed task instances of those runs."""
        ...


def asset_uris(expression: JsonValue) -> Iterator[str]:
    """Every asset URI in a DAG's serialized asset expression (``{"all": [{"asset": {"uri":
    ...}}, ...]}`` and its kin), depth first.

    >>> list(asset_uris({"any": [{"asset": {"uri": "a", "name": "n"}}, {"asset": {"uri": "b"}}]}))
    ['a', 'b']
    """
    if isinstance(expression, Mapping):
        uri = expression.get("uri")
        if isinstance(uri, str):
            yield uri
        for key, value in expression.items():
            if key != "uri":
                yield from asset_uris(value)
    elif isinstance(expression, Sequence) and not isinstance(expression, str):
        for item in expression:
            yield from asset_uris(item)


def coverage_uris(timetable_partitioned: bool, timetable_periodic: bool,
                  expression: JsonValue) -> list[str]:
    """The coverage asset URIs of a DAG as Airflow describes it: only a partitioned schedule
    that is not periodic (an asset-triggered one) is scheduled on its assets."""
    if not timetable_partitioned or timetable_periodic:
        return []
    return [uri for uri in asset_uris(expression) if CoverageAssetSpec.from_uri(uri) is not None]


def producer_spec(dag_id: str, uris: Sequence[str], fact: str, period: str
                  ) -> CoverageAssetSpec:
    """The coverage asset whose windows a producer DAG's planned runs are: the one of the
    plan's fact and the run's period. :class:`InvalidInput` when the DAG names none or several
    such assets (no window key can be derived from a planned run then)."""
    specs = [s for uri in uris if (s := CoverageAssetSpec.from_uri(uri)) is not None]
    fitting = [s for s in specs if s.fact == fact and s.period.name == period]
    if len(fitting) == 1:
        return fitting[0]
    names = ", ".join(s.name for s in specs)
    raise InvalidInput(
        f"{dag_id} is scheduled on the coverage asset(s) {names}, but it produces {fact} "
        f"{period} partitions: a backfill announces the windows of exactly one coverage asset "
        f"of {fact} {period} per producer; schedule it on one")


def planned_windows(catalog: Catalog, spec: CoverageAssetSpec, runs: Sequence[PlannedRun]
                    ) -> list[Window]:
    """The windows a producer's planned runs stand for: the window of a run is the partition it
    produces (with the default logical-date rule, the window starts at the run's logical
    date); per slice (``per_slice`` assets) one window per slice the run names. In plan order,
    each once. :class:`InvalidInput` when a partition does not start a window."""
    tz = spec.check(catalog)
    out: dict[str, Window] = {}
    for run in runs:
        start = pendulum.instance(run.start).in_timezone(tz)
        if not spec.period.is_aligned(start, tz):
            raise InvalidInput(
                f"{run.dag_id} produces {run.storage} {run.period.name} {run.value}, which "
                f"does not start a {spec.period.name} window of {spec.name} in {tz}")
        end = spec.period.next(start, tz)
        for slice_ in (run.slices if spec.per_slice and run.slices else ((),)):
            key = spec.key(start, tz, slice_)
            out.setdefault(key, Window(key, start, end, slice_))
    return list(out.values())


@dataclass(frozen=True)
class Announced:
    """One window as the backfill left it: its key, what was done, and when its marker says
    it was announced (for ``announced before``)."""

    key: str
    outcome: Outcome
    at: str


class Announcer:
    """Announces planned windows of one coverage asset through the catalog's markers."""

    def __init__(self, catalog: Catalog, airflow: CoverageAirflow, *,
                 clock: Callable[[], dt.datetime] = lambda: pendulum.now("UTC")) -> None:
        self.catalog, self.airflow, self.clock = catalog, airflow, clock
        self.markers = EmissionMarkers(catalog.rows.kv)

    def announce(self, spec: CoverageAssetSpec, window: Window, restate: bool) -> Announced:
        """Announce ``window`` unless it was (or is being) announced; with ``restate``, also
        when its inputs moved since its announcement (restated, the next version).
        :class:`WindowNotCoverable` when it would be announced but cannot be covered now.

        An asset nobody follows yet is followed first, as the follower would
        (:meth:`CoverageEmitter.follow`: the windows coverable now are recorded as known), so
        the follower starting later neither announces the past nor overwrites this
        backfill's markers."""
        if self.markers.seen(spec.uri) is None:
            CoverageEmitter(self.catalog, self.markers, clock=self.clock).follow(spec)
        marker = self.markers.get(spec.uri, window.key)
        status = None if marker is None else marker.doc["status"]
        state: WindowState | None = None
        if marker is not None and status == "claimed" and \
                not marker.claim_expired(self.clock()):
            return Announced(window.key, "being announced", marker.doc["at"])
        if marker is not None and status == "emitted":
            if not restate:
                return Announced(window.key, "announced before", marker.doc["at"])
            state = self._state(spec, window)
            if not restatement_of(marker, state):  # the follower announced this version
                return Announced(window.key, "announced before", marker.doc["at"])
            restated, version = True, marker.doc["version"] + 1
        elif marker is not None and status == "claimed":  # its claimer died before posting
            restated, version = marker.doc["restated"], max(marker.doc["version"], 1)
        else:  # no marker, or known: coverable before the asset was followed
            restated, version = False, 1
        state = state or self._state(spec, window)
        return self._post(spec, window, marker, state, restated, version)

    def _state(self, spec: CoverageAssetSpec, window: Window) -> WindowState:
        state = window_state(self.catalog, spec, window)
        if not state.coverable:
            raise WindowNotCoverable(
                f"{spec.name} window {window.key} is not coverable yet ({state.lacks}): not "
                "announced, its consumer would read missing inputs")
        return state

    def _post(self, spec: CoverageAssetSpec, window: Window, marker: Marker | None,
              state: WindowState, restated: bool, version: int) -> Announced:
        emitter = CoverageEmitter(self.catalog, self.markers, clock=self.clock)
        emission = emitter.announce(
            spec, window, marker, state,
            lambda e: self.airflow.post_event(spec.uri, window.key, e.extra()),
            restated=restated, version=version)
        if emission is None:  # another process claimed it first: it announces the window
            return Announced(window.key, "being announced", self.clock().isoformat())
        return Announced(window.key, "restated" if restated else "announced",
                         self.clock().isoformat())


@dataclass(frozen=True)
class WatchProgress:
    """Where the runs of an announced stretch stand, by window key."""

    states: dict[str, int]
    done: bool
    failed: tuple[PartitionRun, ...]
    past: tuple[tuple[Announced, PartitionRun], ...]

    def line(self) -> str:
        """``1/2 runs finished (running 1, success 1)``, as a backfill's line."""
        finished = sum(n for s, n in self.states.items() if s in FINISHED)
        parts = ", ".join(f"{state} {n}" for state, n in sorted(self.states.items()))
        return f"{finished}/{sum(self.states.values())} runs finished ({parts})"


@dataclass(eq=False)
class WindowWatch:
    """The consumer runs of one announced stretch: for each window, the runs with its key
    queued since ``since`` (when the backfill began), or still unfinished."""

    part: Stretch
    since: dt.datetime
    windows: list[Announced] = field(default_factory=list)
    done: bool = False
    #: Keys whose run this backfill started by hand (see :meth:`poll`).
    triggered: set[str] = field(default_factory=set)

    def poll(self, airflow: CoverageAirflow) -> WatchProgress:
        """One look at the runs (one call). A window announced over :data:`LOST_AFTER` ago
        with no run of this DAG at all was announced while the DAG could not take it: its run
        is started by hand, once. A window announced before the backfill began
        whose only runs finished before it counts as done when its last run succeeded; one
        whose last run failed is reported in ``past``: it was announced once and is not
        announced again (clearing that run in Airflow runs it again)."""
        if not self.windows:
            return WatchProgress({}, True, (), ())
        now = dt.datetime.now(dt.UTC)
        runs = airflow.partition_runs(self.part.dag_id, [w.key for w in self.windows])
        by_key: dict[str, list[PartitionRun]] = {}
        for run in runs:
            by_key.setdefault(run.partition_key, []).append(run)
        states: Counter[str] = Counter()
        failed: list[PartitionRun] = []
        past: list[tuple[Announced, PartitionRun]] = []
        for window in self.windows:
            mine = by_key.get(window.key, [])
            current = [r for r in mine if r.queued >= self.since or r.state not in FINISHED]
            if current:
                latest = max(current, key=lambda r: (r.state not in FINISHED, r.queued))
                states[latest.state] += 1
                if latest.state == "failed":
                    failed.append(latest)
            elif mine and window.outcome == "announced before" and \
                    _before(window.at, self.since):
                latest = max(mine, key=lambda r: r.queued)
                if latest.state == "success":  # ran once, as announced: done
                    states["success"] += 1
                else:
                    states[f"ran before ({latest.state})"] += 1
                    past.append((window, latest))
            elif not mine and window.outcome == "announced before" and \
                    _before(window.at, now - LOST_AFTER):
                # announced while the DAG could not take it (Airflow queues no run for a
                # paused consumer): this DAG alone runs it, once
                if window.key not in self.triggered:
                    airflow.trigger_partition_run(self.part.dag_id, window.key)
                    self.triggered.add(window.key)
                states["waiting"] += 1
            else:  # the scheduler has not created its run yet
                states["waiting"] += 1
        unfinished = sum(n for s, n in states.items()
                         if s not in FINISHED and not s.startswith("ran before"))
        return WatchProgress(dict(states), unfinished == 0, tuple(failed), tuple(past))

    def failure(self, progress: WatchProgress, tasks: Sequence[str]) -> str | None:
        """The report's failure line, or None when every run succeeded."""
        lines = []
        if progress.failed:
            keys = ", ".join(r.partition_key for r in progress.failed[:5])
            more = f" and {len(progress.failed) - 5} more" if len(progress.failed) > 5 else ""
            lines.append(f"{self.part.dag_id}: {len(progress.failed)} run(s) failed "
                         f"({keys}{more}); failed tasks: {', '.join(tasks) or 'unknown'}")
        for window, run in progress.past:
            lines.append(
                f"{self.part.dag_id}: window {window.key} was announced before this backfill "
                f"({window.at}) and its run {run.run_id} ended {run.state}; a window is "
                "announced once: clear that run in Airflow to run it again")
        return "; ".join(lines) or None


def _before(at: str, since: dt.datetime) -> bool:
    try:
        return dt.datetime.fromisoformat(at) < since
    except ValueError:
        return True
