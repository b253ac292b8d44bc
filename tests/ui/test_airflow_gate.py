"""Contract of :mod:`airflow_partitions.ui.airflow_gate` with the installed Airflow.

The audit row is written with Airflow's ``Log`` model (no public API writes the audit log):
an upgrade that renames its columns fails here, naming the column, not at a user's click. The
per-DAG check uses the auth manager's public ``is_authorized_dag`` with ``DagAccessEntity.RUN``,
which is what ``POST /api/v2/backfills`` itself requires.
"""

from __future__ import annotations

import inspect

import pytest
from fastapi import HTTPException
from starlette.requests import Request

from airflow_partitions.ui.airflow_gate import LOG_COLUMNS, user_token


def test_the_log_model_has_the_columns_we_write() -> None:
    from airflow.models.log import Log

    columns = set(Log.__table__.columns.keys())
    assert set(LOG_COLUMNS) <= columns, sorted(set(LOG_COLUMNS) - columns)
    row = Log(event="partitions.fill", owner="ada", owner_display_name="ada", dag_id="d",
              extra="{}")
    assert (row.event, row.owner, row.dag_id, row.extra) == ("partitions.fill", "ada", "d", "{}")
    assert Log.__table__.columns["event"].type.length >= len("partitions.restate")


def test_the_auth_managers_dag_question_is_the_one_the_backfill_route_asks() -> None:
    from airflow.api_fastapi.auth.managers.base_auth_manager import BaseAuthManager
    from airflow.api_fastapi.auth.managers.models.resource_details import (
        DagAccessEntity,
        DagDetails,
    )

    assert DagAccessEntity.RUN.name == "RUN" and DagDetails(id="d").id == "d"
    params = inspect.signature(BaseAuthManager.is_authorized_dag).parameters
    assert {"method", "user", "access_entity", "details"} <= set(params)


def request(headers: dict[str, str]) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "headers": raw, "method": "POST", "path": "/"})


def test_the_users_token_comes_from_the_header_else_the_uis_cookie() -> None:
    assert user_token(request({"Authorization": "Bearer abc"})) == "abc"
    assert user_token(request({"Cookie": "_token=xyz"})) == "xyz"
    assert user_token(request({"Authorization": "Bearer abc", "Cookie": "_token=x"})) == "abc"
    with pytest.raises(HTTPException) as refused:
        user_token(request({}))
    assert refused.value.status_code == 401
