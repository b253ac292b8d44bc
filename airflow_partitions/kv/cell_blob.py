"""One KV row's cells packed into one BLOB: the SQLite backend stores a row as one SQL row.

Why: a partition row has six cells, and one SQL row per cell made a bulk registration six
B-tree inserts per partition; one blob per row is one insert. Reads must stay cheap too, so
the column names come first, as a *directory* whose length is known up front: rows with the
same columns (all partition rows of a table) start with the same directory bytes, and what
a directory says (names, where the value offsets are, which of them a reader wants) is
worked out once and cached per directory. Per row that leaves one dict lookup, one
``unpack_from`` and one slice per wanted value.

Layout, narrow form (tag 3, used whenever the whole blob fits in 65,535 bytes), all integers
big-endian but the checksum::

    u8 tag=3 | u16 D | u16 n | n x u16 name length | names | (n+1) x u16 offset | values | crc
    '---------------- directory: bytes [0, D) -----------'

``offset[i]`` is where value ``i`` starts in the blob, ``offset[n]`` where the values end; ``crc``
is the CRC-32 of everything before it, little-endian (without it a flipped byte, say a version read
as 0, would be silent; every reader checks it, one ``zlib.crc32`` a blob). Columns are sorted
ascending bytewise (as HBase returns them) and distinct. The wide form (tag 4) has every integer an
u32. Tags 1 and 2, the same forms without the checksum, come from older files: read unchecked,
rewritten with one at their row's next write. Example, two cells:

>>> blob = encode_cells({b"cf:bb": b"xy", b"cf:a": b"1"})
>>> blob.hex(" ")
'03 00 12 00 02 00 04 00 05 63 66 3a 61 63 66 3a 62 62 00 18 00 19 00 1b 31 78 79 69 26 9f 1d'
>>> # tag 3, D=18, n=2, name lengths 4 and 5, b"cf:a", b"cf:bb",
>>> # offsets 24, 25, 27, values b"1" and b"xy", the CRC-32
>>> decode_cells(blob)
{b'cf:a': b'1', b'cf:bb': b'xy'}
>>> decode_cells(blob[:-1])
Traceback (most recent call last):
...
airflow_partitions.kv.errors.CorruptCell: corrupt cell blob (31 bytes, 30 present)
>>> decode_cells(blob[:24] + b"2" + blob[25:])
Traceback (most recent call last):
...
airflow_partitions.kv.errors.CorruptCell: corrupt cell blob (its checksum does not match its bytes)
"""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from operator import itemgetter
from typing import Any, Generic, TypeVar
from zlib import crc32

from airflow_partitions.kv.errors import CorruptCell

_NARROW, _WIDE, _NARROW_SUM, _WIDE_SUM = 1, 2, 3, 4  # 1 and 2: older files, no checksum
_WIDTH = {1: 2, 2: 4, 3: 2, 4: 4}
_CODE = {1: "H", 2: "I", 3: "H", 4: "I"}
_TAIL = {1: 0, 2: 0, 3: 4, 4: 4}  # the CRC-32 after the values
_NARROW_TAGS = (_NARROW, _NARROW_SUM)
_RESIDUE = 0x2144DF1C  # crc32 of any bytes followed by their CRC-32 (little-endian)
_NARROW_MAX = 0xFFFF
#: Distinct directories remembered; a table has a handful, so this bound is only a safeguard.
_CACHE_MAX = 4096


@dataclass(frozen=True, slots=True, eq=False)  # hashed by identity: one per directory
class _Directory:
    """What one directory says: the columns, and how to read the value offsets after it."""

    columns: tuple[bytes, ...]
    pairs: tuple[tuple[int, bytes], ...]  # enumerate(columns), for the decoding loop
    offsets: struct.Struct  # (n+1) offsets, unpacked from byte ``size`` on
    size: int  # D, the directory's length
    first: int  # where the values must start: D + (n+1) * width
    tail: int  # bytes after the values: 4 (the CRC-32) for tags 3 and 4, else 0


_DIRECTORIES: dict[bytes, _Directory] = {}


@dataclass(frozen=True, slots=True)
class _Encoder:
    """For one column order as given: the sorted columns, a getter of their values in that
    order, the narrow directory, and the struct of the offsets."""

    columns: tuple[bytes, ...]
    values_of: Callable[[Mapping[bytes, bytes]], tuple[bytes, ...]]
    head: bytes
    first: int
    offsets: struct.Struct


