"""The HBase test double answers as a real HBase does: one random sequence of happybase and raw
Thrift1 calls runs against both, and every answer (or error type) must be equal byte for byte.

Only runs with a real HBase Thrift1 server (``AIRFLOW_PARTITIONS_TEST_HBASE=host:port``); the
double is trusted by every other HBase test of the suite, so this is what keeps it honest.
Timestamps are left out of the comparison (the two servers' clocks stamp cells differently).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import happybase
import pytest
from Hbase_thrift import BatchMutation, Mutation
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from airflow_partitions.testing.hbase.server import HBaseTestServer
from tests.hypothesis_budget import examples
from tests.kv.conftest import REAL_HBASE_ENV, REAL_HBASE_SKIP

REAL_TARGET = os.environ.get(REAL_HBASE_ENV, "").strip()
pytestmark = pytest.mark.skipif(not REAL_TARGET, reason=REAL_HBASE_SKIP)

#: Table name -> its families: a two-family table, and a one-family one (reversed scans with a
#: ``filterIfMissing`` value test work only on the latter).
TABLES: dict[str, tuple[bytes, ...]] = {"two": (b"cf", b"meta"), "one": (b"cf",)}

ROW_BYTES = b"\x00ab\xff"
QUALIFIERS = [b"a", b"b", b"", b"ab", b"q\x00", b"q\xff", b"c'"]
VALUES = [
    b"", b"a", b"ab", b"b", b"\x00", b"\xff", b"A'", b"x AND y", b"(1)", b"it's)", b"\xfe",
    b"caf\xc3\xa9", b"\x00\x00\x00\x00\x00\x00\x00\x05",
]
COMPARE_OPS = [b"<", b"<=", b"=", b"!=", b">=", b">"]
REGEXES = [b"a", b"^a", b"b$", b"a.", b"[ab]+", b"\x00", b"\\(1\\)", b"'", b"\xff", b"\xc3\xa9"]
SUBSTRINGS = [b"a", b"A", b"AND", b"'", b")", b"\x00", b"\xff", b"\xc3\xa9", b"X A"]

#: Filters whose ``hasFilterRow`` is true in HBase.
ROW_DECIDING = (b"SingleColumnValue", b"SKIP", b"WHILE")

rows = st.lists(st.sampled_from(ROW_BYTES), min_size=1, max_size=3).map(bytes)
families = st.sampled_from([b"cf", b"cf", b"cf", b"meta", b"meta", b"zz"])
qualifiers = st.sampled_from(QUALIFIERS)
columns = st.builds(lambda f, q: f + b":" + q, families, qualifiers)
values = st.sampled_from(VALUES)
tables = st.sampled_from(sorted(TABLES))
# A column list for reads and deletes: bare families, columns, or both, in any order.
column_specs = st.lists(columns | families, min_size=1, max_size=3)


def quote(value: bytes) -> bytes:
    """A filter-language string literal: single-quoted, ``'`` doubled."""
    return b"'" + value.replace(b"'", b"''") + b"'"


def _bool(flag: bool) -> bytes:
    return b"true" if flag else b"false"


@st.composite
def comparators(draw: st.DrawFn, pool: list[bytes]) -> tuple[bytes, bytes]:
    """(operator, quoted comparator) with a value from ``pool``."""
    kind = draw(st.sampled_from(["binary", "binaryprefix", "regexstring", "substring"]))
    if kind in ("binary", "binaryprefix"):
        op = draw(st.sampled_from(COMPARE_OPS))
        return op, quote(kind.encode() + b":" + draw(st.sampled_from(pool)))
    op = draw(st.sampled_from([b"=", b"!="]))
    pool = REGEXES if kind == "regexstring" else SUBSTRINGS
    return op, quote(kind.encode() + b":" + draw(st.sampled_from(pool)))


#: Kinds (of ``leaf_filters``) whose HBase answer inside a FilterList, or on a reversed scan,
#: the double does not model (its module docstring lists the divergences): drawn alone only.
ALONE_ONLY = (9, 11, 12, 13, 14)


