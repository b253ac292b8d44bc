"""The Partitions view's action routes (docs/view.md); the app adds them behind its viewer check.

* ``POST /api/facts/{fact}/plan``: the plan (read-only; any viewer);
* ``POST /api/facts/{fact}/actions``: prepare a fill or restate: the backfills it would create
  and an ``action_id``; nothing is created (403 when the user may not trigger a producer DAG,
  409 for the CLI's refusals);
* ``POST /api/actions/{id}/confirm``: create what is due, once (idempotent);
* ``GET /api/actions/{id}``: the progress;
* ``GET /api/facts/{fact}/permissions``: the fact's producer DAGs the user may not trigger
  (what the page disables its buttons on);
* ``GET /api/facts/{fact}/actions?limit=``: the fact's recent actions (any viewer), each
  with the address that reopens its progress.

State-changing routes are POSTs with a JSON body: a cross-site form cannot send one (415), so
the UI's cookie alone cannot be used to act from another site. Routes are plain functions:
FastAPI runs them in its thread pool, where they may call this api-server's REST API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status

from airflow_partitions.backfill.airflow_db import BackfillRefused, UnknownDag
from airflow_partitions.backfill.rest_api import ApiUnavailable
from airflow_partitions.catalog import Catalog, UnknownFact
from airflow_partitions.errors import InvalidInput
from airflow_partitions.ui.action_model import (
    ActionBody,
    ActionJson,
    ActionSummaryJson,
    ConfirmBody,
    PermissionsJson,
    PlanBody,
    PlanJson,
)
from airflow_partitions.ui.action_store import ActionStore
from airflow_partitions.ui.actions import (
    MAX_RECENT_ACTIONS,
    RECENT_ACTIONS,
    Actions,
    NotAllowed,
    UnknownAction,
    permissions,
    plan_json,
    recent_actions,
)
from airflow_partitions.ui.auth import AirflowUser, require_viewer

#: The boundaries, replaceable on ``app.state`` (tests): ``airflow_for(request)``,
#: ``may_trigger(user, dags)``, ``audit(user, event, dag, extra)``.
DEFAULTS: dict[str, str] = {"airflow_for": "rest_as_user", "may_trigger": "may_not_trigger",
                            "audit": "audit_log"}


def _boundary(request: Request, name: str) -> Callable[..., Any]:
    found: Callable[..., Any] | None = getattr(request.app.state, name, None)
    if found is None:
        from airflow_partitions.ui import airflow_gate

        found = getattr(airflow_gate, DEFAULTS[name])
    return found


def json_body(request: Request) -> None:
    """POSTs must be JSON: what a cross-site form cannot send."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise HTTPException(status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
                            "send the body as application/json")


@contextmanager
def answers() -> Iterator[None]:
    """Our errors as HTTP answers: 404 unknown, 403 not allowed, 409 refused, 400 bad input,
    503 when Airflow's API could not answer."""
    try:
        yield
    except (UnknownFact, UnknownAction) as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except NotAllowed as exc:
        raise HTTPException(status.HTTP_403_FORBIDDEN, str(exc)) from exc
    except (BackfillRefused, UnknownDag) as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    except InvalidInput as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc)) from exc
    except ApiUnavailable as exc:  # Airflow's own API failed (e.g. its DB is locked): retry
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from exc


def action_store(request: Request, catalog: Catalog) -> ActionStore:
    """The app's action store, opened on the catalog's store at first use."""
    store: ActionStore | None = getattr(request.app.state, "action_store", None)
    if store is None:
        store = request.app.state.action_store = ActionStore(catalog.kv)
    return store


def _catalog(request: Request) -> Catalog:
    catalog: Catalog = request.app.state.open_catalog()
    return catalog


CatalogDep = Annotated[Catalog, Depends(_catalog)]
UserDep = Annotated[AirflowUser, Depends(require_viewer)]


def router() -> APIRouter:
    """The routes; the app's ``state.open_catalog`` gives the catalog."""
    routes = APIRouter()

    def actions(request: Request, catalog: Catalog, user: AirflowUser) -> Actions:
        return Actions(catalog, action_store(request, catalog),
                       _boundary(request, "airflow_for")(request), user,
                       _boundary(request, "may_trigger"), _boundary(request, "audit"))

    @routes.post("/api/facts/{fact}/plan", dependencies=[Depends(json_body)])
    def post_plan(catalog: CatalogDep, fact: str, body: PlanBody) -> PlanJson:
        with answers():
            return plan_json(catalog, fact, body)

    @routes.post("/api/facts/{fact}/actions", dependencies=[Depends(json_body)])
    def post_action(request: Request, catalog: CatalogDep, user: UserDep, fact: str,
                    body: ActionBody) -> ActionJson:
        with answers():
            return actions(request, catalog, user).prepare(fact, body)

    @routes.post("/api/actions/{action_id}/confirm", dependencies=[Depends(json_body)])
    def confirm(request: Request, catalog: CatalogDep, user: UserDep, action_id: str,
                body: ConfirmBody) -> ActionJson:
        with answers():
            return actions(request, catalog, user).confirm(action_id)

    @routes.get("/api/facts/{fact}/permissions")
    def get_permissions(request: Request, catalog: CatalogDep, user: UserDep,
                        fact: str) -> PermissionsJson:
        with answers():
            return permissions(catalog, fact, user, _boundary(request, "may_trigger"))

    @routes.get("/api/facts/{fact}/actions")
    def list_actions(request: Request, catalog: CatalogDep, fact: str,
                     limit: Annotated[int, Query(ge=1, le=MAX_RECENT_ACTIONS)] = RECENT_ACTIONS
                     ) -> list[ActionSummaryJson]:
        with answers():
            return recent_actions(catalog, action_store(request, catalog), fact,
                                  request.scope.get("root_path", ""), limit)

    @routes.get("/api/actions/{action_id}")
    def progress(request: Request, catalog: CatalogDep, user: UserDep,
                 action_id: str) -> ActionJson:
        with answers():
            return actions(request, catalog, user).status(action_id)

    return routes
