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
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import happybase  # noqa: F401 - importing happybase registers the Hbase_thrift module
from Hbase_thrift import (
    AlreadyExists,
    ColumnDescriptor,
    IllegalArgument,
)
from Hbase_thrift import IOError as HBaseIOError
from thriftpy2.thrift import TApplicationException, TException
from thriftpy2.transport import TTransportException

from airflow_partitions.kv.base import KeyedRead, KVStore, ReadsAgain
from airflow_partitions.kv.errors import (
    CorruptCell,
    InvalidArgument,
    KVError,
    StoreUnavailable,
    TableExists,
    TableNotFound,
)
from airflow_partitions.kv.hbase_pool import ConnectionPool, PooledConnection, PoolExhausted
from airflow_partitions.kv.hbase_table import HBaseTable
from airflow_partitions.kv.urls import HBaseConfig
from airflow_partitions.kv.validation import (
    check_families,
    check_table_name,
)

T = TypeVar("T")
Client = Any  # thriftpy2's generated client has no static types

_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (TTransportException, OSError, EOFError)
_POOL_WAIT_S = 60.0
# Connection pools inherited across fork() are kept referenced, never closed: closing them in
# the child would shut down the parent's sockets.
_ORPHANED_POOLS: list[ConnectionPool] = []


class _RequestSent:
    """Whether the current attempt got as far as sending its request."""

    def __init__(self) -> None:
        self.value = False


def _message_text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


class HBaseStore(KVStore):
    """Tables in HBase through its Thrift1 server (``hbase thrift start``)."""

    def __init__(self, config: HBaseConfig, url: str | None = None) -> None:
        super().__init__(url or f"hbase://{config.host}:{config.port}")
        self.config = config
        self._prefix = f"{config.table_prefix}_" if config.table_prefix else ""
        self._pool: ConnectionPool | None = None
        self._closed = False
        #: Each table's column families as the server described them, read once per table.
        self._families: dict[str, frozenset[bytes]] = {}

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
            _ORPHANED_POOLS.append(pool)
            pool = None
        if pool is None:
            pool = self._pool = ConnectionPool(self.config.pool_size, self._new_connection)
        return pool

    def call(
        self,
        op: str,
        doing: str,
        request: Callable[[Client], T],
        *,
        idempotent: bool,
        table: str | None = None,
    ) -> T:
        """One Thrift call (one round trip), with errors translated and reads retried once."""
        attempts = 2 if idempotent else 1
        for attempt in range(attempts):
            sent = _RequestSent()
            try:
                return self._attempt(op, request, sent)
            except HBaseIOError as exc:
                raise self._translate_io_error(_message_text(exc.message), doing, table) from exc
            except IllegalArgument as exc:
                raise InvalidArgument(
                    f"store {self.url} rejected {doing}: {_message_text(exc.message)}"
                ) from exc
            except AlreadyExists as exc:
                raise TableExists(table or "?", self.url) from exc
            except TApplicationException as exc:  # its message may be bytes: str(exc) fails
                text = _message_text(getattr(exc, "message", None) or type(exc).__name__)
                raise KVError(f"store {self.url} failed {doing}: {text[:300]}") from exc
            except PoolExhausted as exc:
                raise StoreUnavailable(self.url, doing, str(exc)) from exc
            except _TRANSPORT_ERRORS as exc:
                if sent.value and attempt + 1 < attempts:
                    self.stats.note("retry")
                    continue
                raise StoreUnavailable(
                    self.url, doing, self._describe_transport_error(exc, sent.value, idempotent)
                ) from exc
            except TException as exc:
                raise KVError(f"store {self.url} failed {doing}: {exc!r}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, op: str, request: Callable[[Client], T], sent: _RequestSent) -> T:
        pool = self._current_pool()
        before = pool.reconnects
        with pool.connection(_POOL_WAIT_S) as conn:
            if pool.reconnects != before:
                self.stats.note("reconnect")
            sent.value = True
            self.stats.record(op)
            return request(conn.client)

    def lend_connection(self) -> AbstractContextManager[PooledConnection]:
        """A pooled connection, checked for staleness, for a caller that speaks to the socket
        itself (:mod:`.hbase_again`); ``PoolExhausted`` at once when every one is busy. An
        exception out of the block closes it."""
        return self._current_pool().connection(0)

    def reads_again(self, reads: Sequence[KeyedRead]) -> ReadsAgain | None:
        if self.config.transport != "buffered" or self.config.protocol != "binary":
            return None  # the one-write exchange speaks the server's defaults only
        from airflow_partitions.kv.hbase_again import HBaseReadsAgain  # it names this store

        return HBaseReadsAgain(self, reads)

    def _describe_transport_error(self, exc: BaseException, sent: bool, idempotent: bool) -> str:
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

    def _translate_io_error(self, message: str, doing: str, table: str | None) -> KVError:
        lowered = message.lower()
        missing = ("tablenotfound", "table not found", "no such table", "not found", "not exist")
        if table is not None and "family" not in lowered and any(m in lowered for m in missing):
            return TableNotFound(table, self.url)
        if "family" in lowered:
            return InvalidArgument(f"store {self.url} rejected {doing}: {message}")
        if "not a long" in lowered or "8 bytes" in lowered or "wrong length" in lowered:
            return CorruptCell(f"store {self.url} cannot do {doing}: {message}")
        return KVError(f"store {self.url} failed {doing}: {message}")

    def families(self, name: str) -> frozenset[bytes]:
        """The column families of table ``name`` (``b"cf"``), one round trip the first time."""
        known = self._families.get(name)
        if known is None:
            full = self.full_name(name)
            described = self.call("families", f"describing table {name!r}",
                                  lambda c: c.getColumnDescriptors(full), idempotent=True,
                                  table=name)
            known = frozenset(bytes(k).rstrip(b":") for k in described)
            self._families[name] = known
        return known

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
        self._families.pop(name, None)
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
