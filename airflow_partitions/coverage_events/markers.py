"""Emission markers: what each coverage asset has announced, kept in the catalog's own store.

Why in the store, with check-and-put: the events for one window may be due in several
processes at once (the writing task, another writer's task, the follower), on several hosts.
Whoever swaps a window's marker from the state it read to ``claimed`` posts the event; every
other process sees its swap fail and posts nothing. So a window is announced once per
version, whichever writers complete it together. Cost: one small row per asset and window
(the inputs it was announced from, a few dozen bytes per partition).

Table :data:`TABLE`, family ``e``:

* row ``<asset uri> NUL``: cell ``e:seen``, when the asset was first followed (written once);
* row ``<asset uri> NUL <window key>``: cell ``e:m``, the marker (:class:`MarkerJson`).

A marker moves ``claimed`` -> ``emitted``; ``known`` marks a window that was already coverable
when the asset was first followed (announced never, so a new consumer does not re-run the past).
A claim older than :data:`CLAIM_TIMEOUT` belongs to a process that died between its claim and
its post; the next follower takes it over and posts the event.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal, TypedDict, cast

from airflow_partitions.kv import KVStore

TABLE: Final = "partition_emissions"
SEEN: Final = b"e:seen"
MARKER: Final = b"e:m"
#: Seconds after which a claim that was never completed is taken over.
CLAIM_TIMEOUT: Final = 60.0

Status = Literal["claimed", "emitted", "known"]


class MarkerJson(TypedDict):
    """One window's marker as stored."""

    status: Status
    #: 1 for the first announcement, +1 for each restatement.
    version: int
    restated: bool
    #: [storage, period, values, version] of each partition the window was covered by.
    inputs: list[list[str | int]]
    at: str


@dataclass(frozen=True)
class Marker:
    """A marker with the bytes it was read as (what a swap compares against)."""

    raw: bytes
    doc: MarkerJson

    def claim_expired(self, now: dt.datetime) -> bool:
        if self.doc["status"] != "claimed":
            return False
        at = dt.datetime.fromisoformat(self.doc["at"])
        return (now - at).total_seconds() > CLAIM_TIMEOUT


def decode(raw: bytes) -> Marker:
    """A stored marker; one that does not decode reads as a claim that expired long ago, so
    its window is announced again (once: the swap replaces the damaged bytes)."""
    try:
        doc = json.loads(raw)
        if isinstance(doc, dict) and doc.get("status") in {"claimed", "emitted", "known"}:
            return Marker(raw, cast(MarkerJson, doc))
    except ValueError:
        pass
    return Marker(raw, {"status": "claimed", "version": 0, "restated": False, "inputs": [],
                        "at": "1970-01-01T00:00:00+00:00"})


def encode(doc: MarkerJson) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


class EmissionMarkers:
    """Markers in the table :data:`TABLE` of ``kv`` (created on first use)."""

    def __init__(self, kv: KVStore) -> None:
        kv.create_table(TABLE, ("e",), exist_ok=True)
        self.table = kv.table(TABLE)

    @staticmethod
    def _row(uri: str, key: str = "") -> bytes:
        return uri.encode() + b"\x00" + key.encode()

    def first_seen(self, uri: str, now: dt.datetime) -> bool:
        """Record that ``uri`` is followed; True for the one call that recorded it first."""
        return self.table.check_and_put(self._row(uri), SEEN, None, now.isoformat().encode())

    def seen(self, uri: str) -> str | None:
        cell = self.table.get(self._row(uri), [SEEN]).get(SEEN)
        return cell.decode() if cell else None

    def assets(self) -> list[tuple[str, str]]:
        """Every followed asset's URI and when it was first followed. O(markers): the view's
        list, not a hot path."""
        out = []
        for row, cells in self.table.scan(columns=[SEEN]):
            if row.endswith(b"\x00") and SEEN in cells:
                out.append((row[:-1].decode(), cells[SEEN].decode()))
        return out

    def markers(self, uri: str) -> Iterator[tuple[str, Marker]]:
        """The window keys of ``uri`` with their markers, in key order: one prefix scan."""
        prefix = self._row(uri)
        for row, cells in self.table.scan(prefix=prefix, columns=[MARKER]):
            raw = cells.get(MARKER)
            if raw is None or row == prefix:
                continue
            yield row[len(prefix):].decode(), decode(raw)

    def get(self, uri: str, key: str) -> Marker | None:
        raw = self.table.get(self._row(uri, key), [MARKER]).get(MARKER)
        return None if raw is None else decode(raw)

    def swap(self, uri: str, key: str, old: Marker | None, new: MarkerJson) -> Marker | None:
        """Replace ``old`` (None: no marker) by ``new``; the new marker when this call did it."""
        raw = encode(new)
        done = self.table.check_and_put(self._row(uri, key), MARKER,
                                        None if old is None else old.raw, raw)
        return Marker(raw, new) if done else None
