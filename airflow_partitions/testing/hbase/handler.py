"""The HBase test double's Thrift1 handler: happybase's ``Hbase.thrift`` calls mapped onto the
in-memory :class:`~airflow_partitions.testing.hbase.store.Store`, plus server-side scanners.
A TEST DOUBLE, not HBase.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import cast

from airflow_partitions.testing.hbase.filter_language import (
    Filter,
    FilterLanguageError,
    parse_filter,
)
from airflow_partitions.testing.hbase.scanner import Scanner, next_scan_row
from airflow_partitions.testing.hbase.store import (
    LATEST_TIMESTAMP,
    ColumnKey,
    Store,
    Table,
    Version,
    as_bytes,
    column_name,
    illegal_argument,
    internal_error,
    io_error,
)
from airflow_partitions.testing.hbase.thrift_types import (
    Attrs,
    BatchMutation,
    ColumnDescriptor,
    Mutation,
    TAppend,
    TCell,
    TIncrement,
    TRegionInfo,
    TRowResult,
    TScan,
)

logger = logging.getLogger(__name__)


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
    ) -> TRowResult:
        if sort_columns:
            columns = [
                self.t.TColumn(column_name(k), self.t.TCell(v.value, v.timestamp))
                for k, v in cells
            ]
            return cast(TRowResult, self.t.TRowResult(row=row, sortedColumns=columns))
        mapping = {column_name(k): self.t.TCell(v.value, v.timestamp) for k, v in cells}
        return cast(TRowResult, self.t.TRowResult(row=row, columns=mapping))

    def _rows(
        self,
        table: bytes,
        rows: Sequence[bytes],
        columns: Sequence[bytes] | None,
        max_ts: int | None,
    ) -> list[TRowResult]:
        out = []
        for row in rows:
            cells = self.store.read_row(table, row, columns, max_ts=max_ts)
            if cells:
                out.append(self._row_result(row, [(k, vs[0]) for k, vs in cells], False))
        return out

    def _cells(
        self, table: bytes, row: bytes, column: bytes, versions: int, max_ts: int | None
    ) -> list[TCell]:
        if versions < 1:
            raise illegal_argument("numVersions must be at least 1")
        found = self.store.read_row(table, row, [column], max_ts=max_ts, versions=versions)
        return [self.t.TCell(v.value, v.timestamp) for _, vs in found for v in vs]

    # -- table administration -------------------------------------------------------------------

    def getTableNames(self) -> list[bytes]:
        with self.store.lock:
            return sorted(self.store.tables)

    def createTable(self, tableName: bytes, columnFamilies: list[ColumnDescriptor]) -> None:
        self.store.create_table(as_bytes(tableName), columnFamilies)

    def deleteTable(self, tableName: bytes) -> None:
        self.store.delete_table(as_bytes(tableName))

    def enableTable(self, tableName: bytes) -> None:
        self.store.set_enabled(as_bytes(tableName), True)

    def disableTable(self, tableName: bytes) -> None:
        self.store.set_enabled(as_bytes(tableName), False)

    def isTableEnabled(self, tableName: bytes) -> bool:
        with self.store.lock:
            return self.store.table(as_bytes(tableName), must_be_enabled=False).enabled

    def compact(self, tableNameOrRegionName: bytes) -> None:
        self.store.table(as_bytes(tableNameOrRegionName), must_be_enabled=False)

    def majorCompact(self, tableNameOrRegionName: bytes) -> None:
        self.store.table(as_bytes(tableNameOrRegionName), must_be_enabled=False)

    def getColumnDescriptors(self, tableName: bytes) -> dict[bytes, ColumnDescriptor]:
        with self.store.lock:
            table = self.store.table(as_bytes(tableName), must_be_enabled=False)
            return {f + b":": d for f, d in table.descriptors.items()}

    def _region(self, table: Table) -> TRegionInfo:
        name = table.name + b",," + str(table.region_id).encode() + b"."
        return cast(TRegionInfo, self.t.TRegionInfo(
            startKey=b"",
            endKey=b"",
            id=table.region_id,
            name=name,
            version=1,
            serverName=b"127.0.0.1",
            port=self._port(),
        ))

    def getTableRegions(self, tableName: bytes) -> list[TRegionInfo]:
        with self.store.lock:
            return [self._region(self.store.table(as_bytes(tableName), must_be_enabled=False))]

    def getRegionInfo(self, row: bytes) -> TRegionInfo:
        """Regions are named ``table,startKey,id.``; the double has one region per table."""
        name = as_bytes(row).partition(b",")[0]
        with self.store.lock:
            return self._region(self.store.table(name, must_be_enabled=False))

    # -- single-cell and row reads ----------------------------------------------------------------

    def get(self, tableName: bytes, row: bytes, column: bytes, attributes: Attrs) -> list[TCell]:
        return self._cells(tableName, row, column, 1, None)

    def getVer(
        self, tableName: bytes, row: bytes, column: bytes, numVersions: int, attributes: Attrs
    ) -> list[TCell]:
        return self._cells(tableName, row, column, numVersions, None)

    def getVerTs(
        self,
        tableName: bytes,
        row: bytes,
        column: bytes,
        timestamp: int,
        numVersions: int,
        attributes: Attrs,
    ) -> list[TCell]:
        return self._cells(tableName, row, column, numVersions, timestamp)

    def getRow(self, tableName: bytes, row: bytes, attributes: Attrs) -> list[TRowResult]:
        return self._rows(tableName, [row], None, None)

    def getRowWithColumns(
        self, tableName: bytes, row: bytes, columns: list[bytes] | None, attributes: Attrs
    ) -> list[TRowResult]:
        return self._rows(tableName, [row], columns, None)

    def getRowTs(
        self, tableName: bytes, row: bytes, timestamp: int, attributes: Attrs
    ) -> list[TRowResult]:
        return self._rows(tableName, [row], None, timestamp)

    def getRowWithColumnsTs(
        self,
        tableName: bytes,
        row: bytes,
        columns: list[bytes] | None,
        timestamp: int,
        attributes: Attrs,
    ) -> list[TRowResult]:
        return self._rows(tableName, [row], columns, timestamp)

    def getRows(self, tableName: bytes, rows: list[bytes], attributes: Attrs) -> list[TRowResult]:
        return self._rows(tableName, rows, None, None)

    def getRowsWithColumns(
        self, tableName: bytes, rows: list[bytes], columns: list[bytes] | None, attributes: Attrs
    ) -> list[TRowResult]:
        return self._rows(tableName, rows, columns, None)

    def getRowsTs(
        self, tableName: bytes, rows: list[bytes], timestamp: int, attributes: Attrs
    ) -> list[TRowResult]:
        return self._rows(tableName, rows, None, timestamp)

    def getRowsWithColumnsTs(
        self,
        tableName: bytes,
        rows: list[bytes],
        columns: list[bytes] | None,
        timestamp: int,
        attributes: Attrs,
    ) -> list[TRowResult]:
        return self._rows(tableName, rows, columns, timestamp)

    def getRowOrBefore(self, tableName: bytes, row: bytes, family: bytes) -> list[TRowResult]:
        raise io_error("getRowOrBefore is deprecated in HBase and not supported by the test double")

    # -- writes ---------------------------------------------------------------------------------

    def mutateRow(
        self, tableName: bytes, row: bytes, mutations: list[Mutation], attributes: Attrs
    ) -> None:
        self.store.mutate_row(as_bytes(tableName), as_bytes(row), mutations, None)

    def mutateRowTs(
        self, tableName: bytes, row: bytes, mutations: list[Mutation], timestamp: int,
        attributes: Attrs,
    ) -> None:
        self.store.mutate_row(as_bytes(tableName), as_bytes(row), mutations, timestamp)

    def mutateRows(
        self, tableName: bytes, rowBatches: list[BatchMutation], attributes: Attrs
    ) -> None:
        batches = [(b.row, b.mutations or []) for b in rowBatches]
        self.store.mutate_batches(as_bytes(tableName), batches, None)

    def mutateRowsTs(
        self, tableName: bytes, rowBatches: list[BatchMutation], timestamp: int, attributes: Attrs
    ) -> None:
        batches = [(b.row, b.mutations or []) for b in rowBatches]
        self.store.mutate_batches(as_bytes(tableName), batches, timestamp)

    def atomicIncrement(self, tableName: bytes, row: bytes, column: bytes, value: int) -> int:
        return self.store.increment(as_bytes(tableName), as_bytes(row), as_bytes(column), value)

    def increment(self, increment: TIncrement) -> None:
        self.atomicIncrement(
            increment.table, increment.row, increment.column, increment.ammount or 0
        )

    def incrementRows(self, increments: list[TIncrement]) -> None:
        with self.store.lock:
            for inc in increments:
                self.increment(inc)

    def deleteAll(self, tableName: bytes, row: bytes, column: bytes, attributes: Attrs) -> None:
        self.store.delete_cells(
            as_bytes(tableName), as_bytes(row), as_bytes(column), LATEST_TIMESTAMP
        )

    def deleteAllTs(
        self, tableName: bytes, row: bytes, column: bytes, timestamp: int, attributes: Attrs
    ) -> None:
        self.store.delete_cells(as_bytes(tableName), as_bytes(row), as_bytes(column), timestamp)

    def deleteAllRow(self, tableName: bytes, row: bytes, attributes: Attrs) -> None:
        self.store.delete_cells(as_bytes(tableName), as_bytes(row), None, LATEST_TIMESTAMP)

    def deleteAllRowTs(
        self, tableName: bytes, row: bytes, timestamp: int, attributes: Attrs
    ) -> None:
        self.store.delete_cells(as_bytes(tableName), as_bytes(row), None, timestamp)

    def checkAndPut(
        self,
        tableName: bytes,
        row: bytes,
        column: bytes,
        value: bytes | None,
        mput: Mutation | None,
        attributes: Attrs,
    ) -> bool:
        return self.store.check_and_put(
            as_bytes(tableName),
            as_bytes(row),
            as_bytes(column),
            value and as_bytes(value),
            mput,
        )

    def append(self, append: TAppend) -> list[TCell]:
        results = self.store.append(
            as_bytes(append.table),
            as_bytes(append.row),
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
        scan: TScan | None = None,
    ) -> int:
        flt = self._parse_filter(scan.filterString) if scan is not None else None
        batch = scan.batchSize if scan is not None and scan.batchSize else None
        scanner = Scanner(
            table=as_bytes(tableName),
            start=as_bytes(start),
            stop=as_bytes(stop),
            reversed=bool(scan is not None and scan.reversed),
            columns=columns or None,
            max_ts=max_ts,
            flt=flt,
            batch=batch,
            sort_columns=bool(scan is not None and scan.sortColumns),
        )
        with self.store.lock:
            table = self.store.table(scanner.table)
            sel = self.store.selection(table, scanner.columns)  # validate families up front
            if flt is not None and batch is not None and flt.has_filter_row():
                raise io_error(
                    "java.io.IOException: Cannot set batch on a scan using a filter that returns "
                    "true for filter.hasFilterRow"
                )
            families = table.descriptors if sel.columns is None else {f for f, _ in sel.columns}
            if (flt is not None and scanner.reversed
                    and not all(flt.is_family_essential(f) for f in families)):
                raise io_error(
                    "org.apache.hadoop.hbase.DoNotRetryIOException: Reverse scan with loading "
                    "CFs on demand is not supported"
                )
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
            # HBase's ParseFilter throws unchecked exceptions the Thrift method does not declare.
            raise internal_error(
                f"Internal error processing scannerOpenWithScan: invalid filter string: {exc}"
            ) from exc

    def scannerOpenWithScan(self, tableName: bytes, scan: TScan, attributes: Attrs) -> int:
        return self._open(
            tableName, scan.startRow, scan.stopRow, scan.columns, scan.timestamp, scan
        )

    def scannerOpen(
        self, tableName: bytes, startRow: bytes, columns: list[bytes] | None, attributes: Attrs
    ) -> int:
        return self._open(tableName, startRow, None, columns, None)

    def scannerOpenWithStop(
        self,
        tableName: bytes,
        startRow: bytes,
        stopRow: bytes,
        columns: list[bytes] | None,
        attributes: Attrs,
    ) -> int:
        return self._open(tableName, startRow, stopRow, columns, None)

    def scannerOpenWithPrefix(
        self, tableName: bytes, startAndPrefix: bytes, columns: list[bytes] | None,
        attributes: Attrs,
    ) -> int:
        prefix = as_bytes(startAndPrefix)
        scan = self.t.TScan(filterString=b"PrefixFilter('" + prefix.replace(b"'", b"''") + b"')")
        return self._open(tableName, prefix, None, columns, None, scan)

    def scannerOpenTs(
        self,
        tableName: bytes,
        startRow: bytes,
        columns: list[bytes] | None,
        timestamp: int,
        attributes: Attrs,
    ) -> int:
        return self._open(tableName, startRow, None, columns, timestamp)

    def scannerOpenWithStopTs(
        self,
        tableName: bytes,
        startRow: bytes,
        stopRow: bytes,
        columns: list[bytes] | None,
        timestamp: int,
        attributes: Attrs,
    ) -> int:
        return self._open(tableName, startRow, stopRow, columns, timestamp)

    def _scanner(self, scanner_id: int) -> Scanner:
        with self.store.lock:
            scanner = self._scanners.get(scanner_id)
        if scanner is None:
            raise illegal_argument("scanner ID is invalid")
        return scanner

    def scannerGetList(self, id: int, nbRows: int) -> list[TRowResult]:
        scanner = self._scanner(id)
        out: list[TRowResult] = []
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

    def scannerGet(self, id: int) -> list[TRowResult]:
        return self.scannerGetList(id, 1)

    def scannerClose(self, id: int) -> None:
        with self.store.lock:
            if self._scanners.pop(id, None) is None:
                raise illegal_argument("scanner ID is invalid")
