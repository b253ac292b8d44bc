"""What the Partitions view's buttons do: plan, prepare, confirm, and watch a fill or restate.

The plan is :func:`airflow_partitions.planning.plan`; the backfills and every refusal are the
backfill command's (:meth:`BackfillRunner.prepare`); only the driving differs. The command
waits in a loop; a web request may not, so an action is stored (:mod:`.action_store`) and
moved on by requests: ``confirm`` creates every backfill whose turn has come (a stage starts
once the stage before finished without failure, and a DAG's next backfill once Airflow marked
its previous one complete), and is idempotent, so the page calls it again whenever the
progress says ``next_ready``. Airflow is reached through its REST API as the signed-in user
(:class:`ViewAirflow`), so its authorization applies to every call; :data:`MayTrigger` asks it
first, to name the DAGs the user may not trigger before anything is created.
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, cast

from airflow_partitions.backfill.airflow_db import BackfillRefused, Progress, UnknownBackfill
from airflow_partitions.backfill.rest_api import DagRunJson
from airflow_partitions.backfill.runner import (
    Airflow,
    BackfillOptions,
    BackfillRunner,
    stale_items,
)
from airflow_partitions.backfill.stages import Stretch
from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import status_line, to_us
from airflow_partitions.errors import PartitionsError
from airflow_partitions.planning import plan
from airflow_partitions.ui.action_model import (
    ActionBody,
    ActionDocJson,
    ActionJson,
    ActionSummaryJson,
    BackfillJson,
    PermissionsJson,
    PlanBody,
    PlanJson,
    PlannedBackfillJson,
    PlannedStageJson,
    StageJson,
)
from airflow_partitions.ui.action_store import CREATING, REFUSED, ActionStore, Stored
from airflow_partitions.ui.auth import AirflowUser
from airflow_partitions.ui.page import view_link
from airflow_partitions.ui.selection import select


class ViewAirflow(Airflow, Protocol):
    """The runner's Airflow, plus a backfill's runs to link to
    (:class:`airflow_partitions.backfill.rest_api.RestBackfills`)."""

    def progress_and_runs(self, backfill_id: int) -> tuple[Progress, list[DagRunJson]]: ...


#: ``(user, dag ids) -> the dag ids the user may not trigger`` (Airflow's auth manager).
MayTrigger = Callable[[AirflowUser, Sequence[str]], list[str]]
#: ``(user name, event, dag id, extra)``: one row of Airflow's audit log.
Audit = Callable[[str, str, str | None, Mapping[str, object]], None]


class NotAllowed(PartitionsError):
    """The user may not do this (403): the message names the DAGs or the action's owner."""


class UnknownAction(PartitionsError):
    """No such action (404)."""


def plan_json(catalog: Catalog, fact: str, body: PlanBody) -> PlanJson:
    """What ``airflow-partitions plan`` prints with ``--json`` (with ``stale``: the plan
    ``backfill --restate`` runs), over the selection snapped by ``body.align``. Cost: the
    plan's, plus one stale check when asked; a range too large is refused before either."""
    chosen = select(catalog, fact, body.start, body.end, body.align)
    start, end = chosen.start, chosen.end
    stale, lines = stale_items(catalog, fact, start, end) if body.stale else (set(), [])
    doc = plan(catalog, fact, start, end, restate=stale, where=body.where).to_json()
    # The planning JSON plus two keys; the view's copy of its type is typing_extensions'
    # (FastAPI's response models need it on Python 3.11), so the two are not one type.
    return cast(PlanJson, {**doc, "restate": body.stale, "stale": lines})