@st.composite
def leaf_filters(draw: st.DrawFn, kinds: tuple[int, ...] = tuple(range(16))) -> bytes:
    """One filter of every kind the double accepts."""
    kind = draw(st.sampled_from(kinds))
    if kind == 0:
        return b"PrefixFilter (" + quote(draw(rows)) + b")"
    if kind == 1:
        op, cmp = draw(comparators([*{bytes([b]) for b in ROW_BYTES}, b"a\x00", b"b\xff"]))
        return b"RowFilter (" + op + b", " + cmp + b")"
    if kind == 2:
        op, cmp = draw(comparators([b"cf", b"meta", b"c", b"m"]))
        return b"FamilyFilter (" + op + b", " + cmp + b")"
    if kind == 3:
        op, cmp = draw(comparators(QUALIFIERS))
        return b"QualifierFilter (" + op + b", " + cmp + b")"
    if kind == 4:
        op, cmp = draw(comparators(VALUES))
        return b"ValueFilter (" + op + b", " + cmp + b")"
    if kind == 5:
        prefix = draw(st.sampled_from([b"a", b"q", b"", b"c'"]))
        return b"ColumnPrefixFilter (" + quote(prefix) + b")"
    if kind == 6:
        prefixes = draw(st.lists(st.sampled_from([b"a", b"q\x00", b"b", b"c"]), min_size=1,
                                 max_size=3, unique=draw(st.integers(0, 9)) > 0))
        return b"MultipleColumnPrefixFilter (" + b", ".join(quote(p) for p in prefixes) + b")"
    if kind == 7:
        low, high = draw(st.sampled_from(QUALIFIERS)), draw(st.sampled_from(QUALIFIERS))
        return (b"ColumnRangeFilter (" + quote(low) + b", " + _bool(draw(st.booleans())) + b", "
                + quote(high) + b", " + _bool(draw(st.booleans())) + b")")
    if kind in (8, 9):
        name = b"SingleColumnValueFilter" if kind == 8 else b"SingleColumnValueExcludeFilter"
        family = draw(st.sampled_from([b"cf", b"meta"]))
        op, cmp = draw(comparators(VALUES))
        args = [quote(family), quote(draw(qualifiers)), op, cmp]
        if draw(st.booleans()):
            args += [_bool(draw(st.booleans())), _bool(draw(st.booleans()))]
        return name + b" (" + b", ".join(args) + b")"
    if kind == 10:
        return draw(st.sampled_from([b"KeyOnlyFilter ()", b"KeyOnlyFilter (true)",
                                     b"KeyOnlyFilter (false)"]))
    if kind == 11:
        return b"FirstKeyOnlyFilter ()"
    if kind == 12:
        return b"ColumnCountGetFilter (%d)" % draw(st.integers(0, 3))
    if kind == 13:
        return b"ColumnPaginationFilter (%d, %d)" % (draw(st.integers(0, 3)),
                                                      draw(st.integers(0, 3)))
    if kind == 14:
        return b"InclusiveStopFilter (" + quote(draw(rows)) + b")"
    # No cell of the sequence has these stamps: only the empty answer and OR lists exercise it.
    return draw(st.sampled_from([b"TimestampsFilter (1, 2)", b"TimestampsFilter ()"]))


