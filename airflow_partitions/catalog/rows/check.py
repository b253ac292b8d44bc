"""Whether a partition row is whole: the one rule every reader applies before using a row.

Why (docs/design.md, invariant 8: damage is detected, named and never used): a row is used (listed,
put in a cover, counted in a timeline) only when it is positively registered and every cell a
partition is built from decodes and agrees with the row key. Without this check, a row in an
unknown state, with a location of swapped bytes, with invalid UTF-8, or whose ``p:v.<col>`` text
names another partition than its key would be listed and covered. A damaged row is never used:
readers skip it (an under-report) and log it by name; ``reconcile`` reports it under
``corrupt_rows`` and keeps it, and ``reconcile --drop-corrupt`` deletes it so that
``partition add`` can register it again.

Cost: :func:`RowCheck.whole` checks a run of projected rows with list operations and one
``startswith`` per row (the row key against the texts); :func:`RowCheck.damage` says what is
wrong with one row, a few microseconds, and runs only on rows the bulk check refused.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Concatenate, Final, ParamSpec, TypeVar

from airflow_partitions.catalog.definitions.tables import StorageDef, typed_value
from airflow_partitions.catalog.rows.layout import DROPPING, LIVE, CatalogRows
from airflow_partitions.errors import CorruptPartitionRow, InvalidInput
from airflow_partitions.keys import (
    ColumnType,
    KeyEncodingError,
    decode_key,
    encode_value,
    key_prefix,
    string_field,
)
from airflow_partitions.kv import CorruptCell, DamagedCells
from airflow_partitions.periods import UpdatePeriod

log = logging.getLogger(__name__)

#: The states of a registered row: ``dropping`` is still registered until its row is deleted.
REGISTERED: Final = (LIVE, DROPPING)
#: A location never holds control characters (``check_location`` refuses them on input).
_CONTROL: Final = re.compile(rb"[\x00-\x1f\x7f]")
_CONTROL_BYTES: Final = bytes([*range(0x20), 0x7F])

RowValues = tuple[bytes | None, ...]


class DamagedPartitionRow(CorruptPartitionRow):
    """One partition row cannot be used; the message names its storage, period and key."""

    def __init__(self, storage: str, period: UpdatePeriod, row: str, reason: str) -> None:
        self.storage, self.period, self.row, self.reason = storage, period, row, reason
        super().__init__(
            f"the {period.name} partition row ({row}) of storage {storage!r} is damaged: "
            f"{reason}; run 'airflow-partitions reconcile {storage}' to list it, and "
            f"'airflow-partitions reconcile {storage} --drop-corrupt' to remove it before "
            "registering it again"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return type(self), (self.storage, self.period, self.row, self.reason)


def describe_key(sdef: StorageDef, key: bytes) -> str:
    """``dt=2015-01-01-03, region=us`` from a row key (its hex when the key does not decode)."""
    try:
        _, _, values = decode_key(sdef.key_schema, key)
    except KeyEncodingError:
        return f"key {key.hex()}"
    return ", ".join(f"{c}={v}" for c, v in zip(sdef.column_names, values, strict=True))


class RowCheck:
    """The checks of one (storage, period) over rows projected as (location, version, each
    value as text, ..., state): :class:`.rows.decode.PartitionDecoder`'s columns."""

    def __init__(self, sdef: StorageDef, period: UpdatePeriod) -> None:
        self.sdef = sdef
        self.period = period
        self.width = len(sdef.columns)

    @functools.cached_property
    def base(self) -> bytes:
        """The key bytes every row of the (storage, period) starts with (built when needed:
        a small cover's fast path never compares keys)."""
        return key_prefix(self.sdef.key_schema, self.sdef.name, self.period.name, ())

    @functools.cached_property
    def strings(self) -> bool:
        return all(t is ColumnType.STRING for _, t in self.sdef.columns)

    @functools.cached_property
    def fields(self) -> tuple[_FieldCache | None, ...]:
        """Per column: None for a string, else the cache of its texts' key fields."""
        return tuple(None if t is ColumnType.STRING else _FieldCache(c, t)
                     for c, t in self.sdef.columns)

    def key_head(self, texts: Sequence[bytes | None]) -> bytes | None:
        """The key bytes before the trailer that ``texts`` (one per column) encode, or None."""
        if self.strings:
            if None in texts:
                return None
            return self.base + b"".join([string_field(t) for t in texts if t is not None])
        parts = [self.base]
        for (name, ctype), raw in zip(self.sdef.columns, texts, strict=True):
            if raw is None:
                return None
            try:
                parts.append(encode_value(ctype, typed_value(name, ctype, raw.decode())))
            except (InvalidInput, UnicodeDecodeError):
                return None
        return b"".join(parts)

    def whole(self, rows: Sequence[RowValues], keys: Sequence[bytes] | None) -> bool:
        """Whether every row is whole (cheap, in bulk); False means: check them one by one.

        Each check is a C-level pass over one projected column: the states counted, the
        locations joined and checked for UTF-8 and control characters, the version lengths
        collected, and (unless ``keys`` is None: the caller proved the keys otherwise) each
        key compared with the key bytes its value texts make. About 0.3 µs a row.
        """
        states = list(map(itemgetter(-1), rows))
        if states.count(LIVE) + states.count(DROPPING) != len(states):
            return False
        locs = list(map(itemgetter(0), rows))
        try:
            joined = b"/".join(locs)
        except TypeError:  # a location is missing: row by row
            return False
        if b"" in locs:
            return False
        versions = list(map(itemgetter(1), rows))
        if versions.count(None):  # rows from before versions read as version 1
            versions = [v for v in versions if v is not None]
        if not set(map(len, versions)) <= {8}:
            return False
        if len(joined.translate(None, _CONTROL_BYTES)) != len(joined) or not (
                joined.isascii() or _utf8(joined)):
            return False
        if keys is None:
            return True
        fields: list[Iterable[bytes | None]] = [repeat(self.base)]
        try:
            for at, cache in enumerate(self.fields, 2):
                texts = list(map(itemgetter(at), rows))
                if cache is None:  # a string: 01 text 00 01 (a text holding 00: row by row)
                    every = b"/".join(texts)
                    if b"\x00" in every or not (every.isascii() or _utf8(every)):
                        return False
                    fields.append(map(bytes.__add__, map(b"\x01".__add__, texts),
                                      repeat(b"\x00\x01")))
                else:  # a typed column: its few distinct texts encoded once each
                    fields.append(map(cache.__getitem__, texts))
            heads = map(b"".join, zip(*fields, strict=False))  # repeat() is endless
            return all(map(bytes.startswith, keys, heads))
        except TypeError:  # a value cell is missing, or a text names no value
            return False

    def damage(self, key: bytes, values: RowValues) -> str | None:
        """What is wrong with one row, or None when it is whole."""
        state = values[-1]
        if state is None:
            return "no state (no p:state cell)"
        if state not in REGISTERED:
            return f"state {state!r}, neither live nor dropping"
        loc = values[0]
        if loc is None:
            return "it has no location cell p:loc"
        if not loc:
            return "its location is empty"
        if not _utf8(loc):
            return "its location is not UTF-8"
        if _CONTROL.search(loc) is not None:
            return "its location holds control characters"
        version = values[1]
        if version is not None and len(version) != 8:
            return f"its version cell p:ver holds {len(version)} bytes, not 8"
        texts = values[2:2 + self.width]
        for name, raw in zip(self.sdef.column_names, texts, strict=True):
            if raw is None:
                return f"it has no p:v.{name} cell"
            if not _utf8(raw):
                return f"its p:v.{name} cell is not UTF-8"
        head = self.key_head(texts)
        if head is None or not key.startswith(head):
            said = ", ".join(f"{c}={(t or b'').decode()}"
                             for c, t in zip(self.sdef.column_names, texts, strict=True))
            return f"its value cells say {said}, which is not its key"
        return None

    def report(self, key: bytes, reason: str) -> DamagedPartitionRow:
        """The typed error naming the row (readers log it; point reads raise it)."""
        return DamagedPartitionRow(self.sdef.name, self.period, describe_key(self.sdef, key),
                                   reason)

    def skip(self, key: bytes, reason: str) -> None:
        """A reader leaves a damaged row out: say so in the log, by name."""
        log.warning("%s (left out)", self.report(key, reason))


