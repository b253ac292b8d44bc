"""docs/hbase.md "Semantics to know on HBase", item by item, on a real HBase server.

The bundled test double implements what we believe HBase does; these tests show what a real
HBase 2.x region server and its Thrift1 server actually do, with our client and with raw
Thrift calls (happybase's client) where the client would hide the behaviour. The last tests show
that the catalog never needs a Thrift1 ``mutateRow`` to be atomic across its deletes and puts.
"""

from __future__ import annotations

import ast as pyast
import os
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import happybase
import pytest
from Hbase_thrift import IOError as ThriftIOError
from Hbase_thrift import Mutation, TScan

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.catalog.rows.layout import storage_row, value_column
from airflow_partitions.kv import (
    ColumnRange,
    InvalidArgument,
    KVStore,
    KVTable,
    PrefixFilter,
    RowRange,
    ScanFilter,
    SingleColumnValue,
    StoreUnavailable,
    all_of,
    apply_filter,
    open_store,
    render_hbase_bytes,
)
from airflow_partitions.periods import UpdatePeriod
from tests.kv.conftest import REAL_HBASE_ENV, REAL_HBASE_SKIP

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def target() -> str:
    found = os.environ.get(REAL_HBASE_ENV, "").strip()
    if not found:
        pytest.skip(REAL_HBASE_SKIP)
    return found


class Real:
    """One table ``t`` (families ``cf``, ``meta``) for the module, through our store and raw."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.prefix = "sem" + uuid.uuid4().hex[:10]
        self.store: KVStore = open_store(f"hbase://{target}?table_prefix={self.prefix}")
        self.store.create_table("t", families=("cf", "meta"))
        self.table: KVTable = self.store.table("t")
        host, port = target.rsplit(":", 1)
        self.conn = happybase.Connection(host, int(port), autoconnect=True)
        self.name = f"{self.prefix}_t".encode()
        self.raw = self.conn.table(self.name)
        self.client: Any = self.conn.client

    def row(self, key: bytes) -> dict[bytes, bytes]:
        return dict(self.raw.row(key))

    def close(self) -> None:
        self.conn.close()
        self.store.drop_table("t", missing_ok=True)
        self.store.close()


@pytest.fixture(scope="module")
def real(target: str) -> Iterator[Real]:
    handle = Real(target)
    yield handle
    handle.close()


class Proxy:
    """A TCP relay in front of the Thrift server that can cut its connections, or swallow the
    next reply (the request reaches HBase, the answer never reaches the client)."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.swallow_next_reply = False
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            with self.lock:
                self.pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, replies: bool) -> None:
        try:
            while data := src.recv(65536):
                if replies and self.swallow_next_reply:
                    self.swallow_next_reply = False
                    break
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            _shut(sock)

    def cut(self) -> None:
        """Close every relayed connection, as a network failure would."""
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for sock in pair:
                _shut(sock)

    def close(self) -> None:
        self.listener.close()
        self.cut()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


@pytest.fixture
def proxy(real: Real) -> Iterator[tuple[Proxy, KVTable, KVStore]]:
    relay = Proxy(real.target)
    store = open_store(f"hbase://127.0.0.1:{relay.port}?table_prefix={real.prefix}")
    yield relay, store.table("t"), store
    store.close()
    relay.close()


# -- check-and-put -----------------------------------------------------------------------------


def test_check_and_put_none_or_empty_means_absent_or_empty(real: Real) -> None:
    t = real.table
    assert t.check_and_put(b"cap1", b"cf:a", None, b"1")  # absent
    assert not t.check_and_put(b"cap1", b"cf:a", None, b"2")  # holds b"1"
    assert not t.check_and_put(b"cap1", b"cf:a", b"", b"2")
    assert t.check_and_put(b"cap1", b"cf:a", b"1", b"3")
    t.put(b"cap1", {b"cf:e": b""})
    assert t.check_and_put(b"cap1", b"cf:e", None, b"x")  # empty counts as absent
    t.put(b"cap1", {b"cf:e": b""})
    assert t.check_and_put(b"cap1", b"cf:e", b"", b"y")
    assert t.check_and_put(b"cap1", b"cf:new", b"", b"z")  # b"" also means absent
    assert real.row(b"cap1") == {b"cf:a": b"3", b"cf:e": b"y", b"cf:new": b"z"}
    # The same on the wire: HBase itself reads a null and an empty expected value alike.
    c, name = real.client, real.name
    assert c.checkAndPut(name, b"cap2", b"cf:a", None, Mutation(column=b"cf:a", value=b"1"), {})
    assert c.checkAndPut(name, b"cap2", b"cf:b", b"", Mutation(column=b"cf:b", value=b"1"), {})
    assert not c.checkAndPut(name, b"cap2", b"cf:a", b"", Mutation(column=b"cf:a", value=b"2"), {})
    # Thrift1 has no conditional delete (KVTable.check_and_delete reads, then deletes by stamp).
    assert not hasattr(c, "checkAndDelete") and not hasattr(c, "checkAndMutate")