@dataclass
class Actions:
    """The view's actions for one request: its catalog, store, Airflow (as the user), and
    the user."""

    catalog: Catalog
    store: ActionStore
    airflow: ViewAirflow
    user: AirflowUser  # the signed-in user, as Airflow's auth manager gives it
    may_trigger: MayTrigger
    audit: Audit

    @property
    def user_name(self) -> str:
        return str(self.user.get_name())

    def prepare(self, fact: str, body: ActionBody) -> ActionJson:
        """Plan, check every refusal the CLI checks, and store the action; nothing is created.
        Refuses (:class:`NotAllowed`) when the user may not trigger a producer DAG. What
        needs no plan is checked first: the instants, their alignment and the range's size
        (:func:`.selection.select`)."""
        chosen = select(self.catalog, fact, body.start, body.end, body.align)
        start, end = chosen.start, chosen.end
        restate = body.kind == "restate"
        items, stale = stale_items(self.catalog, fact, start, end) if restate else (set(), [])
        # planned once more by the runner below: the DAGs must be known, and allowed, before
        # the first call to Airflow (whose own 403 would not say which DAG)
        dags = sorted(plan(self.catalog, fact, start, end, restate=items,
                           where=body.where).by_dag())
        self._allowed(dags)
        self._refuse_paused(dags, body.unpause)
        options = BackfillOptions(max_active_runs=body.max_active_runs, restate=restate,
                                  unpause=body.unpause, dry_run=True, where=body.where)
        report = BackfillRunner(self.catalog, self.airflow, lambda _: None).prepare(
            fact, start, end, options)
        _refuse_announced(report.stages, fact, body, start, end)
        paused = [dag for dag in sorted(report.plan.by_dag()) if self.airflow.check_dag(dag)]
        index = 0
        stages: list[PlannedStageJson] = []
        for stage, parts in report.stages:
            backfills: list[PlannedBackfillJson] = []
            for part in parts:
                backfills.append({"index": index, "dag_id": part.dag_id,
                                  "start": part.first.isoformat(),
                                  "end": part.last.isoformat(), "runs": part.runs,
                                  "conf": part.conf_value()})
                index += 1
            stages.append({"period": stage.period, "backfills": backfills})
        action_id = self.store.new_id()
        now = dt.datetime.now(dt.UTC)
        doc: ActionDocJson = {"action_id": action_id, "kind": body.kind, "fact": fact,
               "start": start.isoformat(), "end": end.isoformat(), "user": self.user_name,
               "prepared_at": now.isoformat(timespec="seconds"),
               "unpause": paused, "max_active_runs": body.max_active_runs,
               "where": body.where, "stages": stages,
               "plan": cast(PlanJson, {**report.plan.to_json(), "restate": restate,
                                       "stale": stale})}
        self.store.add(action_id, doc, to_us(now))
        return self.status(action_id)

    def confirm(self, action_id: str) -> ActionJson:
        """Confirm the action (first call) and create every backfill whose turn has come.

        Idempotent: a second confirmation creates nothing that was created, and only the
        user who prepared the action may confirm it. Each created backfill is written to
        Airflow's audit log (event ``partitions.fill`` or ``partitions.restate``)."""
        stored = self._get(action_id)
        doc = stored.doc
        if doc["user"] != self.user_name:
            raise NotAllowed(f"action {action_id} was prepared by {doc['user']}; prepare "
                             "your own (the plan may differ for you)")
        self._allowed(sorted({b["dag_id"] for s in doc["stages"] for b in s["backfills"]}))
        first = self.store.confirm(action_id, self.user_name)
        if first:
            for dag in doc["unpause"]:
                self.airflow.unpause(dag)
            self.audit(self.user_name, f"partitions.{doc['kind']}", None,
                       {"action_id": action_id, "fact": doc["fact"], "start": doc["start"],
                        "end": doc["end"], "confirmed": True, "unpaused": doc["unpause"],
                        "backfills": [_planned(b) for s in doc["stages"]
                                      for b in s["backfills"]]})
        self._advance(action_id)
        answer = self.status(action_id)
        answer["repeated"] = not first
        return answer

    def status(self, action_id: str) -> ActionJson:
        """Where the action stands: each backfill's runs and states, a failure named, and
        once all finished, the catalog's word (coverable or what is missing)."""
        stored = self._get(action_id)
        doc = stored.doc
        stages: list[StageJson] = []
        failure: str | None = None
        all_done = bool(stored.confirmed_by)
        next_ready = False
        blocked = False  # an earlier stage has not finished: later ones wait
        for stage in doc["stages"]:
            rows: list[BackfillJson] = []
            stage_done = True
            for planned in stage["backfills"]:
                row = self._row(planned, stored.backfills.get(planned["index"]))
                rows.append(row)
                if row["state"] == "failed" and failure is None:
                    failure = self._failure(stage["period"], row)
                if row["state"] not in ("success", "failed"):
                    stage_done = all_done = False
                if row["state"] == "waiting" and stored.confirmed_by and not blocked:
                    next_ready = True
            stages.append(StageJson(period=stage["period"], backfills=rows))
            blocked = blocked or not stage_done
        status: str | None = None
        if failure:
            state, next_ready = "failed", False
        elif not stored.confirmed_by:
            state = "planned"
        elif all_done:
            cover = self.catalog.cover(doc["fact"], doc["start"], doc["end"],
                                       fresh_only=doc["kind"] == "restate", where=doc["where"])
            status = status_line(cover)
            state = "coverable" if cover.coverable else "not_coverable"
        else:
            state = "running"
        if state != stored.state:
            self.store.seen(action_id, state)
        return ActionJson(
            action_id=action_id, kind=doc["kind"], fact=doc["fact"], start=doc["start"],
            end=doc["end"], user=doc["user"], prepared_at=doc.get("prepared_at"),
            state=state, confirmed_by=stored.confirmed_by,
            unpause=doc["unpause"], plan=doc["plan"], stages=stages, next_ready=next_ready,
            failure=failure, status=status, repeated=False)

    # -- internals ---------------------------------------------------------------------------

    def _get(self, action_id: str) -> Stored:
        stored = self.store.get(action_id)
        if stored is None:
            raise UnknownAction(f"no action {action_id[:64]!r}")
        return stored

    def _allowed(self, dags: list[str]) -> None:
        refused = self.may_trigger(self.user, dags) if dags else []
        if refused:
            raise NotAllowed(
                f"{self.user_name} may not trigger {', '.join(refused)} (Airflow's "
                "authorization): nothing was created; ask an admin for a role that may run "
                f"{'it' if len(refused) == 1 else 'them'}")

    def _refuse_paused(self, dags: Sequence[str], unpause: bool) -> None:
        """The command line's paused check, in the page's words (its checkbox, not a flag)."""
        paused = [dag for dag in dags if self.airflow.check_dag(dag)]
        if paused and not unpause:
            one = len(paused) == 1
            raise BackfillRefused(
                f"{', '.join(paused)} {'is' if one else 'are'} paused: Airflow would queue the "
                f"backfill runs and never start them; unpause {'it' if one else 'them'} in "
                "Airflow, or tick 'unpause paused producers' (the API's \"unpause\": true); "
                "nothing was created")

    def _advance(self, action_id: str) -> int:
        """Create every backfill whose turn has come (each claimed first, so two requests
        never create one twice); how many this call created. As the command: a stage starts
        when the one before finished without failure, and after a failure nothing new."""
        stored = self._get(action_id)
        doc, made = stored.doc, 0
        for stage in doc["stages"]:
            outcomes = {b["index"]: self._outcome(stored.backfills[b["index"]])
                        for b in stage["backfills"] if b["index"] in stored.backfills}
            if "failed" in outcomes.values():
                return made
            for planned in stage["backfills"]:
                index = planned["index"]
                lost = stored.backfills[index] if outcomes.get(index) == "lost" else None
                if (index not in stored.backfills or lost) and \
                        not self._dag_busy(doc, stored, planned) and \
                        self.store.claim(action_id, index, lost):  # else: someone is
                    self._create(action_id, doc, planned)
                    stored.backfills[index] = CREATING.decode()  # unfinished
                    made += 1
            if len(outcomes) < len(stage["backfills"]) or \
                    {"running", "lost"} & set(outcomes.values()):
                return made  # the next stage reads what this one makes
        return made

    def _create(self, action_id: str, doc: ActionDocJson, planned: PlannedBackfillJson
                ) -> None:
        """Create one claimed backfill, record its id (or Airflow's refusal), audit it."""
        index, dag = planned["index"], planned["dag_id"]
        try:
            backfill_id = self.airflow.create(dag, _at(planned["start"]), _at(planned["end"]),
                                              doc["max_active_runs"], planned["conf"])
        except PartitionsError as exc:
            self.store.refused(action_id, index, str(exc))
            raise
        self.store.created(action_id, index, backfill_id)
        self.audit(self.user_name, f"partitions.{doc['kind']}", dag,
                   {"action_id": action_id, "fact": doc["fact"], "start": doc["start"],
                    "end": doc["end"], "backfill_id": backfill_id, **_planned(planned)})

    def _dag_busy(self, doc: ActionDocJson, stored: Stored, planned: PlannedBackfillJson
                  ) -> bool:
        """Whether an earlier backfill of the same DAG is unfinished (Airflow runs one per
        DAG), or Airflow has not yet marked the DAG's last backfill complete."""
        for stage in doc["stages"]:
            for other in stage["backfills"]:
                if other["index"] >= planned["index"] or other["dag_id"] != planned["dag_id"]:
                    continue
                cell = stored.backfills.get(other["index"])
                if cell is None or self._outcome(cell) == "running":
                    return True
        return self.airflow.running_backfill(planned["dag_id"]) is not None

    def _outcome(self, cell: str) -> str:
        """``running`` (or being created), ``ok``, ``failed`` (a run failed, or Airflow
        refused the backfill), or ``lost`` (Airflow no longer knows it: create it again)."""
        if not cell.isdigit():
            return "running" if cell == CREATING.decode() else "failed"
        try:
            progress = self.airflow.progress(int(cell))
        except UnknownBackfill:
            return "lost"
        if progress.unfinished or not (progress.total > 0 or progress.completed):
            return "running"
        return "failed" if progress.failed_dates else "ok"

    def _row(self, planned: PlannedBackfillJson, cell: str | None) -> BackfillJson:
        dag = planned["dag_id"]
        row = BackfillJson(index=planned["index"], dag_id=dag, start=planned["start"],
                           end=planned["end"], runs=planned["runs"], conf=planned["conf"],
                           backfill_id=None, state="waiting", states={}, run_links=[],
                           link=f"/dags/{_q(dag)}")
        if cell is None:
            return row
        if cell.startswith(REFUSED.decode()):
            row["state"] = "failed"
            row["states"] = {"refused": 1}
            row["run_links"] = [{"run_id": "", "logical_date": "", "state": cell,
                                 "url": row["link"]}]
            return row
        if not cell.isdigit():
            row["state"] = "creating"
            return row
        try:
            progress, runs = self.airflow.progress_and_runs(int(cell))
        except UnknownBackfill:  # removed by Airflow: waiting to be created again
            row["states"] = {"lost": 1}
            return row
        row["backfill_id"] = int(cell)
        row["states"] = dict(progress.states)
        row["run_links"] = [{"run_id": str(r["dag_run_id"]),
                             "logical_date": str(r.get("logical_date") or ""),
                             "state": str(r["state"]),
                             "url": f"/dags/{_q(dag)}/runs/{_q(str(r['dag_run_id']))}"}
                            for r in runs]
        if progress.failed_dates:
            row["state"] = "failed" if progress.unfinished == 0 else "running"
        elif progress.total and progress.unfinished == 0:
            row["state"] = "success"
        elif progress.states.get("running"):
            row["state"] = "running"
        else:
            row["state"] = "queued"
        return row

    def _failure(self, period: str, row: BackfillJson) -> str:
        if row["backfill_id"] is None:
            refused = row["run_links"][0]["state"] if row["run_links"] else "refused"
            return f"stage {period}: {row['dag_id']}: Airflow {refused}"
        dates = [_at(r["logical_date"]) for r in row["run_links"]
                 if r["state"] == "failed" and r["logical_date"]]
        tasks = self.airflow.failed_tasks(row["dag_id"], dates)
        return (f"stage {period}: {row['dag_id']} backfill {row['backfill_id']}: "
                f"{row['states'].get('failed', len(dates))} run(s) failed; failed tasks: "
                f"{', '.join(tasks) or 'unknown'}")


