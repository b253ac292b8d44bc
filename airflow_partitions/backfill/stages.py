"""Which Airflow backfills a plan needs, and in which order. Pure: no Airflow import.

A plan lists producer runs finer periods first. Runs of one period form a *stage*: every
stage waits for the one before it (a daily rollup reads the hours the hourly stage produces).
Inside a stage, each DAG's logical dates become backfills over contiguous stretches of the
DAG's own schedule: Airflow creates a run for every schedule point between a backfill's
``from_date`` and ``to_date``, so a stretch may only span dates the plan wants.

Slices: a backfill carries one ``dag_run_conf`` for all its runs, so runs that name different
slices (different confs) of one DAG are different backfills: each (DAG, conf) *group* gets its
own stretches, and the runner runs a DAG's backfills one after the other (Airflow allows one
per DAG), its groups in the order they first appear in the plan.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from airflow_partitions.errors import InvalidInput
from airflow_partitions.json_value import JsonValue


@dataclass(frozen=True)
class Stretch:
    """One backfill: ``dag_id`` from ``first`` to ``last`` (both included), ``runs`` runs,
    each with the run conf ``conf`` (canonical JSON text, None for none).

    For a producer scheduled on a coverage asset (``asset``, its URI) the stretch is not a
    backfill: its ``windows`` (partition keys) are announced, one consumer run each
    (:mod:`.announce`)."""

    dag_id: str
    first: dt.datetime
    last: dt.datetime
    runs: int
    conf: str | None = None
    asset: str | None = None
    windows: tuple[str, ...] = ()

    @property
    def announces(self) -> bool:
        """Whether the stretch is announced on a coverage asset rather than backfilled."""
        return self.asset is not None

    def conf_value(self) -> dict[str, JsonValue] | None:
        """The ``dag_run_conf`` to give Airflow."""
        return None if self.conf is None else dict(json.loads(self.conf))

    def describe(self) -> str:
        """``events_daily_rollup 2015-01-02T00:00Z..2015-01-03T00:00Z (2 runs)``, then the
        conf when there is one (``conf {"regions": ["eu"]}``)."""
        span = _short(self.first) if self.first == self.last else \
            f"{_short(self.first)}..{_short(self.last)}"
        return f"{self.dag_id} {span} ({self.runs} run{'s' if self.runs != 1 else ''})" + (
            f" conf {self.conf}" if self.conf is not None else "") + (
            f" on {self.asset}" if self.asset is not None else "")


@dataclass(frozen=True)
class Stage:
    """The runs of one period: for each DAG, its logical dates in time order; ``groups``
    splits them per (DAG, conf), in the order the plan first names each group."""

    period: str
    dates: dict[str, tuple[dt.datetime, ...]]
    groups: dict[tuple[str, str | None], tuple[dt.datetime, ...]] = field(default_factory=dict)

    @property
    def runs(self) -> int:
        """Runs to create: per (DAG, conf) group (one date may have a run per slice)."""
        return sum(len(d) for d in (self.groups or self.dates).values())


def stages_of(runs: Iterable[tuple[str, str, dt.datetime] | tuple[str, str, dt.datetime,
                                                                      str | None]]
              ) -> list[Stage]:
    """Group ``(period, dag_id, logical_date[, conf text])`` runs, given in dependency order,
    into stages.

    >>> from datetime import datetime, UTC
    >>> day = datetime(2015, 1, 2, tzinfo=UTC)
    >>> [(s.period, s.runs) for s in stages_of([("HOURLY", "ingest", day),
    ...     ("DAILY", "rollup", day), ("HOURLY", "ingest", day)])]
    Traceback (most recent call last):
    ...
    airflow_partitions.errors.InvalidInput: the plan lists HOURLY runs after DAILY runs; ...
    >>> [(s.period, s.runs) for s in stages_of([("HOURLY", "ingest", day),
    ...     ("DAILY", "rollup", day)])]
    [('HOURLY', 1), ('DAILY', 1)]
    """
    out: list[Stage] = []
    done: set[str] = set()
    for run in runs:
        period, dag_id, logical_date = run[:3]
        conf = run[3] if len(run) == 4 else None
        if not out or out[-1].period != period:
            if period in done:
                raise InvalidInput(
                    f"the plan lists {period} runs after {out[-1].period} runs; a plan must be "
                    "in dependency order (finer periods first)")
            done.add(period)
            out.append(Stage(period, {}))
        dates, groups = out[-1].dates, out[-1].groups
        dates[dag_id] = (*dates.get(dag_id, ()), logical_date)
        groups[(dag_id, conf)] = (*groups.get((dag_id, conf), ()), logical_date)
    return [Stage(s.period, {d: tuple(sorted(set(v))) for d, v in s.dates.items()},
                  {g: tuple(sorted(set(v))) for g, v in s.groups.items()})
            for s in out]


def stretches(dag_id: str, wanted: Sequence[dt.datetime],
              schedule: Sequence[dt.datetime], conf: str | None = None) -> list[Stretch]:
    """The fewest backfills of ``dag_id`` that create exactly the ``wanted`` runs (each with
    run conf ``conf``).

    ``schedule`` is every logical date Airflow would create between the first and the last
    wanted date, in order. A stretch grows while the next schedule point is wanted, and ends
    at one that is not (that run is not needed, so no backfill may span it). O(n log n).

    >>> from datetime import datetime, timedelta, UTC
    >>> h = [datetime(2015, 1, 2, tzinfo=UTC) + timedelta(hours=i) for i in range(6)]
    >>> [s.describe() for s in stretches("ingest", [h[0], h[1], h[2], h[4]], h[:5])]
    ['ingest 2015-01-02T00:00Z..2015-01-02T02:00Z (3 runs)', 'ingest 2015-01-02T04:00Z (1 run)']
    """
    points = sorted(set(schedule))
    missing = sorted(set(wanted) - set(points))
    if missing:
        raise OffSchedule(dag_id, missing)
    want = set(wanted)
    out: list[Stretch] = []
    current: list[dt.datetime] = []
    for point in points:
        if point in want:
            current.append(point)
        elif current:
            out.append(Stretch(dag_id, current[0], current[-1], len(current), conf))
            current = []
    if current:
        out.append(Stretch(dag_id, current[0], current[-1], len(current), conf))
    return out


class OffSchedule(InvalidInput):
    """A planned logical date is not one Airflow would create a backfill run for."""

    def __init__(self, dag_id: str, dates: Sequence[dt.datetime]):
        self.dag_id, self.dates = dag_id, list(dates)
        more = f" and {len(dates) - 1} more" if len(dates) > 1 else ""
        super().__init__(
            f"Airflow would not create a backfill run of {dag_id} at {_short(dates[0])}{more}: "
            "the date is not on the DAG's schedule, lies in the future, or a run there is "
            "still queued or running. Check the producer's logical-date rule "
            "('airflow-partitions storage show') against the DAG's schedule")

    def __reduce__(self) -> tuple[object, ...]:
        return type(self), (self.dag_id, self.dates)


def _short(instant: dt.datetime) -> str:
    """``2015-01-02T05:00Z``: minutes are the finest grain a producer has."""
    return instant.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%MZ")
