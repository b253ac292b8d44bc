"""The ordered key/value interface with HBase semantics, shared by every backend.

Rows are byte strings kept in byte order, cells are ``b"family:qualifier" -> bytes``, one
row's mutation is atomic, check-and-put and increment work on one cell. The catalog speaks
only this interface, so the SQLite default and HBase are interchangeable.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import ClassVar, NamedTuple, TypeAlias

from airflow_partitions.kv.errors import InvalidScan
from airflow_partitions.kv.scan_filters import FILTER_TYPES, ScanFilter
from airflow_partitions.kv.validation import (
    ScanRange,
    check_column,
    check_column_specs,
    check_row_columns,
    check_row_values,
    check_scan,
)

Cells: TypeAlias = dict[bytes, bytes]
RowCells: TypeAlias = tuple[bytes, Cells]
#: A row's values of a projected scan, in the order of the requested columns (None: absent).
RowValues: TypeAlias = tuple[bytes, tuple[bytes | None, ...]]


class FeedChanges(NamedTuple):
    """One table's part of :meth:`KVStore.changed_rows`: the position to ask from next, the
    keys written since the position asked (a key may repeat), and, when the rows were asked
    for, each key's cells as they are now (``{}``: the row is gone)."""

    position: Hashable
    keys: tuple[bytes, ...]
    rows: dict[bytes, Cells] | None


class KeyedRead(NamedTuple):
    """Rows read by key, as :meth:`KVTable.get_many` reads them: a table, the row keys, the
    columns (family specs or whole cells)."""

    table: str
    keys: tuple[bytes, ...]
    columns: tuple[bytes, ...]


class ReadsAgain(ABC):
    """Keyed reads asked again together, each answered as the rows now and whether they are,
    byte for byte, the rows of the answer last kept (:meth:`KVStore.reads_again`).

    Why: a sensor asks the same small range after every write; the rows its answer rests on
    are usually unchanged, and proving that should not cost decoding them."""

    @abstractmethod
    def ask(self) -> list[AskedAgain] | None:
        """Every read's answer now, in order; None when the store could not answer this way
        (a busy or failed connection, an error reply): read the usual way, which reports it."""

    @abstractmethod
    def keep(self, answers: Sequence[AskedAgain]) -> None:
        """Make ``answers`` (of an :meth:`ask` of this object) the ones the next is compared
        with: call it once what they hold is proven to be what the caller rests on. The
        answers are named, not taken as the last asked: another thread's ask in between
        must not be kept unproven."""


class AskedAgain(ABC):
    """One read's answer to :meth:`ReadsAgain.ask`."""

    #: Whether the answer is, byte for byte, the answer last kept (:meth:`ReadsAgain.keep`).
    same: bool

    @abstractmethod
    def rows(self) -> list[RowCells]:
        """The rows found, in key order (a key without a row is left out)."""


