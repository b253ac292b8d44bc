"""The fact page's "Act" section: Plan, Fill missing, Re-run stale, the confirmation, progress.

The rest of the page is drawn on the server without a script; acting needs requests, so this
section carries a small script that calls the same JSON endpoints scripts use (docs/view.md)
with the UI's own cookie, and draws their answers with ``textContent`` and DOM nodes only
(never ``innerHTML``), so no value from the catalog or Airflow is ever read as HTML. The
section's own values (mount point, fact, range) are HTML-escaped attributes (``esc``). A
selection inside the shown range: a drag or two clicks on the selection bar, or the inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from airflow_partitions.ui.page import LABEL, WIDTH, esc

if TYPE_CHECKING:
    from airflow_partitions.lanes import FactViewJson
    from airflow_partitions.ui.action_model import ActionSummaryJson

STYLE: Final = """
#act{margin:1rem 0;padding:.5rem;border:1px solid #ccc}#act table{margin:.5rem 0}
#act td,#act th{border-bottom:1px solid #eee;font-size:13px}
#act .refused{color:#a50f15;font-weight:bold}#act .ok{color:#006d2c;font-weight:bold}
#selbar{cursor:crosshair}
"""

SCRIPT: Final = r"""
(function () {
  const act = document.getElementById('act');
  const d = act.dataset, t0 = Date.parse(d.start), t1 = Date.parse(d.end);
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => { const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls; return e; };
  const row = (cells, head) => { const tr = el('tr');
    cells.forEach((c) => { const td = el(head ? 'th' : 'td');
      if (c instanceof Node) td.appendChild(c); else td.textContent = String(c ?? '');
      tr.appendChild(td); }); return tr; };
  const table = (head, rows) => { const t = el('table'); t.appendChild(row(head, true));
    rows.forEach((r) => t.appendChild(row(r))); return t; };
  const link = (text, href) => { const a = el('a', text); a.href = href; a.target = '_top';
    return a; };
  const out = (id, ...nodes) => { const box = $(id); box.replaceChildren(...nodes); };
  const range = () => ({start: $('sel-start').value, end: $('sel-end').value,
                        align: $('sel-align').value || null});
  const planned = (doc) => { $('sel-start').value = doc.start; $('sel-end').value = doc.end; };
  let picks = [], downAt = null, dragged = false;
  const bar = $('selbar'), px = (t1 - t0) / Number(d.width);
  const at = (ev) => { const box = bar.getBoundingClientRect();
    const frac = (ev.clientX - box.left - Number(d.label)) / Number(d.width);
    return t0 + Math.min(Math.max(frac, 0), 1) * (t1 - t0); };
  const show = () => {
    const [a, b] = [Math.min(...picks), Math.max(...picks)];
    const x = (t) => Number(d.label) + (t - t0) / (t1 - t0) * Number(d.width);
    const mark = $('selmark'); mark.setAttribute('x', x(a));
    mark.setAttribute('width', Math.max(x(b) - x(a), 1));
    if (picks.length === 2) { $('sel-start').value = new Date(a).toISOString();
      $('sel-end').value = new Date(b).toISOString(); }
  };
  bar.addEventListener('mousedown', (ev) => { downAt = at(ev); dragged = false; });
  bar.addEventListener('mouseup', (ev) => {  // a drag selects at once
    const up = at(ev);
    if (downAt !== null && Math.abs(up - downAt) > 3 * px) { picks = [downAt, up];
      dragged = true; show(); }
    downAt = null;
  });
  bar.addEventListener('click', (ev) => {  // or two clicks
    if (dragged) { dragged = false; return; }
    picks = picks.length === 1 ? [picks[0], at(ev)] : [at(ev)];
    show();
  });
  async function call(method, path, body) {
    const opts = {method, credentials: 'same-origin', headers: {'Accept': 'application/json'}};
    if (body !== undefined) { opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body); }
    const resp = await fetch(d.root + path, opts);
    const doc = await resp.json().catch(() => ({detail: resp.statusText}));
    if (!resp.ok) throw new Error(typeof doc.detail === 'string' ? doc.detail
                                  : JSON.stringify(doc.detail));
    return doc;
  }
  const refuse = (id, err) => out(id, el('p', 'Refused: ' + err.message, 'refused'));
  // a run's slices, as the status line writes them: " for region=eu; region=us"
  const sliceText = (slices) => (slices && slices.length) ? ' for ' + slices.map(
    (s) => Object.entries(s).map(([k, v]) => k + '=' + v).join(', ')).join('; ') : '';
  // the plan's cover counts time partitions; the status line counts one per slice
  const coverCount = (refs) => { const by = {};
    refs.forEach((r) => { by[r.period] = (by[r.period] || 0) + 1; });
    return refs.length + ' time partition(s) (' + (Object.entries(by).map(([k, v]) => v +
      ' ' + k).join(', ') || 'none') + ')' + (d.sliced ? ', each with every required ' +
      'slice; the status line above counts one partition per slice' : ''); };
  function renderPlan(p) {
    planned(p);  // the bounds as snapped to whole partitions
    const runs = p.runs.map((r, i) => [i + 1, r.dag_id, r.logical_date, r.storage + ' ' +
      r.period + ' ' + r.value, r.kind, r.reason + sliceText(r.slices)]);
    const nodes = [el('h3', 'Plan: ' + p.runs.length + ' run(s) for ' + p.fact + ' [' +
      p.start + ', ' + p.end + ')' + (p.restate ? ', stale re-run' : ''))];
    p.stale.forEach((s) => nodes.push(el('p', s)));
    nodes.push(table(['#', 'DAG', 'logical date', 'makes', 'kind', 'why'], runs));
    p.unfillable.forEach((u) => nodes.push(el('p', 'no producer can fill [' + u.start + ', ' +
      u.end + '): ' + u.reason, 'refused')));
    nodes.push(el('p', 'after these runs the range is ' + (p.coverable_after ? 'coverable'
      : 'NOT coverable') + ': the cover has ' + coverCount(p.cover_after),
      p.coverable_after ? 'ok' : 'refused'));
    out('plan', ...nodes);
  }
  function renderConfirm(a) {
    planned(a);
    const rows = [];
    a.stages.forEach((s, n) => s.backfills.forEach((b) => rows.push([
      'stage ' + (n + 1) + ' ' + s.period, b.dag_id, b.start, b.end, b.runs,
      b.conf ? JSON.stringify(b.conf) : ''])));
    const go = el('button', 'Confirm: create ' + rows.length + ' backfill(s)');
    go.id = 'confirm-go';
    go.addEventListener('click', () => { go.disabled = true; confirm(a.action_id); });
    const nodes = [el('h3', (a.kind === 'restate' ? 'Re-run stale' : 'Fill missing') +
      ': these Airflow backfills will be created, as ' + a.user)];
    if (a.unpause.length) nodes.push(el('p', 'and these DAGs unpaused: ' +
                                           a.unpause.join(', ')));
    nodes.push(rows.length ? table(['stage', 'DAG', 'from', 'to', 'runs', 'conf'], rows)
                           : el('p', 'nothing to create: the range is already done'));
    nodes.push(go, el('span', ' action ' + a.action_id));
    out('confirm', ...nodes);
  }
  function renderProgress(a) {
    const rows = [];
    a.stages.forEach((s, n) => s.backfills.forEach((b) => {
      const runs = el('span');
      b.run_links.forEach((r) => { runs.appendChild(link(r.logical_date.slice(0, 16) + ' ' +
        r.state, r.url)); runs.appendChild(el('br')); });
      rows.push(['stage ' + (n + 1) + ' ' + s.period, link(b.dag_id, b.link),
                 b.backfill_id ?? '', b.state, Object.entries(b.states).map(
                   ([k, v]) => k + ' ' + v).join(', '), runs]);
    }));
    const nodes = [el('h3', 'Progress: ' + a.state + (a.repeated ? ' (already confirmed)'
      : ''), a.state === 'failed' ? 'refused' : a.state === 'coverable' ? 'ok' : ''),
      table(['stage', 'DAG', 'backfill', 'state', 'runs by state', 'runs'], rows)];
    if (a.failure) nodes.push(el('p', 'failed: ' + a.failure, 'refused'));
    if (a.status) nodes.push(el('p', a.status));
    out('progress', ...nodes);
    return a;
  }
  const DONE = ['coverable', 'not_coverable', 'failed'];
  // the address keeps the action, so a reload (or a link) reopens its progress
  const remember = (id) => { const url = new URL(location.href);
    url.searchParams.set('action', id); history.replaceState(null, '', url); };
  // the lanes, the status line and the totals, drawn again from the page as it is now
  async function refreshView() {
    const resp = await fetch(location.href, {credentials: 'same-origin'});
    const fresh = new DOMParser().parseFromString(await resp.text(), 'text/html');
    for (const id of ['view-range', 'view-more']) {
      const now = fresh.getElementById(id);
      if (now && $(id)) $(id).replaceWith(document.importNode(now, true));
    }
  }
  async function watch(id) {  // until the action ends; then the view above is redrawn
    for (;;) {
      let a = renderProgress(await call('GET', '/api/actions/' + id));
      if (DONE.includes(a.state)) { await refreshView(); return; }
      if (a.next_ready && me && a.user === me.user) renderProgress(await call(
        'POST', '/api/actions/' + id + '/confirm', {}));
      await new Promise((r) => setTimeout(r, Number(d.poll)));
    }
  }
  async function reopen(id) {
    try { const a = await call('GET', '/api/actions/' + encodeURIComponent(id));
          if (a.state === 'planned') { if (me && a.user === me.user) renderConfirm(a);
                                       else renderProgress(a); return; }
          renderProgress(a); if (!DONE.includes(a.state)) await watch(a.action_id); }
    catch (err) { refuse('progress', err); }
  }
  async function confirm(id) {
    remember(id);
    try { renderProgress(await call('POST', '/api/actions/' + id + '/confirm', {}));
          await watch(id); } catch (err) { refuse('progress', err); }
  }
  $('do-plan').addEventListener('click', async () => {
    try { renderPlan(await call('POST', '/api/facts/' + encodeURIComponent(d.fact) + '/plan',
                                {...range(), stale: $('sel-stale').checked})); }
    catch (err) { refuse('plan', err); }
  });
  for (const [id, kind] of [['do-fill', 'fill'], ['do-restate', 'restate']]) {
    $(id).addEventListener('click', async () => {
      out('progress');
      try { const a = await call('POST', '/api/facts/' + encodeURIComponent(d.fact) +
          '/actions', {...range(), kind, unpause: $('sel-unpause').checked});
          renderConfirm(a); remember(a.action_id); }
      catch (err) { refuse('confirm', err); }
    });
  }
  // who is signed in, and whether Airflow lets them trigger the fact's producers: the
  // buttons that could only fail are shown disabled, with why
  let me = null;
  async function mayAct() {
    try { me = await call('GET', '/api/facts/' + encodeURIComponent(d.fact) + '/permissions'); }
    catch (err) { return; }
    if (me.producers.length && me.may_not_trigger.length === me.producers.length) {
      const why = me.user + ' may not trigger ' + me.may_not_trigger.join(', ') +
        " (Airflow's authorization): ask an admin for a role that may run them";
      for (const id of ['do-fill', 'do-restate']) { $(id).disabled = true; $(id).title = why; }
      $('act-why').textContent = why;
    }
  }
  const ready = mayAct().then(() => d.action ? reopen(d.action) : null);
  window.partitionsView = {renderPlan, renderConfirm, renderProgress, refreshView, ready};
})();
"""


#: How often the progress is asked for while an action runs (milliseconds).
POLL_MS: Final = 3000


def recent_html(recent: Sequence[ActionSummaryJson]) -> str:
    """The fact's recent actions: when, what, by whom, where each stands, and a link that
    reopens its progress (``?action=<id>``)."""
    if not recent:
        return ""
    rows = "".join(
        f"<tr><td>{esc(a['prepared_at'] or '')}</td><td>{esc(a['kind'])}</td>"
        f"<td>{esc(a['start'])} → {esc(a['end'])}</td><td>{esc(a['user'])}</td>"
        f"<td>{esc(a['confirmed_by'] or '')}</td><td>{esc(a['state'])}</td>"
        f"<td><a href='{esc(a['progress'])}'>progress</a></td></tr>" for a in recent)
    return ("<details id='recent'><summary>recent actions "
            f"({len(recent)})</summary><table><tr><th>prepared</th><th>kind</th><th>range</th>"
            "<th>by</th><th>confirmed by</th><th>state (last seen)</th><th></th></tr>"
            f"{rows}</table></details>")


def actions_html(view: FactViewJson, root: str, finest: str | None = None,
                 recent: Sequence[ActionSummaryJson] = (), action: str | None = None) -> str:
    """The section, over the range the page shows (the selection starts as all of it);
    ``finest``: the fact's finest period, what a selection snaps to; ``recent``: the fact's
    recent actions, listed with links that reopen their progress; ``action``: the one whose
    progress the page opens (the address's ``?action=``)."""
    unit = f"whole {finest} partitions" if finest else "whole partitions"
    attrs = {"root": root, "fact": view["fact"], "start": view["start"], "end": view["end"],
             "label": LABEL, "width": WIDTH, "poll": POLL_MS, "action": action or "",
             "sliced": "yes" if view.get("slices") else ""}
    data = " ".join(f"data-{k}='{esc(v)}'" for k, v in attrs.items())
    return (
        f"<style>{STYLE}</style><section id='act' {data}><h2>Act</h2>"
        f"<svg id='selbar' width='{LABEL + WIDTH + 10}' height='18' role='img'>"
        f"<text x='4' y='13' font-size='12'>selection (drag, or 2 clicks)</text>"
        f"<rect x='{LABEL}' y='2' width='{WIDTH}' height='14' fill='#f0f0f0'></rect>"
        "<rect id='selmark' x='0' y='2' width='0' height='14' fill='#9ecae1'></rect></svg>"
        f"<p><label>from <input id='sel-start' value='{esc(view['start'])}'></label> "
        f"<label>to <input id='sel-end' value='{esc(view['end'])}'></label> "
        "<label>snap <select id='sel-align'>"
        f"<option value='outer' selected>outer: widen to {esc(unit)}</option>"
        f"<option value='inner'>inner: narrow to {esc(unit)}</option>"
        "<option value=''>exact: refuse a bound between partitions</option></select></label> "
        "<label><input type='checkbox' id='sel-stale' style='width:auto'> stale</label> "
        "<label><input type='checkbox' id='sel-unpause' style='width:auto'> unpause paused "
        "producers</label></p>"
        "<p><button id='do-plan'>Plan</button> <button id='do-fill'>Fill missing</button> "
        "<button id='do-restate'>Re-run stale</button> <span id='act-why'></span></p>"
        "<div id='plan'></div><div id='confirm'></div><div id='progress'></div>"
        f"{recent_html(recent)}</section><script>{SCRIPT}</script>"
    )
