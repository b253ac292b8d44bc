"""The reader of ``getRowsWithColumns`` replies (``kv/hbase_replies.py``) and the one-write
exchange over it (``kv/hbase_again.py``), held to thriftpy2's own encoder, which shares no code
with them: every reply reads as the rows encoded and ends where it ends, any cut reply is
incomplete (never a shorter whole one), and a reply is taken as the kept one only when its
bytes are the kept bytes, however the bytes arrive."""

from __future__ import annotations

import happybase  # noqa: F401 - importing happybase registers the Hbase_thrift module
import pytest
from Hbase_thrift import Hbase, TCell, TColumn, TRowResult
from Hbase_thrift import IOError as HBaseIOError
from hypothesis import given, settings
from hypothesis import strategies as st
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TMemoryBuffer

from airflow_partitions.kv.hbase_again import OutOfStep, exchange
from airflow_partitions.kv.hbase_replies import Incomplete, Unexpected, read_rows_reply
from tests.hypothesis_budget import examples

names = st.binary(min_size=1, max_size=12)
stamps = st.integers(-(2**63), 2**63 - 1)
cells = st.dictionaries(names, st.tuples(st.binary(max_size=40), stamps), max_size=4)
results = st.lists(st.tuples(names, cells, st.booleans()), max_size=5)


def encoded(rows: list[tuple[bytes, dict[bytes, tuple[bytes, int]], bool]], *,
            seqid: int = 0, error: bool = False, exception: bool = False) -> bytes:
    """A reply as thriftpy2 writes it: the rows (with ``sortedColumns`` too when asked), an
    ``IOError``, or an application exception."""
    buffer = TMemoryBuffer()
    protocol = TBinaryProtocolFactory().get_protocol(buffer)
    if exception:
        protocol.write_message_begin("getRowsWithColumns", TMessageType.EXCEPTION, seqid)
        TApplicationException(TApplicationException.INTERNAL_ERROR, "boom").write(protocol)
    else:
        protocol.write_message_begin("getRowsWithColumns", TMessageType.REPLY, seqid)
        result = Hbase.getRowsWithColumns_result()
        if error:
            result.io = HBaseIOError(message=b"table not found")
        else:
            result.success = [
                TRowResult(row=row,
                           columns={n: TCell(value=v, timestamp=t) for n, (v, t) in cols.items()},
                           sortedColumns=[TColumn(columnName=n, cell=TCell(value=v, timestamp=t))
                                          for n, (v, t) in cols.items()] if both else None)
                for row, cols, both in rows]
        result.write(protocol)
    protocol.write_message_end()
    buffer.flush()
    return bytes(buffer.getvalue())


def expected(rows: list[tuple[bytes, dict[bytes, tuple[bytes, int]], bool]]
             ) -> list[tuple[bytes, dict[bytes, bytes]]]:
    return [(row, {n: v for n, (v, _t) in cols.items()}) for row, cols, _both in rows]


@given(rows=results, seqid=st.integers(0, 2**31 - 1), tail=st.binary(max_size=8))
def test_a_reply_reads_as_the_rows_encoded_and_ends_where_it_ends(
        rows: list[tuple[bytes, dict[bytes, tuple[bytes, int]], bool]], seqid: int,
        tail: bytes) -> None:
    data = encoded(rows, seqid=seqid)
    assert read_rows_reply(b"xy" + data + tail, 2) == (expected(rows), 2 + len(data))


@given(rows=results, cut=st.floats(0, 1, exclude_max=True))
def test_a_cut_reply_is_incomplete_never_a_shorter_whole_one(
        rows: list[tuple[bytes, dict[bytes, tuple[bytes, int]], bool]], cut: float) -> None:
    data = encoded(rows)
    with pytest.raises(Incomplete):
        read_rows_reply(data[:int(len(data) * cut)])


