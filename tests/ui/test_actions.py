"""The view's actions in-process: plan, prepare, confirm, progress, refusals.

The app is the real one over a real catalog and action store; only Airflow's side is a
stand-in (the backfill runner's :class:`FakeAirflow`, whose finished runs register what their
DAG produces), with the auth manager's per-DAG answer and the audit log as recorded calls.
``tests/e2e/test_scheduler.py`` runs the same routes under the real api-server and scheduler.
"""

from __future__ import annotations

import threading
from typing import Any

from airflow_partitions.catalog import Catalog
from airflow_partitions.planning import plan
from airflow_partitions.ui.action_store import ActionStore
from airflow_partitions.ui.actions import Actions
from tests.ui.fakes import Gate, User, View, ViewFake

DAY = {"start": "2015-01-02T00:00:00+00:00", "end": "2015-01-03T00:00:00+00:00"}


def test_plan_is_what_the_plan_command_computes(view: View, produced: Catalog) -> None:
    answer = view.post("/api/facts/events/plan", DAY)
    assert answer.status_code == 200, answer.text
    doc = answer.json()
    expected = plan(produced, "events", DAY["start"], DAY["end"]).to_json()
    assert {k: doc[k] for k in expected} == expected
    assert [(r["dag_id"], r["kind"]) for r in doc["runs"]] == [("ingest", "input")] * 4 + [
        ("rollup", "gap")]
    assert doc["coverable_after"] and doc["restate"] is False and doc["stale"] == []
    assert view.airflow.created == [] and view.gate.audit == []


def test_the_stale_plan_re_runs_the_stale_day(view: View, produced: Catalog) -> None:
    hours = [{"dt": f"2015-01-02-{h:02d}", "region": "eu"} for h in range(24)]
    produced.register("raw", "HOURLY", hours[20:])
    produced.register("rollup", "DAILY", {"dt": "2015-01-02"},
                      inputs=[p.to_json() for p in produced.list_partitions("raw")])
    produced.register("raw", "HOURLY", hours[5], restate=True)
    assert view.post("/api/facts/events/plan", DAY).json()["runs"] == []
    doc = view.post("/api/facts/events/plan", {**DAY, "stale": True}).json()
    assert [(r["dag_id"], r["value"], r["kind"]) for r in doc["runs"]] == [
        ("rollup", "2015-01-02", "restate")]
    assert doc["restate"] and doc["stale"][0].startswith("stale: rollup DAILY 2015-01-02")


def test_posts_must_be_json_and_bad_input_is_400(view: View) -> None:
    form = view.client.post("/api/facts/events/plan", data=DAY)  # what a foreign form sends
    assert form.status_code == 415
    assert view.post("/api/facts/events/plan", {**DAY, "start": "soon"}).status_code == 400
    assert view.post("/api/facts/nope/plan", DAY).status_code == 404
    assert view.post("/api/facts/events/plan", {**DAY, "extra": 1}).status_code == 422
    assert view.client.get("/api/actions/0123abcd").status_code == 404


def test_a_confirmation_with_unknown_fields_is_refused_and_creates_nothing(view: View) -> None:
    action_id = view.post("/api/facts/events/actions", DAY).json()["action_id"]
    refused = view.post(f"/api/actions/{action_id}/confirm", {"x": 1})
    assert refused.status_code == 422, refused.text
    assert refused.json()["detail"][0]["loc"] == ["body", "x"]
    assert view.airflow.created == [] and view.gate.audit == []
    assert view.client.get(f"/api/actions/{action_id}").json()["state"] == "planned"
    assert view.post(f"/api/actions/{action_id}/confirm").status_code == 200  # {} is the body


def test_prepare_lists_the_backfills_and_creates_nothing(view: View) -> None:
    answer = view.post("/api/facts/events/actions", DAY)
    assert answer.status_code == 200, answer.text
    action = answer.json()
    assert action["state"] == "planned" and action["confirmed_by"] is None
    assert [(s["period"], [(b["dag_id"], b["start"], b["end"], b["runs"], b["state"])
                           for b in s["backfills"]]) for s in action["stages"]] == [
        ("HOURLY", [("ingest", "2015-01-02T20:00:00+00:00", "2015-01-02T23:00:00+00:00", 4,
                     "waiting")]),
        ("DAILY", [("rollup", "2015-01-02T00:00:00+00:00", "2015-01-02T00:00:00+00:00", 1,
                    "waiting")])]
    assert view.airflow.created == [] and view.gate.audit == []
    assert view.client.get(f"/api/actions/{action['action_id']}").json() == action


