"""Announcing coverage events from the task that wrote, right after its write.

Why in the task as well as in the follower: the consumer's run then starts from the write's own
end, not from the follower's next poll. Both claim each window through the same markers, so a
window is announced once, by whichever gets there first. Without an ``airflow_api_default``
connection (or the one named) the task announces nothing and leaves it to the follower.
"""

from __future__ import annotations

import logging
from functools import partial

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

from airflow_partitions.assets.rest import CoverageEventsApi
from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import CoverageEmitter, Emission
from airflow_partitions.errors import PartitionsError
from airflow_partitions.kv import KVError

log = logging.getLogger(__name__)

API_CONN_ID = "airflow_api_default"


def api_from_connection(conn_id: str) -> CoverageEventsApi | None:
    """The REST client an ``http`` connection describes; None when it is not defined."""
    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return None
    host = conn.host or "localhost"
    if "://" not in host:
        host = f"{conn.schema or 'http'}://{host}"
    base = f"{host}:{conn.port}" if conn.port else host
    return CoverageEventsApi(base, conn.login or "", conn.password or "", timeout=10)


def announce_after_write(catalog: Catalog, fact: str, conn_id: str = API_CONN_ID
                         ) -> list[Emission]:
    """Announce the due windows of every coverage asset of ``fact``. Never fails the task:
    the write is done, and the follower announces what this could not."""
    api = api_from_connection(conn_id)
    if api is None:
        log.debug("no %s connection: coverage events are left to the follower", conn_id)
        return []
    out: list[Emission] = []
    try:
        emitter = CoverageEmitter(catalog)
        for spec, asset_id in api.coverage_assets().items():
            if spec.fact == fact:
                out.extend(emitter.emit(spec, partial(api.post, asset_id)))
    except (PartitionsError, KVError) as exc:  # the write is done: never fail the task
        log.warning("coverage events not announced here (the follower will): %s", exc)
    for emission in out:
        log.info("announced %s %s%s", emission.spec.name, emission.key,
                 " (restated)" if emission.restated else "")
    return out
