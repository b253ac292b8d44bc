"""The fact page's "Act" section: Plan, Fill missing, Re-run stale, the confirmation, progress.

The rest of the page is drawn on the server without a script; acting needs requests, so this
section carries a small script that calls the same JSON endpoints scripts use (docs/view.md)
with the UI's own cookie, and draws their answers with ``textContent`` and DOM nodes only
(never ``innerHTML``), so no value from the catalog or Airflow is ever read as HTML. The
section's own values (mount point, fact, range) are HTML-escaped attributes (``esc``). A
selection inside the shown range: a drag or two clicks on the selection bar, or the inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from airflow_partitions.ui.page import LABEL, WIDTH, esc

if TYPE_CHECKING:
    from airflow_partitions.lanes import FactViewJson

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
  function renderPlan(p) {
    planned(p);  // the bounds as snapped to whole partitions
    const runs = p.runs.map((r, i) => [i + 1, r.dag_id, r.logical_date, r.storage + ' ' +
      r.period + ' ' + r.value, r.kind, r.reason]);
    const nodes = [el('h3', 'Plan: ' + p.runs.length + ' run(s) for ' + p.fact + ' [' +
      p.start + ', ' + p.end + ')' + (p.restate ? ', stale re-run' : ''))];
    p.stale.forEach((s) => nodes.push(el('p', s)));
    nodes.push(table(['#', 'DAG', 'logical date', 'makes', 'kind', 'why'], runs));
    p.unfillable.forEach((u) => nodes.push(el('p', 'no producer can fill [' + u.start + ', ' +
      u.end + '): ' + u.reason, 'refused')));
    nodes.push(el('p', 'after these runs the range is ' + (p.coverable_after ? 'coverable'
      : 'NOT coverable') + ': the cover has ' + p.cover_after.length + ' partition(s)',
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
  async function watch(id) {
    for (;;) {
      let a = renderProgress(await call('GET', '/api/actions/' + id));
      if (['coverable', 'not_coverable', 'failed'].includes(a.state)) return;
      if (a.next_ready) renderProgress(await call('POST', '/api/actions/' + id + '/confirm',
                                                  {}));
      await new Promise((r) => setTimeout(r, 3000));
    }
  }
  async function confirm(id) {
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
      try { renderConfirm(await call('POST', '/api/facts/' + encodeURIComponent(d.fact) +
          '/actions', {...range(), kind, unpause: $('sel-unpause').checked})); }
      catch (err) { refuse('confirm', err); }
    });
  }
  window.partitionsView = {renderPlan, renderConfirm, renderProgress};
})();
"""


def actions_html(view: FactViewJson, root: str, finest: str | None = None) -> str:
    """The section, over the range the page shows (the selection starts as all of it);
    ``finest``: the fact's finest period, what a selection snaps to."""
    unit = f"whole {finest} partitions" if finest else "whole partitions"
    attrs = {"root": root, "fact": view["fact"], "start": view["start"], "end": view["end"],
             "label": LABEL, "width": WIDTH}
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
        "<button id='do-restate'>Re-run stale</button></p>"
        "<div id='plan'></div><div id='confirm'></div><div id='progress'></div>"
        f"</section><script>{SCRIPT}</script>"
    )
