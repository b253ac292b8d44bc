"""The Partitions view's coverage assets: per followed asset of the fact shown, the windows of
the shown range that were announced to Airflow and those still pending, with what each lacks.

Why here and not in :mod:`airflow_partitions.lanes.fact_lanes`: the answer comes from the
emission markers and one verified cover per pending window
(:func:`airflow_partitions.coverage_events.asset_windows`), a different cost from the lanes'
cached timelines; the route and the page section only read it. Every value is HTML-escaped.
Cost per page: one scan of the markers table's ``seen`` cells, then per followed asset of the
fact one prefix scan of its markers and at most :data:`DEFAULT_WINDOW_LIMIT` verified covers
(only windows without a marker are covered).
"""

from __future__ import annotations

import datetime as dt
from typing import Final

import pendulum

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import zoned_instant
from airflow_partitions.coverage_events import (
    DEFAULT_WINDOW_LIMIT,
    AssetWindowsJson,
    EmissionMarkers,
    asset_windows,
    extent,
    followed_assets,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.ui.page import esc

#: Status colours, as the lanes': announced green, pending red.
STATUS_COLORS: Final = {"announced": "#74c476", "known": "#c7e9c0", "claimed": "#9ecae1",
                        "due": "#fd8d3c", "pending": "#de2d26"}
DOT: Final = "display:inline-block;width:10px;height:10px;margin-right:4px;"
#: What the page says each status means.
STATUS_TEXT: Final = {
    "announced": "an asset event was posted to Airflow",
    "known": "coverable when the asset was first followed: never announced",
    "claimed": "being announced now (or its announcer died: taken over within a minute)",
    "due": "coverable now, announced at the next emission",
    "pending": "not coverable yet",
}


def coverage_assets_json(catalog: Catalog, fact: str, start: str | None, end: str | None, *,
                         limit: int = DEFAULT_WINDOW_LIMIT) -> list[AssetWindowsJson]:
    """Every followed coverage asset of ``fact`` with its windows in ``[start, end)`` (ISO-8601;
    without an offset, the fact's zone; default: the fact's whole history). An unknown fact is
    :class:`~airflow_partitions.catalog.UnknownFact`; a bad instant or a reversed range is
    :class:`~airflow_partitions.errors.InvalidInput`."""
    tz = catalog.get_fact(fact).tz
    markers = EmissionMarkers(catalog.rows.kv)
    specs = followed_assets(catalog, fact, markers)
    if not specs:
        return []
    span = extent(catalog, fact)
    default = span or (pendulum.from_timestamp(0, tz), pendulum.from_timestamp(0, tz))
    start_ = zoned_instant(start, tz, "start") if start else default[0]
    end_ = zoned_instant(end, tz, "end") if end else default[1]
    if end_ < start_:
        raise InvalidInput(f"end {end_.isoformat()} is before start {start_.isoformat()}")
    return [asset_windows(catalog, spec, start_, end_, limit=limit, markers=markers).to_json()
            for spec in specs]


def _when(text: str | None) -> str:
    if not text:
        return ""
    try:
        return dt.datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M:%S %z")
    except ValueError:
        return text


def _asset_html(asset: AssetWindowsJson) -> str:
    counts = ", ".join(f"{n:,} {status}" for status, n in sorted(asset["counts"].items()))
    head = (f"<h3>{esc(asset['name'])}</h3><p><code>{esc(asset['uri'])}</code>"
            + (f", followed since {esc(_when(asset['followed_since']))}"
               if asset["followed_since"] else ", not followed yet") + "</p>")
    if asset["error"] is not None:
        return head + f"<p class='status'>{esc(asset['error'])}</p>"
    if not asset["windows"]:
        return head + "<p>no window in the range shown</p>"
    rows = "".join(
        f"<tr><td>{esc(w['key'])}</td><td><span style='{DOT}background:"
        f"{STATUS_COLORS.get(w['status'], '#e0e0e0')}'></span>{esc(w['status'])}</td>"
        f"<td>{w['version'] or ''}</td><td>{'yes' if w['restated'] else ''}</td>"
        f"<td>{esc(_when(w['at']))}</td><td>{esc(w['lacks'])}</td></tr>"
        for w in asset["windows"])
    cut = f"<p>{esc(asset['cut'])}</p>" if asset["cut"] else ""
    return (head + f"<p>{esc(counts)}</p>" + cut
            + "<table class='coverage-windows'><tr><th>window</th><th>status</th>"
            f"<th>version</th><th>restated</th><th>when</th><th>lacks</th></tr>{rows}</table>")


def coverage_assets_section(catalog: Catalog, fact: str, start: str, end: str) -> str:
    """The page's section for the range the page shows; a range the windows cannot be listed
    over (the calendar's last day) says so in the section rather than failing the page."""
    try:
        assets = coverage_assets_json(catalog, fact, start, end)
    except (InvalidInput, OverflowError) as exc:
        return ("<section id='coverage-assets'><h2>Coverage assets</h2>"
                f"<p class='status'>{esc(exc)}</p></section>")
    return coverage_assets_html(assets)


def coverage_assets_html(assets: list[AssetWindowsJson]) -> str:
    """The page's "Coverage assets" section; empty when the fact has no followed asset."""
    if not assets:
        return ""
    legend = "".join(
        f"<span style='background:{STATUS_COLORS[s]}'></span>{esc(s)}: {esc(text)}"
        for s, text in STATUS_TEXT.items())
    return ("<section id='coverage-assets'><h2>Coverage assets</h2>"
            f"<p class='legend'>{legend}</p>"
            + "".join(_asset_html(a) for a in assets) + "</section>")