def permissions(catalog: Catalog, fact: str, user: AirflowUser, may_trigger: MayTrigger
                ) -> PermissionsJson:
    """What the signed-in user may do on the fact's page: the producer DAGs of the fact
    (every storage's) and those Airflow's auth manager does not let the user trigger. The
    page disables Fill missing and Re-run stale when the user may trigger none of them."""
    state = catalog.fact_state(fact)
    producers = sorted({producer.dag_id for storage in state.storages.values()
                        for producer in storage.definition.producers.values()})
    refused = may_trigger(user, producers) if producers else []
    return {"user": str(user.get_name()), "producers": producers, "may_not_trigger": refused}


#: How many actions of a fact the list shows by default, and at most.
RECENT_ACTIONS: Final = 20
MAX_RECENT_ACTIONS: Final = 200


def recent_actions(catalog: Catalog, store: ActionStore, fact: str, root: str,
                   limit: int = RECENT_ACTIONS) -> list[ActionSummaryJson]:
    """The fact's most recent actions, newest first, each with the address that reopens its
    progress. Asks Airflow nothing: ``state`` is what the last progress request found
    (``planned`` until confirmed, ``running`` until a request saw it finish). Cost: one
    index scan and one multi-row read of the action store."""
    catalog.get_fact(fact)  # UnknownFact: 404
    out: list[ActionSummaryJson] = []
    for action_id, stored in store.recent(fact, limit):
        doc = stored.doc
        state = stored.state or ("running" if stored.confirmed_by else "planned")
        out.append({"action_id": action_id, "kind": doc["kind"], "start": doc["start"],
                    "end": doc["end"], "user": doc["user"],
                    "prepared_at": doc.get("prepared_at"),
                    "confirmed_by": stored.confirmed_by, "state": state,
                    "progress": view_link(root, fact, {}, start=doc["start"], end=doc["end"],
                                          action=action_id)})
    return out