#: Keyed by the columns in the caller's order: bulk writers build every row's cells alike, so
#: a row costs no sort, and one itemgetter call reads its values in sorted order.
_ENCODERS: dict[tuple[bytes, ...], _Encoder] = {}


def _encoder(given: tuple[bytes, ...]) -> _Encoder:
    columns = tuple(sorted(given))
    n = len(columns)
    names = b"".join(columns)
    size = 5 + 2 * n + len(names)
    # Masked so that packing never fails: a directory this large makes the blob wide anyway.
    fields = (size & _NARROW_MAX, n & _NARROW_MAX, *(len(c) & _NARROW_MAX for c in columns))
    head = struct.pack(f">B{n + 2}H", _NARROW_SUM, *fields) + names
    values_of: Callable[[Mapping[bytes, bytes]], tuple[bytes, ...]]
    if n > 1:
        values_of = itemgetter(*columns)
    else:
        values_of = lambda cells: tuple(cells[c] for c in columns)  # noqa: E731
    encoder = _Encoder(columns, values_of, head, size + 2 * (n + 1), struct.Struct(f">{n + 1}H"))
    if len(_ENCODERS) >= _CACHE_MAX:
        _ENCODERS.clear()
    _ENCODERS[given] = encoder
    return encoder


def encode_cells(cells: Mapping[bytes, bytes]) -> bytes:
    """The blob of ``cells`` (columns sorted ascending; see the module docstring)."""
    given = tuple(cells)
    encoder = _ENCODERS.get(given) or _encoder(given)
    return _blob(encoder, encoder.values_of(cells))


def _blob(encoder: _Encoder, values: tuple[bytes, ...]) -> bytes:
    """The blob of ``values``, given in the encoder's (sorted) column order."""
    try:
        offsets = encoder.offsets.pack(*accumulate(map(len, values), initial=encoder.first))
    except struct.error:  # an offset past 65,535: the wide form
        return _encode_wide(encoder.columns, values)
    return _summed(b"".join((encoder.head, offsets, *values)))


def _summed(body: bytes) -> bytes:
    """``body`` followed by its CRC-32 (little-endian, so that the whole has the residue)."""
    return body + crc32(body).to_bytes(4, "little")


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
        self._encoder = _ENCODERS.get(given) or _encoder(given)
        position = {column: index for index, column in enumerate(given)}
        order = [position[column] for column in self._encoder.columns]
        self._pick: Callable[[Sequence[bytes]], tuple[bytes, ...]]
        if len(order) > 1:
            self._pick = itemgetter(*order)
        else:
            self._pick = _single(order[0])

    def encode(self, values: Sequence[bytes]) -> bytes:
        """The blob of one row's values (in the columns' order as given)."""
        return _blob(self._encoder, self._pick(values))


def _single(at: int) -> Callable[[Sequence[bytes]], tuple[bytes, ...]]:
    """A pick of one value as a 1-tuple (``itemgetter`` of one index returns it bare)."""
    return lambda values: (values[at],)


def _encode_wide(columns: tuple[bytes, ...], values: tuple[bytes, ...]) -> bytes:
    """The wide form (u32 integers), for rows of 64 KiB and more."""
    n = len(columns)
    names = b"".join(columns)
    size = 9 + 4 * n + len(names)
    ends = accumulate(map(len, values), initial=size + 4 * (n + 1))
    head = struct.pack(f">BII{n}I", _WIDE_SUM, size, n, *map(len, columns))
    return _summed(b"".join((head, names, struct.pack(f">{n + 1}I", *ends), *values)))


def _corrupt(why: str) -> CorruptCell:
    return CorruptCell(f"corrupt cell blob ({why})")


def _directory(blob: bytes) -> _Directory:
    """The (cached) directory that starts ``blob``; raises CorruptCell if there is none."""
    try:
        tag = blob[0]
        if tag in _NARROW_TAGS:
            key = blob[: blob[1] << 8 | blob[2]]
        elif tag in (_WIDE, _WIDE_SUM):
            key = blob[: int.from_bytes(blob[1:5], "big")]
        else:
            raise _corrupt(f"unknown tag {tag}")
    except IndexError:
        raise _corrupt(f"{len(blob)} bytes, too short for a directory") from None
    found = _DIRECTORIES.get(key)
    if found is None:
        found = _parse_directory(key, tag, len(blob))
        if len(_DIRECTORIES) >= _CACHE_MAX:
            _DIRECTORIES.clear()
        _DIRECTORIES[key] = found
    return found


