"""Partitions straight from projected partition rows: the fast path of large lists.

A list or a filter over a million partitions spent most of its time building a dict of every
row's cells and then picking a few of them (:func:`.rows.layout.partition_from_cells`). A
:class:`PartitionDecoder` asks the store only for the cells a :class:`Partition` needs, in a
fixed order (``KVTable.scan_columns``), and builds the partition from that tuple. It decodes
exactly as ``partition_from_cells`` does (tests hold the two equal on random rows). The
row's state comes last in the projection, so that damaged rows (:mod:`.rows.check`) are left
out, never listed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from airflow_partitions.catalog.definitions.tables import Partition, StorageDef
from airflow_partitions.catalog.rows.check import RowCheck
from airflow_partitions.catalog.rows.layout import (
    LOC,
    STATE,
    VERSION,
    decode_version,
    value_cell_column,
)
from airflow_partitions.catalog.rows.scan import scan_whole_rows
from airflow_partitions.kv import CorruptCell, KVTable
from airflow_partitions.periods import UpdatePeriod

#: Rows per page of a projected scan (one round trip each).
LIST_BATCH: Final = 5000


class PartitionDecoder:
    """Decodes the rows of one (storage, period) from the values of :attr:`columns`."""

    def __init__(self, sdef: StorageDef, period: UpdatePeriod) -> None:
        self.storage = sdef.name
        self.period = period
        self.names: tuple[str, ...] = tuple(sdef.column_names)
        #: The cells to project, in order: location, version, each value as text, the state.
        self.columns: tuple[bytes, ...] = (
            LOC, VERSION, *(value_cell_column(c) for c in self.names), STATE)
        self.check = RowCheck(sdef, period)

    def decode(self, values: tuple[bytes | None, ...]) -> Partition:
        """The partition of a row :meth:`whole` kept."""
        loc = values[0]
        assert loc is not None  # whole() keeps only rows with a location
        # zip without strict: the scan returns one value per projected column.
        texts = {name: "" if v is None else v.decode()
                 for name, v in zip(self.names, values[2:], strict=False)}
        location = loc.decode()
        raw = values[1]  # p:ver, 8 bytes big-endian; decode_version words what is wrong
        version = (int.from_bytes(raw, "big", signed=True) if raw is not None and len(raw) == 8
                   else decode_version(raw))
        return Partition(self.storage, self.period, texts, location, version)

    def get(self, table: KVTable, key: bytes) -> Partition | None:
        """The partition of one row key, None when there is no row; a damaged row raises
        :class:`.rows.check.DamagedPartitionRow` naming it, never a half-read partition."""
        try:
            cells = table.get(key, list(self.columns))
        except CorruptCell as exc:
            raise self.check.report(key, str(exc)) from None
        if not cells:
            return None
        row = tuple(map(cells.get, self.columns))
        reason = self.check.damage(key, row)
        if reason is not None:
            raise self.check.report(key, reason)
        return self.decode(row)

    def scan(self, table: KVTable, start: bytes | None = None, stop: bytes | None = None,
             prefix: bytes | None = None, batch_size: int = LIST_BATCH) -> Iterator[Partition]:
        """The whole partitions of a key range, in key order; damaged rows are logged and
        left out (:mod:`.rows.check`), and so is a blob that does not decode (SQLite)."""
        for _, values in self.rows(table, start, stop, prefix, batch_size):
            yield self.decode(values)

    def rows(self, table: KVTable, start: bytes | None = None, stop: bytes | None = None,
             prefix: bytes | None = None, batch_size: int = LIST_BATCH
             ) -> Iterator[tuple[bytes, tuple[bytes | None, ...]]]:
        """The whole rows of a key range as ``(key, values)``, checked a page at a time."""
        page: list[tuple[bytes, tuple[bytes | None, ...]]] = []
        for row in scan_whole_rows(table, self.columns, start, stop, prefix, batch_size,
                                   self.check.skip):
            page.append(row)
            if len(page) >= batch_size:
                yield from self.whole(page)
                page = []
        yield from self.whole(page)

    def whole(self, page: list[tuple[bytes, tuple[bytes | None, ...]]]
              ) -> list[tuple[bytes, tuple[bytes | None, ...]]]:
        """The rows of ``page`` that are whole; the others are logged by name."""
        check = self.check
        if check.whole([v for _, v in page], [k for k, _ in page]):
            return page
        kept = []
        for key, values in page:
            reason = check.damage(key, values)
            if reason is None:
                kept.append((key, values))
            else:
                check.skip(key, reason)
        return kept


__all__ = ["LIST_BATCH", "PartitionDecoder"]
