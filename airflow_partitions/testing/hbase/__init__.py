"""An HBase Thrift1-compatible test server (a test double), serving happybase's own
``Hbase.thrift`` over thriftpy2 on loopback. See ``docs/testing.md``.

The re-exports load lazily so ``python -m airflow_partitions.testing.hbase.server`` does not find
the server module already imported by its own package (runpy warns about that).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_partitions.testing.hbase.server import HBaseTestServer, load_hbase_thrift

__all__ = ["HBaseTestServer", "load_hbase_thrift"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from airflow_partitions.testing.hbase import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
