"""Server-rendered HTML of the Partitions view: inline SVG lanes, a range form, zoom links.

No build step and no script: the page is drawn from the JSON the API serves
(:func:`airflow_partitions.lanes.fact_lanes.fact_view`), one rectangle per stretch, and
stretches narrower than a pixel that fall on an already drawn pixel of the same state are
skipped, so a page never holds more rectangles than lanes times pixels. Every value is
HTML-escaped (``esc``), including those in links.
"""

from __future__ import annotations

import datetime as dt
import html
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from airflow_partitions.periods import UpdatePeriod

if TYPE_CHECKING:
    from airflow_partitions.lanes import (
        FactJson,
        FactViewJson,
        LaneJson,
        SlicedStorageJson,
        StretchJson,
    )

WIDTH: Final = 960
LABEL: Final = 190
ROW: Final = 22
#: How many lanes of one dimension's group are drawn; the rest are counted (JSON: all).
SHOWN_LANES: Final = 25
COLORS: Final = {"registered": "#74c476", "missing": "#de2d26", "stale": "#fd8d3c",
                 "not_applicable": "#e0e0e0", "cover": "#2171b5"}
#: What the legend calls each state.
LEGEND: Final = {"registered": "registered", "missing": "missing", "stale": "stale",
                 "not_applicable": "not applicable (sticks out of the range, or a slice that "
                                   "is not required then)", "cover": "cover"}
STYLE: Final = """
body{font-family:system-ui,sans-serif;margin:1rem;color:#222}
a{color:#2171b5}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}
.status{padding:.5rem;border-left:4px solid #de2d26;background:#fdecea;font-family:monospace}
.status.ok{border-color:#31a354;background:#edf8e9}
.status.ok.stale{border-color:#fd8d3c;background:#fff3e8}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px}
form input{width:16rem}.zoom a{margin-right:1rem}
"""


def esc(value: object) -> str:
    """HTML-escape anything (quotes too: values end up in attributes)."""
    return html.escape(str(value), quote=True)


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{STYLE}</style></head><body>{body}</body></html>")


def facts_page(facts: Iterable[FactJson], root: str) -> str:
    """The list of facts, each linking to its view."""
    rows = "".join(
        f"<tr><td><a href='{esc(root)}/facts/{esc(urllib.parse.quote(f['name'], safe=''))}'>"
        f"{esc(f['name'])}</a></td><td>{esc(', '.join(f['time_columns']))}</td>"
        f"<td>{esc(f['tz'])}</td><td>"
        + esc("; ".join(f"{s['name']} ({', '.join(s['periods'])})" for s in f["storages"]))
        + "</td></tr>"
        for f in facts
    )
    body = ("<h1>Partitions</h1><table><tr><th>fact</th><th>time columns</th><th>zone</th>"
            f"<th>storages (periods)</th></tr>{rows}</table>")
    return page("Partitions", body)


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


class Scale:
    """Instants of the window to x pixels of the drawing area."""

    def __init__(self, start: dt.datetime, end: dt.datetime) -> None:
        self.start = start
        self.seconds = max((end - start).total_seconds(), 1e-6)

    def x(self, instant: dt.datetime) -> float:
        offset = (instant - self.start).total_seconds() / self.seconds
        return LABEL + min(max(offset, 0.0), 1.0) * WIDTH


def view_link(root: str, fact: str, query: Mapping[str, str | None], **changes: str | None
              ) -> str:
    """The view's URL with some query parameters changed (None removes one)."""
    params = {k: v for k, v in {**query, **changes}.items() if v is not None}
    path = f"{root}/facts/{urllib.parse.quote(fact, safe='')}"
    return path + ("?" + urllib.parse.urlencode(params) if params else "")


#: One stretch to draw: (state, start, end, tooltip, link target or None).
Item = tuple[str, dt.datetime, dt.datetime, str, tuple[dt.datetime, dt.datetime] | None]
#: Drawing order: later states are drawn on top, so a one-hour hole in a century stays visible.
LAYERS: Final = ("not_applicable", "cover", "registered", "stale", "missing")
#: States whose sub-pixel stretches are ticks over the bar (the others are the bar).
TICKS: Final = frozenset({"stale", "missing"})


