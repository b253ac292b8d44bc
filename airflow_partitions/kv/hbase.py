"""The HBase backend: happybase over Thrift1, with exact round-trip counts and typed errors.

Every operation is one raw Thrift call (a scan: open, one call per page, close), so
``stats`` counts exactly what goes over the wire. Conditional writes use Thrift1's
``checkAndPut``, the only compare-and-swap it has. Transport failures become
``StoreUnavailable``; reads and idempotent writes are retried once on a fresh connection,
check-and-put, increment and scanner pages never are (they could apply twice).
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import happybase  # noqa: F401 - importing happybase registers the Hbase_thrift module
from Hbase_thrift import (
    AlreadyExists,
    BatchMutation,
    ColumnDescriptor,
    IllegalArgument,
    Mutation,
    TScan,
)
from Hbase_thrift import IOError as HBaseIOError
from thriftpy2.thrift import TApplicationException, TException
from thriftpy2.transport import TTransportException

from airflow_partitions.kv.base import Cells, KVStore, KVTable, RowCells
from airflow_partitions.kv.errors import (
    CorruptCell,
    InvalidArgument,
    KVError,
    StoreUnavailable,
    TableExists,
    TableNotFound,
)
from airflow_partitions.kv.hbase_pool import ConnectionPool, PooledConnection, PoolExhausted
from airflow_partitions.kv.scan_filters import ScanFilter, render_hbase_bytes
from airflow_partitions.kv.urls import HBaseConfig
from airflow_partitions.kv.validation import (
    ScanRange,
    check_amount,
    check_cells,
    check_column,
    check_column_specs,
    check_families,
    check_mutation,
    check_row,
    check_table_name,
)

T = TypeVar("T")
Client = Any  # thriftpy2's generated client has no static types

_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (TTransportException, OSError, EOFError)
_POOL_WAIT_S = 60.0
# Connection pools inherited across fork() are kept referenced, never closed: closing them in
# the child would shut down the parent's sockets.
_ORPHANED: list[ConnectionPool] = []


class _Sent:
    """Whether the current attempt got as far as sending its request."""

    def __init__(self) -> None:
        self.value = False


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _cells(result: Any) -> Cells:
    return {bytes(col): bytes(cell.value) for col, cell in (result.columns or {}).items()}


class HBaseStore(KVStore):
    """Tables in HBase through its Thrift1 server (``hbase thrift start``)."""

    def __init__(self, config: HBaseConfig, url: str | None = None) -> None:
        super().__init__(url or f"hbase://{config.host}:{config.port}")
        self.config = config
        self._prefix = f"{config.table_prefix}_" if config.table_prefix else ""
        self._pool: ConnectionPool | None = None
        self._closed = False

    # -- plumbing -----------------------------------------------------------------------------

    def full_name(self, name: str) -> bytes:
        """The HBase table name, with the store's table prefix."""
        return (self._prefix + name).encode("ascii")

    def _new_connection(self) -> PooledConnection:
        return PooledConnection(
            host=self.config.host,
            port=self.config.port,
            timeout=self.config.timeout_ms,
            autoconnect=False,
            transport=self.config.transport,
            protocol=self.config.protocol,
        )

    def _current_pool(self) -> ConnectionPool:
        if self._closed:
            raise KVError(f"store {self.url} is closed")
        pool = self._pool
        if pool is not None and pool.pid != os.getpid():
            _ORPHANED.append(pool)
            pool = None
        if pool is None:
            pool = self._pool = ConnectionPool(self.config.pool_size, self._new_connection)
        return pool

    def call(
        self,
        op: str,
        doing: str,
        fn: Callable[[Client], T],
        *,
        idempotent: bool,
        table: str | None = None,
    ) -> T:
        """One Thrift call (one round trip), with errors translated and reads retried once."""
        attempts = 2 if idempotent else 1
        for attempt in range(attempts):
            sent = _Sent()
            try:
                return self._attempt(op, fn, sent)
            except HBaseIOError as exc:
                raise self._io_error(_text(exc.message), doing, table) from exc
            except IllegalArgument as exc:
                raise InvalidArgument(
                    f"store {self.url} rejected {doing}: {_text(exc.message)}"
                ) from exc
            except AlreadyExists as exc:
                raise TableExists(table or "?", self.url) from exc
            except TApplicationException as exc:
                raise KVError(f"store {self.url} failed {doing}: {exc}") from exc
            except PoolExhausted as exc:
                raise StoreUnavailable(self.url, doing, str(exc)) from exc
            except _TRANSPORT_ERRORS as exc:
                if sent.value and attempt + 1 < attempts:
                    self.stats.note("retry")
                    continue
                raise StoreUnavailable(
                    self.url, doing, self._describe(exc, sent.value, idempotent)
                ) from exc
            except TException as exc:
                raise KVError(f"store {self.url} failed {doing}: {exc!r}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, op: str, fn: Callable[[Client], T], sent: _Sent) -> T:
        pool = self._current_pool()
        before = pool.reconnects
        with pool.connection(_POOL_WAIT_S) as conn:
            if pool.reconnects != before:
                self.stats.note("reconnect")
            sent.value = True
            self.stats.record(op)
            return fn(conn.client)

    def _describe(self, exc: BaseException, sent: bool, idempotent: bool) -> str:
        where = f"{self.config.host}:{self.config.port}"
        if isinstance(exc, TTransportException) and exc.type == TTransportException.NOT_OPEN:
            reason = f"cannot connect to the HBase Thrift server at {where} (is it running?)"
        elif isinstance(exc, TimeoutError | socket.timeout):
            reason = f"no answer from {where} within {self.config.timeout_ms} ms"
        elif isinstance(exc, TTransportException) and exc.type == TTransportException.END_OF_FILE:
            reason = f"the server at {where} closed the connection"
        elif isinstance(exc, ConnectionRefusedError):
            reason = f"connection to {where} refused (is the Thrift server running?)"
        elif isinstance(exc, ConnectionError | OSError) and getattr(exc, "errno", None) in (
            errno.ECONNRESET,
            errno.EPIPE,
        ):
            reason = f"the connection to {where} was reset"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        if sent and not idempotent:
            reason += "; the request may or may not have been applied (re-read before retrying)"
        return reason

    def _io_error(self, message: str, doing: str, table: str | None) -> KVError:
        lowered = message.lower()
        missing = ("tablenotfound", "table not found", "no such table", "not found", "not exist")
        if table is not None and "family" not in lowered and any(m in lowered for m in missing):
            return TableNotFound(table, self.url)
        if "family" in lowered:
            return InvalidArgument(f"store {self.url} rejected {doing}: {message}")
        if "not a long" in lowered or "8 bytes" in lowered or "wrong length" in lowered:
            return CorruptCell(f"store {self.url} cannot do {doing}: {message}")
        return KVError(f"store {self.url} failed {doing}: {message}")

    # -- KVStore --------------------------------------------------------------------------------

    def table(self, name: str) -> HBaseTable:
        return HBaseTable(self, check_table_name(name))

    def create_table(
        self, name: str, families: Iterable[str] = ("cf",), *, exist_ok: bool = False
    ) -> None:
        check_table_name(name)
        descriptors = [
            ColumnDescriptor(name=f"{family}:".encode("ascii"), maxVersions=1)
            for family in check_families(families)
        ]
        try:
            self.call(
                "create_table",
                f"creating table {name!r}",
                lambda c: c.createTable(self.full_name(name), descriptors),
                idempotent=False,
                table=name,
            )
        except TableExists:
            if not exist_ok:
                raise

    def drop_table(self, name: str, *, missing_ok: bool = False) -> None:
        check_table_name(name)
        full = self.full_name(name)
        try:
            self.call(
                "drop_table",
                f"disabling table {name!r}",
                lambda c: c.disableTable(full),
                idempotent=True,
                table=name,
            )
        except TableNotFound:
            if missing_ok:
                return
            raise
        except KVError as exc:
            if "enabled" not in str(exc).lower():  # already disabled: go on and delete it
                raise
        try:
            self.call(
                "drop_table",
                f"deleting table {name!r}",
                lambda c: c.deleteTable(full),
                idempotent=True,
                table=name,
            )
        except TableNotFound:
            if not missing_ok:
                raise

    def _table_names(self, op: str) -> list[bytes]:
        names = self.call(op, "listing tables", lambda c: c.getTableNames(), idempotent=True)
        return [bytes(n) for n in names]

    def table_exists(self, name: str) -> bool:
        check_table_name(name)
        return self.full_name(name) in self._table_names("table_exists")

    def list_tables(self) -> list[str]:
        prefix = self._prefix.encode("ascii")
        return sorted(
            n[len(prefix) :].decode("ascii", "replace")
            for n in self._table_names("list_tables")
            if n.startswith(prefix)
        )

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None and pool.pid == os.getpid():
            pool.close()
        self._closed = True


class HBaseTable(KVTable):
    """One HBase table, addressed through the store's pool."""

    def __init__(self, store: HBaseStore, name: str) -> None:
        super().__init__(name)
        self._store = store
        self._full = store.full_name(name)

    def _call(self, op: str, fn: Callable[[Client], T], *, idempotent: bool) -> T:
        return self._store.call(
            op, f"{op} on {self.name!r}", fn, idempotent=idempotent, table=self.name
        )

    # -- reads --------------------------------------------------------------------------------

    def get(self, row: bytes, columns: Iterable[bytes] | None = None) -> Cells:
        check_row(row)
        specs = check_column_specs(columns)
        cols = list(specs) if specs is not None else None
        results = self._call(
            "get", lambda c: c.getRowWithColumns(self._full, row, cols, {}), idempotent=True
        )
        return _cells(results[0]) if results else {}

    def get_many(
        self, rows: Iterable[bytes], columns: Iterable[bytes] | None = None
    ) -> dict[bytes, Cells]:
        keys = sorted(dict.fromkeys(check_row(r) for r in rows))
        specs = check_column_specs(columns)
        if not keys:
            return {}
        cols = list(specs) if specs is not None else None
        results = self._call(
            "get_many",
            lambda c: c.getRowsWithColumns(self._full, keys, cols, {}),
            idempotent=True,
        )
        found: dict[bytes, Cells] = {}
        for result in results:
            cells = _cells(result)
            if cells:
                found.setdefault(bytes(result.row), {}).update(cells)
        return found

    def _scan(
        self,
        rng: ScanRange,
        columns: tuple[bytes, ...] | None,
        filter: ScanFilter | None,
        reverse: bool,
    ) -> Iterator[RowCells]:
        if rng.empty or rng.limit == 0:
            return
        filter_string = render_hbase_bytes(filter) if filter is not None else None
        remaining = rng.limit
        last: bytes | None = None
        restarts_left = 1
        while True:
            scan = self._tscan(rng, columns, filter_string, reverse, last)

            def open_scanner(c: Client, scan: Any = scan) -> int:
                return int(c.scannerOpenWithScan(self._full, scan, {}))

            scanner = self._call("scan_open", open_scanner, idempotent=True)
            try:
                while True:
                    want = rng.batch_size if remaining is None else min(rng.batch_size, remaining)

                    def fetch(c: Client, want: int = want, scanner: int = scanner) -> list[Any]:
                        return list(c.scannerGetList(scanner, want))

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
                        if last is not None and (key >= last if reverse else key <= last):
                            continue  # already yielded before a restart
                        if not _in_range(key, rng):
                            if reverse and rng.start is not None and key < rng.start:
                                return
                            continue
                        last = key
                        yield key, _cells(item)
                        if remaining is not None:
                            remaining -= 1
                            if remaining == 0:
                                return
                    if len(items) < want:
                        return
            finally:
                self._close_scanner(scanner)

    def _tscan(
        self,
        rng: ScanRange,
        columns: tuple[bytes, ...] | None,
        filter_string: bytes | None,
        reverse: bool,
        last: bytes | None,
    ) -> Any:
        """The Thrift scan for ``rng``, resumed after ``last`` when a scan restarts."""
        if not reverse:
            start = rng.start if last is None else last + b"\x00"
            return TScan(
                startRow=start,
                stopRow=rng.stop,
                columns=list(columns) if columns is not None else None,
                caching=rng.batch_size,
                filterString=filter_string,
            )
        # Reversed Thrift scans run from startRow (inclusive) down to stopRow (exclusive). There
        # is no key just below ``start``, so stop a little lower and trim on the client.
        top = rng.stop if last is None else last
        bottom: bytes | None = None
        if rng.start is not None:
            head, last_byte = rng.start[:-1], rng.start[-1]
            bottom = head if last_byte == 0 else head + bytes([last_byte - 1])
        return TScan(
            startRow=top,
            stopRow=bottom or None,
            columns=list(columns) if columns is not None else None,
            caching=rng.batch_size,
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
        check_row(row)
        checked = check_cells(cells)
        if not checked:
            return
        mutations = [Mutation(column=c, value=v) for c, v in checked.items()]
        self._call("put", lambda c: c.mutateRow(self._full, row, mutations, {}), idempotent=True)

    def put_many(
        self, items: Iterable[tuple[bytes, Mapping[bytes, bytes]]], batch_size: int = 1000
    ) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgument(f"batch_size must be a positive int, got {batch_size!r}")
        batch: list[Any] = []
        for row, cells in items:
            checked = check_cells(cells)
            if checked:
                mutations = [Mutation(column=c, value=v) for c, v in checked.items()]
                batch.append(BatchMutation(row=check_row(row), mutations=mutations))
            if len(batch) >= batch_size:
                self._send_batch(batch)
                batch = []
        if batch:
            self._send_batch(batch)

    def _send_batch(self, batch: list[Any]) -> None:
        self._call("put_many", lambda c: c.mutateRows(self._full, batch, {}), idempotent=True)

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        check_row(row)
        specs = check_column_specs(columns)
        if specs is None:
            self._call("delete", lambda c: c.deleteAllRow(self._full, row, {}), idempotent=True)
            return
        mutations = [Mutation(isDelete=True, column=spec) for spec in specs]
        self._call("delete", lambda c: c.mutateRow(self._full, row, mutations, {}), idempotent=True)

    def mutate_row(
        self,
        row: bytes,
        puts: Mapping[bytes, bytes] | None = None,
        deletes: Iterable[bytes] | None = None,
    ) -> None:
        check_row(row)
        checked_puts, checked_deletes = check_mutation(puts, deletes)
        mutations = [Mutation(isDelete=True, column=spec) for spec in checked_deletes]
        mutations += [Mutation(column=c, value=v) for c, v in checked_puts.items()]
        if not mutations:
            return
        self._call(
            "mutate_row", lambda c: c.mutateRow(self._full, row, mutations, {}), idempotent=True
        )

    def check_and_put(
        self, row: bytes, column: bytes, expected: bytes | None, value: bytes
    ) -> bool:
        check_row(row)
        check_column(column)
        if expected is not None and not isinstance(expected, bytes):
            raise InvalidArgument(f"expected must be bytes or None, got {type(expected).__name__}")
        check_cells({column: value})
        mutation = Mutation(column=column, value=value)
        return bool(
            self._call(
                "check_and_put",
                lambda c: c.checkAndPut(self._full, row, column, expected or None, mutation, {}),
                idempotent=False,
            )
        )

    def increment(self, row: bytes, column: bytes, amount: int = 1) -> int:
        check_row(row)
        check_column(column)
        check_amount(amount)
        return int(
            self._call(
                "increment",
                lambda c: c.atomicIncrement(self._full, row, column, amount),
                idempotent=False,
            )
        )


def _in_range(key: bytes, rng: ScanRange) -> bool:
    if rng.start is not None and key < rng.start:
        return False
    return not (rng.stop is not None and key >= rng.stop)
