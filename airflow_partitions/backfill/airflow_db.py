"""Airflow's side of a backfill: its metadata DB, read and written the way ``airflow backfill
create`` does (that command, too, calls Airflow's private ``_create_backfill``, which
:mod:`.airflow_private` wraps).

Why not the REST API: it needs a user's credentials, and the command runs where Airflow's
own CLI runs, next to the metadata DB. Why not ``airflow backfill create`` in a subprocess:
its refusals (a backfill already running, a date off the schedule) then arrive as text, and
each call pays Airflow's start-up. This module is the only one of the package that knows
Airflow's backfill tables.

A metadata DB that is briefly unreachable (PostgreSQL restarting: connection refused, the
server closing connections, "the database system is starting up") is ridden out: each read,
the unpause and the backfill's creation are tried again after pauses of about 1, 2, 4, 8, then
15 s, each said in a progress line, for up to two minutes per call
(:mod:`airflow_partitions.outages`), then
the last error (:class:`MetadataDbUnreachable`). A creation cut off half way adopts the backfill
Airflow committed. Posting a coverage asset's event and triggering a run are not tried again:
either could then happen twice.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import getpass
import logging
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from sqlalchemy import func, select, update

from airflow_partitions.backfill.airflow_private import create_backfill, dry_run_dates
from airflow_partitions.backfill.announce import PartitionRun, coverage_uris
from airflow_partitions.defaults import airflow_home
from airflow_partitions.errors import InvalidInput, PartitionsError
from airflow_partitions.outages import OUTAGE_TIMEOUT, OutageOutlasted, outage_pauses, ride_out

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from airflow_partitions.coverage_events import EmissionExtraJson

#: Retries of a backfill creation that the metadata DB refused with "database is locked".
LOCK_RETRIES = 3
#: What PostgreSQL and its driver say while the server is down, restarting or cutting
#: connections (an error whose text holds none of these is not ridden out).
UNREACHABLE = ("connection refused", "could not connect to server", "connection to server at",
               "server closed the connection unexpectedly", "terminating connection due to "
               "administrator command", "the database system is starting up", "the database "
               "system is shutting down", "the database system is in recovery mode",
               "connection reset by peer", "ssl syscall error: eof detected",
               "connection already closed", "no connection to the server")


def unreachable(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an error it came from, says the metadata DB cannot be reached now.

    >>> unreachable(RuntimeError('connection to server at "127.0.0.1", port 5432 failed: '
    ...                          'Connection refused'))
    True
    >>> unreachable(RuntimeError("no such table: dag"))
    False
    """
    seen = 0
    while exc is not None and seen < 10:
        text = str(exc).lower()
        if any(marker in text for marker in UNREACHABLE):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


class MetadataDbUnreachable(PartitionsError):
    """The metadata DB stayed unreachable for longer than the command rides out."""


P = ParamSpec("P")
R = TypeVar("R")


