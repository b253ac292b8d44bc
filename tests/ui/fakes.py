"""Stand-ins for Airflow's side of the view's actions (tests/ui/test_actions.py and the
screenshots): the backfill runner's :class:`FakeAirflow` with the runs a backfill made, the auth
manager's per-DAG answer, and the audit log as recorded calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fastapi.testclient import TestClient

from airflow_partitions.backfill.airflow_db import Progress, UnknownBackfill
from tests.backfill.test_runner import FakeAirflow


@dataclass
class User:
    name: str

    def get_name(self) -> str:
        return self.name


@dataclass
class ViewFake(FakeAirflow):
    """The runner's stand-in, with the runs a backfill made (what the page links to); while
    ``hold`` is set, every backfill stays queued (the scheduler has not got to it); a backfill
    in ``lost`` is one Airflow removed after answering with its id (a locked database)."""

    hold: bool = False
    lost: set[int] = field(default_factory=set)

    def progress(self, backfill_id: int) -> Progress:
        if backfill_id in self.lost:
            raise UnknownBackfill(f"GET /api/v2/backfills/{backfill_id}: HTTP 404")
        if self.hold:
            return Progress(backfill_id, {"queued": 1}, False, ())
        return super().progress(backfill_id)

    def lose(self, backfill_id: int) -> None:
        """Remove a backfill as Airflow's clean-up after a lock error does."""
        self.lost.add(backfill_id)
        self.running = {d: b for d, b in self.running.items() if b != backfill_id}

    def progress_and_runs(self, backfill_id: int) -> tuple[Progress, list[dict[str, Any]]]:
        progress = self.progress(backfill_id)
        dag_id, first, last = self.created[backfill_id - 1]
        state = "success" if progress.completed else "queued"
        return progress, [{"dag_run_id": f"backfill__{d.isoformat()}",
                           "state": "failed" if d in progress.failed_dates else state,
                           "logical_date": d.isoformat()}
                          for d in self.schedule(dag_id, first, last)]


@dataclass
class Gate:
    """The boundaries: who may trigger what, and what the audit log received."""

    forbidden: set[str] = field(default_factory=set)
    audit: list[tuple[str, str, str | None, dict[str, Any]]] = field(default_factory=list)

    def may_trigger(self, user: Any, dags: Sequence[str]) -> list[str]:
        return [d for d in dags if d in self.forbidden]

    def log(self, user: str, event: str, dag: str | None, extra: dict[str, Any]) -> None:
        self.audit.append((user, event, dag, extra))


@dataclass
class View:
    client: TestClient
    airflow: ViewFake
    gate: Gate
    user: list[User]

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        return self.client.post(path, json=body or {})
