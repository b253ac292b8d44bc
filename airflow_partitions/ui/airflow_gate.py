"""Airflow's side of the view's actions, inside the api-server: its REST API as the signed-in
user, its auth manager's per-DAG answer, and its audit log.

Why these three: the REST API applies Airflow's authorization to every backfill call, with the
user's own token (the header's, else the UI's ``_token`` cookie); the auth manager names, before
anything is created, the DAGs the user may not trigger (the API would only answer 403); and
the audit log is where Airflow's admins look for who did what. The audit row is written with
Airflow's ``Log`` model, the one table the api-server's own ``action_logging`` writes; no public
API writes it, so it is named here only, and ``tests/ui/test_airflow_gate.py`` checks the
columns we set against the installed Airflow. Airflow is imported on the first call: the
plugin module is imported by every Airflow process, and only the api-server serves requests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

from fastapi import HTTPException, Request, status

from airflow_partitions.backfill.rest_api import RestBackfills
from airflow_partitions.ui.auth import AirflowUser

#: The columns of Airflow's ``log`` table this module fills (the contract test's subject).
LOG_COLUMNS: Final = ("event", "owner", "owner_display_name", "dag_id", "extra")


def user_token(request: Request) -> str:
    """The token the user came with: ``Authorization: Bearer``, else the UI's cookie."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer ") and header[7:].strip():
        return header[7:].strip()
    cookie = request.cookies.get("_token")
    if cookie:
        return cookie
    raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Not authenticated")


def rest_as_user(request: Request) -> RestBackfills:
    """Airflow's REST API on this very api-server, with the caller's token."""
    base = f"{request.url.scheme}://{request.url.netloc}"
    return RestBackfills.with_token(base, user_token(request))


def may_not_trigger(user: AirflowUser, dag_ids: Sequence[str]) -> list[str]:
    """The DAGs of ``dag_ids`` the auth manager does not let ``user`` run (create DAG runs,
    which is what ``POST /api/v2/backfills`` requires)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import (
        DagAccessEntity,
        DagDetails,
    )

    manager = get_auth_manager()
    return [dag for dag in dag_ids if not manager.is_authorized_dag(
        method="POST", access_entity=DagAccessEntity.RUN, details=DagDetails(id=dag),
        user=user)]


def audit_log(user_name: str, event: str, dag_id: str | None, extra: Mapping[str, object]) -> None:
    """One row of Airflow's audit log (UI: Browse > Audit Log; ``GET /api/v2/eventLogs``)."""
    from airflow.models.log import Log
    from airflow.utils.session import create_session

    with create_session() as session:
        session.add(Log(event=event, owner=user_name, owner_display_name=user_name,
                        dag_id=dag_id, extra=json.dumps(extra, sort_keys=True)))
