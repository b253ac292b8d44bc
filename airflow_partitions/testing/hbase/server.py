"""An HBase Thrift1-compatible TEST DOUBLE: a small in-process server for tests, not HBase.

Why it exists: no real HBase can run in CI, but the project's HBase backend talks to HBase through
happybase (Thrift1). This server speaks happybase's own bundled ``Hbase.thrift`` over thriftpy2 on
loopback and keeps tables in memory in byte order, so the backend can be tested end to end.

What it is *not*: a database. There is no persistence, no regions/splits, no TTL, no tombstones
(deletes remove cells at once), one lock serialises all writes, and every ``attributes`` map is
ignored. Semantics follow the HBase reference guide where the supported calls are concerned; see
``docs/testing.md`` for the exact list.

Run it standalone with ``python -m airflow_partitions.testing.hbase.server --port 9090``.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import logging
import re
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import FrameType, ModuleType, TracebackType
from typing import Any, Literal

from sortedcontainers import SortedDict
from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.thrift import TApplicationException, TProcessor
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TSocket,
    TTransportException,
)

from airflow_partitions.testing.hbase.filter_language import (
    Cell,
    Filter,
    FilterLanguageError,
    apply_filter,
    parse_filter,
)

__all__ = ["HBaseTestServer", "load_hbase_thrift", "main"]

logger = logging.getLogger(__name__)

ColumnKey = tuple[bytes, bytes]
ErrorKind = Literal["io", "ia", "exists"]

_INT64_MIN = -(2**63)
_TABLE_NAME = re.compile(rb"(?:[A-Za-z0-9_][A-Za-z0-9_.\-]*:)?[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_LATEST = 2**63 - 1  # HConstants.LATEST_TIMESTAMP


def load_hbase_thrift() -> ModuleType:
    """Return the ``Hbase_thrift`` module happybase loads, so client and server share classes."""
    module = sys.modules.get("Hbase_thrift")
    if module is None:
        import happybase  # noqa: F401  (loading happybase registers Hbase_thrift)

        module = sys.modules["Hbase_thrift"]
    return module


class StoreError(Exception):
    """A failure the client should see as a Thrift-declared exception (IOError, ...)."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _io(message: str) -> StoreError:
    return StoreError("io", message)


def _illegal(message: str) -> StoreError:
    return StoreError("ia", message)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _wrap_int64(value: int) -> int:
    """Java ``long`` overflow semantics, as HBase's increment has."""
    return (value - _INT64_MIN) % 2**64 + _INT64_MIN


def _text(raw: bytes) -> str:
    """Bytes shown in error messages the way HBase's ``Bytes.toStringBinary`` would roughly."""
    return raw.decode("utf-8", "backslashreplace")


def parse_column(column: bytes | str) -> tuple[bytes, bytes | None]:
    """Split ``family:qualifier``; a bare ``family`` means the whole family (None).

    ``family:`` is the cell with the empty qualifier, as HBase's ``CellUtil.parseColumn`` reads it.
    """
    raw = column.encode("utf-8") if isinstance(column, str) else column
    family, sep, qualifier = raw.partition(b":")
    if not sep:
        return family, None
    return family, qualifier


def _column_name(key: ColumnKey) -> bytes:
    return key[0] + b":" + key[1]


def _as_bytes(value: bytes | str | None) -> bytes:
    """Thrift ``Text`` may arrive as ``str`` when a client passed text (happybase does for '')."""
    if value is None:
        return b""
    return value.encode("utf-8") if isinstance(value, str) else value


# ----------------------------------------------------------------------------------------------
# The in-memory store
# ----------------------------------------------------------------------------------------------


@dataclass
class Version:
    """One timestamped value of a cell."""

    timestamp: int
    value: bytes


@dataclass
class Table:
    """A table: families with their descriptors and rows in byte order."""

    name: bytes
    descriptors: dict[bytes, Any]  # family (no colon) -> ColumnDescriptor
    rows: Any = field(default_factory=SortedDict)  # row -> SortedDict[ColumnKey, list[Version]]
    enabled: bool = True
    region_id: int = field(default_factory=_now_ms)

    def max_versions(self, family: bytes) -> int:
        return int(self.descriptors[family].maxVersions or 1)

    def check_family(self, family: bytes) -> None:
        """Reject unknown families with HBase's NoSuchColumnFamilyException wording."""
        if family not in self.descriptors:
            raise _io(
                f"org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column "
                f"family {_text(family)} does not exist in region {_text(self.name)},,"
                f"{self.region_id} in table '{_text(self.name)}'"
            )


@dataclass(frozen=True)
class Selection:
    """Which columns and versions a read returns."""

    columns: tuple[tuple[bytes, bytes | None], ...] | None = None
    max_ts: int | None = None  # exclusive upper bound, as Get.setTimeRange(0, ts)
    versions: int = 1

    def wants(self, key: ColumnKey) -> bool:
        if self.columns is None:
            return True
        return any(f == key[0] and (q is None or q == key[1]) for f, q in self.columns)


