"""A "database is locked" half-way through Airflow's backfill creation (sqlite under load).

Airflow commits the backfill row before creating its runs, so the lock can leave a backfill
behind: it is adopted; with nothing left behind the creation is retried; other refusals are
not retried. The DB calls are replaced here; the real ones run under the scheduler-level test.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from sqlalchemy.orm import Session

from airflow_partitions.backfill import airflow_db
from airflow_partitions.backfill.airflow_db import (
    AirflowBackfills,
    BackfillRefused,
    MetadataDbMissing,
)
from airflow_partitions.errors import InvalidInput

DAY = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)
LOCKED = BackfillRefused("Airflow refused a backfill of d: (sqlite3.OperationalError) "
                         "database is locked [SQL: INSERT INTO dag_run ...]")


class Scripted(AirflowBackfills):
    def __init__(self, outcomes: list[Any], left: list[int | None]) -> None:
        super().__init__(say=lambda line: None, sleep=lambda s: None)
        self.outcomes, self.left, self.calls = outcomes, left, 0

    def _create(self, dag_id: str, first: Any, last: Any, max_active_runs: int,
                conf: Any = None) -> int:
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return int(outcome)

    def created_since(self, dag_id: str, since: dt.datetime) -> int | None:
        return self.left.pop(0)


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("airflow_partitions.backfill.airflow_db.time.sleep", lambda s: None)


def test_a_lock_with_nothing_left_behind_is_retried() -> None:
    airflow = Scripted([LOCKED, LOCKED, 7], left=[None, None])
    assert airflow.create("d", DAY, DAY, 10) == 7 and airflow.calls == 3


def test_a_lock_after_the_backfill_row_adopts_that_backfill() -> None:
    airflow = Scripted([LOCKED], left=[5])
    assert airflow.create("d", DAY, DAY, 10) == 5 and airflow.calls == 1


def test_other_refusals_and_endless_locks_surface() -> None:
    with pytest.raises(BackfillRefused, match="not on the schedule"):
        Scripted([BackfillRefused("not on the schedule")], left=[]).create("d", DAY, DAY, 1)
    endless = Scripted([LOCKED] * (airflow_db.LOCK_RETRIES + 1),
                       left=[None] * airflow_db.LOCK_RETRIES)
    with pytest.raises(BackfillRefused, match="database is locked"):
        endless.create("d", DAY, DAY, 1)
    assert endless.calls == airflow_db.LOCK_RETRIES + 1


def test_a_home_without_a_metadata_db_is_one_typed_error(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A dry run against a home with no metadata DB is refused before it prints its plan, not
    with ``unexpected OperationalError ... no such table: dag`` after it. Here Airflow's session is
    opened
    on a real, empty SQLite file."""
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path}/airflow.db")

    @contextlib.contextmanager
    def empty_session() -> Iterator[Session]:
        with Session(engine) as session:
            yield session

    monkeypatch.setattr("airflow.utils.session.create_session", empty_session)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    with pytest.raises(MetadataDbMissing, match="run 'airflow db migrate' there") as caught:
        AirflowBackfills().check_dag("events_hourly")
    assert isinstance(caught.value, InvalidInput)  # the CLI's one line and exit 2
    assert f"AIRFLOW_HOME={tmp_path}" in str(caught.value)
    engine.dispose()