def _parse_directory(key: bytes, tag: int, blob_size: int) -> _Directory:
    """Check and read a directory; only done once per distinct directory."""
    width, code = _WIDTH[tag], _CODE[tag]
    fixed = 1 + 2 * width
    if len(key) < fixed:
        raise _corrupt(f"a blob of {blob_size} bytes, too short for its directory")
    size, n = struct.unpack_from(f">{code}{code}", key, 1)
    names_at = fixed + n * width
    if len(key) != size or names_at > size:
        raise _corrupt(f"a directory of {size} bytes for {n} columns in a blob of {blob_size}")
    lengths = struct.unpack_from(f">{n}{code}", key, fixed)
    starts = list(accumulate(lengths, initial=names_at))
    if starts[-1] != size:
        raise _corrupt(f"column names of {starts[-1] - names_at} bytes in a {size}-byte directory")
    columns = tuple(key[a:b] for a, b in pairwise(starts))
    if any(a >= b for a, b in pairwise(columns)):
        raise _corrupt("columns not sorted and distinct")
    offsets = struct.Struct(f">{n + 1}{code}")
    return _Directory(columns, tuple(enumerate(columns)), offsets, size, size + (n + 1) * width,
                      _TAIL[tag])


def _offsets(blob: bytes, directory: _Directory) -> tuple[int, ...]:
    """The value offsets of ``blob``, checked to be in order and to end at the blob's end."""
    try:
        offsets: tuple[int, ...] = directory.offsets.unpack_from(blob, directory.size)
    except struct.error:
        raise _corrupt(f"{len(blob)} bytes, too short for its offsets") from None
    if offsets[-1] + directory.tail != len(blob):
        raise _corrupt(f"{offsets[-1] + directory.tail} bytes, {len(blob)} present")
    if directory.tail and crc32(blob) != _RESIDUE:
        raise _corrupt("its checksum does not match its bytes")
    if offsets[0] != directory.first:
        raise _corrupt(f"values start at {offsets[0]}, not after the offsets at {directory.first}")
    if list(offsets) != sorted(offsets):
        raise _corrupt("value offsets out of order")
    return offsets


def decode_cells(blob: bytes) -> dict[bytes, bytes]:
    """All cells of a blob, columns in ascending order."""
    directory = _directory(blob)
    o = _offsets(blob, directory)
    return {c: blob[o[i] : o[i + 1]] for i, c in directory.pairs}


def columns_of(blob: bytes) -> tuple[bytes, ...]:
    """The columns a blob holds, without reading its values."""
    return _directory(blob).columns


_UNKNOWN: Any = object()
_P = TypeVar("_P")


