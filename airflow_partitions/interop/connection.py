"""The store URL a ``partition_catalog`` connection describes. Pure: no ``airflow`` import, so
the ``airflow-partitions`` CLI can read a connection the same way the hook does.

Fields (the connection's host and port, the rest in its extra):

* ``store_url``: a full store URL; when set it wins over every other field;
* ``backend``: a scheme of ``kv.STORE_BACKENDS`` (``sqlite`` or ``hbase``); without it, a
  connection with a host is HBase;
* hbase: host, port (default 9090), ``table_prefix``, ``transport``, ``protocol``,
  ``pool_size``, ``timeout`` (ms);
* sqlite: ``sqlite_path`` (default ``$AIRFLOW_HOME/partitions.db``);
* ``data_root``: where partitions of storages without a location template live.

A connection that names no store at all (no store_url, backend, host or sqlite_path) falls back
to ``$AIRFLOW_PARTITIONS_STORE``, then the sqlite file under ``$AIRFLOW_HOME``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final
from urllib.parse import quote, urlencode

from airflow_partitions.defaults import ENV_STORE, default_store_url
from airflow_partitions.kv import STORE_BACKENDS, parse_store_url

CONN_TYPE: Final = "partition_catalog"
HBASE_PARAMS: Final = ("table_prefix", "transport", "protocol", "pool_size", "timeout")


class InvalidConnection(ValueError):
    """A ``partition_catalog`` connection whose fields do not make a store URL."""


def extra_field(extras: Mapping[str, object], name: str) -> str | None:
    """An extra field, plain or with the ``extra__partition_catalog__`` prefix; blank is None."""
    value = extras.get(name, extras.get(f"extra__{CONN_TYPE}__{name}"))
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return str(value).strip()


def store_url_from_fields(
    host: str | None, port: int | None, extras: Mapping[str, object],
    environ: Mapping[str, str] | None = None,
) -> str:
    """The validated store URL of a connection's fields (see the module doc)."""
    env = os.environ if environ is None else environ
    explicit = extra_field(extras, "store_url")
    backend = extra_field(extras, "backend")
    path = extra_field(extras, "sqlite_path")
    if explicit:
        url = explicit
    elif backend is None and not host and path is None:
        url = default_store_url(env)
    else:
        kind = (backend or ("hbase" if host else "sqlite")).lower()
        if kind == "sqlite" and path is None:
            # the connection says sqlite: the environment cannot turn it into another store
            url = default_store_url({k: v for k, v in env.items() if k != ENV_STORE})
        elif kind == "sqlite":
            url = "sqlite:///" + os.path.abspath(os.path.expanduser(str(path))).lstrip("/")
        elif kind == "hbase":
            if not host:
                raise InvalidConnection(f"{CONN_TYPE} connection: the hbase backend needs a host")
            params = {k: v for k in HBASE_PARAMS if (v := extra_field(extras, k)) is not None}
            query = f"?{urlencode(params)}" if params else ""
            url = f"hbase://{quote(host.strip(), safe='.-_[]:')}:{int(port or 9090)}{query}"
        elif kind in STORE_BACKENDS:
            raise InvalidConnection(
                f"{CONN_TYPE} connection: the {kind} backend has no connection fields; "
                "set store_url")
        else:
            raise InvalidConnection(
                f"{CONN_TYPE} connection: backend {backend!r} is not "
                f"{' or '.join(STORE_BACKENDS)}")
    try:
        parse_store_url(url)  # fail here, naming the bad part, rather than at the first read
    except ValueError as exc:
        raise InvalidConnection(f"{CONN_TYPE} connection: {exc}") from exc
    return url
