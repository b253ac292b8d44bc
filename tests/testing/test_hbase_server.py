"""Behaviour of the HBase Thrift1 test double, driven through happybase like the real backend."""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import happybase
import Hbase_thrift
import pytest
from Hbase_thrift import AlreadyExists, IllegalArgument, Mutation, TScan
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TTransportException

from airflow_partitions.testing.hbase.server import HBaseTestServer
from tests.hypothesis_budget import examples

HbaseIOError = Hbase_thrift.IOError
_names = itertools.count()


@pytest.fixture
def conn(hbase_test_server: HBaseTestServer) -> Iterator[happybase.Connection]:
    c = happybase.Connection(hbase_test_server.host, hbase_test_server.port)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def table(conn: happybase.Connection) -> Iterator[happybase.Table]:
    """A fresh table with families ``cf`` (3 versions) and ``cf2`` (1 version)."""
    name = f"testing_t{next(_names)}"
    conn.create_table(name, {"cf": {}, "cf2": {"max_versions": 1}})
    try:
        yield conn.table(name)
    finally:
        conn.delete_table(name, disable=True)


def keys(table: happybase.Table, **scan: Any) -> list[bytes]:
    return [k for k, _ in table.scan(**scan)]


def put_rows(table: happybase.Table, rows: dict[bytes, dict[bytes, bytes]]) -> None:
    with table.batch() as b:
        for row, data in rows.items():
            b.put(row, data)


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------


def test_create_list_and_delete_tables(conn: happybase.Connection) -> None:
    conn.create_table("testing_admin_t", {"cf": {"max_versions": 5}})
    assert b"testing_admin_t" in conn.tables()
    assert conn.table("testing_admin_t").families()[b"cf"]["max_versions"] == 5
    with pytest.raises(AlreadyExists, match="testing_admin_t"):
        conn.create_table("testing_admin_t", {"cf": {}})
    with pytest.raises(HbaseIOError, match="TableNotDisabledException"):
        conn.delete_table("testing_admin_t")
    conn.disable_table("testing_admin_t")
    assert not conn.is_table_enabled("testing_admin_t")
    with pytest.raises(HbaseIOError, match="TableNotEnabledException"):
        conn.table("testing_admin_t").row(b"r")
    conn.delete_table("testing_admin_t")
    assert b"testing_admin_t" not in conn.tables()


def test_missing_table_and_bad_definitions(conn: happybase.Connection) -> None:
    with pytest.raises(HbaseIOError, match="TableNotFoundException: nope"):
        conn.table("nope").row(b"r")
    with pytest.raises(HbaseIOError, match="TableNotFoundException"):
        conn.delete_table("nope")
    with pytest.raises(IllegalArgument, match="at least one column family"):
        conn.client.createTable(b"nofam", [])
    with pytest.raises(IllegalArgument, match="Illegal table name"):
        conn.create_table("bad name!", {"cf": {}})


def test_table_prefix_and_regions(hbase_test_server: HBaseTestServer) -> None:
    c = happybase.Connection(
        hbase_test_server.host, hbase_test_server.port, table_prefix="testing_pfx"
    )
    c.create_table("x", {"cf": {}})
    try:
        assert c.tables() == [b"x"]
        (region,) = c.table("x").regions()
        assert region["start_key"] == b"" and region["end_key"] == b""
        assert region["port"] == hbase_test_server.port
    finally:
        c.delete_table("x", disable=True)
        c.close()


# ---------------------------------------------------------------------------------------------
# Reads and writes
# ---------------------------------------------------------------------------------------------