def test_confirm_runs_the_stages_in_order_once_each_until_coverable(view: View) -> None:
    action_id = view.post("/api/facts/events/actions", DAY).json()["action_id"]
    view.airflow.hold = True
    first = view.post(f"/api/actions/{action_id}/confirm").json()
    assert first["state"] == "running" and first["confirmed_by"] == "ada"
    assert first["repeated"] is False and first["next_ready"] is False
    assert [c[0] for c in view.airflow.created] == ["ingest"]  # the rollup waits for it
    again = view.post(f"/api/actions/{action_id}/confirm").json()  # a double click
    assert again["repeated"] is True
    assert [c[0] for c in view.airflow.created] == ["ingest"]
    view.airflow.hold = False
    queued = view.client.get(f"/api/actions/{action_id}").json()
    assert queued["stages"][0]["backfills"][0]["state"] == "queued"
    assert queued["stages"][1]["backfills"][0]["state"] == "waiting"
    assert queued["next_ready"] is False and queued["state"] == "running"
    progress = view.client.get(f"/api/actions/{action_id}").json()  # the ingest finished
    ingest = progress["stages"][0]["backfills"][0]
    assert ingest["state"] == "success" and ingest["backfill_id"] == 1
    assert [r["url"] for r in ingest["run_links"]][:1] == [
        "/dags/ingest/runs/backfill__2015-01-02T20%3A00%3A00%2B00%3A00"]
    assert progress["next_ready"] is True  # the page confirms again: the next stage
    second = view.post(f"/api/actions/{action_id}/confirm").json()
    assert [c[0] for c in view.airflow.created] == ["ingest", "rollup"]
    assert second["repeated"] is True  # confirmed before; it created what became due
    done = view.client.get(f"/api/actions/{action_id}").json()
    done = view.client.get(f"/api/actions/{action_id}").json()  # the rollup's runs finish
    assert done["state"] == "coverable", done
    assert "100.0% covered by 1 partition(s), coverable" in done["status"]
    assert done["next_ready"] is False
    view.post(f"/api/actions/{action_id}/confirm")
    assert len(view.airflow.created) == 2
    events = [(user, event, dag) for user, event, dag, _ in view.gate.audit]
    assert events == [("ada", "partitions.fill", None), ("ada", "partitions.fill", "ingest"),
                      ("ada", "partitions.fill", "rollup")]
    confirmed = view.gate.audit[0][3]
    assert (confirmed["fact"], confirmed["start"], confirmed["end"]) == (
        "events", DAY["start"], DAY["end"])
    assert [b["dag_id"] for b in confirmed["backfills"]] == ["ingest", "rollup"]
    assert view.gate.audit[1][3]["backfill_id"] == 1


def test_a_user_who_may_not_trigger_a_producer_is_refused_by_name(view: View) -> None:
    view.gate.forbidden = {"rollup"}
    refused = view.post("/api/facts/events/actions", DAY)
    assert refused.status_code == 403
    assert "ada may not trigger rollup" in refused.json()["detail"]
    assert view.airflow.created == [] and view.airflow.scheduled == []  # Airflow not asked
    # allowed to prepare, then the role is taken away: the confirmation is refused too
    view.gate.forbidden = set()
    action_id = view.post("/api/facts/events/actions", DAY).json()["action_id"]
    view.gate.forbidden = {"ingest"}
    assert view.post(f"/api/actions/{action_id}/confirm").status_code == 403
    assert view.airflow.created == [] and view.gate.audit == []
    # an action is its preparer's: another user may watch it, not confirm it
    view.gate.forbidden = set()
    view.user[0] = User("bob")
    other = view.post(f"/api/actions/{action_id}/confirm")
    assert other.status_code == 403 and "prepared by ada" in other.json()["detail"]
    assert view.client.get(f"/api/actions/{action_id}").status_code == 200
    assert view.airflow.created == []


def test_the_clis_refusals_paused_unless_unpause_and_a_running_backfill(view: View) -> None:
    view.airflow.paused = {"rollup"}
    paused = view.post("/api/facts/events/actions", DAY)
    assert paused.status_code == 409 and "rollup is paused" in paused.json()["detail"]
    action = view.post("/api/facts/events/actions", {**DAY, "unpause": True}).json()
    assert action["unpause"] == ["rollup"] and view.airflow.unpaused == []
    view.post(f"/api/actions/{action['action_id']}/confirm")
    assert view.airflow.unpaused == ["rollup"]
    assert view.gate.audit[0][3]["unpaused"] == ["rollup"]
    view.airflow.running["ingest"] = 99  # a backfill someone else started
    running = view.post("/api/facts/events/actions", DAY)
    assert running.status_code == 409 and "backfill 99 of ingest" in running.json()["detail"]


