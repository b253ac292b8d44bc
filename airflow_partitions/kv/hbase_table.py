"""The rows of one HBase table over Thrift1: gets, scans, puts, deletes, check-and-put.

Split from :mod:`airflow_partitions.kv.hbase` (connections, retries, error translation): each
operation here is one raw Thrift call made through the store's :meth:`HBaseStore.call`, which
decides whether it may be retried.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import happybase  # noqa: F401 - importing happybase registers the Hbase_thrift module
from Hbase_thrift import (
    BatchMutation,
    Mutation,
    TScan,
)

from airflow_partitions.kv.base import Cells, KVTable, RowCells, RowValues, StoreStats
from airflow_partitions.kv.errors import (
    InvalidArgument,
    KVError,
    StoreUnavailable,
)
from airflow_partitions.kv.scan_filters import (
    ColumnRange,
    FilterList,
    ScanFilter,
    SingleColumnValue,
    render_hbase_bytes,
)
from airflow_partitions.kv.validation import (
    ScanRange,
    check_amount,
    check_cells,
    check_column,
    check_column_specs,
    check_mutation,
    check_row,
    check_row_columns,
    check_row_values,
    check_swap,
)

T = TypeVar("T")
Client = Any  # thriftpy2's generated client has no static types


class HBaseTableStore(Protocol):
    """What a table needs of its store (``kv/hbase.py``'s ``HBaseStore``): a protocol, so the
    table module does not import the store module that imports it."""

    stats: StoreStats

    def full_name(self, name: str) -> bytes: ...

    def families(self, name: str) -> frozenset[bytes]: ...

    def call(self, op: str, doing: str, request: Callable[[Client], T], *, idempotent: bool,
             table: str | None = None) -> T: ...



def hbase_columns(specs: tuple[bytes, ...] | None) -> list[bytes] | None:
    """``specs`` as HBase must receive them: a column whose whole family is also asked for is
    left out. HBase's scan and get narrow a family to the columns named after it
    (``addFamily`` then ``addColumn``), so ``[b"cf", b"cf:a"]`` would return only ``cf:a``.

    >>> hbase_columns((b"cf", b"cf:a", b"m:b"))
    [b'cf', b'm:b']
    """
    if specs is None:
        return None
    whole = {spec for spec in specs if b":" not in spec}
    return [spec for spec in specs if b":" not in spec or spec.partition(b":")[0] not in whole]


def needs_forward_scan(f: ScanFilter | None, under_or: bool = False) -> bool:
    """Whether a reversed scan with ``f`` must run forward and be reversed on the client.

    Two cases HBase 2.6's reversed scanner gets wrong or refuses, both seen on a real server:

    * a value test that drops rows missing its column (``filter_if_missing``) makes HBase load
      the other families on demand, and the reversed scanner refuses that ("Reverse scan with
      loading CFs on demand is not supported"; on by default, and Thrift1 cannot turn it off);
    * a ``ColumnRange`` inside an OR list: the list's seek hints, followed backwards, skip
      cells and whole rows that a forward scan returns.

    >>> from airflow_partitions.kv.scan_filters import ColumnRange, PrefixFilter
    >>> cr = ColumnRange(b"b", False, None, False)
    >>> needs_forward_scan(cr), needs_forward_scan(FilterList("OR", (PrefixFilter(b"x"), cr)))
    (False, True)
    """
    if isinstance(f, SingleColumnValue):
        return f.filter_if_missing
    if isinstance(f, ColumnRange):
        return under_or
    if isinstance(f, FilterList):
        inner = under_or or f.op == "OR"
        return any(needs_forward_scan(member, inner) for member in f.filters)
    return False


#: HBase's longest row key (a row's length is stored in a signed short).
MAX_ROW_LENGTH = 32767


def check_hbase_row(row: object) -> bytes:
    """``check_row``, and a key HBase can store: one longer than ``MAX_ROW_LENGTH`` is refused
    here with its length, instead of by the server with a Java stack trace."""
    key = check_row(row)
    if len(key) > MAX_ROW_LENGTH:
        raise InvalidArgument(f"row key of {len(key)} bytes is longer than HBase's limit of "
                              f"{MAX_ROW_LENGTH} bytes")
    return key


def _cells_of(result: Any) -> Cells:
    """A ``TRowResult``'s cells. The client decodes with ``decode_response=False``, so names
    and values arrive as ``bytes``."""
    columns = result.columns
    return {col: cell.value for col, cell in columns.items()} if columns else {}


_BYTES_ONLY: frozenset[type] = frozenset({bytes})


def read_keys(rows: Iterable[bytes]) -> list[bytes]:
    """Distinct, checked row keys in byte order, less those HBase cannot hold. Exact ``bytes``
    that are all non-empty are checked in C; anything else goes through ``check_row`` for its
    message. O(n log n)."""
    given = list(rows)
    if not (set(map(type, given)) <= _BYTES_ONLY and all(given)):
        given = [check_row(r) for r in given]
    keys = sorted(dict.fromkeys(given))
    if keys and max(map(len, keys)) > MAX_ROW_LENGTH:
        keys = [k for k in keys if len(k) <= MAX_ROW_LENGTH]  # cannot exist in HBase
    return keys


#: Column specs read before, checked, as HBase is sent them (a cover asks the same few
#: projections at every call); bounded.
_READ_SPECS: dict[tuple[bytes, ...], list[bytes] | None] = {}
_READ_SPECS_MAX = 1024


def read_columns(columns: Iterable[bytes] | None) -> list[bytes] | None:
    """:func:`hbase_columns` of ``check_column_specs(columns)``, looked up when the same
    columns were read before. Nobody changes the list returned."""
    if isinstance(columns, list | tuple):
        asked = tuple(columns)
        with contextlib.suppress(TypeError):  # an unhashable spec: the check names it
            if asked in _READ_SPECS:
                return _READ_SPECS[asked]
        sent = hbase_columns(check_column_specs(asked))
        if len(_READ_SPECS) < _READ_SPECS_MAX:
            _READ_SPECS[asked] = sent
        return sent
    return hbase_columns(check_column_specs(columns))


class HBaseTable(KVTable):
    """One HBase table, addressed through the store's pool."""

    keyed_reads_save_round_trips = True  # getRowsWithColumns: one call; a scan: three

    def __init__(self, store: HBaseTableStore, name: str) -> None:
        super().__init__(name)
        self._store = store
        self._full_name = store.full_name(name)

    def _call(self, op: str, request: Callable[[Client], T], *, idempotent: bool) -> T:
        return self._store.call(
            op, f"{op} on {self.name!r}", request, idempotent=idempotent, table=self.name
        )

    # -- reads --------------------------------------------------------------------------------

    def get(self, row: bytes, columns: Iterable[bytes] | None = None) -> Cells:
        if len(check_row(row)) > MAX_ROW_LENGTH:
            return {}  # HBase cannot hold such a row
        cols = read_columns(columns)
        results = self._call(
            "get", lambda c: c.getRowWithColumns(self._full_name, row, cols, {}), idempotent=True
        )
        return _cells_of(results[0]) if results else {}

    def get_many(
        self, rows: Iterable[bytes], columns: Iterable[bytes] | None = None
    ) -> dict[bytes, Cells]:
        keys = read_keys(rows)
        cols = read_columns(columns)
        if not keys:
            return {}
        results = self._call(
            "get_many",
            lambda c: c.getRowsWithColumns(self._full_name, keys, cols, {}),
            idempotent=True,
        )
        found: dict[bytes, Cells] = {}
        for result in results:
            cells = _cells_of(result)
            if cells:
                row = result.row
                if row in found:
                    found[row].update(cells)
                else:
                    found[row] = cells
        return found

    def get_columns(self, rows: Iterable[bytes], columns: Sequence[bytes]) -> list[RowValues]:
        """:meth:`KVTable.get_columns` built from the Thrift results as they come, without a
        dict of cells per row (a sensor's day of rows at every poke). One round trip."""
        wanted = self._projected(columns)
        keys = read_keys(rows)
        if not keys:
            return []
        asked = list(wanted)
        results = self._call(
            "get_many",
            lambda c: c.getRowsWithColumns(self._full_name, keys, asked, {}),
            idempotent=True,
        )
        out: list[RowValues] = []
        for result in results:
            cells = result.columns
            if cells:
                out.append((result.row, tuple(
                    None if (cell := cells.get(name)) is None else cell.value
                    for name in wanted)))
        return out  # in key order: HBase answers a multi-get in the order of its gets

    def _scan(
        self,
        scan_range: ScanRange,
        columns: tuple[bytes, ...] | None,
        filter: ScanFilter | None,
        reverse: bool,
    ) -> Iterator[RowCells]:
        if scan_range.empty or scan_range.limit == 0:
            return
        if reverse and needs_forward_scan(filter):
            forward = ScanRange(scan_range.start, scan_range.stop, None, scan_range.batch_size)
            found = list(self._scan(forward, columns, filter, False))
            yield from reversed(found[-scan_range.limit:] if scan_range.limit else found)
            return
        filter_string = render_hbase_bytes(filter) if filter is not None else None
        remaining = scan_range.limit
        last_row: bytes | None = None
        restarts_left = 1
        while True:
            scan = self._thrift_scan(scan_range, columns, filter_string, reverse, last_row)

            def open_scanner(c: Client, scan: Any = scan) -> int:
                return int(c.scannerOpenWithScan(self._full_name, scan, {}))

            scanner = self._call("scan_open", open_scanner, idempotent=True)
            try:
                while True:
                    page_size = scan_range.batch_size
                    if remaining is not None:
                        page_size = min(page_size, remaining)

                    def fetch(
                        c: Client, page_size: int = page_size, scanner: int = scanner
                    ) -> list[Any]:
                        return list(c.scannerGetList(scanner, page_size))

                    try:
                        items = self._call("scan_page", fetch, idempotent=False)
                    except (StoreUnavailable, InvalidArgument):
                        # The scanner (or its connection) is gone: reopen after the last row.
                        if restarts_left == 0:
                            raise
                        restarts_left -= 1
                        self._store.stats.note("scan_restart")
                        break
                    restarts_left = 1
                    for item in items:
                        key = bytes(item.row)
                        if last_row is not None and (
                            key >= last_row if reverse else key <= last_row
                        ):
                            continue  # already yielded before a restart
                        if not _in_scan_range(key, scan_range):
                            if reverse and scan_range.start is not None and key < scan_range.start:
                                return
                            continue
                        last_row = key
                        yield key, _cells_of(item)
                        if remaining is not None:
                            remaining -= 1
                            if remaining == 0:
                                return
                    if len(items) < page_size:
                        return
            finally:
                self._close_scanner(scanner)

    def _thrift_scan(
        self,
        scan_range: ScanRange,
        columns: tuple[bytes, ...] | None,
        filter_string: bytes | None,
        reverse: bool,
        last_row: bytes | None,
    ) -> Any:
        """The Thrift scan for ``scan_range``, resumed after ``last_row`` when a scan restarts."""
        if not reverse:
            start = scan_range.start if last_row is None else last_row + b"\x00"
            return TScan(
                startRow=start,
                stopRow=scan_range.stop,
                columns=hbase_columns(columns),
                caching=scan_range.batch_size,
                filterString=filter_string,
            )
        # Reversed Thrift scans run from startRow (inclusive) down to stopRow (exclusive). There
        # is no key just below ``start``, so stop a little lower and trim on the client.
        top = scan_range.stop if last_row is None else last_row
        bottom: bytes | None = None
        if scan_range.start is not None:
            head, last_byte = scan_range.start[:-1], scan_range.start[-1]
            bottom = head if last_byte == 0 else head + bytes([last_byte - 1])
        return TScan(
            startRow=top,
            stopRow=bottom or None,
            columns=hbase_columns(columns),
            caching=scan_range.batch_size,
            filterString=filter_string,
            reversed=True,
        )

    def _close_scanner(self, scanner: int) -> None:
        try:
            self._call("scan_close", lambda c: c.scannerClose(scanner), idempotent=False)
        except KVError:
            self._store.stats.note("scan_close_failed")

    # -- writes -------------------------------------------------------------------------------

    def put(self, row: bytes, cells: Mapping[bytes, bytes]) -> None:
        check_hbase_row(row)
        checked = check_cells(cells)
        if not checked:
            return
        mutations = [Mutation(column=c, value=v) for c, v in checked.items()]
        self._call(
            "put", lambda c: c.mutateRow(self._full_name, row, mutations, {}), idempotent=True
        )

    def put_many(
        self, items: Iterable[tuple[bytes, Mapping[bytes, bytes]]], batch_size: int = 1000
    ) -> None:
        def batched() -> Iterator[Any]:
            for row, cells in items:
                checked = check_cells(cells)
                if checked:
                    mutations = [Mutation(column=c, value=v) for c, v in checked.items()]
                    yield BatchMutation(row=check_hbase_row(row), mutations=mutations)

        self._send_batches(batched(), batch_size)

    def put_rows(
        self, columns: Sequence[bytes], rows: Iterable[tuple[bytes, Sequence[bytes]]],
        batch_size: int = 1000,
    ) -> None:
        """:meth:`put_many` of rows sharing their columns, each row checked once and turned
        straight into its Thrift mutations: no dict per row (a bulk registration's rows)."""
        names = check_row_columns(columns)

        def batched() -> Iterator[Any]:
            for row, values in rows:
                check_row_values(names, values)
                mutations = [Mutation(column=c, value=v)
                             for c, v in zip(names, values, strict=True)]
                yield BatchMutation(row=check_hbase_row(row), mutations=mutations)

        self._send_batches(batched(), batch_size)

    def _send_batches(self, rows: Iterator[Any], batch_size: int) -> None:
        """``mutateRows`` of ``batch_size`` rows at a time (one round trip each)."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgument(f"batch_size must be a positive int, got {batch_size!r}")
        batch: list[Any] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= batch_size:
                self._send_batch(batch)
                batch = []
        if batch:
            self._send_batch(batch)

    def _send_batch(self, batch: list[Any]) -> None:
        self._call("put_many", lambda c: c.mutateRows(self._full_name, batch, {}), idempotent=True)

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        check_hbase_row(row)
        specs = check_column_specs(columns)
        if specs is None:
            self._call(
                "delete", lambda c: c.deleteAllRow(self._full_name, row, {}), idempotent=True
            )
            return
        mutations = [Mutation(isDelete=True, column=spec) for spec in specs]
        self._call(
            "delete", lambda c: c.mutateRow(self._full_name, row, mutations, {}), idempotent=True
        )

    def mutate_row(
        self,
        row: bytes,
        puts: Mapping[bytes, bytes] | None = None,
        deletes: Iterable[bytes] | None = None,
    ) -> None:
        check_hbase_row(row)
        checked_puts, checked_deletes = check_mutation(puts, deletes)
        if checked_deletes and checked_puts:
            # The Thrift1 server applies the deletes, then the puts: a put the server refuses
            # would leave the deletes done. Refuse an unknown family before anything is sent.
            families = self._store.families(self.name)
            unknown = sorted({c.partition(b":")[0] for c in checked_puts} - families)
            if unknown:
                raise InvalidArgument(
                    f"mutate_row on {self.name!r}: no column family "
                    f"{', '.join(repr(f.decode('ascii', 'replace')) for f in unknown)} "
                    f"(the table has {', '.join(sorted(f.decode('ascii') for f in families))})")
        mutations = [Mutation(isDelete=True, column=spec) for spec in checked_deletes]
        mutations += [Mutation(column=c, value=v) for c, v in checked_puts.items()]
        if not mutations:
            return
        self._call(
            "mutate_row",
            lambda c: c.mutateRow(self._full_name, row, mutations, {}),
            idempotent=True,
        )

    def check_and_put(
        self, row: bytes, column: bytes, expected: bytes | None, value: bytes
    ) -> bool:
        check_hbase_row(row)
        check_swap(column, expected, value)
        mutation = Mutation(column=column, value=value)
        return bool(
            self._call(
                "check_and_put",
                lambda c: c.checkAndPut(
                    self._full_name, row, column, expected or None, mutation, {}
                ),
                idempotent=False,
            )
        )

    def check_and_delete(self, row: bytes, column: bytes, expected: bytes) -> bool:
        check_hbase_row(row)
        check_column(column)
        if not isinstance(expected, bytes):
            raise InvalidArgument(f"expected must be bytes, got {type(expected).__name__}")
        results = self._call(
            "check_and_delete",
            lambda c: c.getRowWithColumns(self._full_name, row, [column], {}),
            idempotent=True,
        )
        cell = (results[0].columns or {}).get(column) if results else None
        if cell is None or bytes(cell.value) != expected:
            return False
        stamp = int(cell.timestamp)
        self._call(
            "check_and_delete",
            lambda c: c.deleteAllRowTs(self._full_name, row, stamp, {}),
            idempotent=True,
        )
        return True

    def increment(self, row: bytes, column: bytes, amount: int = 1) -> int:
        check_hbase_row(row)
        check_column(column)
        check_amount(amount)
        return int(
            self._call(
                "increment",
                lambda c: c.atomicIncrement(self._full_name, row, column, amount),
                idempotent=False,
            )
        )


def _in_scan_range(key: bytes, scan_range: ScanRange) -> bool:
    if scan_range.start is not None and key < scan_range.start:
        return False
    return not (scan_range.stop is not None and key >= scan_range.stop)