def _refuse_announced(stages: Sequence[tuple[object, Sequence[Stretch]]], fact: str,
                      body: ActionBody, start: dt.datetime, end: dt.datetime) -> None:
    """Refuse a plan with a producer scheduled on a coverage asset: its windows are announced
    and watched by partition key, not backfilled, which the command does in one process; the
    view's actions drive backfills only."""
    dags = sorted({part.dag_id for _, parts in stages for part in parts if part.announces})
    if not dags:
        return
    one = len(dags) == 1
    command = (f"airflow-partitions backfill {fact} --start {start.isoformat()} "
               f"--end {end.isoformat()}"
               + (" --restate" if body.kind == "restate" else "")
               + (f" --where \"{body.where}\"" if body.where else ""))
    raise BackfillRefused(
        f"{', '.join(dags)} {'is' if one else 'are'} scheduled on a coverage asset: Airflow "
        f"cannot backfill {'it' if one else 'them'}, and the view drives backfills only. Run "
        f"'{command}' (or PartitionBackfillOperator), which announces each window once and "
        "watches its runs; nothing was created")


def _planned(b: PlannedBackfillJson) -> dict[str, object]:
    """A backfill as the audit log records it."""
    return {"dag_id": b["dag_id"], "from": b["start"], "to": b["end"], "runs": b["runs"],
            **({"conf": b["conf"]} if b["conf"] is not None else {})}


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")
