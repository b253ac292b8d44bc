"""How a row's cells are written as one blob: the forms and when each is used.

The layout of every form, and how they are read, is in :mod:`.cell_blob`. Here: the one-CRC
narrow form (tag 3) for small rows of one column family (a partition row: small, hot, and a
damaged one costs only that row anyway), and the per-cell form (tag 5, a CRC-32 per value and
one over the directory) for every other row, so that one damaged byte costs only its cell.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from typing import Final
from zlib import crc32

#: The tags of the forms (see :mod:`.cell_blob`); 1, 2 and 4 are only read, never written.
NARROW, WIDE, NARROW_SUM, WIDE_SUM, CELL_SUMS = 1, 2, 3, 4, 5
NARROW_MAX: Final = 0xFFFF
#: Above this many value bytes a row is written in the per-cell form whatever its families.
PER_CELL_BYTES: Final = 4096
#: Distinct column tuples remembered; a table has a handful, so this bound is a safeguard.
CACHE_MAX: Final = 4096


@dataclass(frozen=True, slots=True)
class Encoder:
    """For one column order as given: the sorted columns, a getter of their values in that
    order, the narrow directory, the struct of the offsets, and whether the row's cells span
    more than one family (then it is always written in the per-cell form)."""

    columns: tuple[bytes, ...]
    values_of: Callable[[Mapping[bytes, bytes]], tuple[bytes, ...]]
    head: bytes
    first: int
    offsets: struct.Struct
    per_cell: bool


#: Keyed by the columns in the caller's order: bulk writers build every row's cells alike, so
#: a row costs no sort, and one itemgetter call reads its values in sorted order.
_ENCODERS: dict[tuple[bytes, ...], Encoder] = {}


def encoder_of(given: tuple[bytes, ...]) -> Encoder:
    """The (cached) encoder of a tuple of columns, in the caller's order."""
    found = _ENCODERS.get(given)
    if found is not None:
        return found
    columns = tuple(sorted(given))
    n = len(columns)
    names = b"".join(columns)
    size = 5 + 2 * n + len(names)
    # Masked so that packing never fails: a directory this large overflows the offsets anyway.
    fields = (size & NARROW_MAX, n & NARROW_MAX, *(len(c) & NARROW_MAX for c in columns))
    head = struct.pack(f">B{n + 2}H", NARROW_SUM, *fields) + names
    values_of: Callable[[Mapping[bytes, bytes]], tuple[bytes, ...]]
    if n > 1:
        values_of = itemgetter(*columns)
    else:
        values_of = lambda cells: tuple(cells[c] for c in columns)  # noqa: E731
    per_cell = len({c.partition(b":")[0] for c in columns}) > 1
    encoder = Encoder(columns, values_of, head, size + 2 * (n + 1),
                      struct.Struct(f">{n + 1}H"), per_cell)
    if len(_ENCODERS) >= CACHE_MAX:
        _ENCODERS.clear()
    _ENCODERS[given] = encoder
    return encoder


def encode_cells(cells: Mapping[bytes, bytes],
                 kept_sums: Mapping[bytes, int] | None = None) -> bytes:
    """The blob of ``cells`` (columns sorted ascending; see :mod:`.cell_blob`).

    ``kept_sums`` gives, for damaged cells carried over from a stored row, the checksum they
    were stored with, so that they stay damaged (and named) until a write replaces them: the
    row is then written in the per-cell form.
    """
    encoder = encoder_of(tuple(cells))
    values = encoder.values_of(cells)
    if kept_sums:
        return encode_per_cell(encoder.columns, values, kept_sums)
    return blob_of(encoder, values)


def blob_of(encoder: Encoder, values: tuple[bytes, ...]) -> bytes:
    """The blob of ``values``, given in the encoder's (sorted) column order."""
    if encoder.per_cell:
        return encode_per_cell(encoder.columns, values)
    ends = list(accumulate(map(len, values), initial=encoder.first))
    if ends[-1] - encoder.first > PER_CELL_BYTES or ends[-1] > NARROW_MAX:
        return encode_per_cell(encoder.columns, values)
    body = b"".join((encoder.head, encoder.offsets.pack(*ends), *values))
    return body + crc32(body).to_bytes(4, "little")


def encode_per_cell(columns: tuple[bytes, ...], values: tuple[bytes, ...],
                    kept_sums: Mapping[bytes, int] | None = None) -> bytes:
    """The per-cell form (tag 5, u32 integers): a CRC-32 per value, one over the head."""
    n = len(columns)
    names = b"".join(columns)
    size = 9 + 4 * n + len(names)
    first = size + 4 * (2 * n + 2)
    ends = accumulate(map(len, values), initial=first)
    sums = [crc32(v) for v in values]
    if kept_sums:
        sums = [kept_sums.get(c, s) for c, s in zip(columns, sums, strict=True)]
    head = b"".join((struct.pack(f">BII{n}I", CELL_SUMS, size, n, *map(len, columns)), names,
                     struct.pack(f">{n + 1}I{n}I", *ends, *sums)))
    return b"".join((head, crc32(head).to_bytes(4, "big"), *values))


class RowEncoder:
    """Encodes rows that share one tuple of columns, each given as its values in that order.

    Why: a bulk writer's rows all have the same columns; the sort and the directory are worked
    out once, and a row is one pick of its values, one pack of its offsets and one join.

    >>> RowEncoder((b"cf:bb", b"cf:a")).encode((b"xy", b"1")) == encode_cells(
    ...     {b"cf:bb": b"xy", b"cf:a": b"1"})
    True
    """

    __slots__ = ("_encoder", "_pick")

    def __init__(self, columns: Sequence[bytes]) -> None:
        given = tuple(columns)
        self._encoder = encoder_of(given)
        position = {column: index for index, column in enumerate(given)}
        order = [position[column] for column in self._encoder.columns]
        self._pick: Callable[[Sequence[bytes]], tuple[bytes, ...]]
        if len(order) > 1:
            self._pick = itemgetter(*order)
        else:
            self._pick = _single(order[0])

    def encode(self, values: Sequence[bytes]) -> bytes:
        """The blob of one row's values (in the columns' order as given)."""
        return blob_of(self._encoder, self._pick(values))


def _single(at: int) -> Callable[[Sequence[bytes]], tuple[bytes, ...]]:
    """A pick of one value as a 1-tuple (``itemgetter`` of one index returns it bare)."""
    return lambda values: (values[at],)


__all__ = ["CELL_SUMS", "NARROW", "NARROW_SUM", "WIDE", "WIDE_SUM", "Encoder", "RowEncoder",
           "blob_of", "encode_cells", "encode_per_cell", "encoder_of"]
