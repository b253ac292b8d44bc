"""The HBase test double's in-memory store: tables of rows in byte order, versioned cells,
and the single-row atomic mutations, check-and-put and increments the HBase reference guide
specifies. A TEST DOUBLE, not HBase (see :mod:`airflow_partitions.testing.hbase.server`).
"""

from __future__ import annotations

import logging
import re
import struct
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from sortedcontainers import SortedDict

from airflow_partitions.testing.hbase.thrift_types import ColumnDescriptor, Mutation

logger = logging.getLogger(__name__)

ColumnKey = tuple[bytes, bytes]
ErrorKind = Literal["io", "ia", "exists", "app"]

_INT64_MIN = -(2**63)
_TABLE_NAME = re.compile(rb"(?:[A-Za-z0-9_][A-Za-z0-9_.\-]*:)?[A-Za-z0-9_][A-Za-z0-9_.\-]*")
LATEST_TIMESTAMP = 2**63 - 1  # HConstants.LATEST_TIMESTAMP


class StoreError(Exception):
    """A failure the client should see as a Thrift-declared exception (IOError, ...)."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def io_error(message: str) -> StoreError:
    return StoreError("io", message)


def illegal_argument(message: str) -> StoreError:
    return StoreError("ia", message)


def internal_error(message: str) -> StoreError:
    """An error HBase's Thrift server does not declare (an unchecked Java exception): the client
    sees a ``TApplicationException``."""
    return StoreError("app", message)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _wrap_int64(value: int) -> int:
    """Java ``long`` overflow semantics, as HBase's increment has."""
    return (value - _INT64_MIN) % 2**64 + _INT64_MIN


def as_text(raw: bytes) -> str:
    """Bytes shown in error messages the way HBase's ``Bytes.toStringBinary`` would roughly."""
    return raw.decode("utf-8", "backslashreplace")


def parse_column(column: bytes | str) -> tuple[bytes, bytes | None]:
    """Split ``family:qualifier``; a bare ``family`` means the whole family (None).

    ``family:`` is the cell with the empty qualifier, as HBase's ``CellUtil.parseColumn`` reads it.
    """
    raw = column.encode("utf-8") if isinstance(column, str) else column
    family, sep, qualifier = raw.partition(b":")
    if not sep:
        return family, None
    return family, qualifier


def column_name(key: ColumnKey) -> bytes:
    return key[0] + b":" + key[1]


def as_bytes(value: bytes | str | None) -> bytes:
    """Thrift ``Text`` may arrive as ``str`` when a client passed text (happybase does for '')."""
    if value is None:
        return b""
    return value.encode("utf-8") if isinstance(value, str) else value


# ----------------------------------------------------------------------------------------------
# The in-memory store
# ----------------------------------------------------------------------------------------------


@dataclass
class Version:
    """One timestamped value of a cell."""

    timestamp: int
    value: bytes


@dataclass
class Table:
    """A table: families with their descriptors and rows in byte order."""

    name: bytes
    descriptors: dict[bytes, ColumnDescriptor]  # family (no colon) -> its descriptor
    rows: SortedDict[bytes, SortedDict[ColumnKey, list[Version]]] = field(
        default_factory=SortedDict)
    enabled: bool = True
    region_id: int = field(default_factory=_now_ms)

    def max_versions(self, family: bytes) -> int:
        return int(self.descriptors[family].maxVersions or 1)

    def check_family(self, family: bytes) -> None:
        """Reject unknown families with HBase's NoSuchColumnFamilyException wording."""
        if family not in self.descriptors:
            raise io_error(
                f"org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column "
                f"family {as_text(family)} does not exist in region {as_text(self.name)},,"
                f"{self.region_id} in table '{as_text(self.name)}'"
            )


def narrowed(
    parsed: Sequence[tuple[bytes, bytes | None]],
) -> tuple[tuple[bytes, bytes | None], ...]:
    """A column list as HBase's ``Get``/``Scan`` build it, in order: ``addFamily`` widens a
    family to all its columns, a later ``addColumn`` of that family narrows it to the columns
    named from then on (so ``[cf, cf:a]`` reads only ``cf:a``, ``[cf:a, cf]`` all of ``cf``)."""
    families: dict[bytes, set[bytes] | None] = {}
    for family, qualifier in parsed:
        if qualifier is None:
            families[family] = None
            continue
        wanted = families.get(family)
        if wanted is None:
            families[family] = wanted = set()
        wanted.add(qualifier)
    out: list[tuple[bytes, bytes | None]] = []
    for family, qualifiers in families.items():
        if qualifiers is None:
            out.append((family, None))
        else:
            out.extend((family, q) for q in sorted(qualifiers))
    return tuple(out)


