"""Memos of values computed from rows just read, bounded by the rows they stand for.

:class:`RowsMemo` keeps a value with the rows it was computed from (a later read of equal
rows gets it again); :class:`LatestMemo` keeps the newest small values whose validity the
caller checks on each hit. :func:`forget_all` empties every one of them.

A verified cover keeps its checked rows packed (:class:`.packed_rows.PackedRows`) and learns
from the store's change feed which rows to read again (``KVTable.changes_since``,
``catalog/rows/runs.py``); nothing is trusted that was not just read or proven unchanged.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable, Sequence
from typing import Generic, Protocol, TypeVar

from airflow_partitions.defaults import verify_memo_rows

_Page = list[tuple[bytes, bytes]]
_Projected = list[tuple[bytes, tuple[bytes | None, ...]]]
_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")

#: Rows each memo keeps (``$AIRFLOW_PARTITIONS_VERIFY_MEMO_ROWS``; 0 keeps none): ten years
#: of hourly rows, or a month of 100 regions, fit; a larger scan is read and checked again.
MAX_ROWS = verify_memo_rows()


class _Memo(Protocol):
    def clear(self) -> None: ...


#: Every memo, so that :func:`forget_all` can empty them (weak: a memo a test made goes away).
_ALL: list[weakref.ref[_Memo]] = []


def _register(memo: _Memo) -> None:
    _ALL[:] = [r for r in _ALL if r() is not None]
    _ALL.append(weakref.ref(memo))


class RowsMemo(Generic[_K, _V]):
    """Values computed from rows just read, kept with those rows: a later read of equal rows
    gets the same value. At most ``max_rows`` rows are kept, the oldest entries dropped first.

    Thread-safe: a lookup reads one dict entry; inserts and evictions take a lock. Cost of a
    lookup: one comparison of the rows (``==``, which is identity first for each element).
    """

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self._max_rows = max_rows
        self._entries: dict[_K, tuple[Sequence[object], _V, int]] = {}
        self._rows = 0
        self._lock = threading.Lock()
        _register(self)

    def get(self, key: _K, rows: Sequence[object]) -> _V | None:
        """The value kept for ``key`` if it was computed from rows equal to ``rows``."""
        hit = self._entries.get(key)
        return hit[1] if hit is not None and hit[0] == rows else None

    def put(self, key: _K, rows: Sequence[object], value: _V, size: int | None = None) -> None:
        """Keep ``value``, computed from ``rows``; ``size``: the rows it stands for, if not
        ``len(rows)`` (an entry over the whole bound is not kept)."""
        size = len(rows) if size is None else size
        if size > self._max_rows:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._rows -= old[2]
            while self._entries and self._rows + size > self._max_rows:
                self._rows -= self._entries.pop(next(iter(self._entries)))[2]
            self._entries[key] = (rows, value, size)
            self._rows += size

    def clear(self) -> None:
        """Forget everything (tests; a process that wants the memory back)."""
        with self._lock:
            self._entries.clear()
            self._rows = 0


class LatestMemo(dict[_K, _V]):
    """A dict keeping its newest ``max_entries`` entries, emptied by :func:`forget_all`: for
    memos of small values (a computed cover, a scan's key range) whose validity the caller
    checks on each hit (the state object it came from, by identity)."""

    def __init__(self, max_entries: int = 256) -> None:
        super().__init__()
        self.max_entries = max_entries
        _register(self)

    def remember(self, key: _K, value: _V) -> None:
        """``self[key] = value``, dropping the oldest entry when full. O(1)."""
        if len(self) >= self.max_entries:
            self.pop(next(iter(self)), None)
        self[key] = value


def forget_all() -> None:
    """Empty every memo: the next read checks every row again (tests compare answers with
    and without them; a process may want the memory back)."""
    for ref in list(_ALL):
        memo = ref()
        if memo is not None:
            memo.clear()


__all__ = ["MAX_ROWS", "LatestMemo", "RowsMemo", "forget_all"]
