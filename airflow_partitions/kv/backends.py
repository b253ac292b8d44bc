"""The store backends, one entry each: the only place a URL's scheme picks a parser and a store.

Adding a backend is one ``Backend`` here (with its parser in ``kv.urls`` and its store module);
``parse_store_url``, ``open_store``, their error messages and the connection's ``backend`` field
all read this registry. Each opener imports its store module when called, so importing ``kv``
costs neither happybase nor the SQLite store's setup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Generic, TypeAlias, TypeVar
from urllib.parse import SplitResult

from airflow_partitions.kv.base import KVStore
from airflow_partitions.kv.errors import InvalidStoreURL
from airflow_partitions.kv.urls import (
    HBaseConfig,
    SQLiteConfig,
    StoreConfig,
    parse_hbase_url,
    parse_sqlite_url,
    split_store_url,
)

ConfigT = TypeVar("ConfigT")


@dataclass(frozen=True, slots=True)
class Backend(Generic[ConfigT]):
    """One backend: its URL scheme, how its URL parses, how its store opens."""

    #: The URL scheme, lower case; also the connection's ``backend`` value.
    scheme: str
    #: The URL (stripped) and its parts -> the config; raises ``InvalidStoreURL``.
    parse: Callable[[str, SplitResult], ConfigT]
    #: The config and the URL -> the store, connecting lazily.
    connect: Callable[[ConfigT, str], KVStore]
    #: The URL shape error messages suggest, e.g. ``sqlite:///path.db``.
    example: str

    def open_url(self, url: str, parts: SplitResult, as_given: str) -> KVStore:
        """The store of a URL of this scheme, reporting the URL ``as_given`` by the caller."""
        return self.connect(self.parse(url, parts), as_given)


def _connect_sqlite(config: SQLiteConfig, url: str) -> KVStore:
    from airflow_partitions.kv.sqlite import SQLiteStore

    return SQLiteStore(
        config.path,
        url=url,
        busy_timeout_ms=config.busy_timeout_ms,
        lock_timeout_s=config.lock_timeout_s,
        synchronous=config.synchronous,
    )


def _connect_hbase(config: HBaseConfig, url: str) -> KVStore:
    from airflow_partitions.kv.hbase import HBaseStore

    return HBaseStore(config, url=url)


AnyBackend: TypeAlias = Backend[SQLiteConfig] | Backend[HBaseConfig]

#: Scheme -> backend, in the order messages and the connection form list them.
STORE_BACKENDS: Final[Mapping[str, AnyBackend]] = {
    "sqlite": Backend("sqlite", parse_sqlite_url, _connect_sqlite, "sqlite:///path.db"),
    "hbase": Backend("hbase", parse_hbase_url, _connect_hbase, "hbase://host:port"),
}


def _backend(url: str, parts: SplitResult) -> AnyBackend:
    backend = STORE_BACKENDS.get(parts.scheme.lower())
    if backend is None:
        shapes = " or ".join(b.example for b in STORE_BACKENDS.values())
        raise InvalidStoreURL(f"unknown scheme {parts.scheme!r} in store URL {url!r}; use {shapes}")
    return backend


def parse_store_url(url: str) -> StoreConfig:
    """Parse a store URL into a backend config, or raise ``InvalidStoreURL``."""
    url, parts = split_store_url(url)
    return _backend(url, parts).parse(url, parts)


def open_store(url: str) -> KVStore:
    """Open the store a URL names; raises ``InvalidStoreURL`` naming the bad part.

    Opening connects lazily: an unreachable HBase raises ``StoreUnavailable`` at the first
    operation, not here.
    """
    stripped, parts = split_store_url(url)
    return _backend(stripped, parts).open_url(stripped, parts, url)
