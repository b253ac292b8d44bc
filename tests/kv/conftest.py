"""The conformance suite runs every test against each backend.

* ``sqlite``: a temporary file;
* ``hbase``: happybase -> a real HBase Thrift1 server when ``AIRFLOW_PARTITIONS_TEST_HBASE``
  names one (``make test`` starts one for the run), else the bundled Thrift1 test double
  (``make check``); a fresh table prefix per test. The double answers as HBase does
  (``tests/testing/test_double_matches_hbase.py``), so one of the two is enough per run.
"""

from __future__ import annotations

import os
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.kv import KVStore, KVTable, open_store

REAL_HBASE_ENV = "AIRFLOW_PARTITIONS_TEST_HBASE"
REAL_HBASE_SKIP = (
    "set AIRFLOW_PARTITIONS_TEST_HBASE=host:port to run against a real HBase Thrift server"
)
BACKENDS = ["sqlite", "hbase"]


def real_hbase_target() -> str:
    """``host:port`` of the real HBase this run uses, or "" (the double then stands in)."""
    target = os.environ.get(REAL_HBASE_ENV, "").strip()
    return "" if target == "start" else target


def backend_kind(param: str) -> str:
    """``sqlite``, ``hbase-real`` (a real server is named) or ``hbase-testserver`` (the double)."""
    if param != "hbase":
        return param
    return "hbase-real" if real_hbase_target() else "hbase-testserver"


def drop_all_tables(store: KVStore) -> None:
    """Drop every table of ``store`` (best effort: a test may have stopped the server)."""
    try:
        for name in store.list_tables():
            store.drop_table(name, missing_ok=True)
    except Exception:  # a test may have stopped the server on purpose
        pass


def make_store_url(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> str:
    prefix = "t" + uuid.uuid4().hex[:12]
    if kind == "sqlite":
        return f"sqlite://{tmp_path / 'kv' / 'store.db'}"
    if kind == "hbase-testserver":
        server = request.getfixturevalue("hbase_test_server")
        return f"{server.url}?table_prefix={prefix}"
    return f"hbase://{real_hbase_target()}?table_prefix={prefix}"


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KVStore]:
    """An empty store of each backend."""
    url = make_store_url(request, backend_kind(request.param), tmp_path)
    kv = open_store(url)
    try:
        yield kv
    finally:
        if not url.startswith("sqlite"):
            drop_all_tables(kv)
        kv.close()


@pytest.fixture
def table(store: KVStore) -> KVTable:
    """A fresh table ``t`` with families ``cf`` and ``meta``."""
    store.create_table("t", families=("cf", "meta"))
    store.stats.reset()
    return store.table("t")


def empty_table(table: KVTable) -> bool:
    """Delete every cell of ``table``; False (with a warning) when a rescan still finds one.

    Column by column, not the whole row: a whole-row delete leaves one family marker at the
    empty qualifier, and on HBase 2.6 a later put to that empty qualifier, read through a
    filter that seeks (``ColumnRange`` from ``a``), seeks past the marker, so the deleted
    cells show again (docs/hbase.md). A put in the same millisecond as a delete marker is
    hidden by it: returning 2 ms after the deletes keeps the next user's puts clear of them.
    """
    for row, cells in list(table.scan()):
        table.delete(row, columns=list(cells))
    left = list(table.scan(limit=1))
    if left:
        warnings.warn(f"table {table.name!r} kept {left!r} after its rows were deleted",
                      stacklevel=2)
        return False
    time.sleep(0.002)
    return True


class TableFactory:
    """Fresh tables inside one test (hypothesis examples must not share rows).

    On a real HBase, creating and dropping a table costs about 0.7 s (a procedure on the
    master and a region assignment), so a released table there is emptied row by row and handed
    out again to the next call with the same families; its rows are gone, as in a new table.
    """

    def __init__(self, store: KVStore, backend: str) -> None:
        self.store = store
        self.backend = backend
        self.count = 0
        self.in_use: list[tuple[str, tuple[str, ...]]] = []
        self.emptied: dict[tuple[str, ...], list[str]] = {}

    def __call__(self, families: Any = ("cf", "meta")) -> KVTable:
        shape = tuple(families)
        if self.emptied.get(shape):
            name = self.emptied[shape].pop()
        else:
            self.count += 1
            name = f"h{self.count}"
            self.store.create_table(name, families=shape)
        self.in_use.append((name, shape))
        return self.store.table(name)

    def drop_last(self) -> None:
        name, shape = self.in_use.pop()
        if self.backend != "hbase-real":
            self.store.drop_table(name, missing_ok=True)
            return
        if not empty_table(self.store.table(name)):  # never hand it out again
            self.store.drop_table(name, missing_ok=True)
            return
        self.emptied.setdefault(shape, []).append(name)

    def release_all(self) -> None:
        while self.in_use:
            self.drop_last()


@pytest.fixture
def new_table(request: pytest.FixtureRequest, store: KVStore) -> TableFactory:
    return TableFactory(store, backend_kind(request.node.callspec.params["store"]))
