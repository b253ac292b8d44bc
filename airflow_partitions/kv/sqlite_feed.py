"""The change feed of a SQLite KV table: the keys of the rows written, in the order written.

Why: a reader that checked a range of rows (a verified cover, ``catalog/rows/runs.py``) asks
what was written since and reads only that (``KVTable.changes_since``). Triggers keep the
feed, so every writer adds to it: this store, another connection, another process, raw SQL.
A reader that cannot be sure it sees every write since its position gets None and reads its
rows, as on HBase (which keeps no feed).

Layout: ``kv_<name>~feed(seq INTEGER PRIMARY KEY AUTOINCREMENT, row BLOB)`` and three
triggers on ``kv_<name>``. A position is ``(schema version, last sequence number)``. Cost: a
write adds one feed row per row it writes (a bulk register about 4% more time) and one
indexed DELETE per transaction (the trim); a read of the feed is one SELECT, and the
schema version read after it (:func:`_schema_version_after`).
"""

# SQL text is built only from whitelisted, quoted table identifiers (``sql_table``) and fixed
# fragments; every key and value is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Hashable, Sequence

from airflow_partitions.kv.sqlite_layout import sql_table

#: Entries each table's feed keeps, and the most :func:`changes_since` lists: a reader
#: further behind reads its rows (reading that many keys one by one would cost about as
#: much). Bounds a feed to about 10,000 keys (under a megabyte) per table.
FEED_KEEP = 10_000


@functools.lru_cache(maxsize=256)
def feed_names(name: str) -> tuple[str, str, tuple[str, str, str]]:
    """The change feed of a KV table: its SQL table (quoted), the name ``sqlite_sequence``
    knows it by, and its three triggers' names. '~' cannot occur in a table name
    (``validation.check_table_name``): no clash with a KV table."""
    base = sql_table(name)[1:-1]
    return (f'"{base}~feed"', f"{base}~feed",
            (f"{base}~ins", f"{base}~upd", f"{base}~del"))


def create_feed_sql(name: str) -> list[str]:
    """The DDL of a KV table's change feed: a sequence of the row keys written, kept by
    triggers, so every writer (any connection, any process, raw SQL too) adds to it.

    AUTOINCREMENT: a sequence number is never handed out twice, even after every entry was
    trimmed, and SQLite serialises writers, so the committed numbers have no gaps: a reader
    that finds fewer entries after its number than the sequence says knows some were trimmed.
    An ``INSERT OR REPLACE`` fires the insert trigger (its hidden delete fires none); an
    upsert fires the update trigger; SQLite skips its truncate optimisation on a table with
    triggers, so a ``DELETE`` without ``WHERE`` is recorded row by row too.
    """
    table = sql_table(name)
    feed, _, (ins, upd, dele) = feed_names(name)
    add = f"INSERT INTO {feed} (row) VALUES"
    return [
        f"CREATE TABLE IF NOT EXISTS {feed} "
        "(seq INTEGER PRIMARY KEY AUTOINCREMENT, row BLOB NOT NULL)",
        f'CREATE TRIGGER IF NOT EXISTS "{ins}" AFTER INSERT ON {table} '
        f"BEGIN {add} (new.row); END",
        f'CREATE TRIGGER IF NOT EXISTS "{upd}" AFTER UPDATE ON {table} '
        f"BEGIN {add} (old.row); INSERT INTO {feed} (row) SELECT new.row "
        "WHERE new.row IS NOT old.row; END",
        f'CREATE TRIGGER IF NOT EXISTS "{dele}" AFTER DELETE ON {table} '
        f"BEGIN {add} (old.row); END",
    ]