@dataclass(frozen=True)
class PendingMutation:
    """A validated put or delete, applied only after the whole request validated."""

    is_delete: bool
    family: bytes
    qualifier: bytes | None
    value: bytes


class Store:
    """Tables in memory, guarded by one re-entrant lock so every request is atomic."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.tables: dict[bytes, Table] = {}

    # -- tables ---------------------------------------------------------------------------------

    def table(self, name: bytes, *, must_be_enabled: bool = True) -> Table:
        """Look a table up, failing like HBase for missing or disabled tables."""
        table = self.tables.get(name)
        if table is None:
            raise _io(f"org.apache.hadoop.hbase.TableNotFoundException: {_text(name)}")
        if must_be_enabled and not table.enabled:
            raise _io(
                f"org.apache.hadoop.hbase.TableNotEnabledException: {_text(name)} is disabled."
            )
        return table

    def create_table(self, name: bytes, descriptors: Sequence[Any]) -> None:
        if not _TABLE_NAME.fullmatch(name):
            raise _illegal(f"Illegal table name: {_text(name)!r}")
        families = self._families(descriptors)
        with self.lock:
            if name in self.tables:
                raise StoreError(
                    "exists", f"org.apache.hadoop.hbase.TableExistsException: {_text(name)}"
                )
            self.tables[name] = Table(name, families)

    @staticmethod
    def _families(descriptors: Sequence[Any]) -> dict[bytes, Any]:
        """Validate column descriptors; key them by family name without the colon."""
        if not descriptors:
            raise _illegal("Table should have at least one column family.")
        families: dict[bytes, Any] = {}
        for descriptor in descriptors:
            family = _as_bytes(descriptor.name).partition(b":")[0]
            if not family or family in families:
                raise _illegal(f"Illegal or duplicate column family name: {_text(family)!r}")
            if descriptor.maxVersions is not None and descriptor.maxVersions < 1:
                raise _illegal(f"Maximum versions must be positive for family {_text(family)}")
            descriptor.name = family + b":"
            families[family] = descriptor
        return families

    def delete_table(self, name: bytes) -> None:
        with self.lock:
            table = self.table(name, must_be_enabled=False)
            if table.enabled:
                raise _io(f"org.apache.hadoop.hbase.TableNotDisabledException: {_text(name)}")
            del self.tables[name]

    def set_enabled(self, name: bytes, enabled: bool) -> None:
        with self.lock:
            table = self.table(name, must_be_enabled=False)
            if table.enabled == enabled:
                state = "TableNotDisabledException" if enabled else "TableNotEnabledException"
                raise _io(f"org.apache.hadoop.hbase.{state}: {_text(name)}")
            table.enabled = enabled

    # -- reads ----------------------------------------------------------------------------------

    def selection(self, table: Table, columns: Sequence[bytes] | None, **kw: Any) -> Selection:
        """Parse and validate a column list against the table's families."""
        if not columns:
            return Selection(None, **kw)
        parsed = tuple(parse_column(c) for c in columns)
        for family, _ in parsed:
            table.check_family(family)
        return Selection(parsed, **kw)

    @staticmethod
    def visible(row_cells: Any, sel: Selection) -> list[tuple[ColumnKey, list[Version]]]:
        """Selected columns of one row, each with its newest versions below ``max_ts``."""
        out: list[tuple[ColumnKey, list[Version]]] = []
        for key, versions in row_cells.items():
            if not sel.wants(key):
                continue
            kept = [v for v in versions if sel.max_ts is None or v.timestamp < sel.max_ts]
            if kept:
                out.append((key, kept[: sel.versions]))
        return out

    def read_row(
        self, name: bytes, row: bytes, sel_columns: Sequence[bytes] | None, **kw: Any
    ) -> list[tuple[ColumnKey, list[Version]]]:
        with self.lock:
            table = self.table(name)
            sel = self.selection(table, sel_columns, **kw)
            row_cells = table.rows.get(_as_bytes(row))
            return [] if row_cells is None else self.visible(row_cells, sel)

    # -- writes ---------------------------------------------------------------------------------

    def validate(self, table: Table, row: bytes, mutations: Sequence[Any]) -> list[PendingMutation]:
        """Check every mutation of a row before any is applied (all-or-nothing requests)."""
        if not row:
            raise _illegal("Row length is 0")
        pending: list[PendingMutation] = []
        for m in mutations:
            family, qualifier = parse_column(_as_bytes(m.column))
            table.check_family(family)
            pending.append(PendingMutation(bool(m.isDelete), family, qualifier, _as_bytes(m.value)))
        return pending

    def mutate_rows(
        self, name: bytes, batches: Sequence[tuple[bytes, Sequence[Any]]], ts: int | None
    ) -> None:
        """Apply puts and deletes to several rows atomically, in the order given."""
        with self.lock:
            table = self.table(name)
            validated = [
                (_as_bytes(row), self.validate(table, _as_bytes(row), ms)) for row, ms in batches
            ]
            for row, pending in validated:
                for p in pending:
                    self._apply(table, row, p, ts)

    def _apply(self, table: Table, row: bytes, p: PendingMutation, ts: int | None) -> None:
        if p.is_delete:
            self.delete(table, row, p.family, p.qualifier, _LATEST if ts is None else ts)
        else:
            self.put(table, row, (p.family, p.qualifier or b""), p.value, ts)

    def put(self, table: Table, row: bytes, key: ColumnKey, value: bytes, ts: int | None) -> None:
        """Write one version; a write at an existing timestamp replaces it (latest write wins)."""
        row_cells = table.rows.setdefault(row, SortedDict())
        versions: list[Version] = row_cells.setdefault(key, [])
        stamp = _now_ms() if ts is None else ts
        versions[:] = [v for v in versions if v.timestamp != stamp]
        versions.append(Version(stamp, value))
        versions.sort(key=lambda v: v.timestamp, reverse=True)
        del versions[table.max_versions(key[0]) :]

    def delete(
        self, table: Table, row: bytes, family: bytes | None, qualifier: bytes | None, upto: int
    ) -> None:
        """Remove versions with timestamp <= ``upto`` of a column, a family or the whole row."""
        row_cells = table.rows.get(row)
        if row_cells is None:
            return
        for key in list(row_cells):
            if family is not None and key[0] != family:
                continue
            if qualifier is not None and key[1] != qualifier:
                continue
            kept = [v for v in row_cells[key] if v.timestamp > upto]
            if kept:
                row_cells[key] = kept
            else:
                del row_cells[key]
        if not row_cells:
            del table.rows[row]

    def delete_cells(self, name: bytes, row: bytes, column: bytes | None, upto: int) -> None:
        with self.lock:
            table = self.table(name)
            if column is None:
                self.delete(table, row, None, None, upto)
                return
            family, qualifier = parse_column(column)
            table.check_family(family)
            self.delete(table, row, family, qualifier, upto)

    def increment(self, name: bytes, row: bytes, column: bytes, amount: int) -> int:
        """Atomic increment of an 8-byte big-endian signed long, initialised to 0."""
        if not row:
            raise _illegal("Row length is 0")
        with self.lock:
            table = self.table(name)
            family, qualifier = parse_column(column)
            table.check_family(family)
            key = (family, qualifier or b"")
            current = self.latest(table, row, key)
            if current is not None and len(current) != 8:
                raise _io(
                    "org.apache.hadoop.hbase.DoNotRetryIOException: Field is not a long, "
                    f"it's {len(current)} bytes wide"
                )
            old = 0 if current is None else struct.unpack(">q", current)[0]
            new = _wrap_int64(old + amount)
            if current is None or amount != 0:
                self.put(table, row, key, struct.pack(">q", new), None)
            return new

    @staticmethod
    def latest(table: Table, row: bytes, key: ColumnKey) -> bytes | None:
        row_cells = table.rows.get(row)
        if row_cells is None or key not in row_cells:
            return None
        value: bytes = row_cells[key][0].value
        return value

    def check_and_put(
        self, name: bytes, row: bytes, column: bytes, expected: bytes | None, mput: Any
    ) -> bool:
        """HBase checkAndPut: ``expected`` None/empty means "cell absent or empty"."""
        with self.lock:
            table = self.table(name)
            family, qualifier = parse_column(column)
            table.check_family(family)
            if mput is None or mput.isDelete:
                raise _illegal("checkAndPut needs a put mutation (isDelete must be false)")
            (pending,) = self.validate(table, row, [mput])
            current = self.latest(table, row, (family, qualifier or b""))
            if expected:
                matches = current == expected
            else:
                matches = not current
            if matches:
                self._apply(table, row, pending, None)
            return matches

    def append(
        self, name: bytes, row: bytes, columns: Sequence[bytes], values: Sequence[bytes]
    ) -> list[tuple[bytes, int]]:
        """HBase Append: concatenate to the current values; returns the new (value, ts)."""
        with self.lock:
            table = self.table(name)
            if len(columns) != len(values):
                raise _illegal("TAppend needs as many values as columns")
            out: list[tuple[bytes, int]] = []
            for column, value in zip(columns, values, strict=True):
                family, qualifier = parse_column(_as_bytes(column))
                table.check_family(family)
                key = (family, qualifier or b"")
                new = (self.latest(table, row, key) or b"") + _as_bytes(value)
                self.put(table, row, key, new, None)
                out.append((new, table.rows[row][key][0].timestamp))
            return out