def test_put_row_and_rows_with_column_selection(table: happybase.Table) -> None:
    table.put(b"r1", {b"cf:a": b"1", b"cf:b": b"2", b"cf2:x": b"x"})
    table.put(b"r2", {b"cf:a": b"3"})
    assert table.row(b"r1") == {b"cf:a": b"1", b"cf:b": b"2", b"cf2:x": b"x"}
    assert table.row(b"r1", columns=[b"cf"]) == {b"cf:a": b"1", b"cf:b": b"2"}
    # ``cf:`` names the empty-qualifier cell (HBase's CellUtil.parseColumn), not the family.
    assert table.row(b"r1", columns=[b"cf:"]) == {}
    assert table.row(b"r1", columns=[b"cf:b", b"cf2:x"]) == {b"cf:b": b"2", b"cf2:x": b"x"}
    assert table.row(b"missing") == {}
    assert table.rows([b"r2", b"missing", b"r1"], columns=[b"cf:a"]) == [
        (b"r2", {b"cf:a": b"3"}),
        (b"r1", {b"cf:a": b"1"}),
    ]
    with pytest.raises(HbaseIOError, match="Column family nope does not exist"):
        table.row(b"r1", columns=[b"nope:a"])
    with pytest.raises(HbaseIOError, match="NoSuchColumnFamilyException"):
        table.put(b"r1", {b"nope:a": b"1"})


def test_empty_qualifier_and_binary_values(table: happybase.Table) -> None:
    value = bytes(range(256))
    table.put(b"\x00\xffrow", {b"cf:": value, b"cf:\x00q": b""})
    assert table.row(b"\x00\xffrow") == {b"cf:": value, b"cf:\x00q": b""}


def test_versions_latest_wins_and_timestamps(table: happybase.Table) -> None:
    for ts, value in [(10, b"v10"), (30, b"v30"), (20, b"v20"), (5, b"v5")]:
        table.put(b"r", {b"cf:a": value, b"cf2:a": value}, timestamp=ts)
    assert table.row(b"r") == {b"cf:a": b"v30", b"cf2:a": b"v30"}
    # cf keeps 3 versions, cf2 keeps 1; newest first.
    assert table.cells(b"r", b"cf:a", include_timestamp=True) == [
        (b"v30", 30),
        (b"v20", 20),
        (b"v10", 10),
    ]
    assert table.cells(b"r", b"cf2:a") == [b"v30"]
    assert table.cells(b"r", b"cf:a", versions=1) == [b"v30"]
    # Timestamp bounds are exclusive, as Get.setTimeRange(0, ts) in the Thrift server.
    assert table.cells(b"r", b"cf:a", timestamp=30) == [b"v20", b"v10"]
    assert table.row(b"r", timestamp=30, columns=[b"cf:a"]) == {b"cf:a": b"v20"}
    table.put(b"r", {b"cf:a": b"again"}, timestamp=30)
    assert table.row(b"r", include_timestamp=True)[b"cf:a"] == (b"again", 30)


def test_batch_applies_each_row_on_its_own(table: happybase.Table) -> None:
    """As HBase's mutateRows: a refused row fails alone (and whole), the others are written."""
    with pytest.raises(HbaseIOError, match="NoSuchColumnFamilyException"):
        with table.batch() as b:
            b.put(b"ok", {b"cf:a": b"1"})
            b.put(b"bad", {b"cf:a": b"1", b"nope:x": b"2"})
    assert keys(table) == [b"ok"]
    table.delete(b"ok")
    with pytest.raises(RuntimeError):
        with table.batch(transaction=True) as b:
            b.put(b"ok", {b"cf:a": b"1"})
            raise RuntimeError("abort")
    assert keys(table) == []


def test_multi_cell_row_mutation_is_atomic(
    table: happybase.Table, hbase_test_server: HBaseTestServer
) -> None:
    """Readers never observe half of a mutateRow: the cells of one request change together."""
    stop = threading.Event()

    def writer() -> None:
        c = happybase.Connection(hbase_test_server.host, hbase_test_server.port)
        t = c.table(table.name)
        for i in range(200):
            v = str(i).encode()
            t.put(b"r", {b"cf:a": v, b"cf:b": v, b"cf2:c": v})
        stop.set()
        c.close()

    thread = threading.Thread(target=writer)
    thread.start()
    seen = 0
    while not stop.is_set():
        row = table.row(b"r")
        if row:
            assert row[b"cf:a"] == row[b"cf:b"] == row[b"cf2:c"]
            seen += 1
    thread.join()
    assert table.row(b"r")[b"cf:a"] == b"199"


