"""Every KVStore / KVTable method, on every backend (see conftest.py)."""

from __future__ import annotations

import pytest

from airflow_partitions.kv import (
    CorruptCell,
    InvalidArgument,
    KVStore,
    KVTable,
    TableExists,
    TableNotFound,
)
from tests.kv.kv_model import backend_kind

# -- tables -----------------------------------------------------------------------------------


def test_table_lifecycle(store: KVStore) -> None:
    assert not store.table_exists("events")
    store.create_table("events")
    assert store.table_exists("events")
    assert "events" in store.list_tables()
    with pytest.raises(TableExists):
        store.create_table("events")
    store.create_table("events", exist_ok=True)  # idempotent
    store.drop_table("events")
    assert not store.table_exists("events")
    with pytest.raises(TableNotFound):
        store.drop_table("events")
    store.drop_table("events", missing_ok=True)


def test_operations_on_missing_table_raise_table_not_found(store: KVStore) -> None:
    ghost = store.table("ghost")  # a handle costs nothing and checks nothing
    with pytest.raises(TableNotFound, match="ghost"):
        ghost.get(b"r")
    with pytest.raises(TableNotFound):
        ghost.put(b"r", {b"cf:a": b"1"})
    with pytest.raises(TableNotFound):
        list(ghost.scan())
    with pytest.raises(TableNotFound):
        ghost.increment(b"r", b"cf:n")


@pytest.mark.parametrize("name", ["", "a b", "x;drop", '"q"', "-lead", "a/b", "é"])
def test_bad_table_names_are_rejected(store: KVStore, name: str) -> None:
    with pytest.raises(InvalidArgument):
        store.table(name)
    with pytest.raises(InvalidArgument):
        store.create_table(name)


def test_table_names_are_case_sensitive(store: KVStore) -> None:
    store.create_table("Foo")
    store.create_table("foo")
    store.table("Foo").put(b"r", {b"cf:a": b"upper"})
    store.table("foo").put(b"r", {b"cf:a": b"lower"})
    assert store.table("Foo").get(b"r") == {b"cf:a": b"upper"}
    assert store.table("foo").get(b"r") == {b"cf:a": b"lower"}


def test_unknown_family_is_rejected_on_write(table: KVTable) -> None:
    with pytest.raises(InvalidArgument):
        table.put(b"r", {b"nope:a": b"1"})
    assert table.get(b"r") == {}


# -- get / put / delete -------------------------------------------------------------------------


def test_put_get_overwrite_and_absent(table: KVTable) -> None:
    assert table.get(b"missing") == {}
    table.put(b"r1", {b"cf:a": b"1", b"cf:b": b"", b"meta:x": b"\x00\xff"})
    assert table.get(b"r1") == {b"cf:a": b"1", b"cf:b": b"", b"meta:x": b"\x00\xff"}
    table.put(b"r1", {b"cf:a": b"2"})
    assert table.get(b"r1")[b"cf:a"] == b"2"
    assert table.get(b"r1", columns=[b"cf:a", b"meta:x"]) == {b"cf:a": b"2", b"meta:x": b"\x00\xff"}
    assert table.get(b"r1", columns=[b"meta"]) == {b"meta:x": b"\x00\xff"}
    assert table.get(b"r1", columns=[b"cf:zzz"]) == {}


def test_binary_keys_columns_and_values_round_trip(table: KVTable) -> None:
    row = b"\x00row\xff\x00"
    cells = {b"cf:\x00q\xff": b"\x00" * 3, b"cf:\xc3\xa9": "é'\\)".encode()}
    table.put(row, cells)
    assert table.get(row) == cells


def test_bad_arguments_are_rejected(table: KVTable) -> None:
    with pytest.raises(InvalidArgument):
        table.put(b"", {b"cf:a": b"1"})
    with pytest.raises(InvalidArgument):
        table.put("r", {b"cf:a": b"1"})  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        table.put(b"r", {b"noqualifier": b"1"})
    with pytest.raises(InvalidArgument):
        table.put(b"r", {b"cf:a": "text"})  # type: ignore[dict-item]
    with pytest.raises(InvalidArgument):
        table.get(b"r", columns=b"cf:a")


def test_get_many_is_one_round_trip_and_skips_absent_rows(store: KVStore, table: KVTable) -> None:
    table.put_many([(b"a", {b"cf:x": b"1"}), (b"b", {b"cf:x": b"2", b"meta:y": b"3"})])
    store.stats.reset()
    got = table.get_many([b"b", b"zz", b"a", b"a"])
    assert got == {b"a": {b"cf:x": b"1"}, b"b": {b"cf:x": b"2", b"meta:y": b"3"}}
    assert store.stats.round_trips == 1
    assert table.get_many([b"a", b"b"], columns=[b"meta"]) == {b"b": {b"meta:y": b"3"}}
    store.stats.reset()
    assert table.get_many([]) == {}
    assert store.stats.round_trips == 0


