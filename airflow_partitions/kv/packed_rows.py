"""Projected rows packed into one bytes object and one array of offsets (:class:`PackedRows`).

Why: a verified cover keeps the rows it checked for as long as its answer lives, and as tuples
of bytes they cost about 330 bytes a four-cell row (ten years of hours: 28 MiB); packed, the
values' own bytes and 4 bytes of offset each.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain
from typing import overload


class PackedRows(Sequence[tuple[bytes | None, ...]]):
    """Projected rows (tuples of ``width`` values, None where absent) kept as one bytes object
    and one array of end offsets, each row built again when it is read.

    Why: a verified cover keeps the rows it checked for as long as its answer lives (the
    manifest lists them); as tuples of bytes that is about 330 bytes a four-cell row, ten
    years of hours 28 MiB; packed, the values' own bytes and 4 bytes of offset each (about
    100 bytes a row). Cost: packing is one join and one accumulate over the values (about
    0.2 µs a row); reading a row is ``width`` slices.

    >>> rows = PackedRows([(b"/a", None, b"x"), (b"/bb", b"1", b"")], 3)
    >>> list(rows), len(rows), rows[1], rows[:1]
    ([(b'/a', None, b'x'), (b'/bb', b'1', b'')], 2, (b'/bb', b'1', b''), [(b'/a', None, b'x')])
    """

    __slots__ = ("_data", "_ends", "_nones", "_width")

    def __init__(self, rows: Iterable[tuple[bytes | None, ...]], width: int) -> None:
        values = list(chain.from_iterable(rows))
        if len(values) % width:
            raise ValueError(f"rows of {width} values expected")
        self._width = width
        self._nones = frozenset(i for i, v in enumerate(values) if v is None) if (
            None in values) else frozenset()
        present: list[bytes] = [b"" if v is None else v for v in values] if (
            self._nones) else values  # type: ignore[assignment]
        self._data = b"".join(present)
        self._ends = array("I" if len(self._data) < 1 << 32 else "Q",
                           accumulate(map(len, present)))

    def __len__(self) -> int:
        return len(self._ends) // self._width

    def _row(self, i: int) -> tuple[bytes | None, ...]:
        w, ends, data = self._width, self._ends, self._data
        at = i * w
        start = ends[at - 1] if at else 0
        out: list[bytes | None] = []
        for j in range(at, at + w):
            end = ends[j]
            out.append(None if j in self._nones else data[start:end])
            start = end
        return tuple(out)

    @overload
    def __getitem__(self, index: int) -> tuple[bytes | None, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[bytes | None, ...]]: ...

    def __getitem__(self, index: int | slice
                    ) -> tuple[bytes | None, ...] | list[tuple[bytes | None, ...]]:
        n = len(self)
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(n))]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("row index out of range")
        return self._row(index)

    def __iter__(self) -> Iterator[tuple[bytes | None, ...]]:
        return self.between(0, len(self))

    def between(self, lo: int, hi: int) -> Iterator[tuple[bytes | None, ...]]:
        """Rows ``lo`` to ``hi`` (excluded), built one after the other: one slice a value."""
        lo, hi = max(lo, 0), min(hi, len(self))
        if lo >= hi:
            return iter(())
        if self._nones:
            return map(self._row, range(lo, hi))
        data, w = self._data, self._width
        ends = self._ends[lo * w : hi * w]
        starts = chain((self._ends[lo * w - 1] if lo else 0,), ends)
        values = map(data.__getitem__, map(slice, starts, ends))
        return zip(*([values] * w), strict=True)  # w consecutive values a row, in order

    def __repr__(self) -> str:
        return f"PackedRows({len(self)} rows of {self._width})"


__all__ = ["PackedRows"]