# ----------------------------------------------------------------------------------------------
# Scanners
# ----------------------------------------------------------------------------------------------


@dataclass
class Scanner:
    """Server-side scanner state: bounds, selection, filter and a cursor into the row order."""

    table: bytes
    start: bytes
    stop: bytes
    reversed: bool
    columns: Sequence[bytes] | None
    max_ts: int | None
    flt: Filter | None
    batch: int | None
    sort_columns: bool
    cursor: bytes | None = None
    done: bool = False
    pending: collections.deque[tuple[bytes, list[tuple[ColumnKey, Version]]]] = field(
        default_factory=collections.deque
    )

    def key_range(self, rows: Any) -> Iterator[bytes]:
        """Row keys still to visit, honouring start (inclusive) and stop (exclusive)."""
        keys: Iterator[bytes]
        if not self.reversed:
            low, low_incl = (self.start, True) if self.cursor is None else (self.cursor, False)
            keys = rows.irange(low, self.stop or None, inclusive=(low_incl, False))
            return keys
        high, high_incl = (
            (self.start or None, True) if self.cursor is None else (self.cursor, False)
        )
        keys = rows.irange(self.stop or None, high, inclusive=(False, high_incl), reverse=True)
        return keys


def next_scan_row(
    store: Store, scanner: Scanner
) -> tuple[bytes, list[tuple[ColumnKey, Version]]] | None:
    """Advance to the next row that survives selection and filter; None when exhausted."""
    while not scanner.done:
        with store.lock:
            table = store.table(scanner.table)
            sel = store.selection(table, scanner.columns, max_ts=scanner.max_ts)
            row = next(scanner.key_range(table.rows), None)
            if row is None:
                scanner.done = True
                return None
            scanner.cursor = row
            visible = [(k, vs[0]) for k, vs in store.visible(table.rows[row], sel)]
        if not visible:
            continue  # HBase never shows a filter a row without cells
        cells = [Cell(k[0], k[1], v.value, v.timestamp) for k, v in visible]
        kept, stop = apply_filter(scanner.flt, row, cells)
        scanner.done = stop
        if kept:
            return row, [((c.family, c.qualifier), Version(c.timestamp, c.value)) for c in kept]
    return None


