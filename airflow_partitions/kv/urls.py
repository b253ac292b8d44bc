"""Store URLs: parse them strictly, so a typo fails at start-up with the bad part named.

* ``sqlite:///abs/path.db`` (also ``sqlite:////abs/path.db``) and ``sqlite:relative/path.db``;
  parameters ``busy_timeout`` (ms), ``lock_timeout`` (s: how long a write keeps retrying a
  locked file before it fails) and ``synchronous`` (off|normal|full|extra).
* ``hbase://host[:port]`` (port 9090 by default); parameters ``table_prefix``,
  ``transport`` (buffered|framed), ``protocol`` (binary|compact), ``pool_size``, ``timeout`` (ms).

Each backend's parser is here; which scheme goes to which parser is ``kv.backends``' registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias
from urllib.parse import SplitResult, parse_qsl, urlsplit

from airflow_partitions.defaults import HBASE_PROTOCOLS, HBASE_TRANSPORTS
from airflow_partitions.kv.errors import InvalidStoreURL

DEFAULT_HBASE_PORT = 9090
Synchronous: TypeAlias = Literal["OFF", "NORMAL", "FULL", "EXTRA"]
_SYNCHRONOUS: dict[str, Synchronous] = {
    "off": "OFF",
    "normal": "NORMAL",
    "full": "FULL",
    "extra": "EXTRA",
}
_TABLE_PREFIX = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True, slots=True)
class SQLiteConfig:
    path: Path
    busy_timeout_ms: int = 5000
    lock_timeout_s: int = 120
    synchronous: Synchronous = "NORMAL"


@dataclass(frozen=True, slots=True)
class HBaseConfig:
    host: str
    port: int = DEFAULT_HBASE_PORT
    table_prefix: str | None = None
    transport: str = "buffered"
    protocol: str = "binary"
    pool_size: int = 4
    timeout_ms: int | None = 30_000


#: What ``parse_store_url`` gives: one config type per backend.
StoreConfig: TypeAlias = SQLiteConfig | HBaseConfig


def _params(url: str, query: str, allowed: set[str]) -> dict[str, str]:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        raise InvalidStoreURL(f"bad query string {query!r} in store URL {url!r}") from exc
    params: dict[str, str] = {}
    for key, value in pairs:
        if key not in allowed:
            allowed_list = ", ".join(sorted(allowed))
            raise InvalidStoreURL(
                f"unknown parameter {key!r} in store URL {url!r}; allowed: {allowed_list}"
            )
        if key in params:
            raise InvalidStoreURL(f"parameter {key!r} given twice in store URL {url!r}")
        params[key] = value
    return params


def _int_param(url: str, key: str, value: str, low: int, high: int) -> int:
    if not re.fullmatch(r"[0-9]+", value) or not low <= int(value) <= high:
        raise InvalidStoreURL(
            f"parameter {key}={value!r} in store URL {url!r} must be an integer in [{low}, {high}]"
        )
    return int(value)


def _choice(url: str, key: str, value: str, choices: tuple[str, ...]) -> str:
    if value.lower() not in choices:
        raise InvalidStoreURL(
            f"parameter {key}={value!r} in store URL {url!r} must be one of {', '.join(choices)}"
        )
    return value.lower()


def split_store_url(url: str) -> tuple[str, SplitResult]:
    """The stripped URL and its parts, after the checks every scheme shares."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidStoreURL(f"store URL must be a non-empty string, got {url!r}")
    url = url.strip()
    parts = urlsplit(url)
    if parts.fragment:
        raise InvalidStoreURL(f"store URL {url!r} must not have a fragment (#...)")
    return url, parts


def parse_sqlite_url(url: str, parts: SplitResult) -> SQLiteConfig:
    """A ``sqlite:`` URL's config (``url`` as ``split_store_url`` returned it)."""
    netloc, path, query = parts.netloc, parts.path, parts.query
    if netloc:
        raise InvalidStoreURL(
            f"sqlite store URL {url!r} has a host ({netloc!r}); use sqlite:///abs/path.db"
        )
    if not path or path == "/":
        raise InvalidStoreURL(f"sqlite store URL {url!r} has no file path")
    if path.startswith("/"):
        path = "/" + path.lstrip("/")
    params = _params(url, query, {"busy_timeout", "lock_timeout", "synchronous"})
    busy = _int_param(url, "busy_timeout", params.get("busy_timeout", "5000"), 0, 3_600_000)
    lock = _int_param(url, "lock_timeout", params.get("lock_timeout", "120"), 0, 86_400)
    sync = _choice(url, "synchronous", params.get("synchronous", "normal"), tuple(_SYNCHRONOUS))
    return SQLiteConfig(
        path=Path(path), busy_timeout_ms=busy, lock_timeout_s=lock,
        synchronous=_SYNCHRONOUS[sync],
    )


def parse_hbase_url(url: str, parts: SplitResult) -> HBaseConfig:
    """An ``hbase://`` URL's config (``url`` as ``split_store_url`` returned it)."""
    if parts.username is not None or parts.password is not None:
        raise InvalidStoreURL(f"hbase store URL {url!r} must not carry credentials")
    host = parts.hostname
    if not host:
        raise InvalidStoreURL(f"hbase store URL {url!r} has no host; use hbase://host:9090")
    try:
        port = parts.port
    except ValueError as exc:
        netloc_port = parts.netloc.rpartition(":")[2]
        raise InvalidStoreURL(f"bad port {netloc_port!r} in store URL {url!r}") from exc
    if port == 0:
        raise InvalidStoreURL(f"bad port 0 in store URL {url!r}")
    if parts.path not in ("", "/"):
        raise InvalidStoreURL(
            f"hbase store URL {url!r} must not have a path ({parts.path!r}); "
            "use ?table_prefix=... to namespace tables"
        )
    params = _params(
        url, parts.query, {"table_prefix", "transport", "protocol", "pool_size", "timeout"}
    )
    prefix = params.get("table_prefix") or None
    if prefix is not None and not _TABLE_PREFIX.fullmatch(prefix):
        raise InvalidStoreURL(
            f"parameter table_prefix={prefix!r} in store URL {url!r} must match [A-Za-z0-9_.-]"
        )
    timeout: int | None = 30_000
    if "timeout" in params:
        timeout = _int_param(url, "timeout", params["timeout"], 0, 3_600_000) or None
    return HBaseConfig(
        host=host,
        port=port or DEFAULT_HBASE_PORT,
        table_prefix=prefix,
        transport=_choice(url, "transport", params.get("transport", "buffered"), HBASE_TRANSPORTS),
        protocol=_choice(url, "protocol", params.get("protocol", "binary"), HBASE_PROTOCOLS),
        pool_size=_int_param(url, "pool_size", params.get("pool_size", "4"), 1, 1024),
        timeout_ms=timeout,
    )