class StoreStats:
    """Counts round trips, so callers can assert costs ("an idle poke is one round trip").

    A round trip is one request to the store: one Thrift call on HBase, one transaction on
    SQLite. ``ops`` counts round trips per operation; ``events`` counts things that are not
    round trips (reconnects, SQLITE_BUSY retries).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.round_trips = 0
        self.ops: Counter[str] = Counter()
        self.events: Counter[str] = Counter()

    def record(self, op: str, n: int = 1) -> None:
        """Count ``n`` round trips made by ``op``."""
        with self._lock:
            self.round_trips += n
            self.ops[op] += n

    def note(self, event: str) -> None:
        """Count an event that is not a round trip."""
        with self._lock:
            self.events[event] += 1

    def reset(self) -> None:
        with self._lock:
            self.round_trips = 0
            self.ops.clear()
            self.events.clear()

    def __repr__(self) -> str:
        return f"StoreStats(round_trips={self.round_trips}, ops={dict(self.ops)})"


#: Column tuples ``scan_columns`` has validated (a catalog projects a handful).
_VALID_PROJECTIONS: set[tuple[bytes, ...]] = set()
_VALID_PROJECTIONS_MAX = 1024


class KVTable(ABC):
    """One table. Handles are cheap: creating one makes no round trip."""

    #: Whether reading a few known rows (:meth:`get_columns`) takes fewer round trips than a
    #: scan of their range: on HBase a scan is three Thrift calls (open, a page, close) and a
    #: multi-get one; on SQLite both are one statement, and the scan needs no key list.
    keyed_reads_save_round_trips: ClassVar[bool] = False

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"

    @abstractmethod
    def get(self, row: bytes, columns: Iterable[bytes] | None = None) -> Cells:
        """The row's cells (only ``columns`` if given); ``{}`` when the row is absent."""

    @abstractmethod
    def get_many(
        self, rows: Iterable[bytes], columns: Iterable[bytes] | None = None
    ) -> dict[bytes, Cells]:
        """Several rows in one round trip; rows that are absent are left out of the result."""

    @abstractmethod
    def put(self, row: bytes, cells: Mapping[bytes, bytes]) -> None:
        """Write cells of one row, atomically."""

    @abstractmethod
    def put_many(
        self, items: Iterable[tuple[bytes, Mapping[bytes, bytes]]], batch_size: int = 1000
    ) -> None:
        """Write many rows, ``batch_size`` rows per round trip. Each row is atomic, not the lot."""

    def put_rows(
        self, columns: Sequence[bytes], rows: Iterable[tuple[bytes, Sequence[bytes]]],
        batch_size: int = 1000,
    ) -> None:
        """:meth:`put_many` of rows that share their columns: each row is its key and its values
        in ``columns`` order. Why: a bulk writer then builds no dict per row, and a backend may
        encode rows alike in one pass (SQLite). Each row is atomic, not the lot.
        """
        names = check_row_columns(columns)

        def as_cells() -> Iterator[tuple[bytes, dict[bytes, bytes]]]:
            for row, values in rows:
                check_row_values(names, values)
                yield row, dict(zip(names, values, strict=True))

        self.put_many(as_cells(), batch_size)

    @abstractmethod
    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        """Delete the row, or only ``columns`` (``b"cf:q"`` cells or whole ``b"cf"`` families)."""

    @abstractmethod
    def mutate_row(
        self,
        row: bytes,
        puts: Mapping[bytes, bytes] | None = None,
        deletes: Iterable[bytes] | None = None,
    ) -> None:
        """Delete and put cells of one row in one atomic mutation; the two must not overlap."""

    @abstractmethod
    def check_and_put(
        self, row: bytes, column: bytes, expected: bytes | None, value: bytes
    ) -> bool:
        """Write ``value`` if the cell holds ``expected``; ``None`` (or ``b""``) = absent or empty.

        Returns whether the write happened. This is the only compare-and-swap HBase Thrift1 has.
        """

    def check_and_put_many(
        self, row: bytes, swaps: Sequence[tuple[bytes, bytes | None, bytes]]
    ) -> list[bool]:
        """Each ``(column, expected, value)`` as its own :meth:`check_and_put`, in order;
        returns which writes happened.

        Why: a writer of many cells of one row (a batch's slice timelines) keeps every cell's
        compare-and-swap, as separate calls would, while a backend that stores a row as one
        value (SQLite) reads and writes it once instead of once per cell. Cost here (HBase,
        Thrift1 has no multi-cell check): one round trip per cell.
        """
        return [self.check_and_put(row, column, expected, value)
                for column, expected, value in swaps]

    @abstractmethod
    def check_and_delete(self, row: bytes, column: bytes, expected: bytes) -> bool:
        """Delete the whole row if ``column`` holds ``expected``; returns whether it did.

        Why: a drop must not delete a row that a concurrent register rewrote after the drop
        marked it. SQLite does the test and the delete in one transaction. Thrift1 has no
        checkAndDelete, so HBase reads the cell's timestamp and deletes only cells not newer
        than it (``deleteAllRowTs``): a row rewritten later survives, except a rewrite landing
        in the same millisecond as the checked cell, which the caller must tolerate.
        """

    @abstractmethod
    def increment(self, row: bytes, column: bytes, amount: int = 1) -> int:
        """Atomically add to an 8-byte big-endian signed counter cell; returns the new value."""

    def scan(
        self,
        start: bytes | None = None,
        stop: bytes | None = None,
        prefix: bytes | None = None,
        columns: Iterable[bytes] | None = None,
        filter: ScanFilter | None = None,
        limit: int | None = None,
        batch_size: int = 1000,
        reverse: bool = False,
    ) -> Iterator[RowCells]:
        """Rows in ``[start, stop)`` (or with ``prefix``) in byte order, ``batch_size`` a page.

        Arguments are checked now, not at the first ``next()``. ``reverse`` walks the same
        range from the top. Each page fetched is one round trip (HBase adds the scanner's
        open and close).
        """
        scan_range = check_scan(start, stop, prefix, limit, batch_size)
        specs = check_column_specs(columns)
        if filter is not None and not isinstance(filter, FILTER_TYPES):
            raise InvalidScan(f"filter must be a scan filter from kv.scan_filters, got {filter!r}")
        if not isinstance(reverse, bool):
            raise InvalidScan(f"reverse must be a bool, got {reverse!r}")
        return self._scan(scan_range, specs, filter, reverse)

    def scan_columns(
        self,
        columns: Sequence[bytes],
        start: bytes | None = None,
        stop: bytes | None = None,
        prefix: bytes | None = None,
        limit: int | None = None,
        batch_size: int = 1000,
    ) -> Iterator[RowValues]:
        """A projected scan: rows holding any of ``columns``, each as a tuple of their values.

        ``columns`` are whole cells (``b"family:qualifier"``); each row comes with one value per
        column, in that order, ``None`` where the row lacks the cell. Rows and pages are exactly
        those of ``scan(..., columns=columns)``. Why: a reader that knows its cells (the
        catalog's partition lists) skips building a dict per row, and a backend may build the
        tuples itself (SQLite reads them out of each row's blob), which is most of a large
        scan's cost.
        """
        wanted = self._projected(columns)
        rows = self.scan(start, stop, prefix, wanted, None, limit, batch_size)
        return ((key, tuple(map(cells.get, wanted))) for key, cells in rows)

    def get_columns(self, rows: Iterable[bytes], columns: Sequence[bytes]) -> list[RowValues]:
        """The rows among ``rows`` holding any of ``columns``, in byte order, each as a tuple of
        their values: what :meth:`scan_columns` yields for these keys, read in one round trip
        (:meth:`get_many`). Why: a reader that knows every key it needs (a sensor's day of
        hours) pays one call on HBase instead of a scanner's three. Cost: one round trip and
        O(n log n) to order the n rows found.

        >>> import tempfile
        >>> from airflow_partitions.kv import open_store
        >>> store = open_store(f"sqlite:///{tempfile.mkdtemp()}/doc.db")
        >>> store.create_table("t", ["cf"])
        >>> table = store.table("t")
        >>> table.put(b"b", {b"cf:x": b"2"}); table.put(b"a", {b"cf:x": b"1", b"cf:y": b"0"})
        >>> table.get_columns([b"c", b"b", b"a"], [b"cf:y", b"cf:x"])
        [(b'a', (b'0', b'1')), (b'b', (None, b'2'))]
        >>> store.close()
        """
        wanted = self._projected(columns)
        found = self.get_many(rows, wanted)
        return [(key, tuple(map(found[key].get, wanted))) for key in sorted(found)]

    @staticmethod
    def _projected(columns: Sequence[bytes]) -> tuple[bytes, ...]:
        """Validated, non-empty, distinct whole-cell columns (no family specs); a tuple
        validated before is returned at once (a sensor projects the same columns each poke)."""
        if isinstance(columns, tuple) and columns in _VALID_PROJECTIONS:
            return columns
        if isinstance(columns, bytes) or not columns:
            raise InvalidScan(f"scan_columns needs a non-empty list of columns, got {columns!r}")
        wanted = tuple(check_column(c) for c in columns)
        if len(set(wanted)) != len(wanted):
            raise InvalidScan(f"scan_columns got a column twice: {columns!r}")
        if len(_VALID_PROJECTIONS) < _VALID_PROJECTIONS_MAX:
            _VALID_PROJECTIONS.add(wanted)
        return wanted

    def feed_position(self) -> Hashable | None:
        """Where the table's change feed stands now, for :meth:`changes_since`; ``None`` when
        the table keeps no feed (HBase: Thrift1 has none; an SQLite file no writer of this
        version has written to yet).

        Take it *before* reading the rows it stands for: a write landing in between is then
        reported again, never missed.
        """
        return None

    def changes_since(self, position: Hashable) -> tuple[Hashable, tuple[bytes, ...]] | None:
        """The keys of the rows written (put, deleted, rewritten, by any writer) since
        ``position``, in the order written (a key may repeat), with the position to ask from
        next; ``None`` when the table cannot tell (no feed, the feed trimmed past
        ``position``, too many changes to list, the schema changed): then read the rows.

        Why: a reader that checked a range of rows re-reads only what changed in it
        (``catalog/rows/runs.py``). Cost on SQLite: one read transaction and the changed keys.
        """
        return None

    @abstractmethod
    def _scan(
        self,
        scan_range: ScanRange,
        columns: tuple[bytes, ...] | None,
        filter: ScanFilter | None,
        reverse: bool,
    ) -> Iterator[RowCells]:
        """The backend's scan over validated arguments."""