def rects(items: Iterable[Item], scale: Scale, y: int, link: Callable[[dt.datetime,
          dt.datetime], str]) -> str:
    """Rectangles for the items, merged per state, never more than one per pixel and state.

    A stretch is drawn full height, at least a pixel wide, and merges with a neighbour of its
    state that it touches on screen (so registered stretches around sub-pixel holes become one
    bar). A missing or stale stretch narrower than a pixel is instead a one-pixel tick in the
    lane's lower third, merged only with ticks of the same pixel: a thousand one-hour holes in
    a century show as ticks under a registered bar, not as a lane painted red. A merged
    rectangle keeps its first stretch's link and says how many it stands for.
    """
    merged: dict[tuple[str, bool], list[list[Any]]] = {}
    for state, start, end, tip, target in items:
        x0, x1 = scale.x(start), scale.x(end)
        narrow = x1 - x0 < 1
        if narrow:
            x0 = float(int(x0))
            x1 = x0 + 1
        thin = narrow and state in TICKS
        runs = merged.setdefault((state, thin), [])
        if runs and (x0 < runs[-1][1] if thin else x0 <= runs[-1][1]):
            runs[-1][1] = max(runs[-1][1], x1)
            runs[-1][4] += 1
        else:
            runs.append([x0, x1, tip, target, 1])
    out: list[str] = []
    height = ROW - 6
    for state in LAYERS:
        for thin in (False, True):
            top, tall = (y + height * 2 // 3, height - height * 2 // 3) if thin else (y, height)
            for x0, x1, tip, target, count in merged.get((state, thin), ()):
                more = f" and {count - 1:,} more {state} stretches here" if count > 1 else ""
                rect = (f"<rect x='{x0:.2f}' y='{top}' width='{x1 - x0:.2f}' height='{tall}' "
                        f"fill='{COLORS[state]}'><title>{esc(tip + more)}</title></rect>")
                out.append(f"<a href='{esc(link(*target))}'>{rect}</a>" if target else rect)
    return "".join(out)


#: The calendar's ends as instants: a link past them names no partition (and overflows).
_FIRST = dt.datetime(1, 1, 1, tzinfo=dt.UTC)
_LAST = dt.datetime(9999, 12, 31, tzinfo=dt.UTC)


def _at(base: dt.datetime, delta: dt.timedelta) -> str:
    """``base + delta`` in ISO form, kept inside the calendar: a range reaching
    year 1 or 9999 must not make the zoom links overflow (and the page answer 500)."""
    try:
        moved = base + delta
    except OverflowError:
        moved = _FIRST if delta < dt.timedelta(0) else _LAST
    return min(max(moved, _FIRST), _LAST).isoformat()


def _zoom_to(root: str, fact: str, query: Mapping[str, str | None], start: dt.datetime,
             end: dt.datetime) -> str:
    pad = (end - start) / 4
    return view_link(root, fact, query, start=_at(start, -pad), end=_at(end, pad))


def lanes_svg(view: FactViewJson, root: str, query: Mapping[str, str | None]) -> str:
    """One lane per (storage, period), the cover lane, and a time axis."""
    start, end = _instant(view["start"]), _instant(view["end"])
    scale = Scale(start, end)
    fact = view["fact"]

    def zoom(s0: dt.datetime, s1: dt.datetime) -> str:
        return _zoom_to(root, fact, query, s0, s1)

    parts: list[str] = []
    y = 4
    for lane in view["lanes"]:
        label = f"{lane['storage']} {lane['period']}"
        parts.append(f"<text x='4' y='{y + 12}' font-size='12'>{esc(label)}</text>")
        parts.append(rects(_items(lane["stretches"], lane["period"]), scale, y, zoom))
        y += ROW
    cover_items: list[Item] = [("cover", _instant(r["start"]), _instant(r["end"]),
                    f"cover {r['storage']} {r['period']} ({r['partitions']})", None)
                   for r in view["cover"]["runs"]]
    cover_items += [("missing", _instant(m["start"]), _instant(m["end"]),
                     m["text"] or f"missing {m['start']}/{m['end']}",
                     (_instant(m["start"]), _instant(m["end"])))
                    for m in view["cover"]["missing"]]
    parts.append(f"<text x='4' y='{y + 12}' font-size='12' font-weight='bold'>cover</text>")
    parts.append(rects(sorted(cover_items, key=lambda i: i[1]), scale, y, zoom))
    y += ROW
    return _svg(parts, start, end, y)


def _items(stretches: Iterable[StretchJson], period: str, what: str = "") -> list[Item]:
    """A lane's stretches to draw; missing and stale ones link to a zoom on them."""
    items: list[Item] = []
    for s in stretches:
        s0, s1 = _instant(s["start"]), _instant(s["end"])
        text = s["first"] if s["partitions"] == 1 else f"{s['first']}..{s['last']}"
        tip = f"{s['state']} {period} {text} ({s['partitions']}){what}"
        target = None if s["state"] in ("registered", "not_applicable") else (s0, s1)
        items.append((s["state"], s0, s1, tip, target))
    return items


def _svg(parts: list[str], start: dt.datetime, end: dt.datetime, y: int) -> str:
    """The drawn lanes, a time axis under them at ``y``, as one SVG element."""
    for i in range(5):
        at = start + (end - start) * i / 4
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        parts.append(f"<text x='{LABEL + WIDTH * i / 4:.0f}' y='{y + 10}' font-size='11' "
                     f"text-anchor='{anchor}'>{esc(f'{at.year:04d}-' + at.strftime('%m-%d %H:%M'))}"
                     "</text>")
    height = y + 16
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{LABEL + WIDTH + 10}' "
            f"height='{height}' role='img'>{''.join(parts)}</svg>")