# ----------------------------------------------------------------------------------------------
# The Thrift handler
# ----------------------------------------------------------------------------------------------


class HBaseHandler:
    """Implements the ``Hbase`` Thrift1 service; method names are the Thrift ones on purpose."""

    def __init__(self, store: Store, thrift: ModuleType, port: Callable[[], int]) -> None:
        self.store = store
        self.t = thrift
        self._port = port
        self._scanners: dict[int, Scanner] = {}
        self._scanner_ids = itertools.count(1)

    def drop_scanners(self) -> None:
        """Forget open scanners (a restarted Thrift server has none)."""
        with self.store.lock:
            self._scanners.clear()

    # -- result building ------------------------------------------------------------------------

    def _row_result(
        self, row: bytes, cells: Sequence[tuple[ColumnKey, Version]], sort_columns: bool
    ) -> Any:
        if sort_columns:
            columns = [
                self.t.TColumn(_column_name(k), self.t.TCell(v.value, v.timestamp))
                for k, v in cells
            ]
            return self.t.TRowResult(row=row, sortedColumns=columns)
        mapping = {_column_name(k): self.t.TCell(v.value, v.timestamp) for k, v in cells}
        return self.t.TRowResult(row=row, columns=mapping)

    def _rows(
        self,
        table: bytes,
        rows: Sequence[bytes],
        columns: Sequence[bytes] | None,
        max_ts: int | None,
    ) -> list[Any]:
        out = []
        for row in rows:
            cells = self.store.read_row(table, row, columns, max_ts=max_ts)
            if cells:
                out.append(self._row_result(row, [(k, vs[0]) for k, vs in cells], False))
        return out

    def _cells(
        self, table: bytes, row: bytes, column: bytes, versions: int, max_ts: int | None
    ) -> list[Any]:
        if versions < 1:
            raise _illegal("numVersions must be at least 1")
        found = self.store.read_row(table, row, [column], max_ts=max_ts, versions=versions)
        return [self.t.TCell(v.value, v.timestamp) for _, vs in found for v in vs]

    # -- table administration -------------------------------------------------------------------

    def getTableNames(self) -> list[bytes]:
        with self.store.lock:
            return sorted(self.store.tables)

    def createTable(self, tableName: bytes, columnFamilies: list[Any]) -> None:
        self.store.create_table(_as_bytes(tableName), columnFamilies)

    def deleteTable(self, tableName: bytes) -> None:
        self.store.delete_table(_as_bytes(tableName))

    def enableTable(self, tableName: bytes) -> None:
        self.store.set_enabled(_as_bytes(tableName), True)

    def disableTable(self, tableName: bytes) -> None:
        self.store.set_enabled(_as_bytes(tableName), False)

    def isTableEnabled(self, tableName: bytes) -> bool:
        with self.store.lock:
            return self.store.table(_as_bytes(tableName), must_be_enabled=False).enabled

    def compact(self, tableNameOrRegionName: bytes) -> None:
        self.store.table(_as_bytes(tableNameOrRegionName), must_be_enabled=False)

    def majorCompact(self, tableNameOrRegionName: bytes) -> None:
        self.store.table(_as_bytes(tableNameOrRegionName), must_be_enabled=False)

    def getColumnDescriptors(self, tableName: bytes) -> dict[bytes, Any]:
        with self.store.lock:
            table = self.store.table(_as_bytes(tableName), must_be_enabled=False)
            return {f + b":": d for f, d in table.descriptors.items()}

    def _region(self, table: Table) -> Any:
        name = table.name + b",," + str(table.region_id).encode() + b"."
        return self.t.TRegionInfo(
            startKey=b"",
            endKey=b"",
            id=table.region_id,
            name=name,
            version=1,
            serverName=b"127.0.0.1",
            port=self._port(),
        )

    def getTableRegions(self, tableName: bytes) -> list[Any]:
        with self.store.lock:
            return [self._region(self.store.table(_as_bytes(tableName), must_be_enabled=False))]

    def getRegionInfo(self, row: bytes) -> Any:
        """Regions are named ``table,startKey,id.``; the double has one region per table."""
        name = _as_bytes(row).partition(b",")[0]
        with self.store.lock:
            return self._region(self.store.table(name, must_be_enabled=False))

    # -- single-cell and row reads ----------------------------------------------------------------

    def get(self, tableName: bytes, row: bytes, column: bytes, attributes: Any) -> list[Any]:
        return self._cells(tableName, row, column, 1, None)

    def getVer(
        self, tableName: bytes, row: bytes, column: bytes, numVersions: int, attributes: Any
    ) -> list[Any]:
        return self._cells(tableName, row, column, numVersions, None)

    def getVerTs(
        self,
        tableName: bytes,
        row: bytes,
        column: bytes,
        timestamp: int,
        numVersions: int,
        attributes: Any,
    ) -> list[Any]:
        return self._cells(tableName, row, column, numVersions, timestamp)

    def getRow(self, tableName: bytes, row: bytes, attributes: Any) -> list[Any]:
        return self._rows(tableName, [row], None, None)

    def getRowWithColumns(
        self, tableName: bytes, row: bytes, columns: list[bytes] | None, attributes: Any
    ) -> list[Any]:
        return self._rows(tableName, [row], columns, None)

    def getRowTs(self, tableName: bytes, row: bytes, timestamp: int, attributes: Any) -> list[Any]:
        return self._rows(tableName, [row], None, timestamp)

    def getRowWithColumnsTs(
        self,
        tableName: bytes,
        row: bytes,
        columns: list[bytes] | None,
        timestamp: int,
        attributes: Any,
    ) -> list[Any]:
        return self._rows(tableName, [row], columns, timestamp)

    def getRows(self, tableName: bytes, rows: list[bytes], attributes: Any) -> list[Any]:
        return self._rows(tableName, rows, None, None)

    def getRowsWithColumns(
        self, tableName: bytes, rows: list[bytes], columns: list[bytes] | None, attributes: Any
    ) -> list[Any]:
        return self._rows(tableName, rows, columns, None)

    def getRowsTs(
        self, tableName: bytes, rows: list[bytes], timestamp: int, attributes: Any
    ) -> list[Any]:
        return self._rows(tableName, rows, None, timestamp)

    def getRowsWithColumnsTs(
        self,
        tableName: bytes,
        rows: list[bytes],
        columns: list[bytes] | None,
        timestamp: int,
        attributes: Any,
    ) -> list[Any]:
        return self._rows(tableName, rows, columns, timestamp)

    def getRowOrBefore(self, tableName: bytes, row: bytes, family: bytes) -> list[Any]:
        raise _io("getRowOrBefore is deprecated in HBase and not supported by the test double")

    # -- writes ---------------------------------------------------------------------------------

    def mutateRow(
        self, tableName: bytes, row: bytes, mutations: list[Any], attributes: Any
    ) -> None:
        self.store.mutate_rows(tableName, [(row, mutations)], None)

    def mutateRowTs(
        self, tableName: bytes, row: bytes, mutations: list[Any], timestamp: int, attributes: Any
    ) -> None:
        self.store.mutate_rows(tableName, [(row, mutations)], timestamp)

    def mutateRows(self, tableName: bytes, rowBatches: list[Any], attributes: Any) -> None:
        self.store.mutate_rows(tableName, [(b.row, b.mutations or []) for b in rowBatches], None)

    def mutateRowsTs(
        self, tableName: bytes, rowBatches: list[Any], timestamp: int, attributes: Any
    ) -> None:
        batches = [(b.row, b.mutations or []) for b in rowBatches]
        self.store.mutate_rows(tableName, batches, timestamp)

    def atomicIncrement(self, tableName: bytes, row: bytes, column: bytes, value: int) -> int:
        return self.store.increment(_as_bytes(tableName), _as_bytes(row), _as_bytes(column), value)

    def increment(self, increment: Any) -> None:
        self.atomicIncrement(
            increment.table, increment.row, increment.column, increment.ammount or 0
        )

    def incrementRows(self, increments: list[Any]) -> None:
        with self.store.lock:
            for inc in increments:
                self.increment(inc)

    def deleteAll(self, tableName: bytes, row: bytes, column: bytes, attributes: Any) -> None:
        self.store.delete_cells(_as_bytes(tableName), _as_bytes(row), _as_bytes(column), _LATEST)

    def deleteAllTs(
        self, tableName: bytes, row: bytes, column: bytes, timestamp: int, attributes: Any
    ) -> None:
        self.store.delete_cells(_as_bytes(tableName), _as_bytes(row), _as_bytes(column), timestamp)

    def deleteAllRow(self, tableName: bytes, row: bytes, attributes: Any) -> None:
        self.store.delete_cells(_as_bytes(tableName), _as_bytes(row), None, _LATEST)

    def deleteAllRowTs(self, tableName: bytes, row: bytes, timestamp: int, attributes: Any) -> None:
        self.store.delete_cells(_as_bytes(tableName), _as_bytes(row), None, timestamp)

    def checkAndPut(
        self,
        tableName: bytes,
        row: bytes,
        column: bytes,
        value: bytes | None,
        mput: Any,
        attributes: Any,
    ) -> bool:
        return self.store.check_and_put(
            _as_bytes(tableName),
            _as_bytes(row),
            _as_bytes(column),
            value and _as_bytes(value),
            mput,
        )

    def append(self, append: Any) -> list[Any]:
        results = self.store.append(
            _as_bytes(append.table),
            _as_bytes(append.row),
            append.columns or [],
            append.values or [],
        )
        return [self.t.TCell(v, ts) for v, ts in results]

    # -- scanners -------------------------------------------------------------------------------

    def _open(
        self,
        tableName: bytes,
        start: bytes | None,
        stop: bytes | None,
        columns: list[bytes] | None,
        max_ts: int | None,
        scan: Any = None,
    ) -> int:
        flt = self._parse_filter(scan.filterString) if scan is not None else None
        batch = scan.batchSize if scan is not None and scan.batchSize else None
        scanner = Scanner(
            table=_as_bytes(tableName),
            start=_as_bytes(start),
            stop=_as_bytes(stop),
            reversed=bool(scan is not None and scan.reversed),
            columns=columns or None,
            max_ts=max_ts,
            flt=flt,
            batch=batch,
            sort_columns=bool(scan is not None and scan.sortColumns),
        )
        with self.store.lock:
            table = self.store.table(scanner.table)
            self.store.selection(table, scanner.columns)  # validate families up front
            scanner_id = next(self._scanner_ids) % 2**31
            self._scanners[scanner_id] = scanner
            return scanner_id

    @staticmethod
    def _parse_filter(text: bytes | str | None) -> Filter | None:
        if not text:
            return None
        try:
            return parse_filter(text)
        except FilterLanguageError as exc:
            raise _io(f"java.lang.IllegalArgumentException: invalid filter string: {exc}") from exc

    def scannerOpenWithScan(self, tableName: bytes, scan: Any, attributes: Any) -> int:
        return self._open(
            tableName, scan.startRow, scan.stopRow, scan.columns, scan.timestamp, scan
        )

    def scannerOpen(
        self, tableName: bytes, startRow: bytes, columns: list[bytes] | None, attributes: Any
    ) -> int:
        return self._open(tableName, startRow, None, columns, None)

    def scannerOpenWithStop(
        self,
        tableName: bytes,
        startRow: bytes,
        stopRow: bytes,
        columns: list[bytes] | None,
        attributes: Any,
    ) -> int:
        return self._open(tableName, startRow, stopRow, columns, None)

    def scannerOpenWithPrefix(
        self, tableName: bytes, startAndPrefix: bytes, columns: list[bytes] | None, attributes: Any
    ) -> int:
        prefix = _as_bytes(startAndPrefix)
        scan = self.t.TScan(filterString=b"PrefixFilter('" + prefix.replace(b"'", b"''") + b"')")
        return self._open(tableName, prefix, None, columns, None, scan)

    def scannerOpenTs(
        self,
        tableName: bytes,
        startRow: bytes,
        columns: list[bytes] | None,
        timestamp: int,
        attributes: Any,
    ) -> int:
        return self._open(tableName, startRow, None, columns, timestamp)

    def scannerOpenWithStopTs(
        self,
        tableName: bytes,
        startRow: bytes,
        stopRow: bytes,
        columns: list[bytes] | None,
        timestamp: int,
        attributes: Any,
    ) -> int:
        return self._open(tableName, startRow, stopRow, columns, timestamp)

    def _scanner(self, scanner_id: int) -> Scanner:
        with self.store.lock:
            scanner = self._scanners.get(scanner_id)
        if scanner is None:
            raise _illegal("scanner ID is invalid")
        return scanner

    def scannerGetList(self, id: int, nbRows: int) -> list[Any]:
        scanner = self._scanner(id)
        out: list[Any] = []
        while len(out) < max(nbRows, 1):
            if not scanner.pending:
                found = next_scan_row(self.store, scanner)
                if found is None:
                    break
                self._split(scanner, *found)
            row, cells = scanner.pending.popleft()
            out.append(self._row_result(row, cells, scanner.sort_columns))
        return out

    @staticmethod
    def _split(scanner: Scanner, row: bytes, cells: list[tuple[ColumnKey, Version]]) -> None:
        """Scan.setBatch: a row wider than ``batch`` cells comes back as several results."""
        size = scanner.batch or len(cells)
        for i in range(0, len(cells), size):
            scanner.pending.append((row, cells[i : i + size]))

    def scannerGet(self, id: int) -> list[Any]:
        return self.scannerGetList(id, 1)

    def scannerClose(self, id: int) -> None:
        with self.store.lock:
            if self._scanners.pop(id, None) is None:
                raise _illegal("scanner ID is invalid")


