"""The defaults every layer shares, defined once: Airflow's home, where the catalog and the data
live, the connection id and the batch size of point reads.

Pure and at the bottom of the import graph (beside :mod:`airflow_partitions.errors`), so the
key/value layer, the catalog, the CLI and the Airflow layer all resolve them the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from airflow_partitions.errors import InvalidInput

#: The Airflow connection the hook, sensors and CLI read when none is named.
CONNECTION_ID: Final = "partitions_default"
#: A store URL (``sqlite:///...`` or ``hbase://...``) used when no connection names one.
ENV_STORE: Final = "AIRFLOW_PARTITIONS_STORE"
#: Where partitions live when a storage table has no location template.
ENV_DATA_ROOT: Final = "AIRFLOW_PARTITIONS_DATA_ROOT"
#: Where covered operators write manifests (default: ``$AIRFLOW_HOME/partitions-manifests``).
ENV_MANIFEST_DIR: Final = "AIRFLOW_PARTITIONS_MANIFEST_DIR"
#: Manifests older than this many days are removed when the next one is written.
ENV_MANIFEST_RETENTION: Final = "AIRFLOW_PARTITIONS_MANIFEST_RETENTION_DAYS"
MANIFEST_RETENTION_DAYS: Final = 7.0
#: ``true``: covered operators pass the manifest's path as the spark conf
#: ``spark.airflow_partitions.manifest`` instead of ``--partitions-manifest`` (a cluster's
#: setting, shared by every worker; an operator's own ``manifest_conf`` wins).
ENV_MANIFEST_CONF: Final = "AIRFLOW_PARTITIONS_MANIFEST_CONF"
#: The catalog's backends, and an HBase Thrift server's transports and protocols: what a store
#: URL accepts and what the connection form offers (its dropdowns), defined once. ``BACKENDS``
#: names ``kv.STORE_BACKENDS``' schemes (a test holds them equal) so provider discovery, which
#: Airflow runs while configuring itself, need not import ``kv``.
BACKENDS: Final = ("sqlite", "hbase")
HBASE_TRANSPORTS: Final = ("buffered", "framed")
HBASE_PROTOCOLS: Final = ("binary", "compact")
#: Row keys per ``get_many`` call: bounds one Thrift message and SQLite's bound-parameter count.
GET_BATCH: Final = 1000
#: Rows a process keeps from its verified covers' reads, to skip reading and checking them
#: again while nothing changed them (catalog/rows/runs.py; 0 keeps none). They are kept
#: packed, about 100 bytes a row.
ENV_VERIFY_MEMO_ROWS: Final = "AIRFLOW_PARTITIONS_VERIFY_MEMO_ROWS"
VERIFY_MEMO_ROWS: Final = 100_000
#: Partitions a range may hold before adding or dropping it is refused (87.6 million hours run
#: from year 1 to 9999: a typo away). Raised per command with ``--max-partitions``.
MAX_RANGE_PARTITIONS: Final = 1_000_000
#: Partitions of a range listed at a time, so a large range is written with bounded memory.
RANGE_BATCH: Final = 10_000


def airflow_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$AIRFLOW_HOME``, else ``~/airflow`` as in Airflow, as an absolute path.

    >>> str(airflow_home({"AIRFLOW_HOME": "/opt/af"}))
    '/opt/af'
    >>> str(airflow_home({"HOME": "/home/u"}))
    '/home/u/airflow'
    """
    env = os.environ if environ is None else environ
    home = env.get("AIRFLOW_HOME", "").strip() or "~/airflow"
    if home.startswith("~") and env.get("HOME"):  # honour the mapping's HOME, not the process's
        home = env["HOME"] + home[1:]
    return Path(os.path.expanduser(home)).absolute()


def default_store_url(environ: Mapping[str, str] | None = None) -> str:
    """``$AIRFLOW_PARTITIONS_STORE``, else ``sqlite:///$AIRFLOW_HOME/partitions.db``.

    The Airflow connection ``partitions_default`` is consulted before this, by the hook and CLI.

    >>> default_store_url({"AIRFLOW_HOME": "/opt/af"})
    'sqlite:///opt/af/partitions.db'
    """
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_STORE, "").strip()
    if explicit:
        return explicit
    return f"sqlite://{(airflow_home(env) / 'partitions.db').as_posix()}"


def default_manifest_dir(environ: Mapping[str, str] | None = None) -> str:
    """``$AIRFLOW_PARTITIONS_MANIFEST_DIR``, else ``$AIRFLOW_HOME/partitions-manifests``: one
    folder per Airflow installation, never a host-wide temp folder shared by all of them.

    >>> default_manifest_dir({"AIRFLOW_HOME": "/opt/af"})
    '/opt/af/partitions-manifests'
    """
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_MANIFEST_DIR, "").strip()
    return explicit or str(airflow_home(env) / "partitions-manifests")


def manifest_retention_days(environ: Mapping[str, str] | None = None) -> float:
    """``$AIRFLOW_PARTITIONS_MANIFEST_RETENTION_DAYS`` (a number of days), else 7.

    >>> manifest_retention_days({"AIRFLOW_PARTITIONS_MANIFEST_RETENTION_DAYS": "0.5"})
    0.5
    """
    env = os.environ if environ is None else environ
    text = env.get(ENV_MANIFEST_RETENTION, "").strip()
    if not text:
        return MANIFEST_RETENTION_DAYS
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not days >= 0:  # also NaN
        raise InvalidInput(f"{ENV_MANIFEST_RETENTION}={text!r} is not a number of days (>= 0)")
    return days


def manifest_by_conf(environ: Mapping[str, str] | None = None) -> bool:
    """``$AIRFLOW_PARTITIONS_MANIFEST_CONF`` as a yes/no (``true``/``1``/``yes``), else no.

    >>> manifest_by_conf({"AIRFLOW_PARTITIONS_MANIFEST_CONF": "True"})
    True
    >>> manifest_by_conf({})
    False
    """
    env = os.environ if environ is None else environ
    text = env.get(ENV_MANIFEST_CONF, "").strip().lower()
    if text in ("", "0", "false", "no", "off"):
        return False
    if text in ("1", "true", "yes", "on"):
        return True
    raise InvalidInput(f"{ENV_MANIFEST_CONF}={text!r} is not true or false")


def verify_memo_rows(environ: Mapping[str, str] | None = None) -> int:
    """``$AIRFLOW_PARTITIONS_VERIFY_MEMO_ROWS`` (a count of rows, 0 for none), else 100,000.

    >>> verify_memo_rows({"AIRFLOW_PARTITIONS_VERIFY_MEMO_ROWS": "0"})
    0
    """
    env = os.environ if environ is None else environ
    text = env.get(ENV_VERIFY_MEMO_ROWS, "").strip()
    if not text:
        return VERIFY_MEMO_ROWS
    if not text.isdigit():
        raise InvalidInput(f"{ENV_VERIFY_MEMO_ROWS}={text!r} is not a count of rows (>= 0)")
    return int(text)


def default_data_root(environ: Mapping[str, str] | None = None) -> str:
    """``$AIRFLOW_PARTITIONS_DATA_ROOT``, else ``$AIRFLOW_HOME/partitions-data``.

    >>> default_data_root({"AIRFLOW_HOME": "/opt/af"})
    '/opt/af/partitions-data'
    """
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_DATA_ROOT, "").strip()
    if explicit:
        return explicit
    return str(airflow_home(env) / "partitions-data")