def test_delete_cells_families_and_rows(table: happybase.Table) -> None:
    put_rows(
        table,
        {
            b"r1": {b"cf:a": b"1", b"cf:b": b"2", b"cf2:x": b"x"},
            b"r2": {b"cf:a": b"3"},
        },
    )
    table.delete(b"r1", columns=[b"cf:a"])
    assert table.row(b"r1") == {b"cf:b": b"2", b"cf2:x": b"x"}
    table.delete(b"r1", columns=[b"cf"])
    assert table.row(b"r1") == {b"cf2:x": b"x"}
    table.delete(b"r2")
    assert keys(table) == [b"r1"]
    table.connection.client.deleteAllRow(table.name, b"r1", {})
    assert keys(table) == []


def test_delete_with_timestamp_keeps_newer_versions(table: happybase.Table) -> None:
    for ts in (1, 2, 3):
        table.put(b"r", {b"cf:a": str(ts).encode()}, timestamp=ts)
    table.delete(b"r", columns=[b"cf:a"], timestamp=2)
    assert table.cells(b"r", b"cf:a") == [b"3"]


# ---------------------------------------------------------------------------------------------
# Scans
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def abc_table(table: happybase.Table) -> happybase.Table:
    put_rows(table, {k: {b"cf:a": k} for k in [b"a", b"b", b"ba", b"bb", b"c", b"d"]})
    return table


def test_scan_bounds_prefix_and_limit(abc_table: happybase.Table) -> None:
    assert keys(abc_table) == [b"a", b"b", b"ba", b"bb", b"c", b"d"]
    assert keys(abc_table, row_start=b"b", row_stop=b"c") == [b"b", b"ba", b"bb"]
    assert keys(abc_table, row_start=b"b0", row_stop=b"bb") == [b"ba"]
    assert keys(abc_table, row_prefix=b"b") == [b"b", b"ba", b"bb"]
    assert keys(abc_table, row_stop=b"b") == [b"a"]
    assert keys(abc_table, limit=2) == [b"a", b"b"]
    assert keys(abc_table, row_start=b"e") == []


def test_scan_reversed(abc_table: happybase.Table) -> None:
    assert keys(abc_table, reverse=True) == [b"d", b"c", b"bb", b"ba", b"b", b"a"]
    # start is inclusive and is the *upper* bound; stop is exclusive.
    assert keys(abc_table, reverse=True, row_start=b"c", row_stop=b"b") == [b"c", b"bb", b"ba"]
    # happybase quirk: reverse + row_prefix sends start=bytes_increment(prefix) (inclusive) and
    # stop=prefix (exclusive), so HBase returns 'c' and drops 'b'. The double does the same.
    assert keys(abc_table, reverse=True, row_prefix=b"b") == [b"c", b"bb", b"ba"]
    assert keys(abc_table, reverse=True, limit=2) == [b"d", b"c"]


def test_scan_batch_size_is_client_caching(
    abc_table: happybase.Table, hbase_test_server: HBaseTestServer
) -> None:
    before = hbase_test_server.calls["scannerGetList"]
    assert len(keys(abc_table, batch_size=2)) == 6
    # 2 + 2 + 2 rows, then one more call that returns an empty list.
    assert hbase_test_server.calls["scannerGetList"] - before == 4


def test_scan_batching_splits_wide_rows(table: happybase.Table) -> None:
    wide = {f"cf:q{i}".encode(): str(i).encode() for i in range(5)}
    put_rows(table, {b"r1": wide, b"r2": {b"cf:q0": b"x"}})
    parts = list(table.scan(scan_batching=2))
    assert [k for k, _ in parts] == [b"r1", b"r1", b"r1", b"r2"]
    assert [len(d) for _, d in parts] == [2, 2, 1, 1]
    merged: dict[bytes, bytes] = {}
    for _, d in parts[:3]:
        merged.update(d)
    assert merged == wide