# ----------------------------------------------------------------------------------------------
# Thrift plumbing
# ----------------------------------------------------------------------------------------------


class CountingProcessor(TProcessor):
    """A TProcessor that counts calls and never lets a handler bug kill the connection.

    Store errors become the Thrift exception the method declares (IOError as the fallback); any
    other exception becomes a ``TApplicationException`` so the client sees an error, not a hang.
    """

    def __init__(self, service: Any, handler: HBaseHandler, on_call: Callable[[str], None]) -> None:
        super().__init__(service, handler)
        self._thrift = handler.t
        self._on_call = on_call

    def process(self, iprot: Any, oprot: Any) -> None:
        api, seqid, result, call = self.process_in(iprot)
        self._on_call(api)
        if isinstance(result, TApplicationException):
            self.send_exception(oprot, api, result, seqid)
            return
        assert call is not None
        try:
            result.success = call()
        except StoreError as exc:
            if not self._declare(exc, result):
                self._internal_error(oprot, api, seqid, exc)
                return
        except Exception as exc:
            logger.exception("test double: %s failed", api)
            self._internal_error(oprot, api, seqid, exc)
            return
        self.send_result(oprot, api, result, seqid)

    def _declare(self, exc: StoreError, result: Any) -> bool:
        """Map a StoreError onto the method's declared exceptions."""
        classes = {"io": "IOError", "ia": "IllegalArgument", "exists": "AlreadyExists"}
        preferred = getattr(self._thrift, classes[exc.kind])(message=exc.message)
        if self.handle_exception(preferred, result):
            return True
        fallback = self._thrift.IOError(message=exc.message)
        return bool(self.handle_exception(fallback, result))

    def _internal_error(self, oprot: Any, api: str, seqid: int, exc: Exception) -> None:
        message = f"HBase test double internal error in {api}: {type(exc).__name__}: {exc}"
        error = TApplicationException(TApplicationException.INTERNAL_ERROR, message)
        self.send_exception(oprot, api, error, seqid)