# -- increment ---------------------------------------------------------------------------------


def test_increment_is_a_big_endian_long_and_never_retried(
    real: Real, proxy: tuple[Proxy, KVTable, KVStore]
) -> None:
    relay, via_proxy, store = proxy
    assert via_proxy.increment(b"inc", b"cf:n") == 1
    assert real.row(b"inc") == {b"cf:n": struct.pack(">q", 1)}
    relay.swallow_next_reply = True  # HBase applies it; the answer is lost on the way back
    with pytest.raises(StoreUnavailable, match="may or may not have been applied"):
        via_proxy.increment(b"inc", b"cf:n")
    assert real.row(b"inc") == {b"cf:n": struct.pack(">q", 2)}  # applied once, not retried
    assert store.stats.events["retry"] == 0
    assert via_proxy.increment(b"inc", b"cf:n", -5) == -3  # a fresh connection; signed
    # Why no retry: a second atomicIncrement adds again.
    assert real.client.atomicIncrement(real.name, b"inc", b"cf:n", 1) == -2


# -- mutate_row --------------------------------------------------------------------------------


def test_mutate_row_deletes_then_puts_as_two_operations(real: Real) -> None:
    real.raw.put(b"mut1", {b"cf:a": b"1", b"cf:b": b"2"})
    mutations = [Mutation(isDelete=True, column=b"cf:a"), Mutation(column=b"nope:c", value=b"3")]
    with pytest.raises(ThriftIOError, match="NoSuchColumnFamilyException"):
        real.client.mutateRow(real.name, b"mut1", mutations, {})
    assert real.row(b"mut1") == {b"cf:b": b"2"}  # the put failed, the delete stayed applied

    real.raw.put(b"mut2", {b"cf:a": b"1", b"cf:b": b"2"})
    sent = real.store.stats.ops["mutate_row"]
    with pytest.raises(InvalidArgument, match="no column family 'nope'"):
        real.table.mutate_row(b"mut2", puts={b"cf:x": b"3", b"nope:c": b"3"}, deletes=[b"cf:a"])
    assert real.store.stats.ops["mutate_row"] == sent  # refused before anything was sent
    assert real.row(b"mut2") == {b"cf:a": b"1", b"cf:b": b"2"}

    # A delete and a put of one cell in one mutateRow share a timestamp: the delete hides the put,
    # which is why the client refuses such a mutation.
    real.client.mutateRowTs(real.name, b"mut3", [Mutation(column=b"cf:a", value=b"0")], 1000)
    both = [Mutation(isDelete=True, column=b"cf:a"), Mutation(column=b"cf:a", value=b"1")]
    real.client.mutateRowTs(real.name, b"mut3", both, 2000)
    assert real.row(b"mut3") == {}
    with pytest.raises(InvalidArgument):
        real.table.mutate_row(b"mut3", puts={b"cf:a": b"1"}, deletes=[b"cf:a"])


# -- delete then put in one millisecond ----------------------------------------------------------


def test_a_put_in_the_delete_markers_millisecond_is_hidden(real: Real) -> None:
    c, name = real.client, real.name
    base = 1_700_000_000_000
    for i in range(50):
        row, stamp = b"ms%02d" % i, base + 10 * i
        c.mutateRowTs(name, row, [Mutation(column=b"cf:a", value=b"old")], stamp - 1)
        c.deleteAllTs(name, row, b"cf:a", stamp)  # the marker hides the cell at or before it
        c.mutateRowTs(name, row, [Mutation(column=b"cf:a", value=b"new")], stamp)
        c.mutateRowTs(name, row, [Mutation(column=b"cf:b", value=b"kept")], stamp)
        assert real.row(row) == {b"cf:b": b"kept"}, row  # the same millisecond: hidden
        c.mutateRowTs(name, row, [Mutation(column=b"cf:a", value=b"next")], stamp + 1)
        assert real.row(row) == {b"cf:a": b"next", b"cf:b": b"kept"}, row  # the next one: seen
    # A whole-row delete marker hides a later put of any cell at its stamp the same way.
    c.mutateRowTs(name, b"msrow", [Mutation(column=b"cf:a", value=b"old")], base - 1)
    c.deleteAllRowTs(name, b"msrow", base)
    c.mutateRowTs(name, b"msrow", [Mutation(column=b"meta:m", value=b"1")], base)
    assert real.row(b"msrow") == {}
    c.mutateRowTs(name, b"msrow", [Mutation(column=b"meta:m", value=b"2")], base + 1)
    assert real.row(b"msrow") == {b"meta:m": b"2"}


