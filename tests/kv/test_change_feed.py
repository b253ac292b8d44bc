"""The SQLite change feed: every write to a table, by any writer, is named by the next
``changes_since``; where the feed cannot vouch for the whole interval, it says so (None)."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.kv import InvalidArgument, KVTable, encode_cells, open_store
from airflow_partitions.kv.sqlite import SQLiteStore
from airflow_partitions.kv.sqlite_feed import (
    FEED_KEEP,
    changes_of_tables,
    changes_since,
    feed_names,
)
from airflow_partitions.kv.sqlite_table import sql_table
from tests.hypothesis_budget import examples

CELL = b"cf:a"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    kv = open_store(f"sqlite:///{tmp_path}/feed.db")
    assert isinstance(kv, SQLiteStore)
    kv.create_table("t", ["cf"])
    yield kv
    kv.close()


def raw(store: SQLiteStore, statement: str, *args: object) -> None:
    """Run SQL on the file through another connection (another process's raw SQL)."""
    other = sqlite3.connect(store.path)
    with other:
        other.execute(statement.replace("{t}", sql_table("t")), args)
    other.close()


def changed(table: KVTable, position: object) -> set[bytes]:
    found = table.changes_since(position)  # type: ignore[arg-type]
    assert found is not None
    return set(found[1])


WRITES: dict[str, Callable[[KVTable], object]] = {
    "put": lambda t: t.put(b"k1", {CELL: b"2"}),
    "put_many": lambda t: t.put_many([(b"k1", {CELL: b"2"})]),
    "put_rows": lambda t: t.put_rows([CELL], [(b"k1", [b"2"])]),
    "delete": lambda t: t.delete(b"k1"),
    "delete_cell": lambda t: t.delete(b"k1", [CELL]),
    "mutate_row": lambda t: t.mutate_row(b"k1", {b"cf:b": b"x"}),
    "check_and_put": lambda t: t.check_and_put(b"k1", CELL, b"1", b"2"),
    "check_and_delete": lambda t: t.check_and_delete(b"k1", CELL, b"1"),
    "increment": lambda t: t.increment(b"k1", b"cf:n"),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_through_the_store_is_named(store: SQLiteStore, write: str) -> None:
    table = store.table("t")
    table.put(b"k1", {CELL: b"1"})
    table.put(b"k2", {CELL: b"1"})
    position = table.feed_position()
    assert position is not None
    assert changed(table, position) == set()
    WRITES[write](table)
    assert changed(table, position) == {b"k1"}


@pytest.mark.parametrize("statement", [
    "INSERT INTO {t} (row, cells) VALUES (x'6b33', x'00')",  # a damaged blob, raw
    "UPDATE {t} SET cells = x'00' WHERE row = x'6b31'",
    "INSERT OR REPLACE INTO {t} (row, cells) VALUES (x'6b31', x'00')",
    "DELETE FROM {t} WHERE row = x'6b31'",
    "DELETE FROM {t}",  # no truncate shortcut on a table with triggers
    "UPDATE {t} SET row = x'6b39' WHERE row = x'6b31'",  # a key rewritten: both named
])
def test_raw_sql_by_another_connection_is_named(store: SQLiteStore, statement: str) -> None:
    table = store.table("t")
    table.put(b"k1", {CELL: b"1"})
    position = table.feed_position()
    raw(store, statement)
    assert changed(table, position) & {b"k1", b"k3"}
    if "k9" in statement or "6b39" in statement:
        assert changed(table, position) == {b"k1", b"k9"}


def _write_elsewhere(url: str) -> None:
    with open_store(url) as other:
        other.table("t").put(b"from-child", {CELL: b"1"})


def test_a_write_by_another_process_is_named(store: SQLiteStore) -> None:
    table = store.table("t")
    table.put(b"k1", {CELL: b"1"})
    position = table.feed_position()
    child = multiprocessing.get_context("spawn").Process(target=_write_elsewhere,
                                                         args=(store.url,))
    child.start()
    child.join(timeout=120)
    assert child.exitcode == 0
    assert changed(table, position) == {b"from-child"}


def test_a_feed_trimmed_past_the_position_cannot_tell(store: SQLiteStore) -> None:
    table = store.table("t")
    table.put(b"k0", {CELL: b"1"})
    position = table.feed_position()
    table.put_many([(b"k%06d" % i, {CELL: b"1"}) for i in range(FEED_KEEP + 1)])
    assert table.changes_since(position) is None  # read everything instead
    fresh = table.feed_position()
    table.put(b"k0", {CELL: b"2"})
    assert changed(table, fresh) == {b"k0"}
    with sqlite3.connect(store.path) as other:  # the feed's size stays bounded
        [(count,)] = other.execute(f"SELECT count(*) FROM {feed_names('t')[0]}").fetchall()
    assert count <= FEED_KEEP


@pytest.mark.parametrize("damage", [
    "DROP TRIGGER \"{base}~del\"",
    "DELETE FROM {feed} WHERE seq = (SELECT max(seq) FROM {feed})",
    "DELETE FROM {feed}",
])
def test_a_feed_tampered_with_cannot_tell(store: SQLiteStore, damage: str) -> None:
    table = store.table("t")
    table.put(b"k1", {CELL: b"1"})
    position = table.feed_position()
    table.put(b"k2", {CELL: b"1"})
    feed = feed_names("t")[0]
    raw(store, damage.format(base=feed[1:-6], feed=feed))
    assert table.changes_since(position) is None
    if "TRIGGER" in damage:  # no feed until a write of this version puts it back
        assert store.table("t").feed_position() is None


def test_a_table_dropped_and_created_again_cannot_tell(store: SQLiteStore) -> None:
    table = store.table("t")
    table.put(b"k1", {CELL: b"1"})
    position = table.feed_position()
    store.drop_table("t")
    store.create_table("t", ["cf"])
    assert table.changes_since(position) is None
    table.put(b"k1", {CELL: b"1"})
    again = table.feed_position()
    assert again is not None and changed(table, again) == set()


def test_a_file_from_before_the_feed_gets_it_at_its_first_write(tmp_path: Path) -> None:
    """A file whose table has no feed: readers read everything until a writer of this
    version writes, which creates the feed in the same transaction as its write."""
    with open_store(f"sqlite:///{tmp_path}/old.db") as kv:
        kv.create_table("t", ["cf"])
        kv.table("t").put(b"k1", {CELL: b"1"})
    feed, _, triggers = feed_names("t")
    with sqlite3.connect(tmp_path / "old.db") as old:  # as an older version left it
        for trigger in triggers:
            old.execute(f'DROP TRIGGER "{trigger}"')
        old.execute(f"DROP TABLE {feed}")
    with open_store(f"sqlite:///{tmp_path}/old.db") as kv:
        table = kv.table("t")
        assert table.feed_position() is None
        assert table.get(b"k1") == {CELL: b"1"}  # reads never create it (no write lock)
        assert table.feed_position() is None
        with pytest.raises(InvalidArgument):  # a write that fails creates nothing either
            table.put(b"k2", {b"nope:a": b"1"})
        assert table.feed_position() is None
        table.put(b"k2", {CELL: b"1"})
        position = table.feed_position()
        assert position is not None
        table.delete(b"k1")
        assert changed(table, position) == {b"k1"}


def test_hbase_and_the_base_class_keep_no_feed() -> None:
    assert KVTable.feed_position(None) is None  # type: ignore[arg-type]
    assert KVTable.changes_since(None, (1, 2)) is None  # type: ignore[arg-type]


def test_a_position_that_is_not_one_cannot_tell(store: SQLiteStore) -> None:
    table = store.table("t")
    table.put(b"k1", {CELL: b"1"})
    for bad in (None, "x", (1,), (1, "2"), (True, 1)):
        assert table.changes_since(bad) is None  # type: ignore[arg-type]
    version, last = table.feed_position()  # type: ignore[misc]
    assert table.changes_since((version, last + 5)) is None  # a sequence from elsewhere


@settings(max_examples=examples(60), deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["put", "delete", "raw", "ask"]),
                              st.integers(0, 5)), max_size=20))
