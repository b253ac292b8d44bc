"""Reading one Thrift1 ``getRowsWithColumns`` reply out of received bytes, and where it ends.

Why: :mod:`.hbase_again` sends several requests in one write and reads their replies from one
buffer, so it must know where each reply ends, and tell a reply that has not fully arrived
from a whole one. thriftpy2's C reader cannot: past the end of its buffer it reads zeros, so
a cut reply decodes as a shorter whole one. This reader raises :class:`Incomplete` instead.

The binary protocol (strict, as HBase's Thrift server writes it): a message header (version
and type, the method's name, the sequence id), then the result struct: field 0, the list of
``TRowResult`` (1: row, 2: map of column name to ``TCell``, whose field 1 is the value), or
field 1, the ``IOError``. Fields this reader does not use are skipped by their type.

Cost: O(bytes), a few operations per cell, no object but the rows' keys, names and values.
"""

from __future__ import annotations

import struct
from typing import Final

from airflow_partitions.kv.base import RowCells

_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from

#: The strict header's version, as a signed 32-bit number, and its type bits.
_VERSION: Final = -0x7FFF0000
_VERSION_MASK: Final = -0x10000
_REPLY: Final = 2
_EXCEPTION: Final = 3

_STOP, _BOOL, _BYTE, _DOUBLE, _I16_T, _I32_T, _I64 = 0, 2, 3, 4, 6, 8, 10
_STRING, _STRUCT, _MAP, _SET, _LIST = 11, 12, 13, 14, 15
#: The width of each fixed-size type.
_FIXED: Final = {_BOOL: 1, _BYTE: 1, _DOUBLE: 8, _I16_T: 2, _I32_T: 4, _I64: 8}
#: How deep nested structs, lists and maps may go before the bytes are refused.
_MAX_DEPTH: Final = 16


class Incomplete(Exception):
    """The bytes end before the reply does: receive more and read it again."""


class Unexpected(Exception):
    """The bytes are not a ``getRowsWithColumns`` reply: the connection is out of step."""


def read_rows_reply(data: bytes, at: int = 0) -> tuple[list[RowCells] | None, int]:
    """The rows of the reply starting at ``data[at]`` (each ``(row, {column: value})``, in
    the order sent) and the offset just after it; None for the rows when the server answered
    with an error (an ``IOError``, an ``IllegalArgument``, an application exception), which
    the caller reads the usual way to report.

    >>> read_rows_reply(bytes.fromhex(
    ...     "80010002 00000012" + "getRowsWithColumns".encode().hex() + "00000000"
    ...     "0f0000 0c00000001" "0b0001 00000001" "6b"  # row b"k"
    ...     "0d0002 0b0c00000001" "00000003" "703a61"  # column b"p:a"
    ...     "0b0001 00000001" "76" "0a0002 0000000000000005" "00"  # value b"v", time stamp 5
    ...     "00" "00"))
    ([(b'k', {b'p:a': b'v'})], 84)

    Raises :class:`Incomplete` when ``data`` ends inside the reply, :class:`Unexpected` when
    the bytes do not read as one.
    """
    try:  # a string cut short slices short, but the struct's STOP byte after it is missing
        return _reply(data, at)
    except (struct.error, IndexError):
        raise Incomplete from None


def _reply(data: bytes, at: int) -> tuple[list[RowCells] | None, int]:
    (version,) = _I32(data, at)
    if version & _VERSION_MASK != _VERSION:
        raise Unexpected(f"not a strict binary message header: {version & 0xFFFFFFFF:#010x}")
    kind = version & 0xFF
    at = _string_end(data, at + 4) + 4  # the name, then the sequence id
    if kind == _EXCEPTION:
        return None, _skip(data, at, _STRUCT, 0)
    if kind != _REPLY:
        raise Unexpected(f"message type {kind} where a reply was expected")
    rows: list[RowCells] | None = None
    failed = False
    while True:
        ftype = data[at]
        if ftype == _STOP:
            return (None if failed else rows), at + 1
        (fid,) = _I16(data, at + 1)
        at += 3
        if fid == 0 and ftype == _LIST:
            rows, at = _row_list(data, at)
        else:  # the IOError or IllegalArgument field, or one this reader does not know
            failed = True
            at = _skip(data, at, ftype, 0)