def test_a_seeking_filter_can_step_over_a_whole_row_delete(real: Real) -> None:
    """A whole-row delete is one family marker at the empty qualifier. A later put to that
    empty qualifier sorts before the marker; a filter that seeks past it (``ColumnRange`` from
    ``a``) then never meets the marker, and the deleted cells show again. Deleting the columns
    one by one leaves a marker at each, which a seek lands on: nothing shows."""
    t = real.table
    whole, by_column = b"seek-row", b"seek-col"
    for row in (whole, by_column):
        t.put(row, {b"cf:b": b"1", b"cf:c": b"2"})
    t.delete(whole)
    t.delete(by_column, columns=[b"cf:b", b"cf:c"])

    def scan(row: bytes, flt: ScanFilter | None = None) -> list[Any]:
        return list(t.scan(start=row, stop=row + b"\x00", filter=flt))

    assert scan(whole) == scan(by_column) == []
    time.sleep(0.01)  # past the markers' millisecond
    for row in (whole, by_column):
        t.put(row, {b"cf:": b""})
    seek = ColumnRange(b"a", False, None, False)
    assert scan(whole, seek) == [(whole, {b"cf:b": b"1", b"cf:c": b"2"})]  # deleted, shown
    assert scan(by_column, seek) == []
    assert scan(whole) == [(whole, {b"cf:": b""})]  # without the seek: as deleted


# -- scans ---------------------------------------------------------------------------------------


def _spy_scanners(monkeypatch: pytest.MonkeyPatch, table_class: type[Any]) -> list[int]:
    """The scanner ids our scans open (to close one behind the client's back)."""
    opened: list[int] = []
    original = table_class._call

    def spying(self: Any, op: str, request: Callable[[Any], Any], *,
               idempotent: bool) -> Any:
        result = original(self, op, request, idempotent=idempotent)
        if op == "scan_open":
            opened.append(int(result))
        return result

    monkeypatch.setattr(table_class, "_call", spying)
    return opened


@pytest.mark.parametrize("reverse", [False, True])
def test_a_scan_reopens_after_its_last_row_when_the_scanner_is_gone(
    real: Real, monkeypatch: pytest.MonkeyPatch, reverse: bool
) -> None:
    rows = [b"sc%02d" % i for i in range(10)]
    real.table.put_many((r, {b"cf:v": r}) for r in rows)
    opened = _spy_scanners(monkeypatch, type(real.table))
    before = real.store.stats.events["scan_restart"]
    scan = real.table.scan(start=b"sc", stop=b"sd", batch_size=3, reverse=reverse)
    first = [next(scan)[0] for _ in range(4)]
    real.client.scannerClose(opened[-1])  # HBase forgets it: "scanner ID is invalid"
    rest = [key for key, _ in scan]
    assert first + rest == (rows[::-1] if reverse else rows)
    assert real.store.stats.events["scan_restart"] == before + 1 and len(opened) == 2


def test_a_scan_survives_a_dropped_connection(
    real: Real, proxy: tuple[Proxy, KVTable, KVStore]
) -> None:
    relay, via_proxy, store = proxy
    rows = [b"sd%02d" % i for i in range(10)]
    real.table.put_many((r, {b"cf:v": r}) for r in rows)
    scan = via_proxy.scan(start=b"sd", stop=b"se", batch_size=3)
    first = [next(scan)[0] for _ in range(4)]
    relay.cut()  # between pages
    assert first + [key for key, _ in scan] == rows
    # Thrift1 scanners live in the server, not in the connection: the pool reconnects and the
    # same scanner hands out the next page; nothing is reopened.
    assert store.stats.events["reconnect"] == 1 and store.stats.events["scan_restart"] == 0
    assert store.stats.ops["scan_open"] == 1

    scan = via_proxy.scan(start=b"sd", stop=b"se", batch_size=3)
    first = [next(scan)[0] for _ in range(3)]
    relay.swallow_next_reply = True  # the connection drops during the next page's request
    assert first + [key for key, _ in scan] == rows  # reopened after the last row returned
    assert store.stats.events["scan_restart"] == 1 and store.stats.ops["scan_open"] == 3


