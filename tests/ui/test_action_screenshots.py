"""The "Act" section as a browser draws it: the plan, the confirmation and the progress.

Headless Chromium loads the real fact page, with the answers of the real endpoints (over the
stand-in Airflow of :mod:`tests.ui.fakes`) handed to the page's own drawing functions; the DOM
it ends with must show each answer, and the screenshot must not be blank. Skipped without
Chromium (``apt-get install chromium``). ``PARTITIONS_SCREENSHOTS=<dir>`` keeps the pictures
(docs/images/ holds the ones docs/view.md shows).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html import unescape as html_unescape
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.ui.conftest import FIRST_HOURS
from tests.ui.fakes import User, View
from tests.ui.test_screenshot import CHROMIUM, png_pixels

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")
DAY = {"start": "2015-01-02T00:00:00+00:00", "end": "2015-01-03T00:00:00+00:00"}


def shoot(page: str, draw: str, doc: Any, tmp_path: Path, name: str) -> tuple[Path, str]:
    """The page with ``partitionsView.<draw>(doc)`` run at load: its screenshot and final DOM."""
    data = json.dumps(doc).replace("</", "<\\/")
    script = (f"<script>window.partitionsView.{draw}({data});"
              "document.getElementById('act').scrollIntoView();</script>")
    html = tmp_path / f"{name}.html"
    html.write_text(page.replace("</body>", script + "</body>"))
    shot = tmp_path / f"{name}.png"
    flags = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--virtual-time-budget=3000"]
    done = subprocess.run([*flags, f"--screenshot={shot}", "--window-size=1200,900",
                           html.as_uri()], capture_output=True, text=True, timeout=120,
                          check=False)
    assert shot.exists(), done.stderr[-2000:]
    dom = subprocess.run([*flags, "--dump-dom", html.as_uri()], capture_output=True, text=True,
                         timeout=120, check=False).stdout
    keep = os.environ.get("PARTITIONS_SCREENSHOTS")
    if keep:
        shutil.copy(shot, Path(keep) / f"view-{name}.png")
    return shot, dom


def not_blank(shot: Path) -> None:
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1200, 900)
    assert len(set(pixels)) > 16, "a blank page: nothing was drawn"


def test_chromium_draws_the_plan_the_confirmation_and_the_progress(view: View,
                                                                   tmp_path: Path) -> None:
    page = view.client.get("/facts/events", params=DAY).text
    plan = view.post("/api/facts/events/plan", DAY).json()
    shot, dom = shoot(page, "renderPlan", plan, tmp_path, "plan")
    not_blank(shot)
    assert "Plan: 5 run(s) for events" in dom and "after these runs the range is coverable" \
        in dom, dom[-3000:]
    action = view.post("/api/facts/events/actions", DAY).json()
    shot, dom = shoot(page, "renderConfirm", action, tmp_path, "confirm")
    not_blank(shot)
    assert "Confirm: create 2 backfill(s)" in dom and "as ada" in dom, dom[-3000:]
    view.post(f"/api/actions/{action['action_id']}/confirm")
    progress = view.client.get(f"/api/actions/{action['action_id']}").json()
    shot, dom = shoot(page, "renderProgress", progress, tmp_path, "progress")
    not_blank(shot)
    assert "Progress: running" in dom and "/dags/ingest/runs/" in dom, dom[-3000:]


SELECT = """<script>
const bar = document.getElementById('selbar'), box = bar.getBoundingClientRect();
const x = (f) => box.left + Number(act.dataset.label) + f * Number(act.dataset.width);
const fire = (type, f) => bar.dispatchEvent(new MouseEvent(type, {clientX: x(f), bubbles: true}));
const read = () => document.getElementById('sel-start').value + '|' +
                   document.getElementById('sel-end').value;