def test_scan_columns_and_sorted_columns(table: happybase.Table) -> None:
    put_rows(table, {b"r": {b"cf:b": b"2", b"cf:a": b"1", b"cf2:z": b"z"}})
    ((_, row),) = table.scan(columns=[b"cf2", b"cf:b"])
    assert row == {b"cf:b": b"2", b"cf2:z": b"z"}
    ((_, ordered),) = table.scan(sorted_columns=True)
    assert list(ordered) == [b"cf:a", b"cf:b", b"cf2:z"]


def test_raw_scanner_errors(conn: happybase.Connection, table: happybase.Table) -> None:
    with pytest.raises(IllegalArgument, match="scanner ID is invalid"):
        conn.client.scannerGetList(987654, 1)
    with pytest.raises(HbaseIOError, match="NoSuchColumnFamilyException"):
        conn.client.scannerOpenWithScan(table.name, TScan(columns=[b"zz:a"]), {})


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    rows=st.sets(st.binary(min_size=1, max_size=4), max_size=25),
    start=st.binary(max_size=3),
    stop=st.binary(max_size=3),
)
def test_scan_range_matches_sorted_keys(
    table: happybase.Table, rows: set[bytes], start: bytes, stop: bytes
) -> None:
    table.connection.client.mutateRows(
        table.name,
        [Hbase_thrift.BatchMutation(r, [Mutation(column=b"cf:a", value=r)]) for r in rows],
        {},
    )
    try:
        got = keys(table, row_start=start, row_stop=stop or None)
        want = sorted(r for r in rows if r >= start and (not stop or r < stop))
        assert got == want
    finally:
        for r in rows:
            table.connection.client.deleteAllRow(table.name, r, {})


# ---------------------------------------------------------------------------------------------
# Filters through the server
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def people(table: happybase.Table) -> happybase.Table:
    put_rows(
        table,
        {
            b"p1": {b"cf:name": b"Alice", b"cf:age": b"30", b"cf2:city": b"Paris"},
            b"p2": {b"cf:name": b"bob", b"cf:age": b"25"},
            b"p3": {b"cf:name": b"Carol", b"cf2:city": b"Rome"},
            b"q1": {b"cf:name": b"Dan", b"cf:age": b"40"},
        },
    )
    return table


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ("PrefixFilter('p')", [b"p1", b"p2", b"p3"]),
        ("RowFilter(>=, 'binary:p3')", [b"p3", b"q1"]),
        ("RowFilter(<, 'binary:p2')", [b"p1"]),
        ("RowFilter(!=, 'binary:p2')", [b"p1", b"p3", b"q1"]),
        ("RowFilter(=, 'binaryprefix:q')", [b"q1"]),
        ("RowFilter(=, 'regexstring:[13]$')", [b"p1", b"p3", b"q1"]),
        ("SingleColumnValueFilter('cf', 'age', >=, 'binary:30')", [b"p1", b"p3", b"q1"]),
        (
            "SingleColumnValueFilter('cf', 'age', >=, 'binary:30', true, true)",
            [b"p1", b"q1"],
        ),
        ("SingleColumnValueFilter('cf', 'name', =, 'substring:AL')", [b"p1"]),
        ("SingleColumnValueFilter('cf', 'name', !=, 'substring:o')", [b"p1", b"q1"]),
        ("ValueFilter(=, 'binary:Rome')", [b"p3"]),
        ("QualifierFilter(=, 'binary:city')", [b"p1", b"p3"]),
        ("FamilyFilter(=, 'binary:cf2')", [b"p1", b"p3"]),
        ("ColumnPrefixFilter('ag')", [b"p1", b"p2", b"q1"]),
        ("InclusiveStopFilter('p2')", [b"p1", b"p2"]),
        ("PrefixFilter('p') AND SingleColumnValueFilter('cf','age',<,'binary:3')", [b"p2", b"p3"]),
    ],
)
def test_filters_select_rows(people: happybase.Table, flt: str, expected: list[bytes]) -> None:
    assert keys(people, filter=flt) == expected


