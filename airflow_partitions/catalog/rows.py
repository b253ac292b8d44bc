"""How the catalog lays itself out on the ordered key/value store, and its low-level reads/writes.

Two KV tables:

``catalog``: one row per fact and one wide row per storage table.
  * ``F\\x00<fact>``: ``m:def`` (JSON), ``m:gen`` (8-byte counter bumped after every timeline
    change of any of the fact's storages: the one small read of a warm cache check),
    ``m:s.<storage>`` (membership, one cell per storage so concurrent creates never collide).
  * ``S\\x00<storage>``: ``m:def`` (JSON), ``t:present`` (``true`` once timelines are stored),
    ``t:<PERIOD>.<col>`` (one cell per timeline: JSON ``{"version", "properties"}``, updated only by
    check-and-put, because Thrift1's checkAndPut swaps exactly one cell), and for StoreAll
    timelines one ``v:<PERIOD>.<col>:<ordinal>`` column per value, so a cold reader can read a
    slice of a large timeline with a column-range filter (seed 004).

``partitions``: one row per partition, keyed by :mod:`airflow_partitions.keys` as
  ``(storage, period, values...)``: ``p:loc``, ``p:state`` (``live`` or ``dropping``), ``p:v.<col>``
  (each value as text), ``p:k.<col>`` (each value as order-preserving bytes, so server-side
  filters compare typed values with binary comparators) and ``p:ts``. The names of the cells a
  reader needs (``p:loc``, ``p:v.<col>``, ``p:k.<col>``) are defined once, by
  :class:`airflow_partitions.keys.RowLayout`; the ones here re-export them.
"""

from __future__ import annotations

import json
import random
import struct
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from airflow_partitions.catalog.model import FactDef, Partition, StorageDef, encode_json
from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.keys import (
    LOCATION_CELL,
    encode_key,
    key_prefix,
    prefix_successor,
)
from airflow_partitions.keys import encoded_cell_column as encoded_cell_column
from airflow_partitions.keys import value_cell_column as value_cell_column
from airflow_partitions.kv.base import Cells, KVStore, KVTable
from airflow_partitions.kv.scan_filters import ColumnRange
from airflow_partitions.periods import UpdatePeriod

CATALOG_TABLE: Final = "catalog"
PARTITIONS_TABLE: Final = "partitions"
CATALOG_FAMILIES: Final = ("m", "t", "v")
PARTITION_FAMILIES: Final = ("p",)

DEF: Final = b"m:def"
GEN: Final = b"m:gen"
PRESENT: Final = b"t:present"
LOC: Final = LOCATION_CELL
STATE: Final = b"p:state"
STAMP: Final = b"p:ts"
LIVE: Final = b"live"
DROPPING: Final = b"dropping"
MAX_SWAP_ATTEMPTS: Final = 200
_ORDINAL: Final = struct.Struct(">Q")
_SIGN: Final = 1 << 63


def backoff(attempt: int) -> None:
    """A short random pause before retrying a lost check-and-put race (jitter spreads writers)."""
    time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 20)))  # noqa: S311 - not crypto


def fact_row(fact: str) -> bytes:
    return b"F\x00" + fact.encode()


def storage_row(storage: str) -> bytes:
    return b"S\x00" + storage.encode()


def member_column(storage: str) -> bytes:
    return b"m:s." + storage.encode()


def timeline_column(period: UpdatePeriod, column: str) -> bytes:
    return f"t:{period.name}.{column}".encode()


def value_qualifier(period: UpdatePeriod, column: str, ordinal: int) -> bytes:
    """Qualifier of one StoreAll value; byte order equals ordinal order."""
    return f"{period.name}.{column}:".encode() + _ORDINAL.pack(ordinal + _SIGN)


def value_column(period: UpdatePeriod, column: str, ordinal: int) -> bytes:
    return b"v:" + value_qualifier(period, column, ordinal)


def ordinal_of_qualifier(qualifier: bytes) -> int:
    return int(_ORDINAL.unpack(qualifier[-8:])[0]) - _SIGN


@dataclass(frozen=True)
class TimelineCell:
    """One stored timeline cell: its raw bytes (the check-and-put expectation) and content."""

    raw: bytes | None
    version: int
    kind: str | None
    properties: dict[str, str]

    @classmethod
    def parse(cls, raw: bytes | None, where: str) -> TimelineCell:
        if not raw:
            return cls(None, 0, None, {})
        try:
            data = json.loads(raw)
            props = {str(k): str(v) for k, v in data["properties"].items()}
            return cls(raw, int(data["version"]), data.get("kind"), props)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptTimeline(f"timeline cell {where} is not valid JSON: {exc}") from None

    def encode_next(self, kind: str, properties: Mapping[str, str]) -> bytes:
        body: dict[str, Any] = {
            "version": self.version + 1,
            "kind": kind,
            "properties": dict(sorted(properties.items())),
        }
        return encode_json(body)