def _factories(transport: str, protocol: str) -> tuple[Any, Any]:
    """Thrift transport and protocol factories matching happybase's option names."""
    transports = {"buffered": TBufferedTransportFactory, "framed": TFramedTransportFactory}
    protocols = {"binary": TBinaryProtocolFactory, "compact": TCompactProtocolFactory}
    if transport not in transports:
        raise ValueError(f"transport must be one of {sorted(transports)}, got {transport!r}")
    if protocol not in protocols:
        raise ValueError(f"protocol must be one of {sorted(protocols)}, got {protocol!r}")
    return transports[transport](), protocols[protocol]()


class HBaseTestServer:
    """HBase Thrift1-compatible TEST DOUBLE serving happybase's ``Hbase.thrift`` on loopback.

    Data lives in memory and survives ``stop()``/``start()`` (so tests can simulate an outage)
    until ``clear()``. ``stop()`` closes the listening socket *and* every client connection, so an
    in-flight client sees a transport error. ``calls`` counts served Thrift methods by name.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        transport: str = "buffered",
        protocol: str = "binary",
    ) -> None:
        self._host = host
        self._port = port
        self._trans_factory, self._proto_factory = _factories(transport, protocol)
        self.calls: collections.Counter[str] = collections.Counter()
        self._calls_lock = threading.Lock()
        self._store = Store()
        thrift = load_hbase_thrift()
        self._handler = HBaseHandler(self._store, thrift, lambda: self._port)
        self._processor = CountingProcessor(thrift.Hbase, self._handler, self._count)
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self._clients: dict[socket.socket, threading.Thread] = {}

    # -- properties -------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        """The bound port (the real one once started, even if 0 was asked for)."""
        return self._port

    @property
    def url(self) -> str:
        return f"hbase://{self._host}:{self._port}"

    @property
    def running(self) -> bool:
        return self._listener is not None

    def _count(self, api: str) -> None:
        with self._calls_lock:
            self.calls[api] += 1

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> None:
        """Bind and serve in background threads; a no-op if already running."""
        with self._lock:
            if self._listener is not None:
                return
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                listener.bind((self._host, self._port))
                listener.listen(128)
            except OSError:
                listener.close()
                raise
            self._port = listener.getsockname()[1]
            self._listener = listener
            self._acceptor = threading.Thread(
                target=self._accept_loop,
                args=(listener,),
                daemon=True,
                name=f"hbase-test-server-{self._port}",
            )
            self._acceptor.start()

    def stop(self) -> None:
        """Close the listener and drop every client connection; data is kept."""
        with self._lock:
            listener, self._listener = self._listener, None
            acceptor, self._acceptor = self._acceptor, None
            clients, self._clients = dict(self._clients), {}
        if listener is None:
            return
        _shutdown(listener)
        if acceptor is not None:
            acceptor.join(timeout=5)
        for client in clients:
            _shutdown(client)
        for thread in clients.values():
            thread.join(timeout=5)
        self._handler.drop_scanners()

    def restart(self) -> None:
        """Stop, then start again on the same port (clients must reconnect)."""
        self.stop()
        self.start()

    def clear(self) -> None:
        """Drop every table and scanner."""
        with self._store.lock:
            self._store.tables.clear()
        self._handler.drop_scanners()

    def __enter__(self) -> HBaseTestServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<HBaseTestServer (test double) {self.url} {state}>"

    # -- serving ----------------------------------------------------------------------------------

    def _accept_loop(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # listener closed by stop()
            thread = threading.Thread(target=self._serve_client, args=(client,), daemon=True)
            with self._lock:
                if self._listener is not listener:
                    _shutdown(client)
                    return
                self._clients[client] = thread
            thread.start()

    def _serve_client(self, client: socket.socket) -> None:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        trans = self._trans_factory.get_transport(TSocket(sock=client))  # type: ignore[no-untyped-call]
        proto = self._proto_factory.get_protocol(trans)
        try:
            while True:
                self._processor.process(proto, proto)
        except (TTransportException, OSError, EOFError):
            pass  # client went away, or stop() dropped the connection
        except Exception as exc:  # e.g. a client speaking another transport/protocol
            logger.warning("test double: dropping connection after %s: %s", type(exc).__name__, exc)
        finally:
            with self._lock:
                self._clients.pop(client, None)
            _shutdown(client)


def _shutdown(sock: socket.socket) -> None:
    """Wake any thread blocked on ``sock`` and release it."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


# ----------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------


def _arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m airflow_partitions.testing.hbase.server",
        description=(
            "Serve an in-memory HBase Thrift1-compatible TEST DOUBLE (not HBase) that happybase "
            "can talk to. Data is lost when the process exits. Prints one 'ready' line on stdout "
            "once it accepts connections; stops cleanly on SIGTERM or SIGINT."
        ),
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface to bind (default: %(default)s)"
    )
    parser.add_argument(
        "--port", type=int, default=9090, help="TCP port, 0 = any free port (default: %(default)s)"
    )
    parser.add_argument(
        "--transport",
        choices=("buffered", "framed"),
        default="buffered",
        help="Thrift transport, as happybase's transport= (default: %(default)s)",
    )
    parser.add_argument(
        "--protocol",
        choices=("binary", "compact"),
        default="binary",
        help="Thrift protocol, as happybase's protocol= (default: %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the test double until SIGTERM/SIGINT."""
    args = _arg_parser().parse_args(argv)
    server = HBaseTestServer(args.host, args.port, transport=args.transport, protocol=args.protocol)
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.start()
    print(
        f"HBase Thrift1 test server (test double) ready on {server.host}:{server.port}", flush=True
    )
    try:
        while not stopping.wait(0.5):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