def keep_feed(conn: sqlite3.Connection, name: str, *, create: bool) -> None:
    """Inside a write transaction: create the feed (``create``: the store has not made sure of
    it yet; a file that predates it gets it in the same transaction as its write, so a crash
    leaves both or neither), then trim it to :data:`FEED_KEEP` entries."""
    feed, sequence, _ = feed_names(name)
    if create:
        for statement in create_feed_sql(name):
            conn.execute(statement)
    trim = f"DELETE FROM {feed} WHERE seq <= (SELECT seq FROM sqlite_sequence WHERE name = ?) - ?"
    try:
        conn.execute(trim, (sequence, FEED_KEEP))
    except sqlite3.OperationalError as exc:  # dropped behind the store's back: again
        if "no such table" not in str(exc):
            raise
        for statement in create_feed_sql(name):
            conn.execute(statement)


def feed_position(conn: sqlite3.Connection, name: str) -> tuple[int, int] | None:
    """``(schema version, last sequence number)``, or None when the file has no complete feed
    for the table (its three triggers and its table). The schema version pins the triggers:
    any DDL since (a trigger dropped, the table dropped and created again) makes
    :func:`changes_since` answer None. One SELECT (one snapshot)."""
    _, sequence, triggers = feed_names(name)
    try:
        version, found, last = conn.execute(
            "SELECT (SELECT schema_version FROM pragma_schema_version()), (SELECT count(*) "
            "FROM sqlite_master WHERE (type = 'trigger' AND name IN (?, ?, ?) AND tbl_name = ?)"
            " OR (type = 'table' AND name = ?)), coalesce((SELECT seq FROM sqlite_sequence "
            "WHERE name = ?), 0)", (*triggers, sql_table(name)[1:-1], sequence, sequence),
        ).fetchone()
    except sqlite3.OperationalError as exc:  # no AUTOINCREMENT table yet: no feed either
        if "no such table" in str(exc):
            return None
        raise
    if found != 4:
        return None
    return int(version), int(last)


def changes_since(conn: sqlite3.Connection, name: str, position: Hashable
                  ) -> tuple[Hashable, tuple[bytes, ...]] | None:
    """The keys written since ``position`` and the position after them, or None when the
    schema changed, the sequence went back (another file), or the entries after ``position``
    are not all there (trimmed: fewer than the sequence numbers say) or are more than
    :data:`FEED_KEEP`. One SELECT (one snapshot, no BEGIN and COMMIT): the sequence and the
    keys after ``position`` up to it, by their primary key; then the schema version
    (:func:`_schema_version_after`)."""
    checked = _as_position(position)
    if checked is None:
        return None
    version, after = checked
    feed, sequence, _ = feed_names(name)
    try:
        found = conn.execute(
            "WITH last AS (SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?), 0)"
            f" AS seq) SELECT last.seq, f.row FROM last LEFT JOIN {feed} f ON f.seq > ? AND"
            " f.seq <= last.seq ORDER BY f.seq LIMIT ?", (sequence, after, FEED_KEEP + 1),
        ).fetchall()
    except sqlite3.OperationalError as exc:  # the feed dropped behind the store's back
        if "no such table" in str(exc):
            return None
        raise
    keys = [bytes(row) for _, row in found if row is not None]
    last = _complete(version, after, _schema_version_after(conn), int(found[0][0]), len(keys))
    return None if last is None else ((version, last), tuple(keys))


def _schema_version_after(conn: sqlite3.Connection) -> int:
    """The file's schema version, read after a feed was read, in a snapshot of its own.

    Why after, and why alone: the version only grows, and every DDL moves it, so when it still
    equals a position's version now, no trigger was dropped (or table made again) between
    that position and the feed's snapshot, which this read follows. Read inside the feed's
    statement (``pragma_schema_version()``), SQLite prepares a PRAGMA statement on each run,
    which cost about a quarter of a feed read; this cached statement does not. Cost: one
    statement that reads the header page, already in cache.
    """
    return int(conn.execute("PRAGMA schema_version").fetchone()[0])


