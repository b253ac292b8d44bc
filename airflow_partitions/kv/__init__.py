"""Ordered key/value store with the HBase data model; knows nothing about partitions.

``open_store(url)`` gives a ``KVStore`` for ``sqlite:///path.db`` (embedded, the default) or
``hbase://host:9090?...`` (happybase over Thrift1), the schemes ``STORE_BACKENDS`` registers.
A backend's module is imported only when a URL of its scheme is opened.
"""

from __future__ import annotations

from airflow_partitions.kv.backends import (
    STORE_BACKENDS,
    AnyBackend,
    Backend,
    open_store,
    parse_store_url,
)
from airflow_partitions.kv.base import (
    AskedAgain,
    Cells,
    FeedChanges,
    KeyedRead,
    KVStore,
    KVTable,
    ReadsAgain,
    RowCells,
    RowValues,
    StoreStats,
)
from airflow_partitions.kv.cell_blob import decode_cells, encode_cells
from airflow_partitions.kv.errors import (
    CorruptCell,
    DamagedCells,
    InvalidArgument,
    InvalidScan,
    InvalidStoreURL,
    KVError,
    StoreDamaged,
    StoreUnavailable,
    TableExists,
    TableNotFound,
)
from airflow_partitions.kv.packed_rows import PackedRows
from airflow_partitions.kv.page_memo import MAX_ROWS, LatestMemo, RowsMemo, forget_all
from airflow_partitions.kv.scan_filters import (
    ColumnRange,
    FilterList,
    PrefixFilter,
    RowRange,
    ScanFilter,
    SingleColumnValue,
    all_of,
    any_of,
    apply_filter,
    render_hbase,
    render_hbase_bytes,
)
from airflow_partitions.kv.urls import HBaseConfig, SQLiteConfig, StoreConfig

__all__ = [
    "MAX_ROWS",
    "STORE_BACKENDS",
    "AnyBackend",
    "AskedAgain",
    "Backend",
    "Cells",
    "ColumnRange",
    "CorruptCell",
    "DamagedCells",
    "FeedChanges",
    "FilterList",
    "HBaseConfig",
    "InvalidArgument",
    "InvalidScan",
    "InvalidStoreURL",
    "KVError",
    "KVStore",
    "KVTable",
    "KeyedRead",
    "LatestMemo",
    "PackedRows",
    "PrefixFilter",
    "ReadsAgain",
    "RowCells",
    "RowRange",
    "RowValues",
    "RowsMemo",
    "SQLiteConfig",
    "ScanFilter",
    "SingleColumnValue",
    "StoreConfig",
    "StoreDamaged",
    "StoreStats",
    "StoreUnavailable",
    "TableExists",
    "TableNotFound",
    "all_of",
    "any_of",
    "apply_filter",
    "decode_cells",
    "encode_cells",
    "forget_all",
    "open_store",
    "parse_store_url",
    "render_hbase",
    "render_hbase_bytes",
]