def test_single_column_value_filter_missing_column(people: happybase.Table) -> None:
    """A row missing the tested column passes unless filterIfMissing is true."""
    lenient = "SingleColumnValueFilter('cf2', 'city', =, 'binary:Paris')"
    strict = "SingleColumnValueFilter('cf2', 'city', =, 'binary:Paris', true, true)"
    assert keys(people, filter=lenient) == [b"p1", b"p2", b"q1"]
    assert keys(people, filter=strict) == [b"p1"]
    # Restricting the scan's columns hides the tested column, so it counts as missing.
    assert keys(people, filter=strict, columns=[b"cf:name"]) == []


@pytest.mark.parametrize("args", ["'cf', 'a', =", "'cf', 'a', =, 'binary:x', true"])
def test_single_column_value_filter_takes_4_or_6_arguments(
    people: happybase.Table, args: str
) -> None:
    with pytest.raises(TApplicationException) as caught:
        keys(people, filter=f"SingleColumnValueFilter({args})")
    assert b"takes 4 or 6 argument" in caught.value.message


@pytest.mark.parametrize(
    "value",
    [
        b"it's",
        b"a)b",
        b"x AND y",
        b"nul\x00byte",
        "caf\u00e9 \u65e5\u672c".encode(),
        b"\xff\xfe'')",
    ],
)
def test_quoted_values_match_exactly(table: happybase.Table, value: bytes) -> None:
    put_rows(table, {b"hit": {b"cf:v": value}, b"miss": {b"cf:v": value + b"!"}})
    quoted = value.replace(b"'", b"''")
    flt = b"SingleColumnValueFilter('cf', 'v', =, 'binary:" + quoted + b"', true, true)"
    assert keys(table, filter=flt) == [b"hit"]
    assert keys(table, filter=b"ValueFilter(=, 'binary:" + quoted + b"')") == [b"hit"]


def test_and_binds_tighter_than_or_and_parentheses_override(people: happybase.Table) -> None:
    a = "RowFilter(=, 'binary:p1')"
    b = "RowFilter(=, 'binary:p2')"
    c = "RowFilter(!=, 'binary:p1')"
    # a OR (b AND c) -> p1, p2
    assert keys(people, filter=f"{a} OR {b} AND {c}") == [b"p1", b"p2"]
    # (a OR b) AND c -> p2
    assert keys(people, filter=f"({a} OR {b}) AND {c}") == [b"p2"]
    assert keys(people, filter=f"({a})OR({b})") == [b"p1", b"p2"]


def test_column_range_filter_slices_a_wide_row(table: happybase.Table) -> None:
    put_rows(table, {b"w": {f"cf:c{i:02d}".encode(): b"v" for i in range(10)}})

    def cols(flt: str) -> list[bytes]:
        ((_, row),) = table.scan(filter=flt)
        return sorted(row)

    assert cols("ColumnRangeFilter('c03', true, 'c06', false)") == [
        b"cf:c03",
        b"cf:c04",
        b"cf:c05",
    ]
    assert cols("ColumnRangeFilter('c03', false, 'c06', true)") == [
        b"cf:c04",
        b"cf:c05",
        b"cf:c06",
    ]
    assert cols("ColumnRangeFilter('', true, 'c02', false)") == [b"cf:c00", b"cf:c01"]
    assert cols("ColumnRangeFilter('c08', true, '', false)") == [b"cf:c08", b"cf:c09"]
    assert keys(table, filter="ColumnRangeFilter('d', true, '', false)") == []


def test_regexstring_uses_find_semantics(people: happybase.Table) -> None:
    # 'lic' is inside 'Alice': find() matches a substring, no anchoring needed.
    assert keys(people, filter="ValueFilter(=, 'regexstring:lic')") == [b"p1"]
    assert keys(people, filter="ValueFilter(=, 'regexstring:^lic')") == []
    flt = "SingleColumnValueFilter('cf','name',=,'regexstring:^[A-C]', true, true)"
    assert keys(people, filter=flt) == [b"p1", b"p3"]