class _PlannedReader(ABC, Generic[_P]):
    """What :class:`Projection` and :class:`Selection` share: a plan per directory, cached by
    the directory's bytes, and each row's value offsets, unpacked and checked.

    A reader checks that the offsets start after the directory and end at the blob's end (so a
    truncated or mislabelled blob is a CorruptCell), not that every offset in between is in
    order: that check cost a fifth of a projected scan. ``decode_cells`` checks them all.
    """

    __slots__ = ("_plans",)

    def __init__(self) -> None:
        self._plans: dict[bytes, tuple[_Directory, _P] | None] = {}

    @abstractmethod
    def _make(self, directory: _Directory) -> _P | None:
        """The subclass's plan for a directory; None when a row of it has nothing wanted."""

    def _plan(self, blob: bytes) -> tuple[_Directory, _P] | None:
        """The plan for ``blob``'s directory (checked by ``_directory``), cached if narrow."""
        directory = _directory(blob)
        made = self._make(directory)
        entry = None if made is None else (directory, made)
        if blob[0] in _NARROW_TAGS:
            if len(self._plans) >= _CACHE_MAX:
                self._plans.clear()
            self._plans[blob[: directory.size]] = entry
        return entry

    def _entry(self, blob: bytes) -> tuple[bytes | None, tuple[_Directory, _P] | None]:
        """The plan of ``blob``'s directory, and the head bytes that a later row with the same
        directory starts with (None when its plan is not cached: look it up again)."""
        try:
            head = blob[: blob[1] << 8 | blob[2]] if blob[0] in _NARROW_TAGS else None
        except IndexError:
            head = None
        plans = self._plans
        entry = plans.get(head, _UNKNOWN) if head is not None else _UNKNOWN
        if entry is _UNKNOWN:
            entry = self._plan(blob)
        cached = head is not None and len(head) >= 3 and head in plans
        return (head if cached else None), entry

    def _planned(self, rows: Iterable[tuple[bytes, bytes]]
                 ) -> Iterator[tuple[bytes, bytes, _P, tuple[int, ...]]]:
        """``(key, blob, plan, offsets)`` of each row that holds something wanted.

        Per row: a prefix test against the previous row's directory (the plan is looked up
        only when it differs), one unpack.
        """
        head: bytes | None = None
        entry: tuple[_Directory, _P] | None = None
        key = b""
        try:
            for key, blob in rows:
                if head is None or not blob.startswith(head):  # the head holds its length
                    head, entry = self._entry(blob)
                if entry is None:
                    continue
                directory, plan = entry
                try:
                    o = directory.offsets.unpack_from(blob, directory.size)
                except struct.error:
                    raise _corrupt(f"{len(blob)} bytes, too short for its offsets") from None
                if o[0] != directory.first or o[-1] + directory.tail != len(blob) or (
                        directory.tail and crc32(blob) != _RESIDUE):
                    _offsets(blob, directory)  # raises, saying what is wrong
                yield key, blob, plan, o
        except CorruptCell as exc:
            exc.row = key  # the row a caller names and reads on past
            raise


def _unpack_nothing(blob: bytes, offset: int) -> tuple[Any, ...]:
    """Stands for a directory's unpack before the first row (never called)."""
    raise AssertionError("no directory yet")


#: A projection's plan: the offset index of each wanted column (None: absent), and the same
#: as plain ints when every wanted column is present (the common case), else None.
_Slots = tuple[tuple[int | None, ...], tuple[int, ...] | None]


#: wanted columns -> the directory plans of every Projection of them (see its __init__).
_PROJECTION_PLANS: dict[tuple[bytes, ...], dict[bytes, Any]] = {}


class Projection(_PlannedReader[_Slots]):
    """Reads a fixed tuple of whole columns out of blobs (the catalog's full scans).

    Per directory it remembers which offsets the wanted columns sit at (and whether all are
    present), so reading a row is a dict lookup on the directory's bytes, an unpack and one
    slice per wanted column. ``page`` does a whole page in one loop: per row calls were a good
    part of a scan's cost.
    """

    __slots__ = ("wanted",)

    def __init__(self, wanted: tuple[bytes, ...]) -> None:
        super().__init__()
        self.wanted = wanted
        # Projections of the same columns share their plans: a scan builds a new Projection,
        # and working out a directory's plan again cost more than reading a day of rows.
        if len(_PROJECTION_PLANS) >= _CACHE_MAX and wanted not in _PROJECTION_PLANS:
            _PROJECTION_PLANS.clear()
        self._plans = _PROJECTION_PLANS.setdefault(wanted, {})

    def _make(self, directory: _Directory) -> _Slots | None:
        index = {c: i for i, c in enumerate(directory.columns)}
        slots = tuple(index.get(c) for c in self.wanted)
        if all(i is None for i in slots):
            return None
        every = tuple(i for i in slots if i is not None)
        return slots, every if len(every) == len(slots) else None

    def page(self, rows: Iterable[tuple[bytes, bytes]]
             ) -> list[tuple[bytes, tuple[bytes | None, ...]]]:
        """``(key, values)`` for each ``(key, blob)`` holding any wanted column, in order."""
        found: list[tuple[bytes, tuple[bytes | None, ...]]] = []
        append = found.append
        head: bytes | None = None
        entry: tuple[_Directory, _Slots] | None = None
        unpack: Callable[[bytes, int], tuple[Any, ...]] = _unpack_nothing
        size = first = tail = 0
        slots: tuple[int | None, ...] = ()
        every: tuple[int, ...] | None = None
        key = b""
        try:
            for key, blob in rows:  # _planned's loop, inlined: a generator per row cost a fifth
                if head is None or not blob.startswith(head):  # else the previous directory
                    head, entry = self._entry(blob)
                    if entry is not None:
                        directory, (slots, every) = entry
                        unpack, size, first, tail = (directory.offsets.unpack_from,
                                                     directory.size, directory.first,
                                                     directory.tail)
                if entry is None:
                    continue
                try:
                    o = unpack(blob, size)
                except struct.error:
                    raise _corrupt(f"{len(blob)} bytes, too short for its offsets") from None
                if o[0] != first or o[-1] + tail != len(blob) or (
                        tail and crc32(blob) != _RESIDUE):
                    _offsets(blob, entry[0])  # raises, saying what is wrong
                if every is None:
                    append((key, tuple([None if i is None else blob[o[i] : o[i + 1]]
                                        for i in slots])))
                elif len(every) == 4:  # the catalog's rows of one column: unrolled
                    a, b, c, d = every
                    append((key, (blob[o[a] : o[a + 1]], blob[o[b] : o[b + 1]],
                                  blob[o[c] : o[c + 1]], blob[o[d] : o[d + 1]])))
                elif len(every) == 3:
                    a, b, c = every
                    append((key, (blob[o[a] : o[a + 1]], blob[o[b] : o[b + 1]],
                                  blob[o[c] : o[c + 1]])))
                else:
                    append((key, tuple([blob[o[i] : o[i + 1]] for i in every])))
        except CorruptCell as exc:
            exc.row = key  # the row a caller names and reads on past
            raise
        return found

    def values(self, blob: bytes) -> tuple[bytes | None, ...] | None:
        """The wanted values in order (None where absent); None if the row has none of them."""
        found = self.page(((b"", blob),))
        return found[0][1] if found else None


