"""The Partitions view's FastAPI app, mounted by the api-server at :data:`URL_PREFIX`.

Routes (every one behind :func:`.auth.require_viewer`):

* ``GET /api/facts``: the facts, their time columns, zones and storages;
* ``GET /api/facts/{fact}?start=&end=&time_column=&stale=``: the stretches of every
  (storage, period) lane over the range (default: the fact's whole history), the cover and its
  status line (:func:`airflow_partitions.lanes.fact_lanes.fact_view`);
* ``GET /api/facts/{fact}/coverage-assets?start=&end=``: each followed coverage asset of the
  fact with its windows in the range, announced or pending and what they lack
  (:mod:`.coverage_assets`);
* ``GET /`` and ``GET /facts/{fact}``: the same as HTML pages;
* the actions (plan, fill missing, re-run stale, progress): :mod:`.action_routes`.

The catalog is opened the way every task opens it: ``PartitionCatalogHook`` (the
``partitions_default`` connection, else ``$AIRFLOW_PARTITIONS_STORE``, else the sqlite file in
``$AIRFLOW_HOME``), one shared catalog and timeline cache per api-server process. Routes are
plain functions, so FastAPI runs the blocking catalog reads in its thread pool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse

from airflow_partitions.catalog import Catalog, UnknownFact
from airflow_partitions.coverage_events import AssetWindowsJson
from airflow_partitions.errors import InvalidInput
from airflow_partitions.lanes import (
    FactJson,
    FactViewJson,
    fact_view,
    facts_json,
)
from airflow_partitions.ui.action_routes import action_store
from airflow_partitions.ui.action_routes import router as action_router
from airflow_partitions.ui.actions import recent_actions
from airflow_partitions.ui.auth import require_viewer
from airflow_partitions.ui.coverage_assets import coverage_assets_json, coverage_assets_section
from airflow_partitions.ui.page import fact_page, facts_page
from airflow_partitions.ui.page_actions import actions_html
from airflow_partitions.ui.selection import finest_period
from airflow_partitions.ui.urls import URL_PREFIX

__all__ = ["URL_PREFIX", "create_app"]
CatalogOpener = Callable[[], Catalog]


def hook_catalog() -> Catalog:
    """The catalog the hook resolves (imported late: only the api-server serves the app)."""
    from airflow_partitions.hooks.catalog import PartitionCatalogHook

    return PartitionCatalogHook().get_conn()


def _catalog(request: Request) -> Catalog:
    opener: CatalogOpener = request.app.state.open_catalog
    return opener()


CatalogDep = Annotated[Catalog, Depends(_catalog)]
StartQuery = Annotated[str | None, Query(description="ISO-8601 start, included")]
EndQuery = Annotated[str | None, Query(description="ISO-8601 end, excluded")]


def _view(catalog: Catalog, fact: str, start: str | None, end: str | None,
          time_column: str | None, stale: bool) -> FactViewJson:
    try:
        return fact_view(catalog, fact, start or None, end or None,
                         time_column=time_column or None, with_stale=stale)
    except UnknownFact as exc:
        raise HTTPException(404, str(exc)) from exc
    except InvalidInput as exc:  # a bad instant, a reversed range, an unknown column
        raise HTTPException(400, str(exc)) from exc


def _assets(catalog: Catalog, fact: str, start: str | None, end: str | None
            ) -> list[AssetWindowsJson]:
    try:
        return coverage_assets_json(catalog, fact, start or None, end or None)
    except UnknownFact as exc:
        raise HTTPException(404, str(exc)) from exc
    except InvalidInput as exc:
        raise HTTPException(400, str(exc)) from exc


def create_app(open_catalog: CatalogOpener = hook_catalog) -> FastAPI:
    """The app; ``open_catalog`` is the catalog's source (tests pass their own)."""
    app = FastAPI(title="Airflow Partitions", dependencies=[Depends(require_viewer)],
                  docs_url=None, redoc_url=None, openapi_url=None)
    app.state.open_catalog = open_catalog

    @app.get("/api/facts", response_model=None)  # typed JSON; pydantic needs no model of it
    def list_facts(catalog: CatalogDep) -> list[FactJson]:
        return facts_json(catalog)

    @app.get("/api/facts/{fact}", response_class=JSONResponse)
    def get_fact(catalog: CatalogDep, fact: str, start: StartQuery = None, end: EndQuery = None,
                 time_column: str | None = None, stale: bool = True) -> JSONResponse:
        # a JSONResponse as it is: FastAPI's encoder would walk every stretch again
        return JSONResponse(_view(catalog, fact, start, end, time_column, stale))

    @app.get("/api/facts/{fact}/coverage-assets", response_model=None)
    def get_coverage_assets(catalog: CatalogDep, fact: str, start: StartQuery = None,
                            end: EndQuery = None) -> list[AssetWindowsJson]:
        return _assets(catalog, fact, start, end)

    @app.get("/", response_class=HTMLResponse)
    def facts_html(request: Request, catalog: CatalogDep) -> str:
        return facts_page(facts_json(catalog), request.scope.get("root_path", ""))

    @app.get("/facts/{fact}", response_class=HTMLResponse)
    def fact_html(request: Request, catalog: CatalogDep, fact: str, start: StartQuery = None,
                  end: EndQuery = None, time_column: str | None = None,
                  stale: bool = True, action: str | None = None) -> str:
        view = _view(catalog, fact, start, end, time_column, stale)
        query = {k: v for k, v in request.query_params.items()
                 if k not in ("start", "end", "action")}
        root = request.scope.get("root_path", "")
        assets = coverage_assets_section(catalog, fact, view["start"], view["end"])
        finest = finest_period(catalog, fact)
        recent = recent_actions(catalog, action_store(request, catalog), fact, root)
        act = actions_html(view, root, finest.name if finest else None, recent, action)
        return fact_page(view, root, query, act + assets)

    app.include_router(action_router())
    return app