def test_get_many_checks_its_keys(table: KVTable) -> None:
    """Every key is checked, wherever it stands in the batch; a key longer than any row can
    be (HBase's 32,767 bytes) is absent, not an error."""
    table.put(b"a", {b"cf:x": b"1"})
    for bad in ([b"a", b""], [b"a", "b"], [bytearray(b"a"), b"a"], [b"a", None]):
        with pytest.raises(InvalidArgument):
            table.get_many(bad)  # type: ignore[arg-type]
    assert table.get_many([b"x" * 40_000, b"a"]) == {b"a": {b"cf:x": b"1"}}


def test_get_many_large_batch(store: KVStore, table: KVTable) -> None:
    rows = [b"k%05d" % i for i in range(1200)]
    table.put_many((r, {b"cf:v": r}) for r in rows)
    store.stats.reset()
    got = table.get_many([*rows, b"absent"])
    assert len(got) == 1200 and got[b"k00042"] == {b"cf:v": b"k00042"}
    assert store.stats.round_trips == 1


def test_put_many_batches(store: KVStore, table: KVTable) -> None:
    items = [(b"r%03d" % i, {b"cf:v": b"%d" % i}) for i in range(25)]
    table.put_many(items, batch_size=10)
    assert store.stats.ops["put_many"] == 3
    assert store.stats.round_trips == 3
    assert [r for r, _ in table.scan()] == [r for r, _ in items]


def test_delete_row_columns_and_families(table: KVTable) -> None:
    table.put(b"r", {b"cf:a": b"1", b"cf:b": b"2", b"meta:c": b"3"})
    table.delete(b"r", columns=[b"cf:a"])
    assert table.get(b"r") == {b"cf:b": b"2", b"meta:c": b"3"}
    table.delete(b"r", columns=[b"meta"])
    assert table.get(b"r") == {b"cf:b": b"2"}
    table.delete(b"r")
    assert table.get(b"r") == {}
    table.delete(b"never-there")  # deleting nothing is fine


# -- mutate_row --------------------------------------------------------------------------------


def test_mutate_row_applies_deletes_and_puts(table: KVTable) -> None:
    table.put(b"r", {b"cf:old": b"1", b"cf:keep": b"2", b"meta:m": b"3"})
    table.mutate_row(b"r", puts={b"cf:new": b"4"}, deletes=[b"cf:old", b"meta"])
    assert table.get(b"r") == {b"cf:keep": b"2", b"cf:new": b"4"}


def test_mutate_row_rejects_overlap(table: KVTable) -> None:
    with pytest.raises(InvalidArgument, match="put"):
        table.mutate_row(b"r", puts={b"cf:a": b"1"}, deletes=[b"cf:a"])
    with pytest.raises(InvalidArgument):
        table.mutate_row(b"r", puts={b"cf:a": b"1"}, deletes=[b"cf"])


def test_mutate_row_is_all_or_nothing(table: KVTable) -> None:
    table.put(b"r", {b"cf:a": b"1"})
    with pytest.raises(InvalidArgument):
        table.mutate_row(b"r", puts={b"cf:b": b"2", b"nope:c": b"3"}, deletes=[b"cf:a"])
    assert table.get(b"r") == {b"cf:a": b"1"}


# -- check_and_put -----------------------------------------------------------------------------


def test_check_and_put(table: KVTable) -> None:
    assert table.check_and_put(b"r", b"cf:v", None, b"1") is True
    assert table.check_and_put(b"r", b"cf:v", None, b"x") is False
    assert table.check_and_put(b"r", b"cf:v", b"0", b"x") is False
    assert table.check_and_put(b"r", b"cf:v", b"1", b"2") is True
    assert table.get(b"r") == {b"cf:v": b"2"}
    # only the checked column is written
    assert table.check_and_put(b"r", b"cf:w", None, b"w") is True
    assert table.get(b"r") == {b"cf:v": b"2", b"cf:w": b"w"}


def test_check_and_put_none_means_absent_or_empty(table: KVTable) -> None:
    table.put(b"r", {b"cf:e": b""})
    assert table.check_and_put(b"r", b"cf:e", None, b"filled") is True
    assert table.check_and_put(b"fresh", b"cf:e", b"", b"x") is True  # b"" behaves like None
    assert table.get(b"fresh") == {b"cf:e": b"x"}