for (const f of [0.5, 0.25]) { fire('mousedown', f); fire('mouseup', f); fire('click', f); }
document.body.dataset.clicks = read();
fire('mousedown', 0.75); fire('mouseup', 1.0); fire('click', 1.0);
document.body.dataset.drag = read();
</script>"""


def test_a_drag_or_two_clicks_on_the_bar_select_a_range(view: View, tmp_path: Path) -> None:
    page = view.client.get("/facts/events", params=DAY).text
    html = tmp_path / "select.html"
    html.write_text(page.replace("</body>", SELECT + "</body>"))
    dom = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                          "--window-size=1200,900", "--dump-dom", html.as_uri()],
                         capture_output=True, text=True, timeout=120, check=False).stdout
    assert 'data-clicks="2015-01-02T06:00:00.000Z|2015-01-02T12:00:00.000Z"' in dom, \
        dom[-2000:]
    assert 'data-drag="2015-01-02T18:00:00.000Z|2015-01-03T00:00:00.000Z"' in dom, dom[-2000:]


DRAG_AND_PLAN = """<script>
const bar = document.getElementById('selbar'), box = bar.getBoundingClientRect();
const x = (f) => box.left + Number(act.dataset.label) + f * Number(act.dataset.width);
const fire = (type, f) => bar.dispatchEvent(new MouseEvent(type, {clientX: x(f), bubbles: true}));
window.fetch = async (url, opts) => { document.body.dataset.sent = opts.body;
  return new Response(JSON.stringify(ANSWER), {status: 200}); };
fire('mousedown', 0.3); fire('mouseup', 0.9); fire('click', 0.9);
document.getElementById('do-plan').click();
setTimeout(() => { document.body.dataset.shown = document.getElementById('sel-start').value +
  '|' + document.getElementById('sel-end').value; }, 200);
</script>"""


def test_a_dragged_selection_is_planned_snapped_to_whole_partitions(view: View,
                                                                    tmp_path: Path) -> None:
    """A drag gives 07:12 to 21:36; the page asks for the plan snapped outward (its default)
    and shows the bounds the plan used."""
    page = view.client.get("/facts/events", params=DAY).text
    assert "<option value='outer' selected>outer: widen to whole HOURLY partitions" in page
    sent = {"start": "2015-01-02T07:12:00.000Z", "end": "2015-01-02T21:36:00.000Z",
            "align": "outer", "stale": False}
    answer = view.post("/api/facts/events/plan", sent)
    assert answer.status_code == 200, answer.text
    assert (answer.json()["start"], answer.json()["end"]) == (
        "2015-01-02T07:00:00+00:00", "2015-01-02T22:00:00+00:00")
    script = DRAG_AND_PLAN.replace("ANSWER", answer.text.replace("</", "<\\/"))
    html = tmp_path / "drag.html"
    html.write_text(page.replace("</body>", script + "</body>"))
    dom = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                          "--window-size=1200,900", "--virtual-time-budget=3000",
                          "--dump-dom", html.as_uri()],
                         capture_output=True, text=True, timeout=120, check=False).stdout
    found = dict(re.findall(r'data-(sent|shown)="([^"]*)"', dom))
    assert json.loads(html_unescape(found.get("sent", "null"))) == sent, dom[-2000:]
    assert found.get("shown") == "2015-01-02T07:00:00+00:00|2015-01-02T22:00:00+00:00", \
        dom[-2000:]
    assert '<div id="plan"><h3>Plan: ' in dom, dom[-3000:]


def run_page(page: str, script: str, tmp_path: Path, name: str) -> str:
    """The page with ``script`` added, as Chromium leaves its DOM (timers run in virtual
    time, so a poll of a few seconds costs none)."""
    html = tmp_path / f"{name}.html"
    html.write_text(page.replace("</body>", script + "</body>"))
    return subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                           "--window-size=1200,900", "--virtual-time-budget=20000",
                           "--dump-dom", html.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False).stdout


#: Airflow's answers, replaced: ``ANSWERS`` maps a part of the URL to the answers given in
#: turn (the last one again once used up); any other URL (the page itself) gets ``PAGE``.
STUB = """<script>
const answers = ANSWERS, page = PAGE;
window.fetch = async (url) => {
  for (const [part, docs] of Object.entries(answers)) {
    if (String(url).includes(part)) {
      const doc = docs.length > 1 ? docs.shift() : docs[0];
      return new Response(JSON.stringify(doc), {status: 200}); } }
  return new Response(page, {status: 200}); };
