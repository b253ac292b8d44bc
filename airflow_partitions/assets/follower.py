"""The follower: announces coverage events for writes Airflow never sees.

``airflow-partitions assets follow`` runs it beside the scheduler (``make airflow`` and
``make airflow-cluster`` start it). Every ``poll`` seconds it reads each followed fact's
generation, one store round trip per fact, and only when one moved does it ask which windows
are due (:class:`~airflow_partitions.coverage_events.CoverageEmitter`); every ``refresh``
seconds it asks Airflow which coverage assets exist (a DAG scheduled on a new one is followed
from then on). Writes through the provider's operators are announced by the writing task
itself (:mod:`.in_task`); both go through the same markers, so each window is announced once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from airflow_partitions.assets.rest import CoverageEventsApi
from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import (
    CLAIM_TIMEOUT,
    CoverageAssetSpec,
    CoverageEmitter,
    Emission,
)
from airflow_partitions.errors import InvalidInput, PartitionsError
from airflow_partitions.kv import KVError

#: What a round may meet and the next one may not (an unreachable store or api-server):
#: logged once per outage, never fatal: the follower is a long-lived service. A definition
#: that is wrong (an unknown fact, a where over no dimension) costs its own asset only.
RECOVERABLE = (PartitionsError, KVError)

log = logging.getLogger(__name__)

#: Seconds between generation reads: an announcement within a second of a write.
DEFAULT_POLL = 0.5
#: Seconds between asking Airflow for its coverage assets.
DEFAULT_REFRESH = 10.0


class Follower:
    """Follows ``catalog`` for the coverage assets ``api`` lists."""

    def __init__(self, catalog: Catalog, api: CoverageEventsApi, *,
                 poll: float = DEFAULT_POLL, refresh: float = DEFAULT_REFRESH,
                 emitter: CoverageEmitter | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.catalog, self.api = catalog, api
        self.poll, self.refresh = poll, refresh
        self._emitter = emitter
        self.clock = clock
        self.assets: dict[CoverageAssetSpec, int] = {}
        self._generations: dict[str, int] = {}
        self._listed_at = float("-inf")
        self._swept_at = float("-inf")
        self._warned: set[str] = set()

    @property
    def emitter(self) -> CoverageEmitter:
        """Made at the first round that reaches the store (it creates the markers' table), so
        a follower started while the store is down waits for it like any other round."""
        if self._emitter is None:
            self._emitter = CoverageEmitter(self.catalog)
        return self._emitter

    def poll_once(self) -> list[Emission]:
        """One round: the asset list when due, one generation read per followed fact, and the
        due windows of each fact whose generation moved (of every fact, every half claim
        timeout, to take over claims of processes that died)."""
        now = self.clock()
        if now - self._listed_at >= self.refresh:
            self._list_assets()
            self._listed_at = now
        sweep = now - self._swept_at >= CLAIM_TIMEOUT / 2
        if sweep:
            self._swept_at = now
        out: list[Emission] = []
        for fact in sorted({spec.fact for spec in self.assets}):
            try:
                generation = self.catalog.fact_state(fact).generation
            except InvalidInput as exc:  # an unknown fact: its assets wait for it
                self._warn_once(fact, exc)
                continue
            if not sweep and self._generations.get(fact) == generation:
                continue
            self._generations[fact] = generation
            for spec in [s for s in self.assets if s.fact == fact]:
                out.extend(self._emit(spec))
        return out

    def run(self, stop: threading.Event) -> None:
        """Poll until ``stop`` is set; a failing round is logged and retried next poll."""
        log.info("following the catalog %s every %.1f s", self.catalog.rows.kv.url, self.poll)
        failing = False
        while not stop.is_set():
            try:
                self.poll_once()
            except RECOVERABLE as exc:
                if not failing:  # once per outage, not every poll
                    log.warning("will retry every %.1f s: %s", self.poll, exc)
                failing = True
                self._generations.clear()
                self._listed_at = float("-inf")
            else:
                if failing:
                    log.info("following again")
                failing = False
            stop.wait(self.poll)

    def _list_assets(self) -> None:
        listed = self.api.coverage_assets()
        for spec in listed.keys() - self.assets.keys():
            try:
                if self.emitter.follow(spec):
                    log.info("following %s (%s)", spec.name, spec.uri)
            except InvalidInput as exc:  # checked again at the next listing
                self._warn_once(spec.uri, exc)
                continue
        self.assets = listed

    def _emit(self, spec: CoverageAssetSpec) -> list[Emission]:
        asset_id = self.assets[spec]

        def post(emission: Emission) -> None:
            self.api.post(asset_id, emission)
            log.info("announced %s %s%s (version %d, %d partitions)", spec.name, emission.key,
                     " restated" if emission.restated else "", emission.version,
                     len(emission.inputs))

        try:
            return self.emitter.emit(spec, post)
        except InvalidInput as exc:  # this asset's definition: the others go on
            self._warn_once(spec.uri, exc)
            self._generations.pop(spec.fact, None)
            return []

    def _warn_once(self, about: str, exc: Exception) -> None:
        """One warning per asset or fact and message, not one per poll."""
        said = f"{about}: {exc}"
        if said not in self._warned:
            self._warned.add(said)
            log.warning("%s", said)