class _FieldCache(dict[bytes, bytes | None]):
    """A typed column's value texts -> their key fields (None: no value), each computed once.

    Why: an int, date or timestamp column has few distinct values (a year, a month), and
    encoding one costs a few microseconds; the bulk check reads the cache with a C-level map.
    Bounded: cleared once it holds :data:`_FIELDS_MAX` texts.
    """

    def __init__(self, column: str, ctype: ColumnType) -> None:
        super().__init__()
        self.column, self.ctype = column, ctype

    def __missing__(self, raw: bytes) -> bytes | None:
        try:
            field: bytes | None = encode_value(
                self.ctype, typed_value(self.column, self.ctype, raw.decode()))
        except (InvalidInput, UnicodeDecodeError, AttributeError):
            field = None
        if len(self) >= _FIELDS_MAX:
            self.clear()
        self[raw] = field
        return field


_FIELDS_MAX: Final = 65_536


_P = ParamSpec("_P")
_R = TypeVar("_R")
_Writer = Callable[Concatenate[CatalogRows, StorageDef, UpdatePeriod, _P], _R]


def names_damaged_rows(write: _Writer[_P, _R]) -> _Writer[_P, _R]:
    """A writer whose partition rows' blobs do not decode raises :class:`DamagedPartitionRow`
    naming the row (storage, period, key) and the repair, not a bare ``corrupt cell blob``; a
    damaged cell of another table (a slice timeline in the storage row) keeps its own error,
    which names its table, row and cell."""
    @functools.wraps(write)
    def named(rows: CatalogRows, sdef: StorageDef, period: UpdatePeriod, /,
              *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return write(rows, sdef, period, *args, **kwargs)
        except CorruptCell as exc:
            if exc.row is None or (isinstance(exc, DamagedCells)
                                   and exc.table not in ("", rows.partitions.name)):
                raise
            raise RowCheck(sdef, period).report(exc.row, str(exc)) from None

    return named


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False
    return True


__all__ = ["REGISTERED", "DamagedPartitionRow", "RowCheck", "describe_key",
           "names_damaged_rows"]