def _row_list(data: bytes, at: int) -> tuple[list[RowCells], int]:
    """A ``list<TRowResult>``: its rows and the offset after it."""
    etype = data[at]
    (count,) = _I32(data, at + 1)
    at += 5
    if etype != _STRUCT or count < 0:
        raise Unexpected(f"a list of type {etype} and size {count} where rows were expected")
    rows: list[RowCells] = []
    for _ in range(count):
        cells: dict[bytes, bytes] = {}
        row, at = _struct(data, at, cells)
        if row is None:
            raise Unexpected("a row result without its row key")
        rows.append((row, cells))
    return rows, at


def _cells(data: bytes, at: int, into: dict[bytes, bytes]) -> int:
    """A ``map<Text, TCell>`` read into ``into``; the offset after it."""
    ktype, vtype = data[at], data[at + 1]
    (count,) = _I32(data, at + 2)
    at += 6
    if ktype != _STRING or vtype != _STRUCT or count < 0:
        raise Unexpected(f"a map of {ktype} to {vtype} where cells were expected")
    for _ in range(count):
        end = _string_end(data, at)
        name = data[at + 4:end]
        value, at = _struct(data, end, None)
        if value is None:
            raise Unexpected("a cell without its value")
        into[name] = value
    return at


def _struct(data: bytes, at: int, cells: dict[bytes, bytes] | None) -> tuple[bytes | None, int]:
    """A struct whose field 1 is a string (a row result's key, a cell's value): that string
    and the offset after the struct. With ``cells`` (a row result), its field 2, the map of
    cells, is read into it; any other field (the time stamp, ``sortedColumns``, a field added
    later) is skipped."""
    first: bytes | None = None
    while True:
        ftype = data[at]
        if ftype == _STOP:
            return first, at + 1
        (fid,) = _I16(data, at + 1)
        at += 3
        if fid == 1 and ftype == _STRING:
            end = _string_end(data, at)
            first = data[at + 4:end]
            at = end
        elif fid == 2 and ftype == _MAP and cells is not None:
            at = _cells(data, at, cells)
        else:
            at = _skip(data, at, ftype, 1)


def _string_end(data: bytes, at: int) -> int:
    """The offset after the length-prefixed string at ``at``."""
    size: int = _I32(data, at)[0]
    if size < 0:
        raise Unexpected(f"a string of negative length {size}")
    return at + 4 + size


def _skip(data: bytes, at: int, ftype: int, depth: int) -> int:
    """The offset after a value of type ``ftype`` at ``at``."""
    if depth > _MAX_DEPTH:
        raise Unexpected("values nested too deep")
    width = _FIXED.get(ftype)
    if width is not None:
        if at + width > len(data):
            raise Incomplete
        return at + width
    if ftype == _STRING:
        return _string_end(data, at)
    if ftype == _STRUCT:
        while True:
            inner = data[at]
            if inner == _STOP:
                return at + 1
            at = _skip(data, at + 3, inner, depth + 1)
    if ftype == _MAP:
        ktype, vtype = data[at], data[at + 1]
        (count,) = _I32(data, at + 2)
        at += 6
        if count < 0:
            raise Unexpected(f"a map of negative size {count}")
        for _ in range(count):
            at = _skip(data, _skip(data, at, ktype, depth + 1), vtype, depth + 1)
        return at
    if ftype in (_LIST, _SET):
        etype = data[at]
        (count,) = _I32(data, at + 1)
        at += 5
        if count < 0:
            raise Unexpected(f"a list of negative size {count}")
        for _ in range(count):
            at = _skip(data, at, etype, depth + 1)
        return at
    raise Unexpected(f"unknown field type {ftype}")


__all__ = ["Incomplete", "Unexpected", "read_rows_reply"]