def test_cell_filters_trim_rows_and_key_only(people: happybase.Table) -> None:
    assert dict(people.scan(filter="ColumnPrefixFilter('na') AND PrefixFilter('p1')")) == {
        b"p1": {b"cf:name": b"Alice"}
    }
    assert dict(people.scan(filter="KeyOnlyFilter() AND PrefixFilter('q')")) == {
        b"q1": {b"cf:age": b"", b"cf:name": b""}
    }
    assert dict(people.scan(filter="FirstKeyOnlyFilter() AND PrefixFilter('q')")) == {
        b"q1": {b"cf:age": b"40"}
    }


def test_skip_and_while(people: happybase.Table) -> None:
    # SKIP drops rows where any cell fails; WHILE stops the scan at the first failure.
    assert keys(people, filter="SKIP ValueFilter(!=, 'binary:Rome')") == [b"p1", b"p2", b"q1"]
    assert keys(people, filter="WHILE RowFilter(<, 'binary:p3')") == [b"p1", b"p2"]


def test_malformed_filter_is_an_error_and_server_keeps_serving(people: happybase.Table) -> None:
    """HBase's filter parser throws unchecked exceptions: the client sees an application error."""
    for bad in ["PrefixFilter('p'", "PrefixFilter('p') and PrefixFilter('q')", "Nope()", "(("]:
        with pytest.raises(TApplicationException) as caught:
            keys(people, filter=bad)
        assert b"invalid filter string" in caught.value.message
    with pytest.raises(TApplicationException) as caught:
        keys(people, filter="RowFilter(<, 'regexstring:x')")
    assert b"only be used with = and !=" in caught.value.message
    assert keys(people, filter="PrefixFilter('q')") == [b"q1"]


# ---------------------------------------------------------------------------------------------
# checkAndPut and counters
# ---------------------------------------------------------------------------------------------


def test_check_and_put(conn: happybase.Connection, table: happybase.Table) -> None:
    def cas(expected: bytes | None, new: bytes) -> bool:
        mput = Mutation(column=b"cf:q", value=new)
        return bool(conn.client.checkAndPut(table.name, b"r", b"cf:q", expected, mput, {}))

    assert cas(None, b"v1") is True  # absent -> put
    assert cas(None, b"v2") is False  # now present
    assert cas(b"nope", b"v2") is False  # mismatch
    assert cas(b"v1", b"v2") is True  # match
    assert table.row(b"r") == {b"cf:q": b"v2"}
    table.put(b"r", {b"cf:q": b""})
    assert cas(None, b"v3") is True  # empty counts as absent
    with pytest.raises(HbaseIOError, match="NoSuchColumnFamilyException"):
        conn.client.checkAndPut(table.name, b"r", b"zz:q", None, Mutation(column=b"cf:q"), {})


def test_counters(table: happybase.Table) -> None:
    assert table.counter_get(b"r", b"cf:n") == 0
    assert table.row(b"r") == {b"cf:n": b"\x00" * 8}
    assert table.counter_inc(b"r", b"cf:n", 5) == 5
    assert table.counter_dec(b"r", b"cf:n", 7) == -2
    assert table.row(b"r")[b"cf:n"] == (-2).to_bytes(8, "big", signed=True)
    table.counter_set(b"r", b"cf:n", 2**63 - 1)
    assert table.counter_inc(b"r", b"cf:n") == -(2**63)  # Java long overflow
    table.put(b"r", {b"cf:s": b"abc"})
    with pytest.raises(HbaseIOError, match="not a long"):
        table.counter_inc(b"r", b"cf:s")
    with pytest.raises(HbaseIOError, match="NoSuchColumnFamilyException"):
        table.counter_inc(b"r", b"zz:n")


# ---------------------------------------------------------------------------------------------
# Server lifecycle
# ---------------------------------------------------------------------------------------------


