"""Files written with one SQL row per cell (before the cell blobs) are converted on first use:
every cell reads back, a second open does nothing, a failed conversion leaves the old table."""

from __future__ import annotations

import logging
import sqlite3
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from airflow_partitions.kv import sqlite_layout
from airflow_partitions.kv.errors import CorruptCell
from airflow_partitions.kv.sqlite import SQLiteStore
from airflow_partitions.kv.sqlite_layout import migrate_table, table_layout

#: Rows of the old file: more than one migration batch, wide and narrow rows, odd bytes.
OLD_ROWS: dict[bytes, dict[bytes, bytes]] = {
    b"r%05d" % i: {b"cf:a": b"%d" % i, b"cf:b": b"\x00\xff" * (i % 7), b"meta:": b"m"}
    for i in range(sqlite_layout.MIGRATION_BATCH + 321)
}
OLD_ROWS[b"\xff\x00wide"] = {b"cf:big": b"x" * 70_000, b"meta:q\x00": b""}
OLD_ROWS[b"\x00"] = {b"cf:only": b"one"}


def write_old_file(path: Path, rows: dict[bytes, dict[bytes, bytes]] = OLD_ROWS) -> None:
    """The schema the store created before cell blobs, written with plain sqlite3."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE _kv_meta (name TEXT PRIMARY KEY, families TEXT NOT NULL) "
                 "WITHOUT ROWID")
    for name, families in (("t", "cf,meta"), ("Other", "cf")):
        conn.execute("INSERT INTO _kv_meta (name, families) VALUES (?, ?)", (name, families))
        conn.execute(
            f"CREATE TABLE {sqlite_layout.sql_table(name)} (row BLOB NOT NULL, "
            "col BLOB NOT NULL, val BLOB NOT NULL, PRIMARY KEY (row, col)) WITHOUT ROWID"
        )
    conn.executemany(
        'INSERT INTO "kv_t" (row, col, val) VALUES (?, ?, ?)',
        [(row, col, val) for row, cells in rows.items() for col, val in cells.items()],
    )
    conn.execute('INSERT INTO "kv_^other" (row, col, val) VALUES (?, ?, ?)',
                 (b"k", b"cf:v", b"1"))
    conn.close()


def layout_of(path: Path, name: str) -> str:
    conn = sqlite3.connect(path)
    try:
        return table_layout(conn, name)
    finally:
        conn.close()


def test_an_old_file_is_converted_on_first_use(tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "old.db"
    write_old_file(path)
    caplog.set_level(logging.INFO, logger="airflow_partitions.kv.sqlite")
    with SQLiteStore(path) as store:
        assert store.list_tables() == ["Other", "t"]
        table = store.table("t")
        assert dict(table.scan()) == OLD_ROWS
        assert table.get(b"r00042", columns=[b"meta"]) == {b"meta:": b"m"}
        assert store.stats.events["migrate_table"] == 1
        assert layout_of(path, "t") == "blob"
        assert layout_of(path, "Other") == "cells"  # untouched until used
        assert store.table("Other").get(b"k") == {b"cf:v": b"1"}
        assert store.stats.events["migrate_table"] == 2
    messages = [r.getMessage() for r in caplog.records if "converted" in r.getMessage()]
    assert len(messages) == 2
    assert f"'t' to one SQL row per KV row ({len(OLD_ROWS)} rows)" in messages[0]

    caplog.clear()
    with SQLiteStore(path) as again:
        assert dict(again.table("t").scan()) == OLD_ROWS
        again.table("t").put(b"r00001", {b"cf:c": b"new"})
        assert again.table("t").get(b"r00001") == {**OLD_ROWS[b"r00001"], b"cf:c": b"new"}
        assert again.stats.events["migrate_table"] == 0
    assert not [r for r in caplog.records if "converted" in r.getMessage()]


def test_the_layout_is_read_once_per_store(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.db"
    write_old_file(path, {b"a": {b"cf:x": b"1"}})
    from airflow_partitions.kv import sqlite as sqlite_module

    calls: list[str] = []

    def counting(conn: sqlite3.Connection, name: str) -> sqlite_layout.Layout:
        calls.append(name)
        return table_layout(conn, name)

    monkeypatch.setattr(sqlite_module, "table_layout", counting)
    with SQLiteStore(path) as store:
        table = store.table("t")
        for _ in range(5):
            assert table.get(b"a") == {b"cf:x": b"1"}
            assert list(table.scan_columns([b"cf:x"])) == [(b"a", (b"1",))]
    assert calls == ["t"]


def test_a_failed_conversion_leaves_the_old_table(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.db"
    write_old_file(path)
    calls = 0
    real = sqlite_layout.encode_cells

    def failing(cells: dict[bytes, bytes]) -> bytes:
        nonlocal calls
        calls += 1
        if calls > sqlite_layout.MIGRATION_BATCH + 10:  # after a batch was written
            raise RuntimeError("crash mid-migration")
        return real(cells)

    monkeypatch.setattr(sqlite_layout, "encode_cells", failing)
    with SQLiteStore(path) as store, pytest.raises(RuntimeError, match="crash"):
        store.table("t").get(b"r00001")
    assert layout_of(path, "t") == "cells"
    conn = sqlite3.connect(path)
    count = conn.execute('SELECT count(DISTINCT row) FROM "kv_t"').fetchone()[0]
    leftovers = conn.execute("SELECT name FROM sqlite_master WHERE name LIKE '%~%'").fetchall()
    conn.close()
    assert count == len(OLD_ROWS) and leftovers == []

    monkeypatch.setattr(sqlite_layout, "encode_cells", real)
    with SQLiteStore(path) as store:
        assert dict(store.table("t").scan()) == OLD_ROWS


def test_a_converted_table_is_not_converted_again(tmp_path: Path) -> None:
    """What a second process finds once it holds the write lock: nothing left to do."""
    path = tmp_path / "old.db"
    write_old_file(path, {b"a": {b"cf:x": b"1"}})
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    assert migrate_table(conn, "t") == 1
    assert migrate_table(conn, "t") is None
    conn.execute("COMMIT")
    conn.close()


def _open_and_read(path: str) -> tuple[int, int]:
    with SQLiteStore(path) as store:
        rows = sum(1 for _ in store.table("t").scan())
        return rows, store.stats.events["migrate_table"]


def test_processes_opening_an_old_file_together_convert_it_once(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    write_old_file(path)
    with ProcessPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(_open_and_read, [str(path)] * 4))
    assert [rows for rows, _ in results] == [len(OLD_ROWS)] * 4
    assert sum(migrated for _, migrated in results) == 1


def test_new_tables_have_the_blob_layout(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with SQLiteStore(path) as store:
        store.create_table("fresh")
        store.table("fresh").put(b"r", {b"cf:a": b"1"})
        assert store.stats.events["migrate_table"] == 0
    assert layout_of(path, "fresh") == "blob"
    assert layout_of(path, "absent") == "missing"


def test_a_damaged_blob_is_a_corrupt_cell_on_every_path(tmp_path: Path) -> None:
    path = tmp_path / "damaged.db"
    with SQLiteStore(path) as store:
        store.create_table("t")
        table = store.table("t")
        table.put(b"ok", {b"cf:a": b"1"})
        table.put(b"bad", {b"cf:a": b"1", b"cf:b": b"22"})
    conn = sqlite3.connect(path)
    with conn:
        blob = conn.execute('SELECT cells FROM "kv_t" WHERE row = ?', (b"bad",)).fetchone()[0]
        conn.execute('UPDATE "kv_t" SET cells = ? WHERE row = ?', (blob[:-1], b"bad"))
    conn.close()
    with SQLiteStore(path) as store:
        table = store.table("t")
        assert table.get(b"ok") == {b"cf:a": b"1"}
        for read in (
            lambda: table.get(b"bad"),
            lambda: table.get_many([b"bad", b"ok"], columns=[b"cf:a"]),
            lambda: list(table.scan()),
            lambda: list(table.scan_columns([b"cf:b"])),
            lambda: table.put(b"bad", {b"cf:c": b"3"}),
            lambda: table.put_many([(b"bad", {b"cf:c": b"3"})]),
            lambda: table.increment(b"bad", b"cf:n"),
            lambda: table.mutate_row(b"bad", deletes=[b"cf:a"]),
        ):
            with pytest.raises(CorruptCell, match="corrupt cell blob"):
                read()
        table.put(b"bad", {b"cf:a": b"x", b"cf:b": b"y"})  # replaces every cell: no merge
        table.delete(b"ok")
        assert dict(table.scan()) == {b"bad": {b"cf:a": b"x", b"cf:b": b"y"}}
