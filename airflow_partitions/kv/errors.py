"""Typed errors of the key/value layer.

Callers (the catalog, the Airflow layer) catch these instead of backend exceptions, so a
dropped HBase connection and a locked SQLite file look the same to them.
"""

from __future__ import annotations


class KVError(Exception):
    """Base class of every error raised by ``airflow_partitions.kv``."""


class StoreUnavailable(KVError):
    """The store could not be reached, or the connection dropped mid-request.

    The message names the store URL and the operation. For a non-idempotent write
    (check-and-put, increment) the outcome is unknown: re-read before retrying.
    """

    def __init__(self, url: str, operation: str, reason: str) -> None:
        self.url = url
        self.operation = operation
        self.reason = reason
        super().__init__(f"store {url} is unavailable while {operation}: {reason}")


class StoreDamaged(KVError):
    """The store is there but permanently unreadable: waiting will not help.

    A SQLite file that is not a database, or whose pages are malformed. Unlike
    :class:`StoreUnavailable` (a transient outage: a sensor keeps waiting), a sensor fails at
    once with it and a trigger yields an error event. The message names the store and what
    SQLite said; restore the file from a backup, or move it away to start an empty catalog.
    """

    def __init__(self, url: str, operation: str, reason: str) -> None:
        self.url, self.operation, self.reason = url, operation, reason
        super().__init__(f"store {url} is damaged (found while {operation}): {reason}; "
                         "restore it from a backup or move it away")


class TableNotFound(KVError):
    """The table does not exist (create it with ``KVStore.create_table``)."""

    def __init__(self, table: str, url: str = "") -> None:
        self.table = table
        where = f" in {url}" if url else ""
        super().__init__(f"table {table!r} does not exist{where}")


class TableExists(KVError):
    """``create_table`` without ``exist_ok`` found the table already there."""

    def __init__(self, table: str, url: str = "") -> None:
        self.table = table
        where = f" in {url}" if url else ""
        super().__init__(f"table {table!r} already exists{where}")


class InvalidArgument(KVError, ValueError):
    """A malformed argument: table name, column spec, row key, mutation."""


class InvalidStoreURL(InvalidArgument):
    """A store URL that cannot be parsed; the message names the bad part."""


class InvalidScan(InvalidArgument):
    """A scan or filter that cannot be expressed (e.g. ``prefix`` with ``start``)."""


class CorruptCell(KVError):
    """A cell holds bytes that the operation cannot interpret (e.g. a counter not 8 bytes).

    ``row`` is the key of the row whose stored bytes do not decode, when a read found it (a
    scan sets it, so that a caller can name the row, leave it out and read on past it).
    """

    row: bytes | None = None


class DamagedCells(CorruptCell):
    """Cells whose bytes fail their own checksum, read beside cells that are sound.

    Raised by a read that met them (``get``, ``get_many``, scans) instead of its answer, so a
    damaged cell is never handed out as data and never silently left out. ``found`` holds every
    row the read returned, with its readable cells; ``damaged`` names, per row, the damaged
    columns with their stored bytes: not data, only what a check-and-put that replaces the cell
    compares against. ``row`` is the first damaged row and ``table`` the table read; the
    message names both and every damaged column.
    """

    def __init__(self, found: dict[bytes, dict[bytes, bytes]],
                 damaged: dict[bytes, dict[bytes, bytes]], table: str = "") -> None:
        super().__init__()
        self.found, self.damaged, self.table = found, damaged, table
        self.row = next(iter(damaged), None)

    @property
    def cells(self) -> dict[bytes, bytes]:
        """The readable cells of the first damaged row."""
        return self.found.get(self.row, {}) if self.row is not None else {}

    def columns(self, row: bytes | None = None) -> tuple[bytes, ...]:
        """The damaged columns of ``row`` (the first damaged row by default)."""
        at = self.row if row is None else row
        return tuple(self.damaged.get(at, {})) if at is not None else ()

    def __str__(self) -> str:
        where = f" of table {self.table!r}" if self.table else ""
        rows = "; ".join(
            f"row {row!r}: {', '.join(repr(c) for c in cells)}"
            for row, cells in self.damaged.items())
        return (f"damaged cells{where} (their bytes do not match their checksums; the "
                f"row's other cells are sound): {rows}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.found, self.damaged, self.table))