def _riding_out(method: Callable[Concatenate[AirflowBackfills, P], R]
                ) -> Callable[Concatenate[AirflowBackfills, P], R]:
    """``method`` tried again while the metadata DB is unreachable (:meth:`AirflowBackfills.
    ride_out`); a plain wrapper, so each call site stays a plain method call."""
    def wrapper(self: AirflowBackfills, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.ride_out(method.__name__, lambda: method(self, *args, **kwargs))
    wrapper.__name__, wrapper.__doc__ = method.__name__, method.__doc__
    return wrapper


def _locked(exc: BaseException) -> bool:
    """Whether the cause of ``exc`` is sqlite's transient "database is locked"."""
    while exc is not None:
        if "database is locked" in str(exc):
            return True
        exc = exc.__cause__  # type: ignore[assignment]
    return False


class MetadataDbMissing(InvalidInput):
    """``AIRFLOW_HOME`` has no migrated metadata DB: refused before a dry run prints its plan,
    instead of ``unexpected OperationalError ... no such table: dag`` after it."""


def _no_tables(exc: BaseException) -> bool:
    text = str(exc)
    return "no such table" in text or ("relation" in text and "does not exist" in text)


@contextlib.contextmanager
def _session() -> Iterator[Session]:
    """Airflow's session on its metadata DB; a DB without Airflow's tables is one typed line."""
    from airflow.utils.session import create_session
    from sqlalchemy.exc import OperationalError, ProgrammingError

    try:
        with create_session() as session:
            yield session
    except (OperationalError, ProgrammingError) as exc:
        if not _no_tables(exc):
            raise
        raise MetadataDbMissing(
            f"the Airflow metadata DB of AIRFLOW_HOME={airflow_home()} has no Airflow tables "
            "(no such table); run 'airflow db migrate' there, or point AIRFLOW_HOME at the "
            "home of the Airflow that runs the producer DAGs") from None


class BackfillRefused(InvalidInput):
    """Airflow would do nothing (paused DAG, backfill running) or refuses the backfill."""


class UnknownBackfill(BackfillRefused):
    """Airflow no longer knows a backfill it once created: it removes one whose runs it could
    not create (its database was locked), sometimes after answering with its id."""


class UnknownDag(InvalidInput):
    """The producer names a DAG Airflow does not know (not parsed yet, or a typo)."""


@dataclass(frozen=True)
class Progress:
    """Where one backfill stands: its runs by state, and whether Airflow marked it done."""

    backfill_id: int
    states: dict[str, int]
    completed: bool
    failed_dates: tuple[dt.datetime, ...]

    @property
    def total(self) -> int:
        return sum(self.states.values())

    @property
    def finished(self) -> int:
        return self.states.get("success", 0) + self.states.get("failed", 0)

    @property
    def unfinished(self) -> int:
        return self.total - self.finished

    def line(self) -> str:
        """``10/24 runs finished (success 10, running 2, queued 12)``."""
        parts = ", ".join(f"{state} {n}" for state, n in sorted(self.states.items()))
        return f"{self.finished}/{self.total} runs finished ({parts or 'no runs yet'})"


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class AirflowBackfills:
    """Create and watch backfills in the metadata DB of the current ``AIRFLOW_HOME``.

    ``say`` gets a line for each pause while the metadata DB is unreachable (the command's
    progress lines); ``outage_timeout`` is how long one call keeps trying (0: not at all)."""

    def __init__(self, say: Callable[[str], None] = _to_stderr,
                 outage_timeout: float = OUTAGE_TIMEOUT,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic,
                 jitter: Callable[[], float] = random.random) -> None:
        self.say, self.outage_timeout, self.sleep, self.clock = say, outage_timeout, sleep, clock
        self.jitter = jitter

    def ride_out(self, what: str, attempt: Callable[[], R]) -> R:
        """``attempt()``, again after a pause each time the metadata DB is unreachable, for up
        to ``outage_timeout`` seconds (:mod:`airflow_partitions.outages`: pauses of about 1,
        2, 4, 8, then 15 s), then :class:`MetadataDbUnreachable` with the last error."""
        waited = False

        def on_pause(exc: Exception, _attempts: int, elapsed: float, pause: float) -> None:
            nonlocal waited
            waited = True
            self.say(f"Airflow's metadata DB is unreachable ({what}): trying again in "
                     f"{pause:.0f} s, for {self.outage_timeout - elapsed:.0f} s more: "
                     f"{_first_line(exc)}")
            _dispose_engine()

        try:
            result = ride_out(attempt, is_outage=unreachable, timeout=self.outage_timeout,
                              on_pause=on_pause, sleep=self.sleep, clock=self.clock,
                              pauses=outage_pauses(self.jitter))
        except OutageOutlasted as outlasted:
            raise MetadataDbUnreachable(
                f"Airflow's metadata DB stayed unreachable for {self.outage_timeout:.0f} s "
                f"({what}); is it running? last error: {_first_line(outlasted.last)}"
            ) from outlasted.last
        if waited:
            self.say(f"Airflow's metadata DB answers again ({what})")
        return result

    @_riding_out
    def check_dag(self, dag_id: str) -> bool:
        """Whether the DAG is paused; :class:`UnknownDag` when Airflow does not know it."""
        from airflow.models import DagModel

        with _session() as session:
            model = session.scalar(select(DagModel).where(DagModel.dag_id == dag_id))
            if model is None:
                raise UnknownDag(
                    f"Airflow knows no DAG {dag_id!r}: is it in the DAG folder, and has the "
                    "dag-processor parsed it? ('airflow dags list' shows the DAGs it knows)")
            return bool(model.is_paused)

    @_riding_out
    def unpause(self, dag_id: str) -> None:
        from airflow.models import DagModel

        with _session() as session:
            session.execute(update(DagModel).where(DagModel.dag_id == dag_id)
                            .values(is_paused=False))

    @_riding_out
    def running_backfill(self, dag_id: str) -> int | None:
        """The id of the DAG's unfinished backfill, if any (Airflow allows one per DAG)."""
        from airflow.models.backfill import Backfill

        with _session() as session:
            found = session.scalar(select(func.min(Backfill.id)).where(
                Backfill.dag_id == dag_id, Backfill.completed_at.is_(None)))
            return int(found) if found is not None else None

    @_riding_out
    def schedule(self, dag_id: str, first: dt.datetime, last: dt.datetime,
                 conf: Mapping[str, object] | None = None) -> list[dt.datetime]:
        """Every logical date a backfill over ``[first, last]`` would create a run for,
        re-running completed runs (Airflow's own dry run, which also validates ``conf``
        against the DAG's params)."""
        try:
            with _session() as session:
                return dry_run_dates(dag_id, first, last, session, conf)
        except MetadataDbMissing:
            raise
        except Exception as exc:  # Airflow's refusals are plain AirflowExceptions
            if unreachable(exc):
                raise
            raise BackfillRefused(f"Airflow refuses a backfill of {dag_id}: {exc}") from exc

    def create(self, dag_id: str, first: dt.datetime, last: dt.datetime,
               max_active_runs: int, conf: Mapping[str, object] | None = None) -> int:
        """:meth:`_create_once`, riding out an unreachable metadata DB: a try cut off after
        Airflow committed the backfill adopts it rather than being refused by it."""
        since = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
        tries = 0

        def attempt() -> int:
            nonlocal tries
            tries += 1
            left = self.created_since(dag_id, since) if tries > 1 else None
            return left if left is not None else \
                self._create_once(dag_id, first, last, max_active_runs, conf)

        return self.ride_out(f"creating the backfill of {dag_id}", attempt)

    def _create_once(self, dag_id: str, first: dt.datetime, last: dt.datetime,
                     max_active_runs: int, conf: Mapping[str, object] | None = None) -> int:
        """Create the backfill (re-running completed runs: the plan wants each of them), each
        run with ``conf`` as its ``dag_run_conf`` (the slices it must produce).

        A sqlite metadata DB under load can answer "database is locked" half-way: Airflow
        commits the backfill row before its runs. Then the backfill it left is adopted (the
        final cover check names any day it lacks); with none left, the call is retried.
        """
        for attempt in range(LOCK_RETRIES + 1):
            started = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
            try:
                with _quiet("airflow.models.backfill", "airflow.serialization.definitions.dag"):
                    return self._create(dag_id, first, last, max_active_runs, conf)
            except BackfillRefused as exc:
                if unreachable(exc):
                    raise  # ridden out by create()
                if not _locked(exc) or attempt == LOCK_RETRIES:
                    raise
                left = self.created_since(dag_id, started)
                if left is not None:
                    return left
                time.sleep(2.0 * (attempt + 1))
        raise AssertionError("unreachable")  # the loop returns or raises

    def created_since(self, dag_id: str, since: dt.datetime) -> int | None:
        """The id of an unfinished backfill of the DAG created after ``since``, if any."""
        from airflow.models.backfill import Backfill

        with _session() as session:
            found = session.scalar(select(func.max(Backfill.id)).where(
                Backfill.dag_id == dag_id, Backfill.completed_at.is_(None),
                Backfill.created_at >= since))
            return int(found) if found is not None else None

    def _create(self, dag_id: str, first: dt.datetime, last: dt.datetime,
                max_active_runs: int, conf: Mapping[str, object] | None = None) -> int:
        from airflow.models.backfill import AlreadyRunningBackfill

        try:
            backfill = create_backfill(dag_id, first, last, max_active_runs=max_active_runs,
                                       triggering_user_name=_user(), conf=conf)
        except AlreadyRunningBackfill as exc:
            raise BackfillRefused(
                f"another backfill of {dag_id} is running, and Airflow runs one per DAG: "
                "wait for it, or cancel it in the UI (Browse > Backfills)") from exc
        except Exception as exc:
            raise BackfillRefused(f"Airflow refused a backfill of {dag_id}: {exc}") from exc
        return int(backfill.id)

    @_riding_out
    def progress(self, backfill_id: int) -> Progress:
        from airflow.models import DagRun
        from airflow.models.backfill import Backfill

        with _session() as session:
            backfill = session.get(Backfill, backfill_id)
            if backfill is None:
                raise PartitionsError(f"backfill {backfill_id} disappeared from Airflow")
            rows = session.execute(select(DagRun.state, DagRun.logical_date)
                                   .where(DagRun.backfill_id == backfill_id)).all()
            states = Counter(str(state) for state, _ in rows)
            failed = tuple(sorted(d for s, d in rows if str(s) == "failed" and d is not None))
            return Progress(backfill_id, dict(states), backfill.completed_at is not None, failed)

    # -- producers scheduled on a coverage asset (:mod:`.announce`) ---------------------------

    @_riding_out
    def coverage_assets(self, dag_id: str) -> list[str]:
        """The coverage asset URIs the DAG is scheduled on: its ``DagModel`` says whether its
        timetable is partitioned and asset-triggered, and holds its asset expression."""
        from airflow.models import DagModel

        with _session() as session:
            row = session.execute(
                select(DagModel.timetable_partitioned, DagModel.timetable_periodic,
                       DagModel.asset_expression).where(DagModel.dag_id == dag_id)).first()
        if row is None:
            return []
        return coverage_uris(bool(row[0]), bool(row[1]), row[2])

    def post_event(self, uri: str, key: str, extra: EmissionExtraJson) -> None:
        """One partitioned event of the asset ``uri``, through Airflow's own asset manager (what
        ``POST /api/v2/assets/events`` calls): the event, and the consumers' queued runs."""
        from airflow.assets.manager import asset_manager
        from airflow.models.asset import AssetModel

        with _session() as session:
            model = session.scalar(select(AssetModel).where(AssetModel.uri == uri)
                                   .order_by(AssetModel.id.desc()).limit(1))
            if model is None:
                raise BackfillRefused(f"Airflow knows no asset {uri}: has the dag-processor "
                                      "parsed its consumer DAG?")
            event = asset_manager.register_asset_change(
                asset=model, extra=dict(extra), partition_key=key, source_is_api=True,
                session=session)
            if event is None:
                raise BackfillRefused(f"Airflow recorded no event of {uri} (is the asset "
                                      "still scheduled by a DAG?)")

    @_riding_out
    def partition_runs(self, dag_id: str, keys: Sequence[str]) -> list[PartitionRun]:
        from airflow.models import DagRun

        with _session() as session:
            rows = session.execute(
                select(DagRun.run_id, DagRun.partition_key, DagRun.state, DagRun.queued_at,
                       DagRun.created_at, DagRun.run_after)
                .where(DagRun.dag_id == dag_id, DagRun.partition_key.in_(list(keys)))).all()
        return [PartitionRun(str(run_id), str(key), str(state), queued or created or after)
                for run_id, key, state, queued, created, after in rows]

    def trigger_partition_run(self, dag_id: str, key: str) -> None:
        """One run of the DAG for ``key``, as ``airflow dags trigger`` starts one (no logical
        date, the partition key set)."""
        from airflow.api.common.trigger_dag import trigger_dag
        from airflow.utils.types import DagRunTriggeredByType

        with _session() as session:
            trigger_dag(dag_id, triggered_by=DagRunTriggeredByType.CLI, logical_date=None,
                        partition_key=key, triggering_user_name=_user(), session=session)

    @_riding_out
    def run_failed_tasks(self, dag_id: str, run_ids: Sequence[str]) -> list[str]:
        from airflow.models import TaskInstance

        with _session() as session:
            rows = session.scalars(
                select(TaskInstance.task_id).where(
                    TaskInstance.dag_id == dag_id, TaskInstance.run_id.in_(list(run_ids)),
                    TaskInstance.state.in_(["failed", "upstream_failed"]))).all()
        return sorted(set(rows))

    @_riding_out
    def failed_tasks(self, dag_id: str, logical_dates: Sequence[dt.datetime]) -> list[str]:
        """``task_id`` of the failed task instances of those runs, for the report."""
        from airflow.models import DagRun, TaskInstance

        with _session() as session:
            rows = session.execute(
                select(TaskInstance.task_id, DagRun.logical_date)
                .join(DagRun, (DagRun.dag_id == TaskInstance.dag_id)
                      & (DagRun.run_id == TaskInstance.run_id))
                .where(DagRun.dag_id == dag_id, DagRun.logical_date.in_(list(logical_dates)),
                       TaskInstance.state.in_(["failed", "upstream_failed"]))).all()
        return sorted({task for task, _ in rows})


@contextlib.contextmanager
def _quiet(*loggers: str) -> Iterator[None]:
    """Keep Airflow's per-run info lines ("creating dag run ...") out of the command's
    progress output.

    Why the private table: Airflow 3.3 routes these loggers through structlog, which ignores
    stdlib levels and reads ``[logging] namespace_levels`` into this table when it binds a
    logger (on first use, so setting it before the first backfill is enough). Without the
    table (another Airflow version), the stdlib level is the fallback.
    """
    try:
        from airflow._shared.logging.structlog import PER_LOGGER_LEVELS
    except ImportError:
        PER_LOGGER_LEVELS = None
    saved = [(logging.getLogger(n), logging.getLogger(n).level) for n in loggers]
    for logger, _ in saved:
        logger.setLevel(logging.WARNING)
    for name in loggers if PER_LOGGER_LEVELS is not None else ():
        PER_LOGGER_LEVELS[name] = logging.WARNING
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _dispose_engine() -> None:
    """Drop Airflow's pooled connections: after a restart of the server each of them is dead,
    and the pool would hand them out one by one (pre-ping is Airflow's default, this is sure)."""
    try:
        from airflow import settings

        if settings.engine is not None:
            settings.engine.dispose()
    except Exception:  # noqa: S110 - best effort: the next try reports what is wrong
        pass


def _user() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None
