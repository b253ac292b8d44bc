"""``PartitionCoverageTrigger``: the deferrable half of ``PartitionCoverageSensor``.

It polls the catalog from the triggerer, so no worker slot is held while waiting. The catalog
calls block, so they run in a thread (``asyncio.to_thread``); the process-wide catalog of the
hook is shared by every trigger of the triggerer, and so is its timeline cache.

Events (a dict, typed as :class:`.events.CoverageEvent`): ``{"status": "success",
"covered_fraction", "partitions", "deadline",
"checks", "polls"}`` (``checks``: the covers this run computed, the first at its start and one
per generation change it saw; ``polls``: the reads of its last poller watch),
``{"status": "timeout", "missing": [...], "notes": [...], "deadline"}`` (``notes``: the
cover's, e.g. ``region: not a dimension, any value counts``) or
``{"status": "error", "message"}``.
The sensor re-verifies the cover on ``success`` before it succeeds (docs/design.md, invariants).
When the picture changes, the trigger logs it and publishes the coverage metrics (a no-op unless
Airflow's metrics are on; docs/observability.md); an unchanged picture is logged again every 10
minutes (``watch.REMINDER_SECONDS``).

Idle polls: after a check, the trigger registers the fact's generation with the process's
shared poller (:mod:`.poller`) and awaits a change. The poller's thread reads it every
``poke_interval`` through a :class:`~airflow_partitions.watch.GenerationProbe`: the store's
change stamp first (SQLite), the generation only when the stamp moved or the store has none
(HBase). It wakes this trigger's event loop only when the generation moved or the read failed,
so an idle poll is one round trip and a heap operation: no thread hand-off, no loop wake-up,
no log line. A moved generation computes the cover in ``asyncio.to_thread``; a
``fresh_only`` request is checked that way every interval (its answer can change without a
generation moving). The connection is resolved once per trigger run, and again after the store
failed; cancellation and :meth:`~PartitionCoverageTrigger.cleanup` unregister the watch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from airflow.sdk.exceptions import AirflowNotFoundException
from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_partitions.catalog import Catalog, CoverVerificationError
from airflow_partitions.cover import CoverRequest, missing_list, to_instant
from airflow_partitions.errors import CorruptCatalog, InvalidInput
from airflow_partitions.hooks.catalog import PartitionCatalogHook, shared_catalog
from airflow_partitions.hooks.stats import publish_coverage
from airflow_partitions.interop import InvalidConnection
from airflow_partitions.kv import StoreDamaged, StoreUnavailable
from airflow_partitions.triggers.events import CoverageEvent
from airflow_partitions.triggers.poller import POLLER, Watch
from airflow_partitions.watch import CoverageWatch, GenerationProbe

#: What makes a poll retry after ``poke_interval``, resolving the connection again.
_UNREACHABLE = (StoreUnavailable, AirflowNotFoundException, InvalidConnection)


def _event(payload: CoverageEvent) -> TriggerEvent:
    return TriggerEvent(payload)  # type: ignore[no-untyped-call]


class PartitionCoverageTrigger(BaseTrigger):
    """Fire once the catalog covers the request, or at the deadline.

    :param request: a :class:`~airflow_partitions.cover.CoverRequest` as JSON.
    :param catalog_conn_id: the ``partition_catalog`` connection.
    :param poke_interval: seconds between checks.
    :param deadline: ISO instant after which a ``timeout`` event fires (None: never).
    """

    def __init__(
        self,
        request: Mapping[str, object],
        catalog_conn_id: str | None = PartitionCatalogHook.default_conn_name,
        poke_interval: float = 60.0,
        deadline: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        self.request: dict[str, object] = dict(request)
        self.catalog_conn_id = catalog_conn_id
        self.poke_interval = float(poke_interval)
        self.deadline = deadline
        #: The poller's watch of the fact's generation in ``_polled`` (while run() waits).
        self._polls: Watch[int] | None = None
        self._polled: Catalog | None = None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            "airflow_partitions.triggers.coverage.PartitionCoverageTrigger",
            {
                "request": self.request,
                "catalog_conn_id": self.catalog_conn_id,
                "poke_interval": self.poke_interval,
                "deadline": self.deadline,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = PartitionCatalogHook(self.catalog_conn_id)
        url: str | None
        try:
            request = CoverRequest.from_json(self.request)
            deadline = to_instant(self.deadline, "deadline") if self.deadline else None
            deadline_at = deadline.timestamp() if deadline is not None else None
            url, data_root = await hook.aresolve()
        except Exception as exc:
            yield _event({"status": "error", "message": f"{type(exc).__name__}: {exc}"})
            return
        watch = CoverageWatch(request)
        catalog: Catalog | None = None
        checks = 0  # covers computed: 2 means it fired on the first change it saw
        try:
            while True:
                try:
                    if catalog is None:  # first poll, or the store failed: resolve again
                        if url is None:
                            url, data_root = await hook.aresolve()
                        catalog = await asyncio.to_thread(shared_catalog, url, data_root)
                    elif not request.fresh_only:  # idle polls happen in the poller, not here
                        await self._until_changed(catalog, watch, deadline_at)
                    cover = await asyncio.to_thread(watch.check, catalog)
                    checks += 1
                except _UNREACHABLE as exc:
                    self.log.warning("partition catalog unreachable, will retry: %s", exc)
                    catalog = url = None  # the connection may have moved: ask Airflow next poll
                except CoverVerificationError as exc:  # writers busy in the range: next poll
                    self.log.warning("%s; will check again", exc)
                except (InvalidInput, CorruptCatalog, StoreDamaged) as exc:
                    # permanent (bad input, a damaged catalog): an error event, not a raise
                    self._unwatch()  # before the event: the triggerer may not resume us soon
                    yield _event({"status": "error", "message": str(exc)})
                    return
                else:
                    news = watch.news()  # one line per change (and a reminder), not per poll
                    if news is not None:
                        self.log.info("%s", watch.line)
                    if news == "changed":
                        await asyncio.to_thread(publish_coverage, catalog, request, cover,
                                                state=watch.state_now)
                    if cover.coverable:
                        polls = self._polls.reads if self._polls is not None else 0
                        self._unwatch()
                        yield _event({
                            "status": "success",
                            "covered_fraction": cover.covered_fraction,
                            "partitions": len(cover),
                            "deadline": self.deadline,
                            "checks": checks,
                            "polls": polls,
                        })
                        return
                if deadline_at is not None and time.time() >= deadline_at:
                    self._unwatch()
                    yield _event({
                        "status": "timeout",
                        "missing": missing_list(watch.cover) or ["the catalog was never reached"],
                        "notes": list(watch.cover.notes) if watch.cover is not None else [],
                        "deadline": self.deadline,
                    })
                    return
                if catalog is None or request.fresh_only:  # a retry, or a check every interval
                    await asyncio.sleep(self.poke_interval)
        finally:
            self._unwatch()

    async def _until_changed(self, catalog: Catalog, watch: CoverageWatch,
                             deadline_at: float | None) -> None:
        """Return once the fact's generation differs from the last check's (the poller reads
        it every ``poke_interval``, behind the change stamp), or at the deadline; raise what a
        read raised."""
        polls = self._polls
        if polls is None or self._polled is not catalog:
            self._unwatch()
            probe = GenerationProbe(catalog, watch.fact, known=(watch.stamp, watch.generation))
            polls = self._polls = POLLER.watch(probe, self.poke_interval,
                                               name=f"{watch.fact} coverage")
            self._polled = catalog
        if deadline_at is None:
            await polls.changed(watch.generation)
            return
        try:
            await asyncio.wait_for(polls.changed(watch.generation), deadline_at - time.time())
        except TimeoutError:  # the deadline: one last check decides
            pass

    def _unwatch(self) -> None:
        if self._polls is not None:
            self._polls.close()
        self._polls = self._polled = None

    async def cleanup(self) -> None:
        """The triggerer removes this trigger: its poller watch goes (run() does it too)."""
        self._unwatch()