def test_concurrent_confirmations_create_one_set(produced: Catalog) -> None:
    """Two requests at once (a double click reaching two workers): one creates."""
    airflow, gate = ViewFake(produced, hold=True), Gate()
    store = ActionStore(produced.kv)

    def actions() -> Actions:
        return Actions(produced, store, airflow, User("ada"), gate.may_trigger, gate.log)

    from airflow_partitions.ui.action_model import ActionBody

    action_id = actions().prepare("events", ActionBody(**DAY))["action_id"]
    barrier = threading.Barrier(4)
    answers: list[Any] = []

    def confirm() -> None:
        barrier.wait()
        answers.append(actions().confirm(action_id))

    threads = [threading.Thread(target=confirm) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [c[0] for c in airflow.created] == ["ingest"]
    assert sorted(a["repeated"] for a in answers) == [False, True, True, True]
    assert [e[2] for e in gate.audit] == [None, "ingest"]


def test_a_failed_stage_is_named_and_the_next_is_not_started(view: View) -> None:
    import datetime as dt

    view.airflow.fail = {dt.datetime(2015, 1, 2, 21, tzinfo=dt.UTC)}
    action_id = view.post("/api/facts/events/actions", DAY).json()["action_id"]
    view.post(f"/api/actions/{action_id}/confirm")
    for _ in range(2):  # the ingest's runs finish, one failed
        progress = view.client.get(f"/api/actions/{action_id}").json()
    assert progress["state"] == "failed" and progress["next_ready"] is False
    assert progress["failure"] == ("stage HOURLY: ingest backfill 1: 1 run(s) failed; "
                                   "failed tasks: register")
    assert progress["stages"][0]["backfills"][0]["state"] == "failed"
    view.post(f"/api/actions/{action_id}/confirm")
    assert [c[0] for c in view.airflow.created] == ["ingest"]  # the rollup never starts


def test_the_act_section_escapes_its_values_and_draws_without_innerhtml() -> None:
    from airflow_partitions.ui.page_actions import SCRIPT, actions_html

    html = actions_html({"fact": "e'<b>", "start": "2024-01-01T00:00:00+00:00",
                         "end": "x\"><script>"}, "/p'q")
    assert "<b>" not in html and "<script>x" not in html and "\"><script>" not in html
    assert "data-fact='e&#x27;&lt;b&gt;'" in html and "data-root='/p&#x27;q'" in html
    assert "innerHTML" not in SCRIPT and "outerHTML" not in SCRIPT and "eval(" not in SCRIPT


def test_the_fact_page_has_the_act_section(view: View) -> None:
    page = view.client.get("/facts/events", params=DAY).text
    assert "<section id='act'" in page and "id='do-plan'" in page and "id='do-restate'" in page
    assert f"data-start='{DAY['start']}'" in page


def test_one_dags_backfills_of_a_stage_run_one_after_the_other(view: View,
                                                                produced: Catalog) -> None:
    produced.register("raw", "HOURLY", {"dt": "2015-01-02-22", "region": "eu"})
    evening = {"start": "2015-01-02T18:00:00+00:00", "end": "2015-01-03T00:00:00+00:00"}
    action = view.post("/api/facts/events/actions", evening).json()
    assert [(b["dag_id"], b["start"][11:16], b["end"][11:16])
            for s in action["stages"] for b in s["backfills"]] == [
        ("ingest", "20:00", "21:00"), ("ingest", "23:00", "23:00")]
    view.airflow.hold = True
    view.post(f"/api/actions/{action['action_id']}/confirm")
    assert len(view.airflow.created) == 1  # Airflow runs one backfill per DAG
    view.airflow.hold = False
    for _ in range(2):
        progress = view.client.get(f"/api/actions/{action['action_id']}").json()
    assert progress["next_ready"] is True
    view.post(f"/api/actions/{action['action_id']}/confirm")
    assert [(c[0], c[1].hour) for c in view.airflow.created] == [("ingest", 20), ("ingest", 23)]


def test_a_backfill_airflow_lost_is_created_again_once(view: View) -> None:
    """Airflow removes a backfill whose runs its locked database refused, sometimes after its
    id reached us: the action shows it waiting and the next confirmation creates it anew."""
    action_id = view.post("/api/facts/events/actions", DAY).json()["action_id"]
    view.airflow.hold = True
    view.post(f"/api/actions/{action_id}/confirm")
    view.airflow.lose(1)
    lost = view.client.get(f"/api/actions/{action_id}").json()
    assert lost["state"] == "running" and lost["next_ready"] is True, lost
    [row] = lost["stages"][0]["backfills"]
    assert (row["state"], row["states"], row["backfill_id"]) == ("waiting", {"lost": 1}, None)
    assert lost["stages"][1]["backfills"][0]["state"] == "waiting"
    for _ in range(2):  # a double click: one new backfill
        view.post(f"/api/actions/{action_id}/confirm")
    assert [c[0] for c in view.airflow.created] == ["ingest", "ingest"]
    view.airflow.hold = False
    for _ in range(3):
        progress = view.client.get(f"/api/actions/{action_id}").json()
        if progress["next_ready"]:
            view.post(f"/api/actions/{action_id}/confirm")
    for _ in range(2):
        done = view.client.get(f"/api/actions/{action_id}").json()
    assert done["state"] == "coverable", done
    assert [c[0] for c in view.airflow.created] == ["ingest", "ingest", "rollup"]
    assert done["stages"][0]["backfills"][0]["backfill_id"] == 2
    assert [extra.get("backfill_id") for _, _, _, extra in view.gate.audit] == [None, 1, 2, 3]
