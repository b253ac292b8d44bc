"""The backend registry: every scheme a store URL takes comes from it, and only from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import SplitResult

import pytest

from airflow_partitions.defaults import BACKENDS
from airflow_partitions.interop import InvalidConnection, store_url_from_fields
from airflow_partitions.kv import (
    STORE_BACKENDS,
    Backend,
    HBaseConfig,
    InvalidStoreURL,
    KVStore,
    SQLiteConfig,
    open_store,
    parse_store_url,
)
from airflow_partitions.kv.hbase import HBaseStore
from airflow_partitions.kv.sqlite import SQLiteStore
from tests.kv.conftest import BACKENDS as CONFORMANCE_BACKENDS

#: One URL per registered scheme, with the config and store class it gives.
EXAMPLES: dict[str, tuple[str, type[object], type[KVStore]]] = {
    "sqlite": ("sqlite:///{tmp}/k.db", SQLiteConfig, SQLiteStore),
    "hbase": ("hbase://127.0.0.1:1", HBaseConfig, HBaseStore),
}


def test_the_registry_is_keyed_by_its_backends_schemes() -> None:
    assert {scheme: b.scheme for scheme, b in STORE_BACKENDS.items()} == {
        scheme: scheme for scheme in STORE_BACKENDS}


def test_the_names_outside_kv_are_the_registrys() -> None:
    """Provider discovery and the conformance suite list backends without importing kv."""
    assert tuple(STORE_BACKENDS) == BACKENDS
    assert list(STORE_BACKENDS) == CONFORMANCE_BACKENDS
    assert sorted(EXAMPLES) == sorted(STORE_BACKENDS)


@pytest.mark.parametrize("scheme", sorted(STORE_BACKENDS))
def test_each_backend_parses_and_opens_its_urls(scheme: str, tmp_path: Path) -> None:
    template, config_type, store_type = EXAMPLES[scheme]
    url = template.format(tmp=tmp_path)
    assert isinstance(parse_store_url(url), config_type)
    assert parse_store_url(scheme.upper() + url[len(scheme):]) == parse_store_url(url)
    store = open_store(url)  # connects lazily: no HBase server is needed
    try:
        assert isinstance(store, store_type)
        assert store.url == url
    finally:
        store.close()


@pytest.mark.parametrize("scheme", sorted(STORE_BACKENDS))
def test_the_example_in_messages_parses(scheme: str) -> None:
    example = STORE_BACKENDS[scheme].example.replace("host:port", "h:9090")
    assert parse_store_url(example) is not None


@pytest.mark.parametrize("url", ["mysql://h/db", "file:///x.db", "x.db", "sqlit:///x.db"])
def test_an_unknown_scheme_names_every_registered_one(url: str) -> None:
    with pytest.raises(InvalidStoreURL, match="unknown scheme") as raised:
        open_store(url)
    message = str(raised.value)
    assert repr(url) in message
    shapes = " or ".join(backend.example for backend in STORE_BACKENDS.values())
    assert message.endswith(f"; use {shapes}")
    assert message.endswith("; use sqlite:///path.db or hbase://host:port")


class _MemoryStore(SQLiteStore):
    """Stands for a third backend's store."""


def _parse_memory(url: str, parts: SplitResult) -> SQLiteConfig:
    if not parts.path:
        raise InvalidStoreURL(f"memory store URL {url!r} has no file path")
    return SQLiteConfig(Path(parts.path), busy_timeout_ms=1)


def _connect_memory(config: SQLiteConfig, url: str) -> KVStore:
    return _MemoryStore(config.path, url=url)


def test_a_registered_backend_is_all_it_takes(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    """Parsing, opening, the messages and the connection all follow the registry alone."""
    with pytest.raises(InvalidStoreURL, match="unknown scheme 'mem'"):
        parse_store_url(f"mem:{tmp_path}/m.db")
    memory = Backend("mem", _parse_memory, _connect_memory, "mem:path.db")
    monkeypatch.setitem(STORE_BACKENDS, "mem", memory)
    url = f"mem:{tmp_path}/m.db"
    assert parse_store_url(url) == SQLiteConfig(tmp_path / "m.db", busy_timeout_ms=1)
    with open_store(url) as store:
        assert type(store) is _MemoryStore
        assert store.url == url
    with pytest.raises(InvalidStoreURL, match="memory store URL 'mem:' has no file path"):
        parse_store_url("mem:")
    with pytest.raises(InvalidStoreURL,
                       match=r"use sqlite:///path\.db or hbase://host:port or mem:path\.db"):
        parse_store_url("redis://h")
    # a connection takes the new scheme as a store_url; its backend field asks for one
    assert store_url_from_fields(None, None, {"store_url": url}) == url
    with pytest.raises(InvalidConnection, match="the mem backend has no connection fields"):
        store_url_from_fields(None, None, {"backend": "mem"})
    with pytest.raises(InvalidConnection, match="'redis' is not sqlite or hbase or mem"):
        store_url_from_fields(None, None, {"backend": "redis"})


def test_importing_kv_imports_no_backend_module() -> None:
    code = ("import sys, airflow_partitions.kv\n"
            "print(sorted(m for m in ('happybase', 'thriftpy2', 'sqlite3',\n"
            "    'airflow_partitions.kv.sqlite', 'airflow_partitions.kv.hbase')\n"
            "    if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"