@dataclass(frozen=True)
class Selection:
    """Which columns and versions a read returns."""

    columns: tuple[tuple[bytes, bytes | None], ...] | None = None
    max_ts: int | None = None  # exclusive upper bound, as Get.setTimeRange(0, ts)
    versions: int = 1

    def wants(self, key: ColumnKey) -> bool:
        if self.columns is None:
            return True
        return any(f == key[0] and (q is None or q == key[1]) for f, q in self.columns)


@dataclass(frozen=True)
class PendingMutation:
    """A validated put or delete, applied only after the whole request validated."""

    is_delete: bool
    family: bytes
    qualifier: bytes | None
    value: bytes


class Store:
    """Tables in memory, guarded by one re-entrant lock so every request is atomic."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.tables: dict[bytes, Table] = {}

    # -- tables ---------------------------------------------------------------------------------

    def table(self, name: bytes, *, must_be_enabled: bool = True) -> Table:
        """Look a table up, failing like HBase for missing or disabled tables."""
        table = self.tables.get(name)
        if table is None:
            raise io_error(f"org.apache.hadoop.hbase.TableNotFoundException: {as_text(name)}")
        if must_be_enabled and not table.enabled:
            raise io_error(
                f"org.apache.hadoop.hbase.TableNotEnabledException: {as_text(name)} is disabled."
            )
        return table

    def create_table(self, name: bytes, descriptors: Sequence[ColumnDescriptor]) -> None:
        if not _TABLE_NAME.fullmatch(name):
            raise illegal_argument(f"Illegal table name: {as_text(name)!r}")
        families = self._families(descriptors)
        with self.lock:
            if name in self.tables:
                raise StoreError(
                    "exists", f"org.apache.hadoop.hbase.TableExistsException: {as_text(name)}"
                )
            self.tables[name] = Table(name, families)

    @staticmethod
    def _families(descriptors: Sequence[ColumnDescriptor]) -> dict[bytes, ColumnDescriptor]:
        """Validate column descriptors; key them by family name without the colon."""
        if not descriptors:
            raise illegal_argument("Table should have at least one column family.")
        families: dict[bytes, ColumnDescriptor] = {}
        for descriptor in descriptors:
            family = as_bytes(descriptor.name).partition(b":")[0]
            if not family or family in families:
                raise illegal_argument(
                    f"Illegal or duplicate column family name: {as_text(family)!r}"
                )
            if descriptor.maxVersions is not None and descriptor.maxVersions < 1:
                raise illegal_argument(
                    f"Maximum versions must be positive for family {as_text(family)}"
                )
            descriptor.name = family + b":"
            families[family] = descriptor
        return families

    def delete_table(self, name: bytes) -> None:
        with self.lock:
            table = self.table(name, must_be_enabled=False)
            if table.enabled:
                raise io_error(
                    f"org.apache.hadoop.hbase.TableNotDisabledException: {as_text(name)}"
                )
            del self.tables[name]

    def set_enabled(self, name: bytes, enabled: bool) -> None:
        with self.lock:
            table = self.table(name, must_be_enabled=False)
            if table.enabled == enabled:
                state = "TableNotDisabledException" if enabled else "TableNotEnabledException"
                raise io_error(f"org.apache.hadoop.hbase.{state}: {as_text(name)}")
            table.enabled = enabled

    # -- reads ----------------------------------------------------------------------------------

    def selection(self, table: Table, columns: Sequence[bytes] | None, *,
                  max_ts: int | None = None, versions: int = 1) -> Selection:
        """Parse and validate a column list against the table's families."""
        if not columns:
            return Selection(None, max_ts, versions)
        parsed = tuple(parse_column(c) for c in columns)
        for family, _ in parsed:
            table.check_family(family)
        return Selection(narrowed(parsed), max_ts, versions)

    @staticmethod
    def visible(row_cells: Mapping[ColumnKey, list[Version]], sel: Selection
                ) -> list[tuple[ColumnKey, list[Version]]]:
        """Selected columns of one row, each with its newest versions below ``max_ts``."""
        out: list[tuple[ColumnKey, list[Version]]] = []
        for key, versions in row_cells.items():
            if not sel.wants(key):
                continue
            kept = [v for v in versions if sel.max_ts is None or v.timestamp < sel.max_ts]
            if kept:
                out.append((key, kept[: sel.versions]))
        return out

    def read_row(
        self, name: bytes, row: bytes, sel_columns: Sequence[bytes] | None, *,
        max_ts: int | None = None, versions: int = 1,
    ) -> list[tuple[ColumnKey, list[Version]]]:
        with self.lock:
            table = self.table(name)
            sel = self.selection(table, sel_columns, max_ts=max_ts, versions=versions)
            row_cells = table.rows.get(as_bytes(row))
            return [] if row_cells is None else self.visible(row_cells, sel)

    # -- writes ---------------------------------------------------------------------------------

    def validate(self, table: Table, row: bytes, mutations: Sequence[Mutation]
                 ) -> list[PendingMutation]:
        """Check every mutation of a row before any is applied (all-or-nothing requests)."""
        if not row:
            raise illegal_argument("Row length is 0")
        pending: list[PendingMutation] = []
        for m in mutations:
            family, qualifier = parse_column(as_bytes(m.column))
            table.check_family(family)
            pending.append(PendingMutation(bool(m.isDelete), family, qualifier, as_bytes(m.value)))
        return pending

    def mutate_row(self, name: bytes, row: bytes, mutations: Sequence[Mutation],
                   ts: int | None) -> None:
        """Thrift1 ``mutateRow``: HBase's server sends the row's deletes as one ``Delete``, then
        its puts as one ``Put``, so deletes stay applied when the puts are refused (an unknown
        family), and a refused delete stops the puts."""
        deletes = [m for m in mutations if m.isDelete]
        puts = [m for m in mutations if not m.isDelete]
        with self.lock:
            if deletes:
                self.mutate_rows(name, [(row, deletes)], ts)
            if puts:
                self.mutate_rows(name, [(row, puts)], ts)

    def mutate_batches(
        self, name: bytes, batches: Sequence[tuple[bytes, Sequence[Mutation]]], ts: int | None
    ) -> None:
        """Thrift1 ``mutateRows``: HBase's server sends one ``Put`` per row as a batch, then one
        ``Delete`` per row as another. Each row's put (or delete) applies or fails on its own;
        after a failed put no delete is sent, and the first failure is raised at the end."""
        with self.lock:
            table = self.table(name)
            for row, _ in batches:
                if not as_bytes(row):
                    raise illegal_argument("Row length is 0")
            for deletes in (False, True):
                failure: StoreError | None = None
                for row, mutations in batches:
                    chosen = [m for m in mutations if bool(m.isDelete) == deletes]
                    if not chosen:
                        continue
                    try:
                        self.mutate_rows(table.name, [(row, chosen)], ts)
                    except StoreError as exc:
                        failure = failure or exc
                if failure is not None:
                    raise failure

    def mutate_rows(
        self, name: bytes, batches: Sequence[tuple[bytes, Sequence[Mutation]]], ts: int | None
    ) -> None:
        """Apply puts and deletes to several rows atomically, in the order given."""
        with self.lock:
            table = self.table(name)
            validated = [
                (as_bytes(row), self.validate(table, as_bytes(row), ms)) for row, ms in batches
            ]
            # HBase stamps one mutation's cells with one server time; a clock read per cell
            # could split a put across two milliseconds, and a later delete at the first
            # one's timestamp would leave half the row (seen as a flaky check_and_delete).
            stamp = _now_ms() if ts is None else ts
            for row, pending in validated:
                for p in pending:
                    self._apply(table, row, p, ts, stamp)

    def _apply(self, table: Table, row: bytes, p: PendingMutation, ts: int | None,
               stamp: int) -> None:
        if p.is_delete:
            self.delete(table, row, p.family, p.qualifier, LATEST_TIMESTAMP if ts is None else ts)
        else:
            self.put(table, row, (p.family, p.qualifier or b""), p.value, stamp)

    def put(self, table: Table, row: bytes, key: ColumnKey, value: bytes, ts: int | None) -> None:
        """Write one version; a write at an existing timestamp replaces it (latest write wins)."""
        row_cells = table.rows.setdefault(row, SortedDict())
        versions: list[Version] = row_cells.setdefault(key, [])
        stamp = _now_ms() if ts is None else ts
        versions[:] = [v for v in versions if v.timestamp != stamp]
        versions.append(Version(stamp, value))
        versions.sort(key=lambda v: v.timestamp, reverse=True)
        del versions[table.max_versions(key[0]) :]

    def delete(
        self, table: Table, row: bytes, family: bytes | None, qualifier: bytes | None, upto: int
    ) -> None:
        """Remove versions with timestamp <= ``upto`` of a column, a family or the whole row."""
        row_cells = table.rows.get(row)
        if row_cells is None:
            return
        for key in list(row_cells):
            if family is not None and key[0] != family:
                continue
            if qualifier is not None and key[1] != qualifier:
                continue
            kept = [v for v in row_cells[key] if v.timestamp > upto]
            if kept:
                row_cells[key] = kept
            else:
                del row_cells[key]
        if not row_cells:
            del table.rows[row]

    def delete_cells(self, name: bytes, row: bytes, column: bytes | None, upto: int) -> None:
        with self.lock:
            table = self.table(name)
            if column is None:
                self.delete(table, row, None, None, upto)
                return
            family, qualifier = parse_column(column)
            table.check_family(family)
            self.delete(table, row, family, qualifier, upto)

    def increment(self, name: bytes, row: bytes, column: bytes, amount: int) -> int:
        """Atomic increment of an 8-byte big-endian signed long, initialised to 0."""
        if not row:
            raise illegal_argument("Row length is 0")
        with self.lock:
            table = self.table(name)
            family, qualifier = parse_column(column)
            table.check_family(family)
            key = (family, qualifier or b"")
            current = self.latest(table, row, key)
            if current is not None and len(current) != 8:
                raise io_error(
                    "org.apache.hadoop.hbase.DoNotRetryIOException: Field is not a long, "
                    f"it's {len(current)} bytes wide"
                )
            old = 0 if current is None else struct.unpack(">q", current)[0]
            new = _wrap_int64(old + amount)
            if current is None or amount != 0:
                self.put(table, row, key, struct.pack(">q", new), None)
            return new

    @staticmethod
    def latest(table: Table, row: bytes, key: ColumnKey) -> bytes | None:
        row_cells = table.rows.get(row)
        if row_cells is None or key not in row_cells:
            return None
        value: bytes = row_cells[key][0].value
        return value

    def check_and_put(
        self, name: bytes, row: bytes, column: bytes, expected: bytes | None,
        mput: Mutation | None,
    ) -> bool:
        """HBase checkAndPut: ``expected`` None/empty means "cell absent or empty"."""
        with self.lock:
            table = self.table(name)
            family, qualifier = parse_column(column)
            table.check_family(family)
            if mput is None or mput.isDelete:
                raise illegal_argument("checkAndPut needs a put mutation (isDelete must be false)")
            if not row:
                raise illegal_argument("Row length is 0")
            current = self.latest(table, row, (family, qualifier or b""))
            if expected:
                matches = current == expected
            else:
                matches = not current
            if matches:
                # HBase checks the put's family only when it applies it: a failed check with a
                # put to an unknown family answers False.
                (pending,) = self.validate(table, row, [mput])
                self._apply(table, row, pending, None, _now_ms())
            return matches

    def append(
        self, name: bytes, row: bytes, columns: Sequence[bytes], values: Sequence[bytes]
    ) -> list[tuple[bytes, int]]:
        """HBase Append: concatenate to the current values; returns the new (value, ts)."""
        with self.lock:
            table = self.table(name)
            if len(columns) != len(values):
                raise illegal_argument("TAppend needs as many values as columns")
            out: list[tuple[bytes, int]] = []
            for column, value in zip(columns, values, strict=True):
                family, qualifier = parse_column(as_bytes(column))
                table.check_family(family)
                key = (family, qualifier or b"")
                new = (self.latest(table, row, key) or b"") + as_bytes(value)
                self.put(table, row, key, new, None)
                out.append((new, table.rows[row][key][0].timestamp))
            return out
