"""A fact's recent actions, reopened by address; what the page says and offers to whom.

The app is the real one over a real catalog and action store; Airflow's side is the stand-in
of :mod:`tests.ui.fakes`. What the page's script does with these answers is drawn in headless
Chromium by ``test_action_screenshots.py``.
"""

from __future__ import annotations

import datetime as dt
import re

from fastapi.testclient import TestClient

from airflow_partitions.catalog import Catalog
from tests.ui.conftest import FIRST_HOURS
from tests.ui.fakes import User, View

DAY = {"start": "2015-01-02T00:00:00+00:00", "end": "2015-01-03T00:00:00+00:00"}
EVENING = {"start": "2015-01-02T18:00:00+00:00", "end": "2015-01-03T00:00:00+00:00"}


def test_the_facts_recent_actions_are_listed_newest_first_with_state_and_who(
        view: View) -> None:
    first = view.post("/api/facts/events/actions", DAY).json()
    second = view.post("/api/facts/events/actions", {**EVENING, "kind": "restate"}).json()
    listed = view.client.get("/api/facts/events/actions")
    assert listed.status_code == 200, listed.text
    rows = listed.json()
    assert [(r["action_id"], r["kind"], r["user"], r["state"], r["confirmed_by"])
            for r in rows] == [(second["action_id"], "restate", "ada", "planned", None),
                               (first["action_id"], "fill", "ada", "planned", None)]
    prepared = dt.datetime.fromisoformat(rows[0]["prepared_at"])
    assert abs(prepared - dt.datetime.now(dt.UTC)) < dt.timedelta(hours=1)
    assert rows[1]["progress"] == (
        f"/facts/events?start=2015-01-02T00%3A00%3A00%2B00%3A00&end=2015-01-03T00%3A00%3A00"
        f"%2B00%3A00&action={first['action_id']}")
    # confirmed and watched to its end: the list says what the last progress request saw
    view.post(f"/api/actions/{first['action_id']}/confirm")
    assert view.client.get("/api/facts/events/actions").json()[1]["state"] == "running"
    for _ in range(4):
        progress = view.client.get(f"/api/actions/{first['action_id']}").json()
        if progress["next_ready"]:
            view.post(f"/api/actions/{first['action_id']}/confirm")
    assert progress["state"] == "coverable", progress
    view.user[0] = User("viewer")  # anyone who may see the view may list
    rows = view.client.get("/api/facts/events/actions", params={"limit": 1}).json()
    assert [(r["action_id"], r["state"]) for r in rows] == [(second["action_id"], "planned")]
    later = view.client.get("/api/facts/events/actions").json()[1]
    assert (later["state"], later["confirmed_by"]) == ("coverable", "ada")
    assert view.client.get("/api/facts/nope/actions").status_code == 404
    assert view.client.get("/api/facts/events/actions", params={"limit": 0}).status_code == 422


def test_the_page_lists_the_actions_and_reopens_one_from_its_address(view: View) -> None:
    action = view.post("/api/facts/events/actions", DAY).json()
    link = view.client.get("/api/facts/events/actions").json()[0]["progress"]
    page = view.client.get(link).text
    assert f"data-action='{action['action_id']}'" in page
    assert "<details id='recent'><summary>recent actions (1)</summary>" in page
    assert f"<td>planned</td><td><a href='{link.replace('&', '&amp;')}'>progress</a>" in page
    plain = view.client.get("/facts/events", params=DAY).text
    assert "data-action=''" in plain
    # the address's action is not carried into the other links of the page
    assert page.count(f"action={action['action_id']}") == 1


def test_a_viewer_is_told_which_producers_they_may_not_trigger(view: View) -> None:
    allowed = view.client.get("/api/facts/events/permissions").json()
    assert allowed == {"user": "ada", "producers": ["ingest", "rollup"], "may_not_trigger": []}
    view.gate.forbidden = {"ingest", "rollup"}
    view.user[0] = User("viewer")
    refused = view.client.get("/api/facts/events/permissions").json()
    assert refused == {"user": "viewer", "producers": ["ingest", "rollup"],
                       "may_not_trigger": ["ingest", "rollup"]}
    assert view.client.get("/api/facts/nope/permissions").status_code == 404


def test_a_paused_producer_is_refused_in_the_pages_words(view: View) -> None:
    view.airflow.paused = {"rollup"}
    detail = view.post("/api/facts/events/actions", DAY).json()["detail"]
    assert "rollup is paused" in detail and "tick 'unpause paused producers'" in detail, detail
    assert "--unpause" not in detail
    assert view.airflow.scheduled == []  # refused before Airflow's dry runs


def test_the_range_form_puts_one_stale_in_the_address(view: View) -> None:
    for stale, checked in (("true", "true"), ("false", "false")):
        page = view.client.get("/facts/events", params={**DAY, "stale": stale}).text
        form = re.search(r"<form method='get'>.*?</form>", page, re.S)
        assert form is not None
        inputs = re.findall(r"<input type='(\w+)' name='stale' value='(\w+)'( checked)?",
                            form.group(0))
        assert [(kind, value) for kind, value, _ in inputs] == [("radio", "true"),
                                                                ("radio", "false")]
        assert [value for _, value, on in inputs if on] == [checked]  # one is submitted


def test_the_lanes_table_says_what_it_counts(regions: TestClient, catalog: Catalog) -> None:
    page = regions.get("/facts/ev", params=FIRST_HOURS).text
    assert "<td>3 hours × 2 regions = 6 region-hours</td>" in page, page[-3000:]
    assert "Counts are time partitions of the lane&#x27;s period" in page
    catalog.register("ev_raw", "HOURLY", {"dt": "2015-01-01-03", "region": "eu"})
    page = regions.get("/facts/ev", params=FIRST_HOURS).text
    assert "<td>3 hours with every required region (7 region-hours registered)</td>" in page


def test_the_plan_and_the_status_line_count_what_they_say(regions: TestClient) -> None:
    """The plan's cover counts time partitions, the status line one per slice: the page
    says so (``renderPlan`` is drawn in Chromium; here the numbers it is given)."""
    plan = regions.post("/api/facts/ev/plan", json=FIRST_HOURS).json()
    status = regions.get("/api/facts/ev", params=FIRST_HOURS).json()["status"]
    assert len(plan["cover_after"]) == 4 and "covered by 6 partition(s)" in status, status
    # one run per region, with the same reason: the page's why column names each slice
    assert [(r["reason"] == plan["runs"][0]["reason"], r["slices"]) for r in plan["runs"]] == [
        (True, [{"region": "eu"}]), (True, [{"region": "us"}])]
    page = regions.get("/facts/ev", params=FIRST_HOURS).text
    assert "data-sliced='yes'" in page