</script>"""


def stub(answers: dict[str, list[Any]], page: str = "") -> str:
    return (STUB.replace("ANSWERS", json.dumps(answers).replace("</", "<\\/"))
            .replace("PAGE", json.dumps(page).replace("</", "<\\/")))


def test_a_reopened_action_is_watched_and_its_end_redraws_the_lanes(view: View,
                                                                    tmp_path: Path) -> None:
    """The address's ``?action=`` reopens the progress; when the action turns coverable,
    the status line and the lanes above are drawn again from the page as it is now."""
    action_id = view.post("/api/facts/events/actions", DAY).json()["action_id"]
    view.airflow.hold = True
    running = view.post(f"/api/actions/{action_id}/confirm").json()
    before = view.client.get("/facts/events", params={**DAY, "action": action_id}).text
    view.airflow.hold = False
    for _ in range(4):
        done = view.client.get(f"/api/actions/{action_id}").json()
        if done["next_ready"]:
            view.post(f"/api/actions/{action_id}/confirm")
    assert done["state"] == "coverable", done
    after = view.client.get("/facts/events", params=DAY).text
    assert "<p class='status'>" in before and "<p class='status ok'>" in after
    perms = view.client.get("/api/facts/events/permissions").json()
    page = before.replace("<script>\n(function", stub(
        {"/permissions": [perms], f"/api/actions/{action_id}/confirm": [done],
         f"/api/actions/{action_id}": [running, running, done]}, after)
        + "<script>\n(function", 1)
    dom = run_page(page, "", tmp_path, "reopen")
    assert '<h3 class="ok">Progress: coverable</h3>' in dom, dom[-3000:]
    assert '<p class="status ok">' in dom and '<p class="status">' not in dom, dom[-3000:]
    lanes = re.search(r"<div id=\"view-range\">.*?</svg></div>", dom, re.S)
    assert lanes is not None and "fill=\"#de2d26\"" not in lanes.group(0), dom[-3000:]
    assert "fill='#de2d26'" in before  # the red lanes that were drawn before


def test_a_viewer_sees_disabled_buttons_and_why(view: View, tmp_path: Path) -> None:
    view.gate.forbidden = {"ingest", "rollup"}
    view.user[0] = User("viewer")
    perms = view.client.get("/api/facts/events/permissions").json()
    page = view.client.get("/facts/events", params=DAY).text.replace(
        "<script>\n(function", stub({"/permissions": [perms]}) + "<script>\n(function", 1)
    dom = run_page(page, "", tmp_path, "viewer")
    why = "viewer may not trigger ingest, rollup (Airflow's authorization)"
    for button in ("do-fill", "do-restate"):
        found = re.search(rf'<button id="{button}"[^>]*>', dom)
        assert found is not None and "disabled" in found.group(0), dom[-3000:]
        assert why.replace("'", "&#39;") in found.group(0) or why in found.group(0)
    assert re.search(r'<button id="do-plan">', dom)  # a read: any viewer may plan


def test_the_plan_names_each_runs_slice_and_what_its_cover_counts(regions: TestClient,
                                                                   tmp_path: Path) -> None:
    page = regions.get("/facts/ev", params=FIRST_HOURS).text
    plan = regions.post("/api/facts/ev/plan", json=FIRST_HOURS).json()
    _, dom = shoot(page, "renderPlan", plan, tmp_path, "sliced-plan")
    assert "no fresh HOURLY 2015-01-01-03 is registered for region=eu</td>" in dom, dom[-3000:]
    assert "is registered for region=us</td>" in dom
    assert ("the cover has 4 time partition(s) (4 HOURLY), each with every required slice; "
            "the status line above counts one partition per slice") in dom, dom[-3000:]