def test_changes_since_names_exactly_the_rows_written(tmp_path_factory: pytest.TempPathFactory,
                                                      ops: list[tuple[str, int]]) -> None:
    """Property: between two positions, the keys named are exactly those a write changed
    (a delete of an absent row changes nothing and may go unnamed)."""
    path = tmp_path_factory.mktemp("feed")
    with open_store(f"sqlite:///{path}/p.db") as kv:
        assert isinstance(kv, SQLiteStore)
        kv.create_table("t", ["cf"])
        table = kv.table("t")
        table.put(b"seed", {CELL: b"1"})
        position = table.feed_position()
        present: set[bytes] = {b"seed"}
        written: set[bytes] = set()
        for op, k in [*ops, ("ask", 0)]:
            key = b"k%d" % k
            if op == "put":
                table.put(key, {CELL: b"%d" % len(written)})
                present.add(key)
                written.add(key)
            elif op == "delete":
                table.delete(key)
                if key in present:
                    written.add(key)
                present.discard(key)
            elif op == "raw":
                raw(kv, "INSERT OR REPLACE INTO {t} (row, cells) VALUES (?, ?)", key,
                    encode_cells({CELL: b"raw"}))
                present.add(key)
                written.add(key)
            else:
                found = table.changes_since(position)
                assert found is not None
                position, keys = found
                assert set(keys) == written
                written = set()


