"""Which coverage events are due, announced once each: the decision the writing task and the
follower share.

A window is announced when its own fresh cover exists (:func:`~.windows.window_state`) and its
marker (:mod:`.markers`) says it was not announced from these inputs: the first time it is
coverable, and again (``restated``) when a partition it was covered by was written again with a
higher version. A window that stops being coverable announces nothing.

Cost per call, for one asset: the fact's extent from the cached timelines, one cover of it with
no row read, one prefix scan of the asset's markers, then one verified cover per window that is
new, or was announced within :attr:`CoverageEmitter.horizon` of the fact's last partition (the
restatement check). Older windows are announced when they first become coverable; their
restatements are not looked for (a backfill with ``--restate`` runs those).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypedDict

import pendulum

from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events.markers import (
    EmissionMarkers,
    Marker,
    MarkerJson,
    Status,
)
from airflow_partitions.coverage_events.spec import CoverageAssetSpec
from airflow_partitions.coverage_events.windows import (
    InputRef,
    Window,
    WindowState,
    candidate_windows,
    extent,
    window_state,
)
from airflow_partitions.errors import PartitionsError

log = logging.getLogger(__name__)

#: How far before a fact's last partition announced windows are checked for restatements.
DEFAULT_HORIZON: Final = dt.timedelta(days=35)
_LONG_AGO: Final = "1970-01-01T00:00:00+00:00"


class EmissionFactsJson(TypedDict):
    """What the provider says about an announced window, under ``extra["airflow_partitions"]``."""

    fact: str
    period: str
    start: str
    end: str
    slice: dict[str, str]
    version: int
    partitions: int


class EmissionExtraJson(TypedDict):
    """An announced window's asset event ``extra``."""

    restated: bool
    airflow_partitions: EmissionFactsJson


@dataclass(frozen=True)
class Emission:
    """One window announced: its key, whether it is a restatement, and its version."""

    spec: CoverageAssetSpec
    window: Window
    version: int
    restated: bool
    inputs: tuple[InputRef, ...]

    @property
    def key(self) -> str:
        return self.window.key

    def extra(self) -> EmissionExtraJson:
        return {
            "restated": self.restated,
            "airflow_partitions": {
                "fact": self.spec.fact,
                "period": self.spec.period.name,
                "start": self.window.start.isoformat(),
                "end": self.window.end.isoformat(),
                "slice": dict(self.window.slice),
                "version": self.version,
                "partitions": len(self.inputs),
            },
        }


#: Posts one event to Airflow; raises when it could not (the window is then tried again).
Post = Callable[[Emission], None]


def restatement_of(marker: Marker, state: WindowState) -> bool:
    """Whether a partition ``marker``'s window was announced from now has a higher version."""
    before = {tuple(ref[:3]): int(ref[3]) for ref in marker.doc["inputs"]}
    return any(before.get(ref[:3], ref[3]) < ref[3] for ref in state.inputs)


class CoverageEmitter:
    """Announces the due windows of coverage assets over one catalog.

    :param horizon: how far back from the fact's last partition announced windows are
        checked for restatements (each costs a verified cover per call).
    """

    def __init__(self, catalog: Catalog, markers: EmissionMarkers | None = None, *,
                 horizon: dt.timedelta = DEFAULT_HORIZON,
                 clock: Callable[[], dt.datetime] = lambda: pendulum.now("UTC")) -> None:
        self.catalog = catalog
        self.markers = markers or EmissionMarkers(catalog.rows.kv)
        self.horizon = horizon
        self.clock = clock

    def follow(self, spec: CoverageAssetSpec) -> bool:
        """Start following ``spec``: the windows coverable now are recorded as known, not
        announced (a new consumer does not re-run the past). True when this call started it."""
        tz = spec.check(self.catalog)
        if not self.markers.first_seen(spec.uri, self.clock()):
            return False
        for window in candidate_windows(self.catalog, spec, tz):
            state = window_state(self.catalog, spec, window)
            if state.coverable:
                self.markers.swap(spec.uri, window.key, self.markers.get(spec.uri, window.key),
                                  self._doc("known", 0, False, state))
        return True

    def emit(self, spec: CoverageAssetSpec, post: Post) -> list[Emission]:
        """Announce every due window of ``spec`` through ``post``, each once across processes;
        an asset not followed yet is followed first (:meth:`follow`)."""
        if self.markers.seen(spec.uri) is None:
            self.follow(spec)
        tz = spec.check(self.catalog)
        now = self.clock()
        span = extent(self.catalog, spec.fact)
        if span is None:
            return []
        recent = span[1] - self.horizon
        known = dict(self.markers.markers(spec.uri))
        out = []
        for window in candidate_windows(self.catalog, spec, tz):
            marker = known.get(window.key)
            if marker is not None:
                if marker.doc["status"] == "claimed" and not marker.claim_expired(now):
                    continue  # another process is announcing it
                if marker.doc["status"] != "claimed" and window.end <= recent:
                    continue  # announced, and older than the restatement horizon
            try:
                state = window_state(self.catalog, spec, window)
            except PartitionsError as exc:  # a damaged row costs its window only; a store
                # that drops (KVError) ends the call, and the caller tries again
                log.warning("%s: window %s skipped: %s", spec.name, window.key, exc)
                continue
            if not state.coverable:
                continue
            emission = self._announce(spec, window, marker, state, post)
            if emission is not None:
                out.append(emission)
        return out

    def _announce(self, spec: CoverageAssetSpec, window: Window, marker: Marker | None,
                  state: WindowState, post: Post) -> Emission | None:
        if marker is None:
            restated, version = False, 1
        elif marker.doc["status"] == "claimed":  # expired: its claimer died before posting
            restated, version = marker.doc["restated"], max(marker.doc["version"], 1)
        elif restatement_of(marker, state):
            restated, version = True, marker.doc["version"] + 1
        else:
            return None
        return self.announce(spec, window, marker, state, post, restated=restated,
                             version=version)

    def announce(self, spec: CoverageAssetSpec, window: Window, marker: Marker | None,
                 state: WindowState, post: Post, *, restated: bool, version: int
                 ) -> Emission | None:
        """Claim the window's marker from ``marker`` (as read) by check-and-put, post its
        event, then mark it emitted. None when another process claimed it first (it posts).
        A failed post releases the claim at once, so the next call takes it over, and raises.
        Cost: two check-and-puts and the post."""
        claimed = self.markers.swap(spec.uri, window.key, marker,
                                    self._doc("claimed", version, restated, state))
        if claimed is None:
            return None
        emission = Emission(spec, window, version, restated, state.inputs)
        try:
            post(emission)
        except BaseException:
            retry: MarkerJson = {**claimed.doc, "at": _LONG_AGO}
            self.markers.swap(spec.uri, window.key, claimed, retry)
            raise
        self.markers.swap(spec.uri, window.key, claimed,
                          self._doc("emitted", version, restated, state))
        return emission

    def _doc(self, status: Status, version: int, restated: bool, state: WindowState
             ) -> MarkerJson:
        return {"status": status, "version": version, "restated": restated,
                "inputs": [list(ref) for ref in state.inputs], "at": self.clock().isoformat()}

