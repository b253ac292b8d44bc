"""``PartitionCatalogHook``: open the partition catalog from an Airflow connection.

Resolving the store (docs/design.md): an explicit ``store_url``; else the connection
(``partitions_default`` unless told otherwise); else ``$AIRFLOW_PARTITIONS_STORE``; else
``sqlite:///$AIRFLOW_HOME/partitions.db``. A missing *default* connection falls back; a missing
connection the caller named is an error (a typo must not silently open another catalog).
Outside a task (a script, a notebook) the connection is also looked up in the metadata DB, as
the CLI does (:mod:`.connection_lookup`), so both open the same catalog.

One :class:`~airflow_partitions.catalog.Catalog` per (store URL, data root) per process: every
hook, sensor and trigger of a worker or triggerer shares its store connection and its timeline
cache, so a warm check costs one round trip.

:meth:`PartitionCatalogHook.cached_conn` also keeps the *resolution* per process: a sensor
poking every minute would otherwise ask Airflow for its connection at every poke (in a task, a
round trip to the supervisor), which costs more than the store read itself. It is resolved again
when its ``AIRFLOW_CONN_<ID>`` variable or the fallback's environment changes (looked up at every
call, in ``os.environ``'s own dict: a fraction of a microsecond), and after
:meth:`~PartitionCatalogHook.forget_cached` (the sensor calls it when the store fails).

A task that writes rides out a catalog that is briefly unreachable, as a sensor does:
:meth:`PartitionCatalogHook.ride_out` runs the write again after growing pauses while the store
raises ``StoreUnavailable`` (the one mark of an outage: connection refused or dropped, no answer
in time, a SQLite file locked too long), for up to ``outage_timeout`` seconds, then raises
:class:`CatalogOutage`. Anything else (bad input, a refused registration, a damaged catalog)
goes to the caller at once: waiting cannot mend it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

from airflow_partitions.catalog import Catalog
from airflow_partitions.defaults import CONNECTION_ID, default_store_url
from airflow_partitions.hooks.connection_lookup import find_connection, in_task_context
from airflow_partitions.interop import CONN_TYPE, extra_field, store_url_from_fields
from airflow_partitions.kv import StoreUnavailable
from airflow_partitions.outages import OUTAGE_TIMEOUT, OutageOutlasted, ride_out

T = TypeVar("T")

_CATALOGS: dict[tuple[str, str | None], Catalog] = {}
_CATALOGS_LOCK = threading.Lock()
#: The environment a resolution depends on besides the connection's own variable: the fallback
#: store (``defaults.default_store_url``).
_FALLBACK_ENV = ("AIRFLOW_PARTITIONS_STORE", "AIRFLOW_HOME")


def _environ_getter() -> tuple[Callable[[Any], object], Callable[[str], Any]]:
    """(get, encode): ``get(encode(key))`` is the current value of ``key`` in ``os.environ``
    in some form, for telling a changed environment from an unchanged one at every poke.

    ``os.environ.get`` encodes the key and decodes the value on each call (about 0.4 us a
    key); ``os.environ`` keeps its items in a dict of encoded keys, which ``os.environ[k] = v``
    and ``del`` update in place, so on CPython the lookup reads that dict with keys encoded
    once. The values are compared, never used: the encoded form is as good as the text. Where
    that dict is not there, ``os.environ.get`` and the keys as they are.
    """
    environ = os.environ
    data, encode = getattr(environ, "_data", None), getattr(environ, "encodekey", None)
    if isinstance(data, dict) and callable(encode):
        return data.get, encode
    return environ.get, str


_ENV_GET, _ENV_KEY = _environ_getter()


@dataclass(frozen=True)
class _Resolved:
    """One cached resolution: the environment it was made under, and its catalog."""

    fingerprint: tuple[object, ...]
    catalog: Catalog


#: (connection id, data root given to the hook) -> its resolution, for :meth:`cached_conn`.
_RESOLVED: dict[tuple[str | None, str | None], _Resolved] = {}

class WarningLog(Protocol):
    """Where the ride-out's warnings go: a ``logging`` logger, or a task's ``self.log``."""

    def warning(self, msg: str, /, *args: object) -> object: ...


class CatalogOutage(StoreUnavailable):
    """The catalog stayed unreachable for a writer's whole ``outage_timeout``.

    Names the store, what was being done, how long and how many times it was tried, and the
    last error. Nothing is lost: registering and dropping are idempotent and crash-safe, so the
    task's next try (or a clear) finishes the write. A ``StoreUnavailable``, so what waits out
    outages (a sensor) still counts it as one.
    """

    def __init__(self, last: StoreUnavailable, doing: str, waited_s: float, attempts: int,
                 timeout_s: float) -> None:
        super().__init__(last.url, last.operation, last.reason)
        self.last, self.doing = last, doing
        self.waited_s, self.attempts, self.timeout_s = waited_s, attempts, timeout_s
        self.args = (
            f"the partition catalog {last.url} stayed unreachable for {waited_s:.1f} s "
            f"({attempts} attempt(s) to {doing}, outage_timeout {timeout_s:g} s); last error, "
            f"while {last.operation}: {last.reason}. Nothing is lost: the write is idempotent, "
            "so the task's next try, or clearing it, finishes it",)


def _catalog_outage(exc: Exception) -> bool:
    """An outage a writer waits out: the store unreachable, but not an inner ride-out that
    already waited its whole bound."""
    return isinstance(exc, StoreUnavailable) and not isinstance(exc, CatalogOutage)


def shared_catalog(store_url: str, data_root: str | None = None) -> Catalog:
    """This process's catalog for a store (created, and its tables ensured, on first use)."""
    key = (store_url, data_root)
    with _CATALOGS_LOCK:
        catalog = _CATALOGS.get(key)
        if catalog is None:
            catalog = Catalog(store_url, data_root=data_root)
            _CATALOGS[key] = catalog
        return catalog