class Selection(_PlannedReader[tuple[tuple[bytes, int], ...]]):
    """Reads the cells that column specs select out of a page of blobs (``get_many``, scans).

    ``select_cells`` for many rows at once, with the per-directory plans and checks.
    """

    __slots__ = ("specs",)

    def __init__(self, specs: tuple[bytes, ...]) -> None:
        super().__init__()
        self.specs = specs

    def _make(self, directory: _Directory) -> tuple[tuple[bytes, int], ...] | None:
        specs = self.specs
        pairs = tuple((c, i) for i, c in enumerate(directory.columns)
                      if c in specs or c.partition(b":")[0] in specs)
        return pairs or None

    def page(self, rows: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """``(key, cells)`` for each ``(key, blob)`` with a selected cell, in order."""
        return [(key, {c: blob[o[i] : o[i + 1]] for c, i in pairs})
                for key, blob, pairs, o in self._planned(rows)]


#: Per (directory, column specs): the (column, index) pairs the specs select.
_SELECTIONS: dict[tuple[_Directory, tuple[bytes, ...]], tuple[tuple[bytes, int], ...]] = {}


def select_cells(blob: bytes, specs: tuple[bytes, ...] | None) -> dict[bytes, bytes]:
    """The cells of ``blob`` that column specs select (``b"cf:q"`` cells, ``b"cf"`` families).

    ``None`` selects every cell. Same rule as ``validation.column_selected``.
    """
    if specs is None:
        return decode_cells(blob)
    directory = _directory(blob)
    key = (directory, specs)
    pairs = _SELECTIONS.get(key)
    if pairs is None:
        pairs = tuple(
            (c, i) for i, c in enumerate(directory.columns)
            if c in specs or c.partition(b":")[0] in specs
        )
        if len(_SELECTIONS) >= _CACHE_MAX:
            _SELECTIONS.clear()
        _SELECTIONS[key] = pairs
    if not pairs:
        return {}
    o = _offsets(blob, directory)
    return {c: blob[o[i] : o[i + 1]] for c, i in pairs}


def merge_cells(old: bytes, new: bytes) -> bytes:
    """``old`` with the cells of ``new`` put over it (the upsert of ``put``/``put_many``).

    Why the shortcut: re-registering a row with the same columns replaces every cell, so the
    new blob is the answer and nothing is decoded.
    """
    new_directory = _directory(new)
    old_directory = _directory(old)
    if new_directory is old_directory or set(old_directory.columns) <= set(
        new_directory.columns
    ):
        return new
    return encode_cells({**decode_cells(old), **decode_cells(new)})
