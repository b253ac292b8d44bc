"""The answer of the planner: DAG runs in dependency order, what cannot be filled, and the cover
the range would have once the runs are done. Immutable, with a stable JSON form
(``docs/backfill.md``, "Planning") that the backfill command and ``plan --json`` share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, NotRequired, TypedDict

import pendulum

from airflow_partitions.cover import Slice
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.planning.slices import RunConf, run_conf, slices_text

#: The kinds of run: a gap of the range, an input of a planned rollup, a stale partition.
KINDS: Final = ("gap", "input", "restate")


class PlannedRunJson(TypedDict):
    """:meth:`PlannedRun.to_json`: ``slices`` and ``conf`` only for a dimensioned storage."""

    dag_id: str
    logical_date: str
    storage: str
    period: str
    value: str
    start: str
    end: str
    kind: str
    reason: str
    slices: NotRequired[list[dict[str, str]]]
    conf: NotRequired[RunConf | None]


class UnfillableJson(TypedDict):
    """A span no producer can fill, and why."""

    start: str
    end: str
    reason: str


class PartitionRefJson(TypedDict):
    """A partition of the cover once the runs are done."""

    storage: str
    period: str
    value: str


class PlanJson(TypedDict):
    """:meth:`Plan.to_json`, the JSON of ``airflow-partitions plan --json``."""

    fact: str
    start: str
    end: str
    coverable_after: bool
    counts: dict[str, int]
    runs: list[PlannedRunJson]
    unfillable: list[UnfillableJson]
    cover_after: list[PartitionRefJson]


@dataclass(frozen=True)
class PlannedRun:
    """One DAG run that produces one partition, or some slices of it.

    ``slices``: for a storage with declared dimensions, the slices (dimension values) the run
    must produce: those the time partition lacks (or that are stale); empty for a storage
    without dimensions. ``slice_conf`` is the producer's conf key for them (None: one slice
    per run, in ``conf["partition_slice"]``); :attr:`conf` is what the backfill passes to
    Airflow as the run's ``dag_run_conf``.
    """

    dag_id: str
    logical_date: pendulum.DateTime  # UTC, from the producer's rule
    storage: str
    period: UpdatePeriod
    value: str  # the time value of the partition the run produces
    start: pendulum.DateTime  # the partition's bounds, in the fact's zone
    end: pendulum.DateTime
    kind: str  # "gap" | "input" | "restate"
    reason: str  # one readable line
    slices: tuple[Slice, ...] = ()
    slice_conf: str | None = None

    @property
    def conf(self) -> RunConf | None:
        """The ``dag_run_conf`` naming the run's slices (None without slices)."""
        return run_conf(self.slices, self.slice_conf)

    def target(self) -> str:
        """``events_hourly_ingest 2015-01-31T05:00 for region=eu``: the run and what it makes."""
        when = self.logical_date.in_timezone("UTC").strftime("%Y-%m-%dT%H:%M")
        return f"{self.dag_id} {when}" + (f" for {slices_text(self.slices)}"
                                          if self.slices else "")

    def to_json(self) -> PlannedRunJson:
        out: PlannedRunJson = {
            "dag_id": self.dag_id,
            "logical_date": self.logical_date.isoformat(),
            "storage": self.storage,
            "period": self.period.name,
            "value": self.value,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "kind": self.kind,
            "reason": self.reason,
        }
        if self.slices or self.conf is not None:  # a dimensioned storage's run only: other
            out["slices"] = [dict(s) for s in self.slices]  # plans keep the fields they had
            out["conf"] = self.conf
        return out


Span = tuple[pendulum.DateTime, pendulum.DateTime, str]
PartitionRef = tuple[str, str, str]  # (storage, period name, time value)


@dataclass(frozen=True)
class Plan:
    """What to run so that ``[start, end)`` of ``fact`` becomes coverable."""

    fact: str
    start: pendulum.DateTime
    end: pendulum.DateTime
    runs: tuple[PlannedRun, ...]  # dependency order: finer periods first, then by time
    unfillable: tuple[Span, ...]  # spans no producer can fill, with why
    cover_after: tuple[PartitionRef, ...]  # the cover once the runs are done

    def coverable_after(self) -> bool:
        """Whether the range is coverable once every run is done."""
        return not self.unfillable

    def by_dag(self) -> dict[str, list[PlannedRun]]:
        """Runs per DAG id, each list in plan order (what one backfill per DAG triggers)."""
        out: dict[str, list[PlannedRun]] = {}
        for run in self.runs:
            out.setdefault(run.dag_id, []).append(run)
        return out

    def counts(self) -> dict[str, int]:
        """Runs per kind (every kind present, zeros included)."""
        out = dict.fromkeys(KINDS, 0)
        for run in self.runs:
            out[run.kind] += 1
        return out

    def to_json(self) -> PlanJson:
        """The documented JSON (docs/backfill.md): instants are ISO-8601 with their offset."""
        return {
            "fact": self.fact,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "coverable_after": self.coverable_after(),
            "counts": {**self.counts(), "runs": len(self.runs),
                       "cover_after": len(self.cover_after)},
            "runs": [run.to_json() for run in self.runs],
            "unfillable": [
                {"start": t0.isoformat(), "end": t1.isoformat(), "reason": reason}
                for t0, t1, reason in self.unfillable
            ],
            "cover_after": [
                {"storage": storage, "period": period, "value": value}
                for storage, period, value in self.cover_after
            ],
        }