def test_reverse_scans_are_trimmed_to_start_stop(real: Real) -> None:
    keys = [b"rv", b"rv\x00", b"rv\x00\x00", b"rv\x01", b"rw"]
    real.table.put_many((k, {b"cf:v": b"x", b"meta:m": b"y"}) for k in keys)
    t = real.table
    assert [k for k, _ in t.scan(start=b"rv\x00", stop=b"rw", reverse=True)] == [
        b"rv\x01", b"rv\x00\x00", b"rv\x00"]
    assert [k for k, _ in t.scan(start=b"rv", stop=b"rv\x01", reverse=True, limit=2)] == [
        b"rv\x00\x00", b"rv\x00"]
    # A raw reversed scan starts at startRow inclusive and stops before stopRow: the client
    # asks from ``stop`` and drops that row, and stops below ``start``.
    scanner = real.client.scannerOpenWithScan(
        real.name, TScan(startRow=b"rw", stopRow=b"rv", reversed=True), {})
    assert [bytes(r.row) for r in real.client.scannerGetList(scanner, 10)] == [
        b"rw", b"rv\x01", b"rv\x00\x00", b"rv\x00"]
    real.client.scannerClose(scanner)
    # A value test that drops rows missing its column cannot run reversed on HBase; the
    # client scans forward and reverses.
    only = SingleColumnValue(b"meta:m", "=", b"y", filter_if_missing=True)
    scanner = real.client.scannerOpenWithScan(real.name, TScan(
        startRow=b"rw", stopRow=b"rv", reversed=True, filterString=render_hbase_bytes(only)), {})
    with pytest.raises(ThriftIOError, match="Reverse scan with loading CFs on demand"):
        real.client.scannerGetList(scanner, 10)  # refused at the first page
    assert [k for k, _ in t.scan(start=b"rv", stop=b"rw", filter=only, reverse=True)] == [
        b"rv\x01", b"rv\x00\x00", b"rv\x00", b"rv"]


# -- filters -------------------------------------------------------------------------------------

HOSTILE = [b"it's", b"''", b"x) AND (y", b" AND ", b"a OR b", b"nul\x00byte", b"\xff\xfe\x80",
           b"\\')", b"SingleColumnValueFilter ('cf', 'v', =, 'binary:')", b"\xc3\xa9", b""]


def _scan(t: KVTable, f: ScanFilter, prefix: bytes) -> dict[bytes, dict[bytes, bytes]]:
    return dict(t.scan(prefix=prefix, filter=f))


def test_any_bytes_in_a_filter_value_are_quoted(real: Real) -> None:
    rows = {b"fq" + bytes([i]) + v: {b"cf:v": v, b"cf:" + v: b"q"} for i, v in enumerate(HOSTILE)}
    real.table.put_many(rows.items())
    whole = _scan(real.table, PrefixFilter(b"fq"), b"fq")
    assert whole == rows
    filters: list[ScanFilter] = []
    for value in HOSTILE:
        filters += [SingleColumnValue(b"cf:v", "=", value, filter_if_missing=True),
                    SingleColumnValue(b"cf:v", ">=", value, "binaryprefix", True),
                    ColumnRange(value, True, value + b"\x00", False),
                    PrefixFilter(b"fq\x03" + value), RowRange(b"fq\x02" + value, False)]
    for f in filters:
        wanted = {k: kept for k, c in whole.items() if (kept := apply_filter(f, k, c)) is not None}
        assert _scan(real.table, f, b"fq") == wanted, render_hbase_bytes(f)
        raw = {k: dict(c) for k, c in real.raw.scan(row_prefix=b"fq",
                                                      filter=render_hbase_bytes(f))}
        assert raw == wanted, render_hbase_bytes(f)
    for value in HOSTILE:  # each value test picks exactly its row
        only = SingleColumnValue(b"cf:v", "=", value, filter_if_missing=True)
        assert [c[b"cf:v"] for c in _scan(real.table, only, b"fq").values()] == [value]


