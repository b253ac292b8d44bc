"""How the catalog lays itself out on the ordered key/value store, and its low-level reads/writes.

Two KV tables:

``catalog``: one row per fact and one wide row per storage table.
  * ``F\\x00<fact>``: ``m:def`` (JSON), ``m:gen`` (8-byte counter bumped after every timeline
    change of any of the fact's storages: the one small read of a warm cache check),
    ``m:s.<storage>`` (membership, one cell per storage so concurrent creates never collide).
  * ``S\\x00<storage>``: ``m:def`` (JSON), ``m:lineage`` (``none`` or ``some``: whether a row
    may record inputs, :mod:`.lineage.flag`), ``t:present`` (``true`` once timelines are stored),
    ``t:<PERIOD>.<col>`` (one cell per timeline: JSON ``{"version", "properties"}``, updated only by
    check-and-put, because Thrift1's checkAndPut swaps exactly one cell), and for StoreAll
    timelines one ``v:<PERIOD>.<col>:<ordinal>`` column per value, so a cold reader can read a
    slice of a large timeline with a column-range filter. A storage with declared
    dimensions also keeps ``t:<PERIOD>.<col>@<slice>`` (one timeline per slice) and
    ``t:slices`` (their build marker): :mod:`.slices.cells`.

``partitions``: one row per partition, keyed by :mod:`airflow_partitions.keys` as
  ``(storage, period, values...)``: ``p:loc``, ``p:state`` (``live`` or ``dropping``), ``p:v.<col>``
  (each value as text), ``p:k.<col>`` (each value as order-preserving bytes, so server-side
  filters compare typed values with binary comparators), ``p:ts`` (when the row was last
  written), ``p:ver`` (the partition's version, an 8-byte big-endian counter; absent in rows
  written before versions existed, which read as 1) and ``p:in`` (the lineage: the exact input
  partitions it was built from, compact JSON, see :mod:`.lineage.inputs`; absent when none was
  recorded). Version and lineage are written in the same row put as the rest. The names of
  the cells a reader needs (``p:loc``, ``p:v.<col>``, ``p:k.<col>``) are defined once, by
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

from airflow_partitions.catalog.definitions.stored import decode_fact, decode_storage
from airflow_partitions.catalog.definitions.tables import (
    FactDef,
    Partition,
    StorageDef,
    encode_json,
)
from airflow_partitions.catalog.rows.damage import stand_ins
from airflow_partitions.errors import (
    CorruptPartitionRow,
    CorruptTimeline,
)
from airflow_partitions.keys import (
    LOCATION_CELL,
    PartitionValue,
    encode_key,
    key_prefix,
    prefix_successor,
)
from airflow_partitions.keys import encoded_cell_column as encoded_cell_column
from airflow_partitions.keys import value_cell_column as value_cell_column
from airflow_partitions.kv import Cells, ColumnRange, DamagedCells, KVStore, KVTable
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    UnknownTimelineClass,
    check_chunk_counts,
    storage_class_key,
    timeline_class,
    timeline_prefix,
)

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
VERSION: Final = b"p:ver"
INPUTS: Final = b"p:in"
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


def value_ordinals(period: UpdatePeriod, column: str, tz: str,
                   cells: Mapping[bytes, bytes]) -> list[int]:
    """The sorted ordinals of StoreAll value columns; ``CorruptTimeline`` on a bad column.

    Each column name must be ``v:<PERIOD>.<col>:`` and 8 ordinal bytes. The smallest and the
    largest ordinal must name partitions of the calendar (years 0001 to 9999), which holds
    every ordinal between them: two formats per read, not one per value.
    """
    name = b"v:" + f"{period.name}.{column}:".encode()
    out: list[int] = []
    for qualifier in cells:
        if len(qualifier) != len(name) + 8 or not qualifier.startswith(name):
            raise CorruptTimeline(f"value column {qualifier!r} is not {name.decode()}<8 bytes>")
        out.append(ordinal_of_qualifier(qualifier))
    out.sort()
    for ordinal in out[:1] + out[-1:]:
        if not _in_calendar(period, ordinal, tz):
            raise CorruptTimeline(
                f"value column {value_column(period, column, ordinal)!r} holds ordinal "
                f"{ordinal}, which names no {period.name} partition"
            )
    return out


def _in_calendar(period: UpdatePeriod, ordinal: int, tz: str) -> bool:
    """Whether a partition value exists for the ordinal (years 0001 to 9999)."""
    try:
        text = period.format_ordinal(ordinal, tz)
    except (ValueError, OverflowError):
        return False
    return len(text.split("-", 1)[0]) == 4  # 10000-01-01 ends the calendar, names nothing


class CorruptTimelineCell(CorruptTimeline):
    """One stored timeline cell (or its StoreAll value columns) is corrupt.

    The message names the storage, period and column and says how to repair it; ``reason``
    is the bare finding, which is what ``reconcile`` reports when it replaces the cell.
    """

    def __init__(self, storage: str, period: UpdatePeriod, column: str, reason: str):
        self.storage, self.period, self.column, self.reason = storage, period, column, reason
        super().__init__(
            f"the {period.name} {column} timeline of storage {storage!r} is corrupt: {reason}; "
            f"run 'airflow-partitions reconcile {storage}' to rebuild it from the partition rows"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.storage, self.period, self.column, self.reason)


@dataclass(frozen=True)
class TimelineCell:
    """One stored timeline cell: its raw bytes (the check-and-put expectation) and content."""

    raw: bytes | None
    version: int
    kind: str | None
    properties: dict[str, str]

    @classmethod
    def read(cls, raw: bytes | None, storage: str, period: UpdatePeriod,
             column: str) -> TimelineCell:
        """Decode and check the cell of (storage, period, column); corrupt cells raise."""
        try:
            cell = cls.decode(raw)
            cell.check(period, column)
        except CorruptTimeline as exc:
            raise CorruptTimelineCell(storage, period, column, str(exc)) from None
        return cell

    @classmethod
    def decode(cls, raw: bytes | None) -> TimelineCell:
        """The cell's JSON (``CorruptTimeline`` when it is not the JSON this version writes).

        An absent cell is an empty timeline never stored; an empty one is corrupt: this
        version never writes it, and reading it as empty would hide every partition.
        """
        if raw is None:
            return cls(None, 0, None, {})
        if not raw:
            raise CorruptTimeline("the cell is empty (0 bytes), which no version writes")
        try:
            data = json.loads(raw)
            props = {str(k): str(v) for k, v in data["properties"].items()}
            kind = data.get("kind")
            if kind is not None and not isinstance(kind, str):
                raise TypeError(f"kind is {kind!r}, not a string")
            version = data["version"]
            if isinstance(version, bool) or not isinstance(version, int):
                raise TypeError(f"version is {version!r}, not an integer")
            return cls(raw, version, kind, props)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise CorruptTimeline(f"the cell is not a timeline's JSON ({what})") from None

    def check(self, period: UpdatePeriod, column: str) -> None:
        """Cell-level consistency: what the content decoders cannot see on their own.

        Every property belongs to this (period, column); the kind and the ``storage.class``
        property name the same known implementation; every list chunk is counted by its
        ``.size`` (cells are written whole, so a chunk ``.size`` does not count, or a chunk
        without a ``.size``, is corruption, not a migration's leftover).
        """
        if self.raw is None:
            return
        prefix = timeline_prefix(period.name, column)
        foreign = sorted(k for k in self.properties if not k.startswith(prefix))
        if foreign:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            raise CorruptTimeline(
                f"property {foreign[0]!r}{more} lies outside this timeline's prefix {prefix!r}"
            )
        kind_class = None
        if self.kind is not None:
            try:
                kind_class = timeline_class(self.kind)
            except UnknownTimelineClass:
                raise CorruptTimeline(
                    f"its kind {self.kind!r} names no timeline implementation"
                ) from None
        named = self.properties.get(storage_class_key(period.name, column))
        if named is not None:
            try:
                named_class = timeline_class(named)
            except UnknownTimelineClass:
                raise CorruptTimeline(
                    f"its storage.class {named!r} names no timeline implementation"
                ) from None
            if kind_class is not None and named_class is not kind_class:
                raise CorruptTimeline(
                    f"its kind is {self.kind} but its storage.class property names {named}"
                )
        check_chunk_counts({k[len(prefix):]: v for k, v in self.properties.items()})

    def encode_next(self, kind: str, properties: Mapping[str, str]) -> bytes:
        return encode_timeline_cell(self.version + 1, kind, properties)


def encode_timeline_cell(version: int, kind: str | None, properties: Mapping[str, str]
                         ) -> bytes:
    body: dict[str, Any] = {
        "version": version,
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
        return fact_of_row(fact, self.catalog.get(fact_row(fact)))

    def read_generation(self, fact: str) -> int:
        """The warm-cache check: one small read."""
        return decode_counter(self.catalog.get(fact_row(fact), [GEN]).get(GEN))

    def bump_generation(self, fact: str) -> int:
        return self.catalog.increment(fact_row(fact), GEN, 1)

    def list_facts(self) -> list[FactDef]:
        out = []
        for row, cells in self.catalog.scan(prefix=b"F\x00", columns=[DEF]):
            if DEF in cells:
                out.append(decode_fact(row[2:].decode(), cells[DEF]))
        return out

    def list_storage_defs(self) -> list[StorageDef]:
        out = []
        for row, cells in self.catalog.scan(prefix=b"S\x00", columns=[DEF]):
            if DEF in cells:
                out.append(decode_storage(row[2:].decode(), cells[DEF]))
        return out

    def read_storage_def(self, storage: str) -> StorageDef | None:
        try:
            cells = self.catalog.get(storage_row(storage), [DEF])
        except DamagedCells as exc:
            stand_ins(self.kv.url, exc, storage_row(storage), exc.columns(), DEF)
            raise
        return decode_storage(storage, cells[DEF]) if DEF in cells else None

    def read_storage_rows(self, storages: Iterable[str]) -> dict[str, Cells]:
        """Definitions and timeline cells of several storages in one round trip (no values).

        A damaged cell (its bytes fail their own checksum, :class:`DamagedCells`) is never
        used: a damaged definition raises :class:`CorruptDefinition` naming the store, table,
        row and cell; any other damaged cell reads as empty, which its readers treat as an
        undecodable one (a timeline is read from the partition rows or reported for
        ``reconcile``, which rebuilds it), with a WARNING naming it.
        """
        keys = [storage_row(s) for s in storages]
        try:
            rows = self.catalog.get_many(keys, [b"m", b"t"])
        except DamagedCells as exc:
            rows = dict(exc.found)
            for row, damaged in exc.damaged.items():
                found = stand_ins(self.kv.url, exc, row, damaged, DEF)
                rows[row] = {**rows.get(row, {}), **found}
        return {row[2:].decode(): cells for row, cells in rows.items()}

    # -- timelines ---------------------------------------------------------------------------------

    def read_timeline_cell(self, storage: str, period: UpdatePeriod, column: str) -> TimelineCell:
        """The checked cell of one timeline (``CorruptTimelineCell`` when it is corrupt)."""
        return TimelineCell.read(self.read_raw_timeline_cell(storage, period, column),
                                 storage, period, column)

    def read_raw_timeline_cell(self, storage: str, period: UpdatePeriod,
                               column: str) -> bytes | None:
        """The cell's bytes, unchecked: for repair, which replaces it without trusting it."""
        col = timeline_column(period, column)
        try:
            return self.catalog.get(storage_row(storage), [col]).get(col)
        except DamagedCells as exc:  # its stored bytes: what the swap that replaces it expects
            return exc.damaged[storage_row(storage)][col]

    def swap_timeline_cell(
        self, storage: str, period: UpdatePeriod, column: str, old: TimelineCell | bytes | None,
        new: bytes,
    ) -> bool:
        """Check-and-put against the bytes read before (a cell, or the raw bytes of one)."""
        expected = old.raw if isinstance(old, TimelineCell) else old
        return self.catalog.check_and_put(
            storage_row(storage), timeline_column(period, column), expected, new
        )

    def read_values(
        self, storage: str, period: UpdatePeriod, column: str, lo: int | None, hi: int | None,
        tz: str,
    ) -> list[int]:
        """StoreAll values of one timeline inside ``[lo, hi)``: a column-range slice of the row.

        A value column whose qualifier is not an 8-byte ordinal, or whose ordinal lies outside
        the calendar, is corrupt (``CorruptTimelineCell``).
        """
        base = f"{period.name}.{column}:".encode()
        low = value_qualifier(period, column, lo) if lo is not None else base
        high = value_qualifier(period, column, hi) if hi is not None else prefix_successor(base)
        cells = self._value_cells(storage, low, high)
        try:
            return value_ordinals(period, column, tz, cells)
        except CorruptTimeline as exc:
            raise CorruptTimelineCell(storage, period, column, str(exc)) from None

    def read_value_columns(self, storage: str, period: UpdatePeriod,
                           column: str) -> dict[bytes, bytes]:
        """Every StoreAll value column of one timeline, raw (``v:...`` name -> value text)."""
        base = f"{period.name}.{column}:".encode()
        return self._value_cells(storage, base, prefix_successor(base))

    def _value_cells(self, storage: str, low: bytes, high: bytes | None) -> dict[bytes, bytes]:
        row = storage_row(storage)
        out: dict[bytes, bytes] = {}
        for _, cells in self.catalog.scan(
            start=row, stop=row + b"\x00", columns=[b"v"],
            filter=ColumnRange(low, True, high, False),
        ):
            out.update(cells)
        return out

    def mutate_value_columns(self, storage: str, puts: Mapping[bytes, bytes],
                             deletes: Iterable[bytes]) -> None:
        """Put and delete raw value columns of a storage row in one atomic mutation."""
        deletes = list(deletes)
        if puts or deletes:
            self.catalog.mutate_row(storage_row(storage), puts=puts, deletes=deletes)

    def write_values(
        self, storage: str, period: UpdatePeriod, column: str, add: Iterable[int],
        remove: Iterable[int], formatted: Mapping[int, str],
    ) -> None:
        puts = {value_column(period, column, o): formatted[o].encode() for o in add}
        deletes = [value_column(period, column, o) for o in remove]
        if puts or deletes:
            self.catalog.mutate_row(storage_row(storage), puts=puts, deletes=deletes)

    def set_present(self, storage: str, present: bool,
                    also: Mapping[bytes, bytes] | None = None) -> None:
        """The ``present`` flag, and ``also`` (the slice marker at creation) in the same put."""
        self.catalog.put(storage_row(storage),
                         {PRESENT: b"true" if present else b"false", **(also or {})})

    # -- partition rows ----------------------------------------------------------------------------

    def partition_key(
        self, storage: StorageDef, period: UpdatePeriod, typed: tuple[PartitionValue, ...]
    ) -> bytes:
        return encode_key(storage.key_schema, storage.name, period.name, typed)

    def period_prefix(self, storage: StorageDef, period: UpdatePeriod,
                      leading: tuple[PartitionValue, ...] = ()) -> bytes:
        return key_prefix(storage.key_schema, storage.name, period.name, leading)

def fact_of_row(fact: str, cells: Mapping[bytes, bytes]) -> tuple[FactDef | None, int, list[str]]:
    """The definition, generation and storages a fact row's cells hold (None, 0, [] when it
    has no definition)."""
    if DEF not in cells:
        return None, 0, []
    storages = sorted(k[len(b"m:s.") :].decode() for k in cells if k.startswith(b"m:s."))
    return decode_fact(fact, cells[DEF]), decode_counter(cells.get(GEN)), storages


def decode_counter(raw: bytes | None) -> int:
    if not raw:
        return 0
    if len(raw) != 8:
        raise CorruptTimeline(f"generation counter cell holds {len(raw)} bytes, not 8")
    return int(struct.unpack(">q", raw)[0])


def encode_version(version: int) -> bytes:
    """``p:ver``: 8 bytes big-endian, like the generation counter."""
    return struct.pack(">q", version)


def decode_version(raw: bytes | None) -> int:
    """A row's version; a row written before versions existed (no ``p:ver``) is version 1."""
    if raw is None:
        return 1
    if len(raw) != 8:
        raise CorruptPartitionRow(f"partition version cell p:ver holds {len(raw)} bytes, not 8")
    return int(struct.unpack(">q", raw)[0])


def partition_from_cells(sdef: StorageDef, period: UpdatePeriod, cells: Cells) -> Partition:
    """A Partition from the cells of its row (for readers of raw scans: filters, covers)."""
    values = {c: cells.get(value_cell_column(c), b"").decode() for c in sdef.column_names}
    return Partition(sdef.name, period, values, cells[LOC].decode(),
                     decode_version(cells.get(VERSION)))
