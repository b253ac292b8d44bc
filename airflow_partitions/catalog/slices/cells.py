"""Where slice timelines live: their cells in the storage row, and the build marker.

A *slice timeline* is the timeline of one (storage, period, time column, slice), where a slice
is the combination of a row's values of the storage's declared dimension columns
(``region=eu``). It is kept besides the per-column timeline ``t:<PERIOD>.<col>`` so that a
cover asks "does every required region have this hour?" from memory, not from the rows.

Cells, in the storage row ``S\\x00<storage>`` of the ``catalog`` table:

* ``t:<PERIOD>.<col>@<slice>``: one cell per slice timeline, the same JSON as a per-column
  timeline cell (``{"version", "kind", "properties"}``, properties under the Lens prefix of
  ``<PERIOD>.<col>``), always the Ranges implementation (a slice's history is a few runs),
  updated only by check-and-put. ``<slice>`` is ``col=value[,col=value...]`` sorted by column,
  each value percent-encoded (so ``,``, ``=``, ``@`` and ``%`` in a value cannot be misread).
  Column names are identifiers, so no per-column cell name holds ``@``: the two never collide.
* ``t:slices``: the build marker, JSON ``{"columns": [...], "built": ["<PERIOD>.<col>", ...]}``:
  the dimension columns the slice timelines are kept for, and the timelines whose slice
  timelines were built from the rows (or kept since the storage was created with them). A
  reader uses slice timelines only where the marker names the storage's declared columns and
  the timeline; elsewhere it falls back to reading the rows (:mod:`.slices.completeness`). The
  marker names timelines, not slices: a required slice with no cell, at hours the per-column
  timeline advertises, while the rows have that slice, is the marker and the cells disagreeing
  (a lost cell); readers then read that slice from the rows with a WARNING
  (:func:`.slices.completeness.read_lost_slices`) and ``reconcile`` rebuilds its cell.

Lens export reads per-column timelines only (:meth:`Catalog.timelines`), so it never sees
these cells; Lens has no slices and its export is the union, as before.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, unquote

from airflow_partitions.catalog.definitions.tables import StorageDef, encode_json
from airflow_partitions.catalog.rows.layout import CorruptTimelineCell, TimelineCell
from airflow_partitions.cover import Slice
from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.periods import UpdatePeriod

#: The build marker's cell.
MARKER: Final = b"t:slices"
_SEP: Final = "@"


def slice_columns(sdef: StorageDef) -> tuple[str, ...]:
    """The declared dimension columns, sorted: the shape of the storage's slices."""
    return tuple(sorted(d.column for d in sdef.dimensions))


def slice_of_values(columns: tuple[str, ...], values: Mapping[str, str]) -> Slice:
    """The slice of a row's values (``columns`` as :func:`slice_columns` gives them)."""
    return tuple((c, values[c]) for c in columns)


def slice_key(slice_: Slice) -> str:
    """``region=eu,source=web`` with each value percent-encoded."""
    return ",".join(f"{c}={quote(v, safe='')}" for c, v in slice_)


def parse_slice_key(text: str) -> Slice:
    """The inverse of :func:`slice_key` (``CorruptTimeline`` when it is not one)."""
    out = []
    for part in text.split(","):
        column, sep, value = part.partition("=")
        if not sep or not column:
            raise CorruptTimeline(f"slice {text!r} is not col=value[,col=value...]")
        out.append((column, unquote(value)))
    return tuple(out)


@functools.lru_cache(maxsize=1 << 16)
def slice_cell(period: UpdatePeriod, column: str, slice_: Slice) -> bytes:
    """``t:<PERIOD>.<col>@<slice>``. Cached (at most 65,536 names): a batch's steps name each
    slice's cell several times, and percent-encoding its values is the costly part."""
    return f"t:{period.name}.{column}{_SEP}{slice_key(slice_)}".encode()


def slice_cell_prefix(period: UpdatePeriod, column: str) -> bytes:
    return f"t:{period.name}.{column}{_SEP}".encode()


def parse_slice_cell(name: bytes) -> tuple[str, str, Slice] | None:
    """``(period name, column, slice)`` of a slice cell's name, None for any other cell."""
    text = name.decode("utf-8", "replace")
    if not text.startswith("t:") or _SEP not in text:
        return None
    head, _, key = text[2:].partition(_SEP)
    period, dot, column = head.partition(".")
    if not dot:
        return None
    try:
        return period, column, parse_slice_key(key)
    except CorruptTimeline:
        return None


def read_slice_cell(raw: bytes | None, storage: str, period: UpdatePeriod, column: str,
                    slice_: Slice) -> TimelineCell:
    """Decode and check one slice cell; a corrupt one raises :class:`CorruptTimelineCell`
    naming the slice, which ``reconcile`` rebuilds from the rows."""
    try:
        cell = TimelineCell.decode(raw)
        cell.check(period, column)
    except CorruptTimeline as exc:
        raise CorruptTimelineCell(storage, period, f"{column} ({slice_key(slice_)})",
                                  str(exc)) from None
    return cell


@dataclass(frozen=True)
class SliceMarker:
    """The build marker: which timelines have slice timelines a reader may use."""

    columns: tuple[str, ...]
    built: frozenset[str]

    @classmethod
    def decode(cls, raw: bytes | None) -> SliceMarker | None:
        """None when absent or unreadable (a reader then reads the rows: never over-reports)."""
        if not raw:
            return None
        try:
            data = json.loads(raw)
            return cls(tuple(str(c) for c in data["columns"]),
                       frozenset(str(b) for b in data["built"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def encode(self) -> bytes:
        return encode_json({"columns": list(self.columns), "built": sorted(self.built)})

    def covers(self, sdef: StorageDef, period: UpdatePeriod, column: str) -> bool:
        """Whether the slice timelines of (period, column) are usable for ``sdef``."""
        return self.columns == slice_columns(sdef) and timeline_name(period, column) in self.built


def timeline_name(period: UpdatePeriod, column: str) -> str:
    return f"{period.name}.{column}"


def every_timeline(sdef: StorageDef) -> frozenset[str]:
    return frozenset(timeline_name(p, c) for p in sdef.periods for c in sdef.time_columns)


def created_marker(sdef: StorageDef) -> dict[bytes, bytes]:
    """The marker of a storage created with dimensions (no rows yet: every slice timeline is
    trivially built), as cells to put with the ``present`` flag; none without dimensions."""
    if not sdef.dimensions:
        return {}
    return {MARKER: SliceMarker(slice_columns(sdef), every_timeline(sdef)).encode()}


__all__ = [
    "MARKER",
    "SliceMarker",
    "created_marker",
    "every_timeline",
    "parse_slice_cell",
    "parse_slice_key",
    "read_slice_cell",
    "slice_cell",
    "slice_cell_prefix",
    "slice_columns",
    "slice_key",
    "slice_of_values",
    "timeline_name",
]
