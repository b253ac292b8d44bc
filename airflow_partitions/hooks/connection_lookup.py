"""Find a ``partition_catalog`` connection: one path for the CLI, scripts and tasks.

Airflow 3's task SDK looks connections up through the process's context: a task asks the
supervisor, but a plain script or notebook gets only environment variables and external secrets
backends, never the metadata DB. So a hook outside a task used to miss a connection saved with
``airflow connections add`` and silently open another catalog, while the CLI found it. Both now
come here. Nothing imports ``airflow`` at import time (the CLI must stay fast).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from airflow_partitions.defaults import airflow_home


@dataclass(frozen=True)
class ConnectionFields:
    """The parts of a connection a store URL is made of."""

    host: str | None
    port: int | None
    extra: dict[str, object] = field(default_factory=dict)


def in_task_context() -> bool:
    """Whether this process runs a task or a trigger (the SDK's lookup is then authoritative)."""
    if os.environ.get("_AIRFLOW_PROCESS_CONTEXT") == "client":
        return True
    try:
        from airflow.sdk.execution_time import task_runner
    except ImportError:
        return False
    return getattr(task_runner, "SUPERVISOR_COMMS", None) is not None


def _json_fields(text: str) -> ConnectionFields | None:
    """The fields of a JSON ``AIRFLOW_CONN_*`` value; None for the URI form."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    extra = data.get("extra") or {}
    if isinstance(extra, str):
        extra = json.loads(extra or "{}")
    port = data.get("port")
    return ConnectionFields(data.get("host"), int(port) if port else None, dict(extra))


def find_connection(
    conn_id: str, environ: Mapping[str, str] = os.environ
) -> ConnectionFields | None:
    """The connection's fields from the environment, the secrets backends or the metadata DB.

    A JSON ``AIRFLOW_CONN_<ID>`` is read without importing Airflow. Airflow is imported (quietly:
    it logs to stdout, which may carry JSON) only when it could know the connection: a URI-form
    variable, or a configured ``$AIRFLOW_HOME/airflow.cfg``. ``None`` when nobody knows it.
    """
    env_value = environ.get(f"AIRFLOW_CONN_{conn_id.upper()}")
    if env_value:
        fields = _json_fields(env_value)
        if fields is not None:
            return fields
    if not env_value and not (airflow_home(environ) / "airflow.cfg").exists():
        return None
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            from airflow.models.connection import Connection

            conn = Connection.get_connection_from_secrets(conn_id)
    except Exception:  # no such connection, no metadata DB: nobody knows it
        return None
    return ConnectionFields(conn.host, conn.port, dict(conn.extra_dejson or {}))