def slices_html(view: FactViewJson, root: str, query: Mapping[str, str | None]) -> str:
    """Per dimensioned (storage, period), each dimension's group of slice lanes, collapsible
    (``<details>``, open when something is missing), the worst first.

    Bounded: a group draws its :data:`SHOWN_LANES` worst lanes and counts the rest in one line
    (the JSON lists every lane), so a thousand regions cost a few dozen lanes of SVG.
    """
    start, end = _instant(view["start"]), _instant(view["end"])
    scale = Scale(start, end)
    fact = view["fact"]
    api = view_link(root + "/api", fact, {**query, "start": view["start"], "end": view["end"]})

    def zoom(s0: dt.datetime, s1: dt.datetime) -> str:
        return _zoom_to(root, fact, query, s0, s1)

    out: list[str] = []
    for sliced in view.get("slices", ()):
        out.append(f"<h3>{esc(sliced['storage'])} {esc(sliced['period'])}: "
                   f"{sliced['slices']:,} slices over {esc(', '.join(sliced['dimensions']))}, "
                   f"{sliced['incomplete']:,} incomplete</h3>")
        for group in sliced["groups"]:
            parts: list[str] = []
            y = 4
            for lane in group["lanes"][:SHOWN_LANES]:
                parts.append(f"<text x='4' y='{y + 12}' font-size='12'>"
                             f"{esc(lane['label'])}</text>")
                parts.append(rects(_items(lane["stretches"], sliced["period"],
                                           f" for {lane['label']}"), scale, y, zoom))
                y += ROW
            rest = group["lanes"][SHOWN_LANES:]
            bad = [lane for lane in rest if lane["missing"]]
            more = (f"<p>... and {len(rest):,} more: {len(bad):,} incomplete "
                    f"({sum(lane['missing'] for lane in bad):,} {esc(sliced['period'])} "
                    f"partitions missing), {len(rest) - len(bad):,} complete; "
                    f"<a href='{esc(api)}'>every lane in the JSON</a></p>" if rest else "")
            opened = " open" if group["incomplete"] else ""
            out.append(f"<details class='slices'{opened}><summary>{esc(group['summary'])}"
                       f"</summary>{_svg(parts, start, end, y)}{more}</details>")
    notes = "".join(f"<li>{esc(n['storage'])}: {esc(n['note'])}</li>"
                    for n in view.get("undeclared", ()))
    return ("<h2>Slices</h2>" + "".join(out) if out else "") + (
        f"<ul class='notes'>{notes}</ul>" if notes else "")


def _zoom_links(view: FactViewJson, root: str, query: Mapping[str, str | None]) -> str:
    start, end = _instant(view["start"]), _instant(view["end"])
    span, fact = end - start, view["fact"]
    mid = start + span / 2
    links = {
        "whole history": view_link(root, fact, query, start=None, end=None),
        "zoom out ×4": view_link(root, fact, query, start=_at(mid, -span * 2),
                                 end=_at(mid, span * 2)),
        "zoom in ×4": view_link(root, fact, query, start=_at(mid, -span / 8),
                                end=_at(mid, span / 8)),
        "← earlier": view_link(root, fact, query, start=_at(start, -span / 2),
                               end=_at(end, -span / 2)),
        "later →": view_link(root, fact, query, start=_at(start, span / 2),
                             end=_at(end, span / 2)),
    }
    return "<p class='zoom'>" + "".join(
        f"<a href='{esc(href)}'>{esc(name)}</a>" for name, href in links.items()) + "</p>"