def test_a_column_range_in_an_and_list_hides_other_columns_from_a_value_test(
    real: Real,
) -> None:
    """What HBase returns; Python evaluation (SQLite, the test double) sees the whole row."""
    row = {b"cf:a": b"x", b"cf:b": b"y", b"cf:m1": b"1", b"cf:z": b"9"}
    real.table.put(b"cr", row)
    slice_ = ColumnRange(b"m", True, b"n", False)

    def test(column: bytes, value: bytes, missing: bool = True) -> SingleColumnValue:
        return SingleColumnValue(b"cf:" + column, "=", value, filter_if_missing=missing)

    cases: list[tuple[ScanFilter, dict[bytes, bytes] | None]] = [
        # The range first: a column before or after it is never seen by the value test.
        (all_of(slice_, test(b"a", b"x")), None),
        (all_of(slice_, test(b"z", b"9")), None),
        (all_of(slice_, test(b"a", b"WRONG", missing=False)), {b"cf:m1": b"1"}),
        # The value test first sees the row's first cell and what follows the range, but not
        # the cells the range's seek skips.
        (all_of(test(b"a", b"x"), slice_), {b"cf:m1": b"1"}),
        (all_of(test(b"z", b"9"), slice_), {b"cf:m1": b"1"}),
        (all_of(test(b"b", b"y"), slice_), None),
        # A column inside the range is seen in either order.
        (all_of(slice_, test(b"m1", b"1")), {b"cf:m1": b"1"}),
        (all_of(test(b"m1", b"1"), slice_), {b"cf:m1": b"1"}),
    ]
    for f, hbase in cases:
        got = dict(real.table.scan(start=b"cr", stop=b"cr\x00", filter=f))
        assert got.get(b"cr") == hbase, render_hbase_bytes(f)
    diverging = [f for f, hbase in cases if apply_filter(f, b"cr", row) != hbase]
    assert len(diverging) == 4  # all but the in-range ones and the two the value test sees


# -- the catalog never needs mutateRow to be atomic ----------------------------------------------


def _mutate_row_callers() -> set[tuple[str, str]]:
    """(file, function) of every ``mutate_row`` call in the catalog package."""
    found: set[tuple[str, str]] = set()
    package = ROOT / "airflow_partitions" / "catalog"
    for path in sorted(package.rglob("*.py")):
        tree = pyast.parse(path.read_text())
        for fn in pyast.walk(tree):
            if isinstance(fn, pyast.FunctionDef):
                for node in pyast.walk(fn):
                    if isinstance(node, pyast.Attribute) and node.attr == "mutate_row":
                        found.add((path.relative_to(package).as_posix(), fn.name))
    return found


def test_the_catalogs_mutate_row_calls_are_the_ones_tested_here() -> None:
    """A new call site must be shown safe below before this list grows."""
    assert _mutate_row_callers() == {("rows/layout.py", "mutate_value_columns"),
                                     ("rows/layout.py", "write_values")}


HOURS = [f"2015-01-01-{h:02d}" for h in range(6)]
HOURLY = UpdatePeriod.HOURLY


class Crash(Exception):
    """The process died between the deletes and the puts of one mutateRow."""


class Split:
    """Every catalog ``mutate_row`` with both deletes and puts sent as two calls, deletes first
    (what a Thrift1 server does), with ``between`` run in the gap; ``crash`` stops after the
    deletes."""

    def __init__(self, table: KVTable, between: Callable[[], None], crash: bool = False) -> None:
        self.table = table
        self.original = table.mutate_row
        self.between = between
        self.crash = crash
        self.split: list[tuple[dict[bytes, bytes], list[bytes]]] = []

    def __call__(self, row: bytes, puts: Mapping[bytes, bytes] | None = None,
                 deletes: Iterable[bytes] | None = None) -> None:
        puts, deletes = dict(puts or {}), list(deletes or [])
        if not (puts and deletes):
            self.original(row, puts=puts, deletes=deletes)
            return
        self.split.append((puts, deletes))
        self.original(row, deletes=deletes)
        self.between()
        if self.crash:
            raise Crash
        self.original(row, puts=puts)


def _fresh(target: str, prefix: str, data: Path) -> Catalog:
    """Another process's catalog: its own connection and an empty cache."""
    return Catalog(f"hbase://{target}?table_prefix={prefix}", data_root=str(data),
                   cache=TimelineCache())


