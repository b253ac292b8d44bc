"""An HBase Thrift1-compatible TEST DOUBLE: a small in-process server for tests, not HBase.

Why it exists: no real HBase can run in CI, but the project's HBase backend talks to HBase through
happybase (Thrift1). This server speaks happybase's own bundled ``Hbase.thrift`` over thriftpy2 on
loopback and keeps tables in memory in byte order, so the backend can be tested end to end.

What it is *not*: a database. There is no persistence, no regions/splits, no TTL, no tombstones
(deletes remove cells at once), one lock serialises all writes, and every ``attributes`` map is
ignored. Semantics follow the HBase reference guide where the supported calls are concerned; see
``docs/testing.md`` for the exact list.

Known divergences from HBase 2.6 (``tests/testing/test_double_matches_hbase.py`` compares the
two; none of these is something ``airflow_partitions.kv`` sends, which
``tests/testing/test_hbase_double_divergences.py`` checks):

- ``SKIP`` and ``WHILE`` decide on whole rows here; HBase feeds them the inner filter's per-cell
  return codes only (never its row-key test), so e.g. ``SKIP PrefixFilter(...)`` drops every row.
- Inside an ``AND``/``OR`` list, ``FirstKeyOnlyFilter``, ``ColumnCountGetFilter``,
  ``ColumnPaginationFilter``, ``InclusiveStopFilter`` and ``SingleColumnValueExcludeFilter``
  follow the double's simplified row model, not HBase's cell-by-cell return codes; and in one
  ``AND`` list HBase lets a column seek (``ColumnRangeFilter``) skip the column a value test
  reads (docs/hbase.md). In an ``OR`` list, HBase's ``SingleColumnValueFilter`` drops no row
  as soon as another member (a ``FamilyFilter``, say) drops none: the list drops a row only
  when every member does; the double applies the value test to the row.
- ``InclusiveStopFilter`` has its forward meaning on reversed scans too.
- ``ColumnCountGetFilter`` on a row with cells in more than one family: HBase counts the row's
  cells across its families but ends the scan in each family's store on its own (when that
  store meets a further cell while over the limit), so a row whose cell past the limit is in
  another family does not end a forward scan, and a reversed scan can drop one family's cells
  of the rows after it; the double ends the whole scan after the first row over the limit (as
  HBase does when the row's cells are all in one family).
- A reversed scan with a ``ColumnRangeFilter`` inside an ``OR`` list returns here what the
  forward scan returns, reversed; HBase's reversed scanner follows the list's seek hints
  backwards and skips cells and whole rows.
- No tombstones: a delete removes cells at once, so a put in the same millisecond as a delete
  of its cell shows here and is hidden on HBase.

Run it standalone with ``python -m airflow_partitions.testing.hbase.server --port 9090``.
"""

from __future__ import annotations

import argparse
import collections
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType, ModuleType, TracebackType
from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.protocol.base import TProtocolBase
from thriftpy2.thrift import TApplicationException, TPayload, TProcessor
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TSocket,
    TTransportException,
)

from airflow_partitions.testing.hbase import snapshot
from airflow_partitions.testing.hbase.handler import HBaseHandler
from airflow_partitions.testing.hbase.store import Store, StoreError

__all__ = ["HBaseTestServer", "load_hbase_thrift", "main"]

logger = logging.getLogger(__name__)


def load_hbase_thrift() -> ModuleType:
    """Return the ``Hbase_thrift`` module happybase loads, so client and server share classes."""
    module = sys.modules.get("Hbase_thrift")
    if module is None:
        import happybase  # noqa: F401  (loading happybase registers Hbase_thrift)

        module = sys.modules["Hbase_thrift"]
    return module


# ----------------------------------------------------------------------------------------------
# Thrift plumbing
# ----------------------------------------------------------------------------------------------


class CountingProcessor(TProcessor):
    """A TProcessor that counts calls and never lets a handler bug kill the connection.

    Store errors become the Thrift exception the method declares (IOError as the fallback); any
    other exception becomes a ``TApplicationException`` so the client sees an error, not a hang.
    """

    def __init__(self, service: ModuleType, handler: HBaseHandler,
                 on_call: Callable[[str], None]) -> None:
        super().__init__(service, handler)
        self._thrift = handler.t
        self._on_call = on_call

    def process(self, iprot: TProtocolBase, oprot: TProtocolBase) -> None:
        api, seqid, result, call = self.process_in(iprot)
        self._on_call(api)
        if isinstance(result, TApplicationException):
            self.send_exception(oprot, api, result, seqid)
            return
        assert call is not None
        try:
            result.success = call()
        except StoreError as exc:
            if exc.kind == "app":
                error = TApplicationException(TApplicationException.INTERNAL_ERROR, exc.message)
                self.send_exception(oprot, api, error, seqid)
                return
            if not self._declare(exc, result):
                self._internal_error(oprot, api, seqid, exc)
                return
        except Exception as exc:
            logger.exception("test double: %s failed", api)
            self._internal_error(oprot, api, seqid, exc)
            return
        self.send_result(oprot, api, result, seqid)

    def _declare(self, exc: StoreError, result: TPayload) -> bool:
        """Map a StoreError onto the method's declared exceptions."""
        classes = {"io": "IOError", "ia": "IllegalArgument", "exists": "AlreadyExists",
                   "app": "IOError"}
        preferred = getattr(self._thrift, classes[exc.kind])(message=exc.message)
        if self.handle_exception(preferred, result):
            return True
        fallback = self._thrift.IOError(message=exc.message)
        return bool(self.handle_exception(fallback, result))

    def _internal_error(self, oprot: TProtocolBase, api: str, seqid: int, exc: Exception) -> None:
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
            "can talk to. Data is lost when the process exits (unless --state keeps it). "
            "Prints one 'ready' line on stdout once it accepts connections; stops cleanly on "
            "SIGTERM or SIGINT."
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
        "--state",
        type=Path,
        default=None,
        metavar="FILE",
        help="keep the tables in FILE across restarts: read at start, written on SIGTERM or "
        "SIGINT (a kill -9 loses what changed since the start; default: memory only)",
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
    if args.state is not None:
        loaded = snapshot.load(server._store, args.state, load_hbase_thrift())
        print(f"loaded {loaded} tables from {args.state}", flush=True)
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
        if args.state is not None:
            saved = snapshot.save(server._store, args.state)
            print(f"saved {saved} tables to {args.state}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
