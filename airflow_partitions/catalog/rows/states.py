"""The cells a bulk write needs of its rows: one range scan when they sit together, else gets.

Why: a register reads its rows twice (their state before writing, and after advertising that
no concurrent drop took them). By ``get_many`` each key costs a B-tree seek and a dict; the
keys of a bulk register are usually one contiguous stretch of the table, which a projected
range scan reads at a sequential pace. The scan gives up (and gets take over) once it has read
:data:`SLACK` rows per wanted key, so foreign rows in between cost at most that much.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from airflow_partitions.defaults import GET_BATCH
from airflow_partitions.kv import Cells, KVTable

#: Below this many keys the gets are cheap enough.
_RANGE_MIN: Final = 256
#: Rows a range scan may read per wanted key before it is abandoned for gets.
SLACK: Final = 2
#: Rows per page of the range scan.
_PAGE: Final = 5_000


def read_rows(table: KVTable, keys: Sequence[bytes],
              columns: Sequence[bytes]) -> dict[bytes, Cells]:
    """``columns`` of each existing row of ``keys`` (rows with none of them are left out).

    >>> import tempfile
    >>> from airflow_partitions.kv import open_store
    >>> store = open_store(f"sqlite:///{tempfile.mkdtemp()}/doc.db")
    >>> store.create_table("t", ["p"])
    >>> table = store.table("t")
    >>> table.put_many([(b"r%03d" % i, {b"p:s": b"live"}) for i in range(300)])
    >>> found = read_rows(table, [b"r%03d" % i for i in range(0, 600, 2)], [b"p:s", b"p:x"])
    >>> len(found), found[b"r000"]
    (150, {b'p:s': b'live'})

    Complexity: O(n) rows read when the keys are dense; O(n log N) by gets otherwise.
    """
    if len(keys) >= _RANGE_MIN:
        found = _by_range(table, keys, tuple(columns))
        if found is not None:
            return found
    out: dict[bytes, Cells] = {}
    for i in range(0, len(keys), GET_BATCH):
        out.update(table.get_many(keys[i : i + GET_BATCH], list(columns)))
    return out


def _by_range(table: KVTable, keys: Sequence[bytes],
              columns: tuple[bytes, ...]) -> dict[bytes, Cells] | None:
    """The rows of ``keys`` from one scan of ``[min(keys), max(keys)]``, or None if the range
    holds more than :data:`SLACK` rows per key."""
    wanted = set(keys)
    limit = SLACK * len(wanted) + 1
    read = 0
    out: dict[bytes, Cells] = {}
    rows = table.scan_columns(columns, start=min(wanted), stop=max(wanted) + b"\x00",
                              limit=limit, batch_size=_PAGE)
    # zip without strict: a row has one value per column, and strict costs more than the rest.
    for read, (key, values) in enumerate(rows, 1):  # noqa: B007 - read is used after the loop
        if key in wanted:
            out[key] = {c: v for c, v in zip(columns, values, strict=False) if v is not None}
    return None if read >= limit else out