class KVStore(ABC):
    """A store of tables. Use as a context manager, or call ``close()``."""

    #: Whether a write that commits after another is never undone or hidden by it. SQLite's
    #: transactions give that. HBase does not: cells carry millisecond time stamps, so a
    #: delete can remove or mask a put of the same millisecond. The catalog's register skips
    #: re-reading its rows only where this holds (``catalog/writer.py``).
    writes_are_ordered: bool = False

    def __init__(self, url: str) -> None:
        self.url = url
        self.stats = StoreStats()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    @abstractmethod
    def table(self, name: str) -> KVTable:
        """A handle on a table; no round trip, no existence check (ops raise TableNotFound)."""

    def change_stamp(self) -> Hashable | None:
        """A value equal between two calls only if no row of the store changed in between
        (any table, any writer, any process), or ``None`` when the store cannot tell.

        Why: a verified cover of a store proven unchanged since it was checked is the cover
        checked then (``catalog/covers/verified.py``). HBase over Thrift1 has no such counter:
        ``None``, and every verification reads its rows.
        """
        return None

    def changed_rows(self, since: Sequence[tuple[str, Hashable]], *,
                     with_rows: Collection[str] = ()) -> list[FeedChanges] | None:
        """:meth:`KVTable.changes_since` of several tables from one snapshot, with the current
        cells of the rows named for the tables in ``with_rows``; ``None`` when any table
        cannot tell (as ``changes_since``) or a row named does not decode (read it the usual
        way, which reports it).

        Why: an answer resting on rows of two tables is proven still true by one round trip
        (``catalog/covers/answer_basis.py``). Cost on SQLite: one SELECT and the schema version
        read after it, without BEGIN or COMMIT. HBase keeps no feed: ``None``.
        """
        return None

    def reads_again(self, reads: Sequence[KeyedRead]) -> ReadsAgain | None:
        """The keyed ``reads``, to be asked again together (:class:`ReadsAgain`); None when the
        store has no cheaper way than reading them one by one.

        Why: on HBase an answer kept for a request rests on a few catalog rows and a day's
        partition rows; asked again they are sent in one write and compared as the bytes
        received (``kv/hbase_again.py``). SQLite proves its rows unchanged by its change stamp
        and feeds instead: None.
        """
        return None

    @abstractmethod
    def create_table(
        self, name: str, families: Iterable[str] = ("cf",), *, exist_ok: bool = False
    ) -> None:
        """Create a table with these column families; ``exist_ok`` makes it idempotent."""

    @abstractmethod
    def drop_table(self, name: str, *, missing_ok: bool = False) -> None:
        """Drop a table and all its rows."""

    @abstractmethod
    def table_exists(self, name: str) -> bool:
        """Whether the table exists (one round trip)."""

    @abstractmethod
    def list_tables(self) -> list[str]:
        """Names of this store's tables, sorted (without the HBase table prefix)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections. Safe to call twice."""

    def __enter__(self) -> KVStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