@settings(max_examples=examples(60), deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["put", "delete", "raw", "ask"]),
                              st.sampled_from(["t", "u"]), st.integers(0, 4)), max_size=24))
def test_changed_rows_names_both_tables_writes_and_their_rows_now(
        tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, str, int]]) -> None:
    """Property: one ``changed_rows`` call over two tables names exactly the keys each
    table's writes changed since the positions, and for the table asked with rows, each
    named row as it is now (``{}`` once deleted); the positions it returns are the next
    ones to ask from."""
    path = tmp_path_factory.mktemp("feeds")
    with open_store(f"sqlite:///{path}/p.db") as kv:
        assert isinstance(kv, SQLiteStore)
        for name in ("t", "u"):
            kv.create_table(name, ["cf"])
            kv.table(name).put(b"seed", {CELL: b"1"})
        positions = {name: kv.table(name).feed_position() for name in ("t", "u")}
        present: dict[str, dict[bytes, bytes]] = {"t": {b"seed": b"1"}, "u": {b"seed": b"1"}}
        written: dict[str, set[bytes]] = {"t": set(), "u": set()}
        for i, (op, name, k) in enumerate([*ops, ("ask", "t", 0)]):
            key, value = b"k%d" % k, b"v%d" % i
            if op == "put":
                kv.table(name).put(key, {CELL: value})
            elif op == "raw":
                with sqlite3.connect(kv.path) as other:
                    other.execute(f"INSERT OR REPLACE INTO {sql_table(name)} (row, cells) "
                                  "VALUES (?, ?)", (key, encode_cells({CELL: value})))
            elif op == "delete":
                kv.table(name).delete(key)
            if op in ("put", "raw"):
                present[name][key] = value
                written[name].add(key)
            elif op == "delete" and present[name].pop(key, None) is not None:
                written[name].add(key)
            if op != "ask":
                continue
            found = kv.changed_rows([("t", positions["t"]), ("u", positions["u"])],
                                    with_rows=["t"])
            assert found is not None
            (t_pos, t_keys, t_rows), (u_pos, u_keys, u_rows) = found
            assert set(t_keys) == written["t"] and set(u_keys) == written["u"]
            assert u_rows is None
            assert t_rows == {k: {CELL: present["t"][k]} if k in present["t"] else {}
                              for k in written["t"]}
            assert (t_pos, u_pos) == (kv.table("t").feed_position(),
                                      kv.table("u").feed_position())
            positions = {"t": t_pos, "u": u_pos}
            written = {"t": set(), "u": set()}


