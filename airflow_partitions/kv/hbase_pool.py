"""A small pool of happybase connections that notices dead sockets before using them.

happybase's own ``ConnectionPool`` connects eagerly in its constructor and only learns that a
pooled socket is dead by failing a request on it. The HBase Thrift server closes idle clients
after a minute (and all of them on restart), and a failed *write* cannot be retried blindly, so
this pool checks each socket before lending it out: an idle client socket that is readable has
been closed (or reset) by the server, and is replaced without a round trip.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import happybase
from Hbase_thrift import AlreadyExists, Hbase, IllegalArgument
from Hbase_thrift import IOError as HBaseIOError
from thriftpy2.thrift import TApplicationException, TClient
from thriftpy2.transport import TSocket

# Application-level errors: the server answered, so the connection is still in sync.
APPLICATION_ERRORS: tuple[type[BaseException], ...] = (
    HBaseIOError,
    IllegalArgument,
    AlreadyExists,
    TApplicationException,
)


class PoolExhausted(Exception):
    """Every pooled connection stayed busy for the whole wait."""


class PooledConnection(happybase.Connection):  # type: ignore[misc]
    """A happybase connection that keeps its socket, so staleness can be checked."""

    tsocket: TSocket

    def _refresh_thrift_client(self) -> None:
        # Same as happybase's, plus keeping the socket and a connect timeout.
        self.tsocket = TSocket(  # type: ignore[no-untyped-call]
            host=self.host,
            port=self.port,
            socket_timeout=self.timeout,
            connect_timeout=self.timeout,
        )
        self.transport = self._transport_class(self.tsocket)
        protocol = self._protocol_class(self.transport, decode_response=False)
        self.client = TClient(Hbase, protocol)

    def is_stale(self) -> bool:
        """Whether the server closed or reset this (idle) connection."""
        sock = self.tsocket.sock
        if sock is None:
            return True
        try:
            poller = select.poll()
            poller.register(sock.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
            return bool(poller.poll(0))
        except (OSError, ValueError):
            return True


class ConnectionPool:
    """At most ``size`` connections; each checked for staleness when lent out."""

    def __init__(self, size: int, factory: Callable[[], PooledConnection]) -> None:
        self._factory = factory
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[PooledConnection] = []
        self._lock = threading.Lock()
        self.pid = os.getpid()
        self.reconnects = 0

    @contextmanager
    def connection(self, wait_s: float | None) -> Iterator[PooledConnection]:
        """Lend a connected connection; one that failed in transport is discarded, not reused."""
        if not self._slots.acquire(timeout=wait_s):
            raise PoolExhausted(f"no pooled connection became free within {wait_s} s")
        conn: PooledConnection | None = None
        healthy = False
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                conn = self._factory()
            if conn.transport.is_open() and conn.is_stale():
                conn.close()
                self.reconnects += 1
            if not conn.transport.is_open():
                conn.open()
            yield conn
            healthy = True
        except APPLICATION_ERRORS:
            healthy = True
            raise
        finally:
            if conn is not None:
                if healthy:
                    with self._lock:
                        self._idle.append(conn)
                else:
                    _close_quietly(conn)
            self._slots.release()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            _close_quietly(conn)


def _close_quietly(conn: PooledConnection) -> None:
    try:
        conn.close()
    except Exception:  # noqa: S110 - closing a broken socket may fail; nothing to do about it
        pass
