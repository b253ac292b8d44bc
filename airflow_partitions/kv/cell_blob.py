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

Per-cell form (tag 5), u32 integers: ``u8 tag=5 | u32 D | u32 n | n x u32 name length | names |
(n+1) x u32 offset | n x u32 value CRC-32 | u32 head CRC-32 | values``, big-endian; the head
CRC-32 covers every byte before it. :mod:`.cell_encode` writes it for a row whose cells span
more than one family (a catalog storage row: definition, timelines, slice timelines, marker),
whose values pass 4,096 bytes or whose blob would pass 65,535, or that carries a damaged cell
over (with its stored checksum: still damaged, and named, until a write replaces it). A flipped
byte in a value costs that cell only: a read asking for it raises :class:`DamagedCells` with the
row's sound cells and the damaged column's stored bytes (what the check-and-put replacing it
compares against); a read not asking for it never checks it. In the head it costs the row
(:class:`CorruptCell`), as with tags 3 and 4. Cost: one ``zlib.crc32`` over the head and one
per value read.
"""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Any, Generic, TypeVar
from zlib import crc32

from airflow_partitions.kv.cell_encode import (
    CELL_SUMS,
    NARROW,
    NARROW_SUM,
    WIDE,
    WIDE_SUM,
)
from airflow_partitions.kv.cell_encode import (
    RowEncoder as RowEncoder,
)
from airflow_partitions.kv.cell_encode import (
    encode_cells as encode_cells,
)
from airflow_partitions.kv.errors import CorruptCell, DamagedCells

_WIDTH = {1: 2, 2: 4, 3: 2, 4: 4, 5: 4}
_CODE = {1: "H", 2: "I", 3: "H", 4: "I", 5: "I"}
_TAIL = {1: 0, 2: 0, 3: 4, 4: 4, 5: 0}  # the CRC-32 after the values
_NARROW_TAGS = (NARROW, NARROW_SUM)
_RESIDUE = 0x2144DF1C  # crc32 of any bytes followed by their CRC-32 (little-endian)
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
    summed: bool  # tag 5: a CRC-32 per value, read by ``_checked``


_DIRECTORIES: dict[bytes, _Directory] = {}


def _corrupt(why: str) -> CorruptCell:
    return CorruptCell(f"corrupt cell blob ({why})")


def _directory(blob: bytes) -> _Directory:
    """The (cached) directory that starts ``blob``; raises CorruptCell if there is none."""
    try:
        tag = blob[0]
        if tag in _NARROW_TAGS:
            key = blob[: blob[1] << 8 | blob[2]]
        elif tag in (WIDE, WIDE_SUM, CELL_SUMS):
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
    fields = 2 * n + 2 if tag == CELL_SUMS else n + 1  # tag 5: offsets, sums, the head's sum
    offsets = struct.Struct(f">{fields}{code}")
    return _Directory(columns, tuple(enumerate(columns)), offsets, size, size + fields * width,
                      _TAIL[tag], tag == CELL_SUMS)


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


def _checked(blob: bytes, directory: _Directory, pairs: Iterable[tuple[bytes, int]],
             key: bytes = b"") -> dict[bytes, bytes]:
    """The values of ``pairs`` out of a tag-5 blob, each checked against its own CRC-32.

    A head whose CRC fails is a CorruptCell (no cell of it can be trusted); values that fail
    theirs raise DamagedCells with the sound ones (row ``key``); the others are never read.
    """
    good, bad = _split(blob, directory, pairs)
    if bad:
        raise DamagedCells({key: good}, {key: bad})
    return good


def _split(blob: bytes, directory: _Directory, pairs: Iterable[tuple[bytes, int]]
           ) -> tuple[dict[bytes, bytes], dict[bytes, bytes]]:
    """A tag-5 blob's sound values and its damaged ones (their stored bytes)."""
    n = len(directory.columns)
    try:
        fields: tuple[int, ...] = directory.offsets.unpack_from(blob, directory.size)
    except struct.error:
        raise _corrupt(f"{len(blob)} bytes, too short for its offsets") from None
    if crc32(blob[: directory.first - 4]) != fields[-1]:
        raise _corrupt("its directory's checksum does not match its bytes")
    o = fields[: n + 1]
    if o[0] != directory.first or o[-1] != len(blob) or list(o) != sorted(o):
        raise _corrupt(f"value offsets {o[0]}..{o[-1]} do not fit {len(blob)} bytes")
    good: dict[bytes, bytes] = {}
    bad: dict[bytes, bytes] = {}
    for c, i in pairs:
        value = blob[o[i] : o[i + 1]]
        if crc32(value) == fields[n + 1 + i]:
            good[c] = value
        else:
            bad[c] = value
    return good, bad


def decode_cells(blob: bytes) -> dict[bytes, bytes]:
    """All cells of a blob, columns in ascending order (DamagedCells names damaged ones)."""
    directory = _directory(blob)
    if directory.summed:
        return _checked(blob, directory, [(c, i) for i, c in directory.pairs])
    o = _offsets(blob, directory)
    return {c: blob[o[i] : o[i + 1]] for i, c in directory.pairs}


def cells_for_rewrite(blob: bytes) -> tuple[dict[bytes, bytes], dict[bytes, int]]:
    """Every cell of a stored row for a write that rewrites it, damaged ones included, and the
    CRC-32 each damaged cell was stored with: written back with it (``encode_cells``'s
    ``kept_sums``), a damaged cell stays damaged until a write replaces it."""
    directory = _directory(blob)
    if not directory.summed:
        return decode_cells(blob), {}
    good, bad = _split(blob, directory, ((c, i) for i, c in directory.pairs))
    if not bad:
        return good, {}
    fields = directory.offsets.unpack_from(blob, directory.size)
    n = len(directory.columns)
    kept = {c: fields[n + 1 + i] for i, c in directory.pairs if c in bad}
    return {**good, **bad}, kept


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
                 ) -> Iterator[tuple[bytes, bytes, _P, tuple[int, ...] | None]]:
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
                if directory.summed:  # checked by the caller, value by value
                    yield key, blob, plan, None
                    continue
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
                if entry[0].summed:  # tag 5: only the wanted values, each checked
                    good = _checked(blob, entry[0], ((c, i) for c, i in zip(
                        self.wanted, slots, strict=True) if i is not None), key)
                    append((key, tuple([good.get(c) for c in self.wanted])))
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
        """``(key, cells)`` for each ``(key, blob)`` with a selected cell, in order.

        Rows with damaged cells are read to the page's end, then DamagedCells names them all,
        with every row found (the damaged rows' sound cells included).
        """
        found: list[tuple[bytes, dict[bytes, bytes]]] = []
        damaged: dict[bytes, dict[bytes, bytes]] = {}
        for key, blob, pairs, o in self._planned(rows):
            if o is None:  # tag 5: each value checked against its own CRC-32
                good, bad = _split(blob, _directory(blob), pairs)
                if bad:
                    damaged[key] = bad
                found.append((key, good))
            else:
                found.append((key, {c: blob[o[i] : o[i + 1]] for c, i in pairs}))
        if damaged:
            raise DamagedCells(dict(found), damaged)
        return found


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
    if directory.summed:
        return _checked(blob, directory, pairs)
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
    cells, kept = cells_for_rewrite(old)
    fresh = decode_cells(new)
    return encode_cells({**cells, **fresh}, {c: v for c, v in kept.items() if c not in fresh})