def _advertised(cat: Catalog) -> dict[str, set[str]]:
    """What each reader says exists: timelines, an unverified cover, and the partition rows."""
    timeline = {p.value for p in cat.timeline("sa", "HOURLY", "dt")}
    cover = cat.cover("ev", "2015-01-01T00:00:00Z", "2015-01-01T12:00:00Z", storages=["sa"],
                      verify=False)
    return {"timeline": timeline, "cover": {p.value for p in cover.partitions},
            "rows": {p.values["dt"] for p in cat.list_partitions("sa")}}


@pytest.fixture
def drifted(target: str, tmp_path: Path) -> Iterator[tuple[Catalog, str]]:
    """A StoreAll timeline that lost a live hour and advertises one with no row: repairing it
    is one mutate_row with both deletes and puts."""
    prefix = "semcat" + uuid.uuid4().hex[:8]
    cat = _fresh(target, prefix, tmp_path)
    try:
        cat.create_fact("ev")
        cat.create_storage("ev", "sa", ["HOURLY"], columns=["dt"],
                           timeline_classes={"HOURLY": "StoreAll"})
        cat.register("sa", "HOURLY", [{"dt": h} for h in HOURS])
        cat.drop("sa", "HOURLY", {"dt": HOURS[5]})
        gone, invented = (HOURLY.parse_ordinal(h, "UTC") for h in (HOURS[2], "2015-01-01-09"))
        cat.rows.catalog.mutate_row(storage_row("sa"),
                                    deletes=[value_column(HOURLY, "dt", gone)])
        cat.rows.catalog.put(storage_row("sa"), {value_column(HOURLY, "dt", invented): b"x"})
        cat.cache.invalidate()
        assert _advertised(cat)["timeline"] == {*HOURS[:2], *HOURS[3:5], "2015-01-01-09"}
        yield cat, prefix
    finally:
        for name in cat.kv.list_tables():
            cat.kv.drop_table(name, missing_ok=True)
        cat.close()


def test_a_reader_between_the_deletes_and_the_puts_sees_nothing_false(
    drifted: tuple[Catalog, str], target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cat, prefix = drifted
    reader = _fresh(target, prefix, tmp_path)
    seen: list[dict[str, set[str]]] = []

    def look() -> None:
        reader.cache.invalidate()
        seen.append(_advertised(reader))

    split = Split(cat.rows.catalog, look)
    monkeypatch.setattr(cat.rows.catalog, "mutate_row", split)
    assert not cat.reconcile("sa").consistent
    # The workload of every other writer that updates value columns, split the same way.
    cat.register("sa", "HOURLY", [{"dt": "2015-01-01-07"}])
    cat.drop("sa", "HOURLY", {"dt": HOURS[0]})
    for kind in ("Ranges", "StoreAll"):
        cat.migrate_timeline("sa", "HOURLY", "dt", kind)
    cat.reconcile("sa")
    reader.close()
    assert [deletes for _, deletes in split.split] == [[value_column(
        HOURLY, "dt", HOURLY.parse_ordinal("2015-01-01-09", "UTC"))]]  # only the repair's
    assert len(seen) == 1
    [middle] = seen
    assert middle["timeline"] <= middle["rows"] and middle["cover"] <= middle["rows"]
    assert middle["rows"] == {*HOURS[:5]}  # the rows never change during a repair
    cat.cache.invalidate()
    final = _advertised(cat)
    assert final["timeline"] == final["cover"] == final["rows"] == {*HOURS[1:5], "2015-01-01-07"}


def test_a_crash_between_the_deletes_and_the_puts_loses_no_partition(
    drifted: tuple[Catalog, str], target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cat, prefix = drifted
    split = Split(cat.rows.catalog, lambda: None, crash=True)
    monkeypatch.setattr(cat.rows.catalog, "mutate_row", split)
    with pytest.raises(Crash):
        cat.reconcile("sa")
    assert len(split.split) == 1
    after = _fresh(target, prefix, tmp_path)  # the next process
    try:
        shown = _advertised(after)
        assert shown["rows"] == {*HOURS[:5]}  # every registered partition is still listed
        assert shown["timeline"] <= shown["rows"] and shown["cover"] <= shown["rows"]
        assert not after.reconcile("sa").consistent  # the documented repair finishes it
        after.cache.invalidate()
        shown = _advertised(after)
        assert shown["timeline"] == shown["cover"] == shown["rows"] == {*HOURS[:5]}
        assert after.reconcile("sa").consistent
    finally:
        after.close()
