"""What a coverage asset has announced and what it still waits for, per window of a range: the
Partitions view's answer to "why has my consumer not run?".

Why a function of its own: the emitter (:mod:`.emitter`) only acts on windows that are due and
never says why the others are not. The view needs both halves side by side: the markers
(:mod:`.markers`, what was announced, with which version, whether it was a restatement, when)
and, for every window with no marker, what its fresh cover lacks (:func:`~.windows.window_state`,
the very cover the emitter asks before it announces).

Cost per asset, for a range of ``n`` windows (at most ``limit``): one prefix scan of the asset's
markers, then one verified cover (its rows and their lineage) per window that has no marker.
Announced windows are not covered again: their marker says what they were announced from, and
a restatement is the emitter's question, not the view's. The windows past ``limit`` are not
looked at (``cut`` says so), so a wide range of hourly windows costs at most ``limit`` covers.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass, field
from typing import Final, Literal, TypedDict

from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events.markers import EmissionMarkers, Marker
from airflow_partitions.coverage_events.spec import CoverageAssetSpec
from airflow_partitions.coverage_events.windows import Window, window_state, windows_in
from airflow_partitions.errors import InvalidInput, PartitionsError

#: How many windows of one asset one answer looks at (each pending one costs a verified cover).
DEFAULT_WINDOW_LIMIT: Final = 400

#: ``announced``: an event was posted (``restated`` when it was a re-announcement);
#: ``known``: coverable when the asset was first followed, so never announced;
#: ``claimed``: a process is posting its event now (or died doing so: taken over later);
#: ``due``: coverable now, not announced yet (the next emission announces it);
#: ``pending``: not coverable now, ``lacks`` says why.
WindowStatusName = Literal["announced", "known", "claimed", "due", "pending"]

_FROM_MARKER: Final[dict[str, WindowStatusName]] = {
    "emitted": "announced", "known": "known", "claimed": "claimed"}


class WindowStatusJson(TypedDict):
    """One window of :class:`AssetWindowsJson`."""

    key: str
    start: str
    end: str
    slice: dict[str, str]
    status: WindowStatusName
    #: the marker's version (1 for the first announcement); 0 without a marker.
    version: int
    restated: bool
    #: when the marker was last written; None without a marker.
    at: str | None
    #: what the window's fresh cover lacks (``pending`` only; else "").
    lacks: str


class AssetWindowsJson(TypedDict):
    """One followed coverage asset's windows over a range, as the view's API answers it."""

    uri: str
    name: str
    fact: str
    period: str
    where: str | None
    per_slice: bool
    #: when the asset was first followed (None: not followed yet).
    followed_since: str | None
    start: str
    end: str
    counts: dict[str, int]
    windows: list[WindowStatusJson]
    #: why the list stops short of the range (None when it is whole).
    cut: str | None
    #: why the asset's windows could not be listed at all (a fact that changed); else None.
    error: str | None


@dataclass(frozen=True)
class WindowStatus:
    """One window: its marker's word, or what its fresh cover lacks now."""

    window: Window
    status: WindowStatusName
    version: int = 0
    restated: bool = False
    at: str | None = None
    lacks: str = ""

    @classmethod
    def of_marker(cls, window: Window, marker: Marker) -> WindowStatus:
        doc = marker.doc
        return cls(window, _FROM_MARKER[doc["status"]], doc["version"], doc["restated"],
                   doc["at"])

    def to_json(self) -> WindowStatusJson:
        return {"key": self.window.key, "start": self.window.start.isoformat(),
                "end": self.window.end.isoformat(), "slice": dict(self.window.slice),
                "status": self.status, "version": self.version, "restated": self.restated,
                "at": self.at, "lacks": self.lacks}


@dataclass(frozen=True)
class AssetWindows:
    """:func:`asset_windows`' answer: the windows looked at, and why the list stops short."""

    spec: CoverageAssetSpec
    start: dt.datetime
    end: dt.datetime
    windows: list[WindowStatus] = field(default_factory=list)
    cut: str | None = None
    followed_since: str | None = None
    error: str | None = None

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for w in self.windows:
            out[w.status] = out.get(w.status, 0) + 1
        return out

    def to_json(self) -> AssetWindowsJson:
        spec = self.spec
        return {"uri": spec.uri, "name": spec.name, "fact": spec.fact,
                "period": spec.period.name, "where": spec.where, "per_slice": spec.per_slice,
                "followed_since": self.followed_since, "start": self.start.isoformat(),
                "end": self.end.isoformat(), "counts": self.counts(),
                "windows": [w.to_json() for w in self.windows], "cut": self.cut,
                "error": self.error}


def asset_windows(catalog: Catalog, spec: CoverageAssetSpec, start: dt.datetime,
                  end: dt.datetime, *, limit: int = DEFAULT_WINDOW_LIMIT,
                  markers: EmissionMarkers | None = None) -> AssetWindows:
    """The windows of ``spec`` in ``[start, end)`` (widened outward to whole windows), in time
    order, each with its marker's status or, without a marker, whether its fresh cover exists
    now (``due``) or what it lacks (``pending``). At most ``limit`` windows are looked at.

    An asset whose definition no longer fits the fact (a storage's period removed) answers
    with ``error`` set and no windows, rather than raising: the view lists every asset.
    Cost: see the module's docstring.
    """
    if limit < 1:
        raise InvalidInput(f"limit must be at least 1, not {limit!r}")
    markers = markers or EmissionMarkers(catalog.rows.kv)
    since = markers.seen(spec.uri)
    try:
        tz = spec.check(catalog)
    except InvalidInput as exc:
        return AssetWindows(spec, start, end, followed_since=since, error=str(exc))
    known = dict(markers.markers(spec.uri))
    found = list(itertools.islice(windows_in(catalog, spec, tz, start, end), limit + 1))
    cut = None
    if len(found) > limit:
        found = found[:limit]
        cut = (f"only the first {limit:,} windows are shown (up to {found[-1].end.isoformat()});"
               " narrow the range to see the rest")
    out = []
    for window in found:
        marker = known.get(window.key)
        if marker is not None:
            out.append(WindowStatus.of_marker(window, marker))
            continue
        try:
            state = window_state(catalog, spec, window)
        except PartitionsError as exc:  # a filter the catalog refuses, a row that is damaged
            out.append(WindowStatus(window, "pending", lacks=f"cannot be covered: {exc}"))
            continue
        out.append(WindowStatus(window, "due") if state.coverable
                   else WindowStatus(window, "pending", lacks=state.lacks))
    return AssetWindows(spec, start, end, out, cut, since)


def followed_assets(catalog: Catalog, fact: str, markers: EmissionMarkers | None = None
                    ) -> list[CoverageAssetSpec]:
    """The coverage assets of ``fact`` that some follower or writing task has followed (their
    markers' URIs), sorted by URI. Cost: one scan of the markers table's ``seen`` cells
    (:meth:`.EmissionMarkers.assets`, O(markers)): a view's list, not a hot path."""
    markers = markers or EmissionMarkers(catalog.rows.kv)
    specs = [CoverageAssetSpec.from_uri(uri) for uri, _ in markers.assets()]
    return sorted((s for s in specs if s is not None and s.fact == fact), key=lambda s: s.uri)
