"""``Recent``: the small, thread-safe cache of the last answers that the view's modules keep.

Why one helper: the cover cache (:func:`.fact_lanes.cached_cover`) and the slice-presence cache
(:func:`.slice_lanes.read_presence`) are the same structure: a map of the last ``size`` keys
used, shared by the api-server's request threads. A miss is computed outside the lock (two
requests may compute the same answer; the later one is kept), so a slow answer never blocks
a hit.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    """The answers for the last ``size`` keys used (the least recently used goes first)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The kept answer for ``key`` (now the most recently used), or None."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
            return hit

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key``, dropping the least recently used beyond ``size``."""
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