def _complete(version: int, after: int, found_version: int, last: int, count: int) -> int | None:
    """The feed's last sequence number when the ``count`` entries read after ``after`` are
    every write since (same schema, sequence not gone back, nothing trimmed, at most
    :data:`FEED_KEEP`); else None."""
    if found_version != version or last < after or last - after > FEED_KEEP \
            or count != last - after:
        return None  # DDL since, another file, too far behind, or trimmed past ``after``
    return last


@functools.lru_cache(maxsize=64)
def _changes_sql(tables: tuple[tuple[str, bool], ...]) -> tuple[str, tuple[str, ...]]:
    """The statement of :func:`changes_of_tables` for these (table, with rows) pairs, and the
    feeds' names in ``sqlite_sequence`` (its first parameters): each feed's sequence, then
    each feed's entries after a bound parameter. No LIMIT and no ORDER BY (each costs about a
    third more): every write trims its table's feed to :data:`FEED_KEEP` entries in its own
    transaction, and the keys are a set."""
    parts = [f"SELECT {-1 - i}, coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?), 0),"
              " NULL, NULL" for i in range(len(tables))]
    for i, (name, with_rows) in enumerate(tables):
        feed = feed_names(name)[0]
        if with_rows:
            parts.append(f"SELECT {i}, f.seq, f.row, c.cells FROM {feed} f "
                         f"LEFT JOIN {sql_table(name)} c ON c.row = f.row WHERE f.seq > ?")
        else:
            parts.append(f"SELECT {i}, f.seq, f.row, NULL FROM {feed} f WHERE f.seq > ?")
    return " UNION ALL ".join(parts), tuple(feed_names(name)[1] for name, _ in tables)


def _as_position(position: Hashable) -> tuple[int, int] | None:
    if type(position) is tuple and len(position) == 2 \
            and type(position[0]) is int and type(position[1]) is int:
        return position[0], position[1]
    return None


def changes_of_tables(conn: sqlite3.Connection, tables: tuple[tuple[str, bool], ...],
                      positions: Sequence[Hashable]
                      ) -> list[tuple[tuple[int, int], list[bytes], list[bytes | None]]] | None:
    """:func:`changes_since` of several tables (``(name, with rows)`` pairs, each read since
    its position) in one SELECT (one snapshot), and for each table whose flag is set the
    current blob of each key named (None: the row is gone); then the schema version
    (:func:`_schema_version_after`).

    Why: a reader that keeps an answer resting on rows of two tables proves it still true
    with one round trip (``catalog/covers/answer_basis.py``), after each write elsewhere: a
    sensor's question on a busy catalog. So this stays two cached statements and one pass
    over the rows. None when any one feed cannot tell (as :func:`changes_since`). Cost: the
    feeds' entries since the positions by their primary key, each joined to its row by the
    row's primary key, and the schema version. The keys of a table come in no promised
    order, and a key may repeat.
    """
    if not tables or len(positions) != len(tables):
        return None
    sql, sequences = _changes_sql(tables)
    checked: list[tuple[int, int]] = []
    params: list[object] = [*sequences]
    for position in positions:
        as_position = _as_position(position)
        if as_position is None:
            return None
        checked.append(as_position)
        params.append(as_position[1])
    try:
        found = conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:  # a feed dropped behind the store's back
        if "no such table" in str(exc):
            return None
        raise
    lasts = [0] * len(tables)
    keys: list[list[bytes]] = [[] for _ in tables]
    blobs: list[list[bytes | None]] = [[] for _ in tables]
    for part, seq, row, blob in found:  # sqlite3 hands a BLOB back as bytes
        if part >= 0:
            keys[part].append(row)
            blobs[part].append(blob)
        else:
            lasts[-1 - part] = seq
    schema = _schema_version_after(conn)
    out = []
    for i, (version, since) in enumerate(checked):
        last = _complete(version, since, schema, lasts[i], len(keys[i]))
        if last is None:
            return None
        out.append(((version, last), keys[i], blobs[i]))
    return out


__all__ = ["FEED_KEEP", "changes_of_tables", "changes_since", "create_feed_sql", "feed_names",
           "feed_position", "keep_feed"]