@pytest.mark.parametrize("kind", ["error", "exception"])
def test_an_error_reply_has_no_rows_and_is_read_to_its_end(kind: str) -> None:
    data = encoded([], error=kind == "error", exception=kind == "exception")
    assert read_rows_reply(data + b"next") == (None, len(data))
    with pytest.raises(Incomplete):
        read_rows_reply(data[:-1])


@pytest.mark.parametrize("data", [
    b"\x00\x00\x00\x05hello",  # an old, non-strict header
    encoded([])[:4].replace(b"\x02", b"\x01", 1) + encoded([])[4:],  # a call, not a reply
    encoded([(b"r", {}, False)]).replace(b"\x0f\x00\x00\x0c", b"\x0f\x00\x00\x0b", 1),
])
def test_bytes_that_are_not_a_reply_are_refused(data: bytes) -> None:
    with pytest.raises(Unexpected):
        read_rows_reply(data)


class Wire:
    """A socket that answers with ``replies``, cut into ``chunks`` (sizes) as they arrive."""

    def __init__(self, replies: bytes, chunks: list[int]) -> None:
        self.data = replies
        self.chunks = chunks
        self.sent = b""

    def sendall(self, request: bytes) -> None:
        self.sent += request

    def recv(self, size: int) -> bytes:
        take = min(size, self.chunks.pop(0) if self.chunks else len(self.data)) or 1
        out, self.data = self.data[:take], self.data[take:]
        return out


@settings(max_examples=examples(300))
@given(now=st.lists(results, min_size=1, max_size=3), changes=st.data(),
       chunks=st.lists(st.integers(1, 64), max_size=40))
def test_a_reply_is_taken_as_kept_only_when_its_bytes_are_the_kept_bytes(
        now: list[list[tuple[bytes, dict[bytes, tuple[bytes, int]], bool]]],
        changes: st.DataObject, chunks: list[int]) -> None:
    """Property: whatever was kept for each read (nothing, this reply, another one) and
    however the replies arrive, each answer is the reply's rows, and ``same`` exactly when
    its bytes are the kept bytes."""
    replies = [encoded(rows) for rows in now]
    kept: list[bytes | None] = []
    for reply in replies:
        choice = changes.draw(st.sampled_from(["none", "same", "other", "prefix"]))
        other = encoded(changes.draw(results))
        kept.append({"none": None, "same": reply, "other": other,
                     "prefix": reply[:-1] + b"\x01"}[choice])  # one byte differs at the end
    wire = Wire(b"".join(replies), list(chunks))
    answers = exchange(wire, b"request", kept)  # type: ignore[arg-type]
    assert wire.sent == b"request" and wire.data == b""
    assert answers is not None
    for answer, reply, rows, before in zip(answers, replies, now, kept, strict=True):
        assert answer.same == (before == reply)
        assert answer.raw == reply
        assert answer.rows() == expected(rows)


def test_bytes_after_the_last_reply_put_the_connection_out_of_step() -> None:
    reply = encoded([(b"r", {b"p:a": (b"v", 1)}, False)])
    with pytest.raises(OutOfStep):
        exchange(Wire(reply + b"\x00", [len(reply) + 1]), b"q", [reply])  # type: ignore[arg-type]


def test_a_connection_closed_mid_reply_is_an_eof() -> None:
    reply = encoded([(b"r", {b"p:a": (b"v", 1)}, False)])

    class Closing(Wire):
        def recv(self, size: int) -> bytes:
            return super().recv(size) if self.data else b""

    with pytest.raises(EOFError):
        exchange(Closing(reply[:-3], [5]), b"q", [None])  # type: ignore[arg-type]
    with pytest.raises(EOFError):
        exchange(Closing(reply[:-3], [5]), b"q", [reply])  # type: ignore[arg-type]


def test_an_error_reply_answers_none_after_every_reply_is_read() -> None:
    ok, error = encoded([(b"r", {}, False)]), encoded([], error=True)
    wire = Wire(error + ok, [3])
    assert exchange(wire, b"q", [None, ok]) is None  # type: ignore[arg-type]
    assert wire.data == b""