def forget_catalogs() -> None:
    """Close and forget this process's catalogs and cached resolutions (tests; a store URL
    that changed meaning)."""
    with _CATALOGS_LOCK:
        for catalog in _CATALOGS.values():
            catalog.close()
        _CATALOGS.clear()
        _RESOLVED.clear()


class PartitionCatalogHook(BaseHook):
    """Open the partition catalog named by a ``partition_catalog`` connection.

    :param catalog_conn_id: the connection; ``partitions_default`` may be absent (then the
        environment decides, see the module doc).
    :param store_url: an explicit store URL, which wins over the connection.
    :param data_root: where partitions of storages without a location template live.
    """

    conn_name_attr = "catalog_conn_id"
    default_conn_name = CONNECTION_ID
    conn_type = CONN_TYPE
    hook_name = "Partition Catalog"

    def __init__(
        self,
        catalog_conn_id: str | None = default_conn_name,
        *,
        store_url: str | None = None,
        data_root: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.catalog_conn_id = catalog_conn_id
        self.store_url = store_url
        self.data_root = data_root
        conn_id = catalog_conn_id or ""
        self._env_keys = (f"AIRFLOW_CONN_{conn_id.upper()}", *_FALLBACK_ENV)
        self._env_lookups = tuple(map(_ENV_KEY, self._env_keys))
        self._cache_key = (catalog_conn_id, data_root)

    def _from_connection(self, conn: Any) -> tuple[str, str | None]:
        extras = conn.extra_dejson or {}
        url = store_url_from_fields(conn.host, conn.port, extras)
        return url, self.data_root or extra_field(extras, "data_root")

    def _not_in_sdk(self, error: AirflowNotFoundException) -> tuple[str, str | None]:
        """The SDK did not find the connection: outside a task, ask the metadata DB too."""
        conn_id = self.catalog_conn_id or self.default_conn_name
        fields = None if in_task_context() else find_connection(conn_id)
        if fields is not None:
            url = store_url_from_fields(fields.host, fields.port, fields.extra)
            return url, self.data_root or extra_field(fields.extra, "data_root")
        if self.catalog_conn_id != self.default_conn_name:
            raise AirflowNotFoundException(
                f"the {CONN_TYPE} connection {conn_id!r} is not defined (not in the environment, "
                "the secrets backends or the metadata DB); add it with 'airflow connections "
                f"add {conn_id} --conn-json ...', or omit it to use {self.default_conn_name!r}"
            ) from error
        return default_store_url(), self.data_root

    def resolve(self) -> tuple[str, str | None]:
        """(store URL, data root) to open, following the resolution order."""
        if self.store_url:
            return self.store_url, self.data_root
        if not self.catalog_conn_id:
            return default_store_url(), self.data_root
        try:
            conn = self.get_connection(self.catalog_conn_id)
        except AirflowNotFoundException as exc:
            return self._not_in_sdk(exc)
        return self._from_connection(conn)

    async def aresolve(self) -> tuple[str, str | None]:
        """:meth:`resolve` for the triggerer's event loop (the connection is read async)."""
        if self.store_url:
            return self.store_url, self.data_root
        if not self.catalog_conn_id:
            return default_store_url(), self.data_root
        try:
            conn = await self.aget_connection(self.catalog_conn_id)
        except AirflowNotFoundException as exc:
            return self._not_in_sdk(exc)
        return self._from_connection(conn)

    def get_conn(self) -> Catalog:
        """The process-wide catalog of the resolved store."""
        url, data_root = self.resolve()
        return shared_catalog(url, data_root)

    def _fingerprint(self) -> tuple[object, ...]:
        """What a resolution read from the environment: three dict lookups."""
        return tuple(map(_ENV_GET, self._env_lookups))

    def cached_conn(self) -> Catalog:
        """:meth:`get_conn`, resolved once per process and connection id (what a poke uses).

        Costs a few dict lookups when cached. Resolved again when the connection's
        ``AIRFLOW_CONN_<ID>`` variable, ``$AIRFLOW_PARTITIONS_STORE`` or ``$AIRFLOW_HOME``
        changed, and after :meth:`forget_cached`. A connection edited in the metadata DB or a
        secrets backend is seen by the next process (a reschedule-mode poke, a new deferral)
        or after a store failure, as Airflow's own hooks keep their client for the task.
        """
        if self.store_url:
            return shared_catalog(self.store_url, self.data_root)
        fingerprint = self._fingerprint()
        cached = _RESOLVED.get(self._cache_key)
        if cached is not None and cached.fingerprint == fingerprint:
            return cached.catalog
        catalog = self.get_conn()
        _RESOLVED[self._cache_key] = _Resolved(fingerprint, catalog)
        return catalog

    def forget_cached(self) -> None:
        """Drop this connection's cached resolution: the next :meth:`cached_conn` asks Airflow
        again (after a store failure the connection may have moved). The catalog, with its
        timeline cache, stays shared: the same store URL finds it again."""
        _RESOLVED.pop(self._cache_key, None)

    def ride_out(self, attempt: Callable[[Catalog], T], *, doing: str,
                 outage_timeout: float = OUTAGE_TIMEOUT,
                 log: WarningLog | None = None) -> T:
        """``attempt(catalog)``, run again while the catalog is unreachable: after pauses of
        about 1, 2, 4, 8, then 15 s (:mod:`airflow_partitions.outages`) for up to ``outage_timeout``
        seconds, then :class:`CatalogOutage`. One warning per pause says what failed, which
        attempt it was, and when the next one comes.

        ``attempt`` must be safe to run again from the start: a write cut off half way, or one
        that reached the store but whose answer was lost, is finished or found done by the next
        run (the catalog's writes are idempotent and re-read before they change a cell). Each
        attempt resolves the connection again: after an outage the catalog may have moved.
        Errors other than ``StoreUnavailable`` are raised at once, never retried.
        """
        if not outage_timeout >= 0:
            raise ValueError(f"outage_timeout is seconds, 0 or more, not {outage_timeout!r}")
        out = log or self.log

        def on_pause(exc: Exception, attempts: int, elapsed: float, pause: float) -> None:
            out.warning(
                "partition catalog unreachable while trying to %s (attempt %d, %.0f s "
                "into the outage): %s; trying again in %.1f s, giving up after %.0f s more",
                doing, attempts, elapsed, exc, pause, outage_timeout - elapsed)
            self.forget_cached()

        try:
            return ride_out(lambda: attempt(self.get_conn()), is_outage=_catalog_outage,
                            timeout=outage_timeout, on_pause=on_pause)
        except OutageOutlasted as outlasted:
            last = cast(StoreUnavailable, outlasted.last)
            raise CatalogOutage(last, doing, outlasted.waited_s, outlasted.attempts,
                                outage_timeout) from last

    @property
    def catalog(self) -> Catalog:
        return self.get_conn()

    def test_connection(self) -> tuple[bool, str]:
        """Open the store and list the facts (the UI's "Test" button)."""
        try:
            url, data_root = self.resolve()
            catalog = shared_catalog(url, data_root)
            facts = catalog.list_facts()
        except Exception as exc:
            return False, f"{type(exc).__name__}: {exc}"
        return True, f"Connected to {url}: {len(facts)} fact(s)"
