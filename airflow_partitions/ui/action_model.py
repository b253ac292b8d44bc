"""The JSON of the Partitions view's actions (docs/view.md): request bodies and answers.

Requests are pydantic models (FastAPI validates them and answers 422 with the field at fault);
answers are TypedDicts, the documented schema that the page and scripts read. Kept apart from
the routes so the docs and the tests can name the shapes without starting an app.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

#: ``fill``: make the range coverable (``backfill``); ``restate``: also re-run what is stale
#: (``backfill --restate``).
Kind = Literal["fill", "restate"]
#: How a selection's bounds meet the fact's finest period: ``outer`` widens them to whole
#: partitions, ``inner`` narrows them, None (the command line's rule) refuses a misaligned one.
Align = Literal["outer", "inner"] | None


class PlanBody(BaseModel):
    """``POST /api/facts/{fact}/plan``: what ``airflow-partitions plan`` would do."""

    model_config = ConfigDict(extra="forbid")
    start: str = Field(description="ISO-8601 start, included (no offset: the fact's zone)")
    end: str = Field(description="ISO-8601 end, excluded")
    stale: bool = Field(False, description="the restate plan: stale partitions re-run too")
    where: str | None = Field(None, description="only these slices (\"region = 'eu'\")")
    align: Align = Field(None, description="snap the bounds: outer (widen) or inner (narrow)")


class ActionBody(BaseModel):
    """``POST /api/facts/{fact}/actions``: prepare a fill (or restate); nothing is created."""

    model_config = ConfigDict(extra="forbid")
    start: str
    end: str
    kind: Kind = "fill"
    unpause: bool = Field(False, description="unpause paused producer DAGs instead of refusing")
    where: str | None = None
    max_active_runs: int = Field(10, ge=1, le=1000)
    align: Align = None


class ConfirmBody(BaseModel):
    """``POST /api/actions/{id}/confirm``: an empty object (the action says what to create)."""

    model_config = ConfigDict(extra="forbid")


class PlanJson(TypedDict):
    """:meth:`airflow_partitions.planning.Plan.to_json` (docs/backfill.md) plus the stale
    partitions a restate plan re-runs."""

    fact: str
    start: str
    end: str
    coverable_after: bool
    counts: dict[str, int]
    runs: list[dict[str, object]]  # planning's PlannedRunJson, passed on as it is
    unfillable: list[dict[str, str]]
    cover_after: list[dict[str, str]]
    restate: bool
    stale: list[str]


class BackfillJson(TypedDict):
    """One Airflow backfill of an action: planned, then created and watched."""

    index: int  # its place in the action (the order of creation)
    dag_id: str
    start: str  # first logical date, included
    end: str  # last logical date, included
    runs: int
    conf: Mapping[str, object] | None  # the run conf given to Airflow (the slices)
    backfill_id: int | None  # None until created
    state: str  # waiting | creating | queued | running | success | failed
    states: dict[str, int]  # its runs by state (empty until created)
    run_links: list[dict[str, str]]  # {"run_id", "logical_date", "state", "url"}
    link: str  # the DAG's page in Airflow's UI


class PlannedBackfillJson(TypedDict):
    """One backfill of an action as stored when it is prepared."""

    index: int
    dag_id: str
    start: str
    end: str
    runs: int
    conf: Mapping[str, object] | None


class PlannedStageJson(TypedDict):
    period: str
    backfills: list[PlannedBackfillJson]


class ActionDocJson(TypedDict):
    """An action as stored (:class:`~airflow_partitions.ui.action_store.ActionStore`)."""

    action_id: str
    kind: str
    fact: str
    start: str
    end: str
    user: str
    unpause: list[str]
    max_active_runs: int
    where: str | None
    stages: list[PlannedStageJson]
    plan: PlanJson
    prepared_at: NotRequired[str]  # ISO-8601, UTC; absent from actions stored before it was


class StageJson(TypedDict):
    period: str
    backfills: list[BackfillJson]


class ActionJson(TypedDict):
    """``POST /api/facts/{fact}/actions``, ``POST /api/actions/{id}/confirm`` and
    ``GET /api/actions/{id}``: an action and where it stands."""

    action_id: str
    kind: str
    fact: str
    start: str
    end: str
    user: str
    prepared_at: str | None
    state: str  # planned | running | coverable | not_coverable | failed
    confirmed_by: str | None
    unpause: list[str]  # paused DAGs the confirmation unpauses
    plan: PlanJson
    stages: list[StageJson]
    next_ready: bool  # a confirm now would create more backfills
    failure: str | None  # the stage and DAG that failed, and its failed tasks
    status: str | None  # the cover's status line once every backfill finished
    repeated: bool  # the action was confirmed before this request (a double click or a
    # retry); such a confirm creates only backfills whose turn has come since (next_ready)


class ActionSummaryJson(TypedDict):
    """``GET /api/facts/{fact}/actions``: one recent action of the fact, read from the action
    store alone (Airflow is not asked): ``state`` is what the last progress request found."""

    action_id: str
    kind: str
    start: str
    end: str
    user: str  # who prepared it
    prepared_at: str | None
    confirmed_by: str | None
    state: str  # planned | running | coverable | not_coverable | failed (as last seen)
    progress: str  # the fact page's address that reopens its progress


class PermissionsJson(TypedDict):
    """``GET /api/facts/{fact}/permissions``: who is signed in, the fact's producer DAGs and
    those the user may not trigger (Airflow's authorization)."""

    user: str
    producers: list[str]
    may_not_trigger: list[str]


class Refusal(TypedDict):
    """Every refusal's body (FastAPI's ``detail``): 403 names the DAGs the user may not
    trigger, 409 what Airflow would refuse or ignore (a paused DAG, a running backfill)."""

    detail: str