class CatalogRows:
    """The catalog's rows on a KV store: every read and write of the layout lives here."""

    def __init__(self, store: KVStore):
        self.kv = store
        self.catalog: KVTable = store.table(CATALOG_TABLE)
        self.partitions: KVTable = store.table(PARTITIONS_TABLE)

    def ensure_tables(self) -> None:
        self.kv.create_table(CATALOG_TABLE, CATALOG_FAMILIES, exist_ok=True)
        self.kv.create_table(PARTITIONS_TABLE, PARTITION_FAMILIES, exist_ok=True)

    # -- definitions -------------------------------------------------------------------------------

    def read_fact(self, fact: str) -> tuple[FactDef | None, int, list[str]]:
        """The fact's definition, generation and storages, in one round trip."""
        cells = self.catalog.get(fact_row(fact))
        if DEF not in cells:
            return None, 0, []
        storages = sorted(
            k[len(b"m:s.") :].decode() for k in cells if k.startswith(b"m:s.")
        )
        return FactDef.from_json(json.loads(cells[DEF])), decode_counter(cells.get(GEN)), storages

    def read_generation(self, fact: str) -> int:
        """The warm-cache check: one small read."""
        return decode_counter(self.catalog.get(fact_row(fact), [GEN]).get(GEN))

    def bump_generation(self, fact: str) -> int:
        return self.catalog.increment(fact_row(fact), GEN, 1)

    def list_facts(self) -> list[FactDef]:
        out = []
        for _, cells in self.catalog.scan(prefix=b"F\x00", columns=[DEF]):
            if DEF in cells:
                out.append(FactDef.from_json(json.loads(cells[DEF])))
        return out

    def list_storage_defs(self) -> list[StorageDef]:
        out = []
        for _, cells in self.catalog.scan(prefix=b"S\x00", columns=[DEF]):
            if DEF in cells:
                out.append(StorageDef.from_json(json.loads(cells[DEF])))
        return out

    def read_storage_def(self, storage: str) -> StorageDef | None:
        cells = self.catalog.get(storage_row(storage), [DEF])
        return StorageDef.from_json(json.loads(cells[DEF])) if DEF in cells else None

    def read_storage_rows(self, storages: Iterable[str]) -> dict[str, Cells]:
        """Definitions and timeline cells of several storages in one round trip (no values)."""
        rows = self.catalog.get_many([storage_row(s) for s in storages], [b"m", b"t"])
        return {row[2:].decode(): cells for row, cells in rows.items()}

    # -- timelines ---------------------------------------------------------------------------------

    def read_timeline_cell(self, storage: str, period: UpdatePeriod, column: str) -> TimelineCell:
        col = timeline_column(period, column)
        raw = self.catalog.get(storage_row(storage), [col]).get(col)
        return TimelineCell.parse(raw, f"{storage}/{col.decode()}")

    def swap_timeline_cell(
        self, storage: str, period: UpdatePeriod, column: str, old: TimelineCell, new: bytes
    ) -> bool:
        return self.catalog.check_and_put(
            storage_row(storage), timeline_column(period, column), old.raw, new
        )

    def read_values(
        self, storage: str, period: UpdatePeriod, column: str, lo: int | None, hi: int | None
    ) -> list[int]:
        """StoreAll values of one timeline inside ``[lo, hi)``: a column-range slice of the row."""
        base = f"{period.name}.{column}:".encode()
        low = value_qualifier(period, column, lo) if lo is not None else base
        high = value_qualifier(period, column, hi) if hi is not None else prefix_successor(base)
        row = storage_row(storage)
        out: list[int] = []
        for _, cells in self.catalog.scan(
            start=row, stop=row + b"\x00", columns=[b"v"],
            filter=ColumnRange(low, True, high, False),
        ):
            out.extend(ordinal_of_qualifier(q) for q in cells)
        return sorted(out)

    def write_values(
        self, storage: str, period: UpdatePeriod, column: str, add: Iterable[int],
        remove: Iterable[int], formatted: Mapping[int, str],
    ) -> None:
        puts = {value_column(period, column, o): formatted[o].encode() for o in add}
        deletes = [value_column(period, column, o) for o in remove]
        if puts or deletes:
            self.catalog.mutate_row(storage_row(storage), puts=puts, deletes=deletes)

    def set_present(self, storage: str, present: bool) -> None:
        self.catalog.put(storage_row(storage), {PRESENT: b"true" if present else b"false"})

    # -- partition rows ----------------------------------------------------------------------------

    def partition_key(
        self, storage: StorageDef, period: UpdatePeriod, typed: tuple[Any, ...]
    ) -> bytes:
        return encode_key(storage.key_schema, storage.name, period.name, typed)

    def period_prefix(self, storage: StorageDef, period: UpdatePeriod,
                      leading: tuple[Any, ...] = ()) -> bytes:
        return key_prefix(storage.key_schema, storage.name, period.name, leading)

def decode_counter(raw: bytes | None) -> int:
    if not raw:
        return 0
    if len(raw) != 8:
        raise CorruptTimeline(f"generation counter cell holds {len(raw)} bytes, not 8")
    return int(struct.unpack(">q", raw)[0])


def partition_from_cells(sdef: StorageDef, period: UpdatePeriod, cells: Cells) -> Partition:
    """A Partition from the cells of its row (for readers of raw scans: filters, covers)."""
    values = {c: cells.get(value_cell_column(c), b"").decode() for c in sdef.column_names}
    return Partition(sdef.name, period, values, cells[LOC].decode())