def _combine(children: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    lists = st.builds(
        lambda op, parts: b"(" + op.join(parts) + b")",
        st.sampled_from([b" AND ", b" OR "]),
        st.lists(children, min_size=2, max_size=3),
    )
    # No SKIP or WHILE: the double's row-level model of them is a documented divergence.
    return lists


#: Not in lists either: a ``SingleColumnValueFilter`` (kind 8) in an OR list, where HBase keeps
#: the row whenever another member does not drop rows (a documented divergence).
LIST_MEMBERS = tuple(k for k in range(16) if k not in (*ALONE_ONLY, 8))
filters = leaf_filters() | st.recursive(leaf_filters(LIST_MEMBERS), _combine, max_leaves=4)
bad_filters = st.sampled_from([
    b"PrefixFilter (", b"NoSuchFilter ('a')", b"RowFilter (=, 'nope:a')",
    b"PrefixFilter ('a') and PrefixFilter ('b')", b"RowFilter (<, 'regexstring:a')",
    b"ColumnPaginationFilter (1)", b"PrefixFilter ('unterminated)",
])


# ---------------------------------------------------------------------------------------------
# Operations: each is a function of a happybase connection returning a comparable answer
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One call, shown by ``text`` when the two servers disagree; ``settle`` waits out the
    millisecond of a delete marker (or a counter's bumped timestamp) before the next call."""

    text: str
    run: Callable[[happybase.Connection, str], Any]
    settle: bool = False


def _full(prefix: str, table: str) -> bytes:
    return f"{prefix}_{table}".encode()


def _row_dict(data: dict[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    return sorted(data.items())


@st.composite
def put_ops(draw: st.DrawFn) -> Op:
    table, row = draw(tables), draw(rows)
    data = draw(st.dictionaries(columns, values, min_size=1, max_size=3))
    return Op(f"put {table} {row!r} {data!r}",
              lambda c, p: c.table(table).put(row, data))


@st.composite
def batch_put_ops(draw: st.DrawFn) -> Op:
    table = draw(tables)
    items = draw(st.lists(st.tuples(rows, st.dictionaries(columns, values, min_size=1,
                                                          max_size=2)), min_size=1, max_size=3))

    def run(c: happybase.Connection, prefix: str) -> None:
        batches = [BatchMutation(row=r, mutations=[Mutation(column=k, value=v)
                                                   for k, v in d.items()]) for r, d in items]
        c.client.mutateRows(_full(prefix, table), batches, {})

    return Op(f"mutateRows {table} {items!r}", run)


@st.composite
def delete_ops(draw: st.DrawFn) -> Op:
    table, row = draw(tables), draw(rows)
    if draw(st.booleans()):
        return Op(f"deleteAllRow {table} {row!r}", lambda c, p: c.table(table).delete(row),
                  settle=True)
    specs = draw(column_specs)
    return Op(f"delete {table} {row!r} {specs!r}",
              lambda c, p: c.table(table).delete(row, columns=specs), settle=True)


def _covers(spec: bytes, column: bytes) -> bool:
    family, sep, _ = spec.partition(b":")
    return spec == column if sep else column.partition(b":")[0] == family


@st.composite
def mutate_row_ops(draw: st.DrawFn) -> Op:
    """Deletes and puts in one ``mutateRow``; no delete covers a put (HBase would hide it)."""
    table, row = draw(tables), draw(rows)
    puts = draw(st.dictionaries(columns, values, min_size=1, max_size=2))
    deletes = [d for d in draw(column_specs) if not any(_covers(d, c) for c in puts)]

    def run(c: happybase.Connection, prefix: str) -> None:
        mutations = [Mutation(isDelete=True, column=d) for d in deletes]
        mutations += [Mutation(column=k, value=v) for k, v in puts.items()]
        c.client.mutateRow(_full(prefix, table), row, mutations, {})

    return Op(f"mutateRow {table} {row!r} deletes={deletes!r} puts={puts!r}", run, settle=True)


@st.composite
def increment_ops(draw: st.DrawFn) -> Op:
    table, row, column = draw(tables), draw(rows), draw(columns)
    amount = draw(st.sampled_from([1, -2, 0, 5, 2**63 - 1]))
    if draw(st.booleans()):
        return Op(f"counter_inc {table} {row!r} {column!r} {amount}",
                  lambda c, p: c.table(table).counter_inc(row, column, amount), settle=True)
    return Op(f"atomicIncrement {table} {row!r} {column!r} {amount}",
              lambda c, p: c.client.atomicIncrement(_full(p, table), row, column, amount),
              settle=True)


@st.composite
def check_and_put_ops(draw: st.DrawFn) -> Op:
    """Thrift1 ``checkAndPut``: expected absent, empty, the current value, or another value."""
    table, row, column = draw(tables), draw(rows), draw(columns)
    put_column = column if draw(st.integers(0, 3)) else draw(columns)
    value = draw(values)
    expected = draw(st.sampled_from(["absent", "empty", "current", "current", "other"]))
    other = draw(values)

    def run(c: happybase.Connection, prefix: str) -> bool:
        wanted: bytes | None
        if expected == "absent":
            wanted = None
        elif expected == "empty":
            wanted = b""
        elif expected == "current":
            family = column.partition(b":")[0]
            found = c.table(table).row(row, [column]) if family in TABLES[table] else {}
            wanted = found.get(column)
        else:
            wanted = other
        mput = Mutation(column=put_column, value=value)
        return bool(c.client.checkAndPut(_full(prefix, table), row, column, wanted, mput, {}))

    return Op(f"checkAndPut {table} {row!r} {column!r} expected={expected}/{other!r} "
              f"put {put_column!r}={value!r}", run, settle=True)


@st.composite
def get_ops(draw: st.DrawFn) -> Op:
    table = draw(tables)
    cols = draw(st.none() | column_specs)
    kind = draw(st.integers(0, 2))
    if kind == 0:
        row = draw(rows)
        return Op(f"row {table} {row!r} columns={cols!r}",
                  lambda c, p: _row_dict(c.table(table).row(row, cols)))
    if kind == 1:
        keys = draw(st.lists(rows, min_size=1, max_size=3))
        return Op(f"rows {table} {keys!r} columns={cols!r}",
                  lambda c, p: [(k, _row_dict(d)) for k, d in c.table(table).rows(keys, cols)])
    row, column = draw(rows), draw(columns)
    return Op(f"cells {table} {row!r} {column!r}",
              lambda c, p: c.table(table).cells(row, column, versions=2))


@st.composite
def scan_ops(draw: st.DrawFn) -> Op:
    table = draw(tables)
    args: dict[str, Any] = {}
    if draw(st.integers(0, 4)) == 0:
        args["row_prefix"] = draw(rows)
    else:
        args["row_start"] = draw(st.none() | rows)
        args["row_stop"] = draw(st.none() | rows)
    args["columns"] = draw(st.none() | st.none() | column_specs)
    args["filter"] = draw(st.none() | filters | filters | filters | bad_filters)
    args["limit"] = draw(st.none() | st.integers(1, 5))
    args["batch_size"] = draw(st.sampled_from([1, 2, 3, 1000]))
    args["scan_batching"] = draw(st.none() | st.integers(1, 3))
    if args["scan_batching"] and any(w in (args["filter"] or b"") for w in ROW_DECIDING):
        # HBase refuses batching with such a filter only after 16 client retries (about 25 s):
        # the double's refusal is tested on its own (test_hbase_server.py).
        args["scan_batching"] = None
    text = args["filter"] or b""
    # ColumnCountGetFilter on one family only: over several, HBase ends the scan per family's
    # store (a documented divergence, never sent by our client).
    assume(b"ColumnCountGetFilter" not in text or len(TABLES[table]) == 1)
    # Reversed: not with InclusiveStopFilter, nor a ColumnRangeFilter in an OR list (HBase's
    # reversed scanner skips cells there; both documented divergences, avoided by our client).
    args["reverse"] = draw(st.booleans()) and b"InclusiveStopFilter" not in text and not (
        b"ColumnRangeFilter" in text and b" OR " in text)
    args["sorted_columns"] = draw(st.booleans())

    def run(c: happybase.Connection, prefix: str) -> list[Any]:
        found = c.table(table).scan(**args)
        if args["sorted_columns"]:
            return [(k, list(d.items())) for k, d in found]
        return [(k, _row_dict(d)) for k, d in found]

    return Op(f"scan {table} {args!r}", run)


operations = st.one_of(
    put_ops(), put_ops(), put_ops(), batch_put_ops(), delete_ops(), mutate_row_ops(),
    increment_ops(), check_and_put_ops(), get_ops(), scan_ops(), scan_ops(), scan_ops(),
)


# ---------------------------------------------------------------------------------------------
# The two servers
# ---------------------------------------------------------------------------------------------


@dataclass
class Servers:
    """A happybase connection to each server; the same tables under one prefix on both."""

    real: happybase.Connection
    double: happybase.Connection
    prefix: str

    def clear(self) -> None:
        """Empty every table, then wait out the delete markers' millisecond."""
        for conn in (self.real, self.double):
            for name in TABLES:
                table = conn.table(name)
                for key, _ in list(table.scan(filter=b"FirstKeyOnlyFilter ()")):
                    table.delete(key)
        time.sleep(0.002)


@pytest.fixture(scope="module")
def servers(hbase_test_server: HBaseTestServer) -> Iterator[Servers]:
    host, _, port = REAL_TARGET.rpartition(":")
    prefix = "diff" + uuid.uuid4().hex[:10]
    real = happybase.Connection(host, int(port), table_prefix=prefix, timeout=60_000)
    double = happybase.Connection(hbase_test_server.host, hbase_test_server.port,
                                  table_prefix=prefix)
    for conn in (real, double):
        for name, fams in TABLES.items():
            conn.create_table(name, {f.decode(): {"max_versions": 1} for f in fams})
    try:
        yield Servers(real, double, prefix)
    finally:
        for conn in (real, double):
            for name in TABLES:
                conn.delete_table(name, disable=True)
            conn.close()


def outcome(conn: happybase.Connection, prefix: str, op: Op) -> tuple[str, Any]:
    """The answer of one call, or the type of the error it raised."""
    try:
        return "ok", op.run(conn, prefix)
    except Exception as exc:  # compared, not hidden: both servers must fail alike
        return "error", type(exc).__name__


def run_both(servers: Servers, ops: list[Op]) -> None:
    servers.clear()
    for i, op in enumerate(ops):
        real = outcome(servers.real, servers.prefix, op)
        double = outcome(servers.double, servers.prefix, op)
        assert double == real, f"call {i}: {op.text}\n  HBase:  {real!r}\n  double: {double!r}"
        if op.settle:
            time.sleep(0.002)


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large],
)
@given(ops=st.lists(operations, min_size=5, max_size=40))
def test_double_answers_like_hbase(servers: Servers, ops: list[Op]) -> None:
    run_both(servers, ops)