def test_changed_rows_cannot_tell_what_one_feed_cannot(store: SQLiteStore) -> None:
    """Any one table whose feed cannot vouch for the interval (trimmed, its table dropped
    and created again, a bad position), or a row named that does not decode: None, and the
    reader reads the usual way."""
    store.create_table("u", ["cf"])
    t, u = store.table("t"), store.table("u")
    t.put(b"k1", {CELL: b"1"})
    u.put(b"k1", {CELL: b"1"})
    since = [("t", t.feed_position()), ("u", u.feed_position())]
    assert store.changed_rows(since, with_rows=["t", "u"]) == [
        (since[0][1], (), {}), (since[1][1], (), {})]
    assert store.changed_rows([("t", (1, "x")), since[1]]) is None
    raw(store, "UPDATE {t} SET cells = ? WHERE row = ?", b"\x03\x00\x01", b"k1")
    assert store.changed_rows(since) is not None  # keys only: the blob is not read
    assert store.changed_rows(since, with_rows=["t"]) is None  # it does not decode
    u.put_many([(b"k%06d" % i, {CELL: b"1"}) for i in range(FEED_KEEP + 1)])
    assert store.changed_rows(since) is None  # u's feed was trimmed past its position
    since = [("t", t.feed_position()), ("u", u.feed_position())]
    store.drop_table("u")
    store.create_table("u", ["cf"])
    assert store.changed_rows(since) is None  # DDL since: the schema moved


def test_hbase_and_the_base_class_list_no_changed_rows() -> None:
    from airflow_partitions.kv import KVStore

    assert KVStore.changed_rows(None, [("t", (1, 2))]) is None  # type: ignore[arg-type]


class Fetched:
    """Rows already fetched, answering as the cursor they came from."""

    def __init__(self, rows: list[tuple[object, ...]]) -> None:
        self.rows = rows

    def fetchall(self) -> list[tuple[object, ...]]:
        return self.rows

    def fetchone(self) -> tuple[object, ...] | None:
        return self.rows[0] if self.rows else None


class DDLBetweenStatements:
    """Stands in for a connection: once its first statement has run to its end, another
    connection drops the feed's insert trigger and writes a row the feed then misses."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store, self.conn, self.first = store, sqlite3.connect(store.path), True

    def execute(self, statement: str, params: Sequence[object] = ()) -> Fetched:
        rows = self.conn.execute(statement, params).fetchall()
        if self.first:
            self.first = False
            raw(self.store, f'DROP TRIGGER "{feed_names("t")[2][0]}"')
            raw(self.store, "INSERT INTO {t} (row, cells) VALUES (?, ?)", b"unseen",
                encode_cells({CELL: b"1"}))
        return Fetched(rows)


@pytest.mark.parametrize("read", ["changes_since", "changes_of_tables"])
def test_the_schema_version_is_read_after_the_feed(store: SQLiteStore, read: str) -> None:
    """A trigger dropped, and a row written unseen by the feed, between the feed's SELECT and
    the schema version: the feed cannot vouch for the interval (None), never "nothing
    written". Read before the SELECT, the version would still match and the write be lost."""
    t = store.table("t")
    t.put(b"k1", {CELL: b"1"})
    since = t.feed_position()
    conn = DDLBetweenStatements(store)
    try:
        if read == "changes_since":
            found: object = changes_since(conn, "t", since)  # type: ignore[arg-type]
        else:
            found = changes_of_tables(conn, (("t", True),), [since])  # type: ignore[arg-type]
    finally:
        conn.conn.close()
    assert found is None
    assert t.get(b"unseen") == {CELL: b"1"}  # the write the feed missed is there
