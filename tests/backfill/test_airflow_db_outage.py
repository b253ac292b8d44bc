"""The backfill command rides out a metadata DB that is briefly unreachable (PostgreSQL
restarting): each call is tried again after pauses of about 1, 2, 4, 8, then 15 s, each said, for up
to two minutes, then a clear error; errors that are not about reaching the DB are not retried.

The errors are real: a connection to a port nothing listens on, through psycopg2 and
SQLAlchemy as Airflow opens it. The scheduler-level test restarts a real PostgreSQL under a
running backfill (tests/e2e/test_scheduler.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy

from airflow_partitions.backfill.airflow_db import (
    AirflowBackfills,
    BackfillRefused,
    MetadataDbUnreachable,
    unreachable,
)
from airflow_partitions.demo.services.environment import VENV_BIN
from airflow_partitions.demo.services.ports import free_port
from airflow_partitions.outages import OUTAGE_TIMEOUT

DAY = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)


def refused() -> Exception:
    """What SQLAlchemy raises when the metadata DB's server is down."""
    engine = sqlalchemy.create_engine(
        f"postgresql+psycopg2://airflow:pw@127.0.0.1:{free_port()}/airflow")
    try:
        with engine.connect():
            pass
    except sqlalchemy.exc.OperationalError as exc:
        return exc
    finally:
        engine.dispose()
    raise AssertionError("a port nobody listens on answered")


class Clocked(AirflowBackfills):
    """The real adapter with a clock that the pauses advance (no real waiting)."""

    def __init__(self) -> None:
        self.now, self.pauses, self.lines = 0.0, [], []
        super().__init__(say=self.lines.append, sleep=self._sleep, clock=lambda: self.now,
                         jitter=lambda: 1.0)  # the longest pauses: 1, 2, 4, 8, 15 s

    def _sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def test_a_refused_connection_is_unreachable_and_other_errors_are_not() -> None:
    error = refused()
    assert unreachable(error)
    assert unreachable(BackfillRefused(f"Airflow refused a backfill of d: {error}"))
    wrapped = RuntimeError("while reading")
    wrapped.__cause__ = error
    assert unreachable(wrapped)
    assert not unreachable(sqlalchemy.exc.OperationalError("SELECT", {}, Exception(
        "no such table: dag")))
    assert not unreachable(ValueError("bad date"))


def test_a_short_outage_is_ridden_out_and_each_pause_said() -> None:
    airflow, error = Clocked(), refused()
    outcomes: list[Any] = [error, error, error, 42]

    def attempt() -> int:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return int(outcome)

    assert airflow.ride_out("reading backfill 3", attempt) == 42
    assert airflow.pauses == [1, 2, 4]
    assert len(airflow.lines) == 4
    assert airflow.lines[0].startswith("Airflow's metadata DB is unreachable (reading backfill "
                                       "3): trying again in 1 s, for 120 s more: ")
    assert "Connection refused" in airflow.lines[0]
    assert airflow.lines[-1] == "Airflow's metadata DB answers again (reading backfill 3)"


def test_a_long_outage_ends_in_a_clear_error_after_the_documented_budget() -> None:
    airflow, error = Clocked(), refused()

    def attempt() -> int:
        raise error

    with pytest.raises(MetadataDbUnreachable, match=r"stayed unreachable for 120 s \(progress\)"
                       r"; is it running\? last error: .*Connection refused"):
        airflow.ride_out("progress", attempt)
    assert airflow.pauses[:5] == [1, 2, 4, 8, 15] and set(airflow.pauses[5:-1]) == {15}
    assert sum(airflow.pauses) == OUTAGE_TIMEOUT


def test_an_error_that_is_not_about_reaching_the_db_is_not_retried() -> None:
    airflow = Clocked()

    def attempt() -> int:
        raise BackfillRefused("Airflow refuses a backfill of d: not on its schedule")

    with pytest.raises(BackfillRefused, match="not on its schedule"):
        airflow.ride_out("schedule", attempt)
    assert airflow.pauses == [] and airflow.lines == []


def test_a_creation_cut_off_after_airflow_committed_it_adopts_that_backfill() -> None:
    """The connection drops after the backfill's row was committed: trying again would be
    refused ("another backfill is running"), so the one committed is taken."""
    error = refused()

    class CutOff(Clocked):
        calls = 0

        def _create(self, *args: Any, **kwargs: Any) -> int:
            self.calls += 1
            raise BackfillRefused(f"Airflow refused a backfill of d: {error}")

        def created_since(self, dag_id: str, since: dt.datetime) -> int | None:
            return 9

    airflow = CutOff()
    assert airflow.create("d", DAY, DAY, 10) == 9
    assert airflow.calls == 1 and airflow.pauses == [1]


def test_the_commands_help_says_it_waits_for_the_metadata_db() -> None:
    import subprocess

    shown = subprocess.run([str(VENV_BIN / "airflow-partitions"), "backfill", "--help"],
                           capture_output=True, text=True, check=True).stdout
    assert "briefly unreachable" in " ".join(shown.split())
