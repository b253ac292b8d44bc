"""The test double's tables on disk, so a stopped server comes back with its data.

Why: a real HBase keeps its data across a restart, and a user's DAG tests may stop the double
for a while to prove that sensors wait through an outage (``--state``). Without a snapshot the
double would come back empty, which is a lost catalog, not an outage. (The cluster on one
machine runs a real HBase over HDFS instead: :mod:`airflow_partitions.demo.hbase.distributed`.)

What it costs: one pickle of every table, written on a clean stop (SIGTERM, SIGINT) and read
once at start; a ``kill -9`` loses what changed since the last start, as the docstring of
:mod:`.server` says. The column descriptors are Thrift structs of a module thriftpy2 builds at
run time, so they are stored as plain dicts of their fields and rebuilt on load.
"""

from __future__ import annotations

import os
import pickle  # our own file, written by this module, in a directory we own
from pathlib import Path
from types import ModuleType
from typing import Any

from airflow_partitions.testing.hbase.store import Store, Table

FORMAT = 1


def save(store: Store, path: Path) -> int:
    """Write every table to ``path`` atomically (a temporary file, then a rename); the count."""
    with store.lock:
        tables = [
            {"name": t.name, "enabled": t.enabled, "region_id": t.region_id,
             "descriptors": {f: dict(vars(d)) for f, d in t.descriptors.items()},
             "rows": [(row, list(cells.items())) for row, cells in t.rows.items()]}
            for t in store.tables.values()
        ]
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as out:
            pickle.dump({"format": FORMAT, "tables": tables}, out, protocol=5)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
    return len(tables)


def load(store: Store, path: Path, thrift: ModuleType) -> int:
    """Replace the store's tables with the snapshot at ``path`` (none there: 0 tables)."""
    from sortedcontainers import SortedDict

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return 0
    doc: dict[str, Any] = pickle.loads(raw)  # noqa: S301 - see the import
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a snapshot of this test double (format {doc.get('format')})")
    with store.lock:
        store.tables.clear()
        for t in doc["tables"]:
            descriptors = {f: thrift.ColumnDescriptor(**d) for f, d in t["descriptors"].items()}
            rows = SortedDict((row, SortedDict(cells)) for row, cells in t["rows"])
            store.tables[t["name"]] = Table(t["name"], descriptors, rows, t["enabled"],
                                            t["region_id"])
    return len(doc["tables"])