def test_check_and_put_with_awkward_bytes(table: KVTable) -> None:
    awkward = b"'\\) AND \x00\xff"
    assert table.check_and_put(b"r", b"cf:v", None, awkward)
    assert table.check_and_put(b"r", b"cf:v", awkward, awkward + b"2")
    assert table.get(b"r") == {b"cf:v": awkward + b"2"}


def test_check_and_delete(table: KVTable) -> None:
    table.put(b"r", {b"cf:state": b"d", b"cf:loc": b"/x"})
    assert table.check_and_delete(b"r", b"cf:state", b"live") is False
    assert table.get(b"r") == {b"cf:state": b"d", b"cf:loc": b"/x"}
    assert table.check_and_delete(b"absent", b"cf:state", b"d") is False
    assert table.check_and_delete(b"r", b"cf:state", b"d") is True
    assert table.get(b"r") == {}


def test_check_and_delete_keeps_a_row_rewritten_since(table: KVTable) -> None:
    # A drop checks its own mark; a register that rewrote the row since must survive.
    table.put(b"r", {b"cf:state": b"d"})
    table.put(b"r", {b"cf:state": b"live", b"cf:loc": b"/y"})
    assert table.check_and_delete(b"r", b"cf:state", b"d") is False
    assert table.get(b"r") == {b"cf:state": b"live", b"cf:loc": b"/y"}


# -- increment --------------------------------------------------------------------------------


def test_increment(table: KVTable) -> None:
    assert table.increment(b"r", b"cf:n") == 1
    assert table.increment(b"r", b"cf:n", 41) == 42
    assert table.increment(b"r", b"cf:n", -50) == -8
    assert table.get(b"r") == {b"cf:n": (-8).to_bytes(8, "big", signed=True)}
    assert table.increment(b"r", b"cf:n", 0) == -8


def test_increment_wraps_like_a_java_long(table: KVTable) -> None:
    table.put(b"r", {b"cf:n": (2**63 - 1).to_bytes(8, "big", signed=True)})
    assert table.increment(b"r", b"cf:n") == -(2**63)


def test_increment_of_a_non_counter_cell_is_corrupt(table: KVTable) -> None:
    table.put(b"r", {b"cf:n": b"abc"})
    with pytest.raises(CorruptCell):
        table.increment(b"r", b"cf:n")
    assert table.get(b"r") == {b"cf:n": b"abc"}


def test_increment_rejects_bad_amounts(table: KVTable) -> None:
    with pytest.raises(InvalidArgument):
        table.increment(b"r", b"cf:n", 2**63)
    with pytest.raises(InvalidArgument):
        table.increment(b"r", b"cf:n", True)


# -- round trips -------------------------------------------------------------------------------


def test_each_call_counts_its_round_trips(store: KVStore, table: KVTable) -> None:
    stats = store.stats
    table.put(b"r", {b"cf:a": b"1"})
    table.get(b"r")
    table.get(b"absent")
    table.check_and_put(b"r", b"cf:a", b"1", b"2")
    table.increment(b"r", b"cf:n")
    table.mutate_row(b"r", puts={b"cf:b": b"1"}, deletes=[b"cf:a"])
    table.delete(b"r")
    # On HBase the first mutate_row with deletes and puts reads the table's families once.
    assert stats.ops.get("families", 0) == (1 if store.url.startswith("hbase") else 0)
    assert stats.round_trips == 7 + stats.ops.get("families", 0)
    assert stats.ops["get"] == 2 and stats.ops["put"] == 1 and stats.ops["increment"] == 1
    stats.reset()
    store.table_exists("t")
    assert stats.round_trips == 1
    stats.reset()
    store.table("t")  # a handle is free
    table.put(b"r", {})  # so is writing nothing
    assert stats.round_trips == 0


@pytest.mark.parametrize(
    ("rows", "batch", "limit", "pages"),
    [
        (0, 10, None, 1),
        (25, 10, None, 3),
        (30, 10, None, 4),
        (30, 10, 15, 2),
        (30, 100, None, 1),
        (5, 1, 3, 3),
    ],
)
def test_scan_counts_each_page(
    store: KVStore, table: KVTable, rows: int, batch: int, limit: int | None, pages: int
) -> None:
    table.put_many((b"r%03d" % i, {b"cf:v": b"x"}) for i in range(rows))
    store.stats.reset()
    got = list(table.scan(batch_size=batch, limit=limit))
    assert len(got) == (rows if limit is None else min(rows, limit))
    assert store.stats.ops["scan_page"] == pages
    overhead = 2 if backend_kind(store) == "hbase" else 0  # HBase: scanner open + close
    assert store.stats.round_trips == pages + overhead


def test_context_manager_closes(store: KVStore) -> None:
    with store as s:
        s.create_table("cm")
        assert s.table_exists("cm")
