"""Keyed reads asked again in one write, each reply matched against the bytes last kept.

Why: on HBase a sensor's answer, asked again after a producer's registration, rests on the
fact's catalog rows and the range's partition rows (``catalog/covers/read_again.py``). Through
happybase that is two calls whose Python (the client's request objects, a decoded object per
row and cell) costs several times the wire. Here the requests' bytes are built once; each time
they are sent together in one write on a pooled connection (the Thrift server answers them in
order), and each reply is compared with the bytes of the reply last kept. A reply equal byte
for byte is the same rows (the same bytes read the same way), so it is not decoded at all; a
reply that differs is read (:mod:`.hbase_replies`).

Only the Thrift server's defaults, the buffered transport and the binary protocol, are
spoken here (:meth:`HBaseStore.reads_again` answers None otherwise). Anything unexpected (a
dropped or timed-out connection, bytes that are not a reply, an error reply) makes
:meth:`HBaseReadsAgain.ask` answer None; a connection that may be out of step is closed, not
lent again. The caller then reads the usual way, which retries and reports.

Cost: one ``send``, a ``recv`` per reply (usually), a comparison of each reply's bytes, and a
read of each reply that changed.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import happybase  # noqa: F401 - importing happybase registers the Hbase_thrift module
from Hbase_thrift import Hbase
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TMemoryBuffer, TTransportException

from airflow_partitions.kv.base import AskedAgain, KeyedRead, ReadsAgain, RowCells
from airflow_partitions.kv.hbase_pool import PoolExhausted
from airflow_partitions.kv.hbase_replies import Incomplete, Unexpected, read_rows_reply
from airflow_partitions.kv.hbase_table import read_columns, read_keys

if TYPE_CHECKING:
    from airflow_partitions.kv.hbase import HBaseStore

log = logging.getLogger(__name__)

#: The most bytes one ``recv`` takes.
_RECEIVE: Final = 1 << 18


class OutOfStep(Exception):
    """The connection carried bytes this exchange did not ask for."""


class Answer(AskedAgain):
    """One reply: its bytes, whether they are the kept reply's, and its rows (read once)."""

    __slots__ = ("_rows", "raw", "same")

    def __init__(self, raw: bytes, same: bool, rows: list[RowCells] | None) -> None:
        self.raw = raw
        self.same = same
        self._rows = rows

    def rows(self) -> list[RowCells]:
        """The reply's rows: read from its bytes the first time (a kept reply's are not)."""
        if self._rows is None:
            self._rows = read_rows_reply(self.raw)[0] or []
        return self._rows


class HBaseReadsAgain(ReadsAgain):
    """:class:`ReadsAgain` over HBase's Thrift1 server. Thread-safe: an ``ask`` while another
    thread's is on the wire answers None rather than wait."""

    def __init__(self, store: HBaseStore, reads: Sequence[KeyedRead]) -> None:
        self._store = store
        self._count = len(reads)
        self._request = b"".join(_request(store.full_name(read.table), read.keys, read.columns)
                                 for read in reads)
        self._kept: list[bytes | None] = [None] * len(reads)
        self._lock = threading.Lock()

    def ask(self) -> list[AskedAgain] | None:
        if not self._lock.acquire(blocking=False):
            return None
        try:
            answers = self._exchange()
            return list(answers) if answers is not None else None
        finally:
            self._lock.release()

    def keep(self, answers: Sequence[AskedAgain]) -> None:
        raws: list[bytes | None] = [answer.raw for answer in answers
                                    if isinstance(answer, Answer)]
        if len(raws) != self._count:
            raise ValueError(f"keep() takes the {self._count} answers of one ask()")
        with self._lock:
            self._kept = raws

    def _exchange(self) -> list[Answer] | None:
        store = self._store
        try:
            with store.lend_connection() as conn:
                store.stats.record("get_many", self._count)
                sock = conn.tsocket.sock
                if sock is None:
                    raise OutOfStep("the connection has no socket")
                return exchange(sock, self._request, self._kept)
        except (OSError, EOFError, TTransportException, Unexpected, OutOfStep,
                PoolExhausted) as exc:
            # The pool closed the connection; the usual read reconnects and says what is wrong.
            store.stats.note("reads_again_failed")
            log.debug("HBase reads asked again in one write failed: %r", exc)
            return None


def exchange(sock: socket.socket, request: bytes, kept: Sequence[bytes | None]
             ) -> list[Answer] | None:
    """Send ``request`` (one message per entry of ``kept``) and read the replies in order: a
    reply whose bytes are its entry's is taken as it; any other is read. None when a reply
    is an error, after reading all of them (the connection stays in step).

    Sound because the binary protocol is read the same way from the same bytes, and a whole
    reply is never the beginning of another: bytes that begin with the kept reply are it.
    """
    sock.sendall(request)
    data = b""
    at = 0
    out: list[Answer] = []
    failed = False
    for before in kept:
        if before is not None:
            size = len(before)
            while len(data) - at < size and data[at:] == before[:len(data) - at]:
                data = _receive(sock, data)
            if data[at:at + size] == before:
                out.append(Answer(before, True, None))
                at += size
                continue
        while True:
            try:
                rows, end = read_rows_reply(data, at)
                break
            except Incomplete:
                data = _receive(sock, data)
        failed = failed or rows is None
        out.append(Answer(data[at:end], False, rows))
        at = end
    if at != len(data):
        raise OutOfStep(f"{len(data) - at} bytes after the last reply")
    return None if failed else out


def _receive(sock: socket.socket, data: bytes) -> bytes:
    chunk = sock.recv(_RECEIVE)
    if not chunk:
        raise EOFError("the server closed the connection")
    return data + chunk


def _request(table: bytes, keys: Sequence[bytes], columns: Sequence[bytes]) -> bytes:
    """The bytes of one ``getRowsWithColumns`` call, as happybase's client writes them."""
    buffer = TMemoryBuffer()  # type: ignore[no-untyped-call]
    protocol = TBinaryProtocolFactory().get_protocol(buffer)  # type: ignore[no-untyped-call]
    args = Hbase.getRowsWithColumns_args(tableName=table, rows=read_keys(keys),
                                         columns=read_columns(columns), attributes={})
    protocol.write_message_begin("getRowsWithColumns", TMessageType.CALL, 0)
    args.write(protocol)
    protocol.write_message_end()
    buffer.flush()  # type: ignore[no-untyped-call]
    return bytes(buffer.getvalue())  # type: ignore[no-untyped-call]


__all__ = ["Answer", "HBaseReadsAgain", "OutOfStep", "exchange"]
