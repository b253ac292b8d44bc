"""Airflow's private backfill functions, behind one adapter.

Why: ``airflow backfill create`` has no public Python API in Airflow 3.3; the command itself
calls :func:`airflow.models.backfill._create_backfill`, and its ``--dry-run`` calls
``_do_dry_run``. We call the same two functions, so that a plan creates exactly the runs the
command would. Private names change without notice: this module is the only place that names
them, and ``tests/backfill/test_airflow_private.py`` checks their signatures against the
installed Airflow, so an upgrade that changes them fails one test that says which, instead of
a backfill at run time.

Cost: the imports are deferred to the first call (Airflow's models load in about a second).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from airflow.models.backfill import Backfill
    from sqlalchemy.orm import Session

#: The keyword arguments we pass to each private function (the contract test's subject).
CREATE_KEYWORDS: Final = ("dag_id", "from_date", "to_date", "max_active_runs", "reverse",
                          "dag_run_conf", "triggering_user_name", "reprocess_behavior")
DRY_RUN_KEYWORDS: Final = ("dag_id", "from_date", "to_date", "reverse", "reprocess_behavior",
                           "session", "dag_run_conf")


def private_functions() -> dict[str, Callable[..., object]]:
    """The private functions this adapter calls, by name (for the contract test)."""
    from airflow.models.backfill import _create_backfill, _do_dry_run

    return {"_create_backfill": _create_backfill, "_do_dry_run": _do_dry_run}


def create_backfill(dag_id: str, first: dt.datetime, last: dt.datetime, *,
                    max_active_runs: int, triggering_user_name: str | None,
                    conf: Mapping[str, object] | None = None) -> Backfill:
    """``airflow backfill create`` over ``[first, last]``, re-running completed runs, each run
    with ``conf`` as its ``dag_run_conf`` (``--dag-run-conf``: Airflow validates it against the
    DAG's params, and a re-run's conf is replaced by it); returns Airflow's ``Backfill`` row.
    Raises what Airflow raises (``AlreadyRunningBackfill``, ``InvalidBackfillConf``, ...)."""
    from airflow.models.backfill import ReprocessBehavior, _create_backfill

    return _create_backfill(
        dag_id=dag_id, from_date=first, to_date=last, max_active_runs=max_active_runs,
        reverse=False, dag_run_conf=None if conf is None else dict(conf),
        triggering_user_name=triggering_user_name,
        reprocess_behavior=ReprocessBehavior.COMPLETED)


def dry_run_dates(dag_id: str, first: dt.datetime, last: dt.datetime, session: Session,
                  conf: Mapping[str, object] | None = None) -> list[dt.datetime]:
    """The logical dates ``airflow backfill create --dry-run`` lists for ``[first, last]``,
    re-running completed runs; ``conf`` is validated against the DAG's params as the real
    backfill would (a refusal now, before anything is created)."""
    from airflow.models.backfill import ReprocessBehavior, _do_dry_run

    infos = _do_dry_run(
        dag_id=dag_id, from_date=first, to_date=last, reverse=False,
        reprocess_behavior=ReprocessBehavior.COMPLETED, session=session,
        dag_run_conf=None if conf is None else dict(conf))
    return [info.logical_date for info in infos if info.logical_date is not None]


__all__ = ["CREATE_KEYWORDS", "DRY_RUN_KEYWORDS", "create_backfill", "dry_run_dates",
           "private_functions"]