def _range_form(view: FactViewJson) -> str:
    columns = "".join(
        f"<option{' selected' if c == view['time_column'] else ''}>{esc(c)}</option>"
        for c in view["time_columns"])
    # two radios, not a checkbox over a hidden default: one ``stale`` in the address
    checked, unchecked = (" checked", "") if view["stale_checked"] else ("", " checked")
    return (
        "<form method='get'>"
        f"<label>start <input name='start' value='{esc(view['start'])}'></label> "
        f"<label>end <input name='end' value='{esc(view['end'])}'></label> "
        f"<label>time column <select name='time_column'>{columns}</select></label> "
        "stale: "
        f"<label><input type='radio' name='stale' value='true'{checked} style='width:auto'> "
        "checked</label> "
        f"<label><input type='radio' name='stale' value='false'{unchecked} "
        "style='width:auto'> not checked</label> <button>show</button></form>"
    )


#: What the Lanes table counts, said under it.
COUNTS_NOTE: Final = (
    "Counts are time partitions of the lane's period (a HOURLY count is hours). A storage with "
    "declared dimensions counts a time partition registered once every required slice has "
    "its row; its registered cell also says how many slice partitions that is.")


def registered_text(lane: LaneJson, sliced: SlicedStorageJson | None) -> str:
    """A lane's registered count with its unit: ``72 hours``; for a dimensioned lane, also
    the slice partitions: ``72 hours x 2 regions = 144 region-hours`` (with a multiplication
    sign), or, when some slices have hours the others lack, the slice lanes' sum."""
    count = lane["registered"]
    spec = UpdatePeriod.of(lane["period"]).spec
    text = f"{count:,} {spec.unit_word(count)}"
    if sliced is None:
        return text
    dims = sliced["dimensions"]
    noun = dims[0] if len(dims) == 1 else "slice"
    every = [g for g in sliced["groups"] if g["kind"] == "slices"][-1]["lanes"]
    pairs = sum(s["registered"] for s in every)
    joined = f"{noun}-{spec.units}"
    if pairs == count * sliced["slices"]:
        return (f"{text} × {sliced['slices']:,} {noun}{'s' * (sliced['slices'] != 1)} = "
                f"{pairs:,} {joined}")
    return f"{text} with every required {noun} ({pairs:,} {joined} registered)"


def fact_page(view: FactViewJson, root: str, query: Mapping[str, str | None],
              actions: str = "") -> str:
    """One fact: the range box (status line, what is missing), zoom links, lanes, totals;
    ``actions``: the "Act" section's HTML (:mod:`.page_actions`), under the lanes."""
    ok = (" ok" if view["coverable"] else "") + (" stale" if view.get("stale_used") else "")
    missing = "".join(f"<li>{esc(m['text'])}</li>" for m in view["cover"]["missing"]
                      if m["text"])
    more = len(view["cover"]["missing"]) - missing.count("<li>")
    if more > 0:
        missing += f"<li>... and {more:,} more missing ranges (zoom in to see them)</li>"
    sliced = {(s["storage"], s["period"]): s for s in view.get("slices", ())}
    totals = "".join(
        f"<tr><td>{esc(lane['storage'])}</td><td>{esc(lane['period'])}</td>"
        f"<td>{esc(registered_text(lane, sliced.get((lane['storage'], lane['period']))))}</td>"
        f"<td>{lane['missing']:,}</td><td>{lane['stale']:,}</td>"
        f"<td>{lane.get('not_applicable', 0):,}</td>"
        f"<td>{len(lane['stretches']):,}</td></tr>" for lane in view["lanes"])
    legend = "".join(f"<span style='background:{c}'></span>{esc(LEGEND[n])}"
                     for n, c in COLORS.items())
    body = (
        f"<p><a href='{esc(root)}/'>Partitions</a> / {esc(view['fact'])} "
        f"({esc(view['tz'])}, time column {esc(view['time_column'])})</p>"
        f"<h1>{esc(view['fact'])}</h1>{_range_form(view)}"
        f"<div id='view-range'><p class='status{ok}'>{esc(view['status'])}</p>"
        + _zoom_links(view, root, query)
        + f"<p class='legend'>{legend}</p>" + lanes_svg(view, root, query) + "</div>"
        + actions + "<div id='view-more'>"
        + (f"<details><summary>missing ranges ({len(view['cover']['missing']):,})</summary>"
           f"<ul>{missing}</ul></details>" if missing else "")
        + slices_html(view, root, query)
        + "<h2>Lanes</h2><table><tr><th>storage</th><th>period</th><th>registered</th>"
        f"<th>missing</th><th>stale</th><th>n/a</th><th>stretches</th></tr>{totals}</table>"
        f"<p class='note'>{esc(COUNTS_NOTE)}</p>"
        f"<p>history: {esc(view['extent']['start'])} → {esc(view['extent']['end'])}</p></div>"
    )
    return page(f"{view['fact']} · Partitions", body)