def test_stop_drops_clients_and_restart_keeps_data(hbase_server_factory: Any) -> None:
    srv: HBaseTestServer = hbase_server_factory()
    port = srv.port
    assert srv.url == f"hbase://127.0.0.1:{port}"
    c = happybase.Connection(srv.host, srv.port)
    c.create_table("life", {"cf": {}})
    c.table("life").put(b"r", {b"cf:a": b"1"})
    srv.stop()
    with pytest.raises((TTransportException, OSError)):
        c.table("life").row(b"r")
    with pytest.raises(TTransportException):
        happybase.Connection(srv.host, port)
    srv.restart()
    assert srv.port == port
    c2 = happybase.Connection(srv.host, srv.port)
    assert c2.table("life").row(b"r") == {b"cf:a": b"1"}
    srv.clear()
    assert c2.tables() == []
    c2.close()


def test_independent_servers_and_other_transports(hbase_server_factory: Any) -> None:
    one: HBaseTestServer = hbase_server_factory()
    two: HBaseTestServer = hbase_server_factory(transport="framed", protocol="compact")
    a = happybase.Connection(one.host, one.port)
    b = happybase.Connection(two.host, two.port, transport="framed", protocol="compact")
    a.create_table("only_one", {"cf": {}})
    b.create_table("only_two", {"cf": {}})
    b.table("only_two").put(b"r", {b"cf:a": b"1"})
    assert a.tables() == [b"only_one"]
    assert b.tables() == [b"only_two"]
    assert list(b.table("only_two").scan(filter="PrefixFilter('r')")) == [(b"r", {b"cf:a": b"1"})]
    assert two.calls["createTable"] == 1 and one.calls["scannerOpenWithScan"] == 0


def test_context_manager_and_unsupported_call() -> None:
    with HBaseTestServer() as srv:
        c = happybase.Connection(srv.host, srv.port)
        # getRowOrBefore is declared by Hbase.thrift but deprecated; the double says so.
        with pytest.raises(HbaseIOError, match="not supported"):
            c.client.getRowOrBefore(b"t", b"r", b"cf")
        assert c.tables() == []  # the connection survived the error
        assert srv.calls["getTableNames"] == 1
    assert not srv.running


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_module_entry_point_prints_ready_line_and_serves() -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "airflow_partitions.testing.hbase.server", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line == f"HBase Thrift1 test server (test double) ready on 127.0.0.1:{port}\n"
        c = happybase.Connection("127.0.0.1", port)
        c.create_table("cli", {"cf": {}})
        assert c.tables() == [b"cli"]
        c.close()
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert out == ""


def test_module_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "airflow_partitions.testing.hbase.server", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "test double" in result.stdout.lower() and "--port" in result.stdout


def test_handler_bug_is_an_application_error_not_a_dead_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with HBaseTestServer() as srv:
        c = happybase.Connection(srv.host, srv.port)

        def broken() -> list[bytes]:
            raise RuntimeError("boom")

        monkeypatch.setattr(srv._handler, "getTableNames", broken)
        with pytest.raises(TApplicationException) as info:
            c.tables()
        assert b"RuntimeError: boom" in info.value.message  # happybase does not decode it
        monkeypatch.undo()
        assert c.tables() == []


def test_one_mutation_gets_one_timestamp_even_when_the_clock_ticks(
        table: happybase.Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """As on HBase, the cells of one put share one server timestamp: a clock read per cell
    split a put across milliseconds, and a delete at one cell's timestamp left the others."""
    from airflow_partitions.testing.hbase import store

    ticks = itertools.count(1_700_000_000_000)
    monkeypatch.setattr(store, "_now_ms", lambda: next(ticks))
    table.put(b"r", {b"cf:a": b"1", b"cf:b": b"2", b"cf:c": b"3"})
    stamps = {ts for _, ts in table.row(b"r", include_timestamp=True).values()}
    assert len(stamps) == 1
    table.delete(b"r", timestamp=stamps.pop() + 1)
    assert table.row(b"r") == {}
