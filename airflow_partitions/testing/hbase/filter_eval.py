"""The HBase filter language's evaluation: filters as values, and what they keep of a row.

Half of :mod:`airflow_partitions.testing.hbase.filter_language` (its docstring has the
language); :mod:`.filter_parse` turns text into these filters and owns the errors bad text
raises. Test double support.
"""

from __future__ import annotations

import re
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

__all__ = [
    "And",
    "Cell",
    "CellLevel",
    "ColumnCountGet",
    "Comparator",
    "CompareOp",
    "Filter",
    "KeyOnly",
    "Or",
    "PositionLevel",
    "RowLevel",
    "SingleColumnValue",
    "Skip",
    "Verdict",
    "While",
    "apply_filter",
]

# ----------------------------------------------------------------------------------------------
# Data model
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One visible cell of a row, as filters see it."""

    family: bytes
    qualifier: bytes
    value: bytes
    timestamp: int = 0


@dataclass(frozen=True)
class Verdict:
    """A filter's answer for one row.

    ``row_ok`` false drops the row; ``cell_ok[i]`` false drops cell ``i``; ``stop`` true means no
    later row of the scan can pass, so the scan ends after this row. ``rewrites[i]``, when
    given, are the filters that rewrite cell ``i`` if it survives, in order: HBase's
    ``transformCell`` runs every operand of an AND list, but in an OR list only the operands
    that included the cell (``FilterListWithOR``), so a ``KeyOnlyFilter`` in a branch that
    dropped the cell leaves its value alone.
    """

    row_ok: bool
    cell_ok: tuple[bool, ...]
    stop: bool = False
    rewrites: tuple[tuple[Filter, ...], ...] | None = None

    @staticmethod
    def keep_all(n: int, row_ok: bool = True) -> Verdict:
        """Verdict of a row-level filter: every cell follows the row decision."""
        return Verdict(row_ok, (True,) * n)

    def rewrites_of(self, i: int) -> tuple[Filter, ...]:
        """The filters that rewrite cell ``i`` if it survives (none for most filters)."""
        return self.rewrites[i] if self.rewrites is not None else ()


class CompareOp:
    """The six HBase compare operators, keyed by their filter-language spelling."""

    SYMBOLS: Final[tuple[str, ...]] = ("<", "<=", "=", "!=", ">=", ">")

    @staticmethod
    def holds(symbol: str, cmp: int) -> bool:
        """Whether ``cell <op> value`` holds given ``cmp = sign(cell - value)``."""
        return {
            "<": cmp < 0,
            "<=": cmp <= 0,
            "=": cmp == 0,
            "!=": cmp != 0,
            ">=": cmp >= 0,
            ">": cmp > 0,
        }[symbol]


def _sign(a: bytes, b: bytes) -> int:
    """Unsigned lexicographic comparison, as HBase's ``Bytes.compareTo``."""
    return (a > b) - (a < b)


@dataclass(frozen=True)
class Comparator:
    """A parsed ``'type:value'`` comparator."""

    kind: str
    value: bytes
    pattern: re.Pattern[str] | None = field(default=None, compare=False)

    def test(self, op: str, cell: bytes) -> bool:
        """Whether ``cell <op> value`` holds under this comparator's rules."""
        if self.kind == "binary":
            return CompareOp.holds(op, _sign(cell, self.value))
        if self.kind == "binaryprefix":
            return CompareOp.holds(op, _sign(cell[: len(self.value)], self.value))
        matched = self._matches(cell)
        return matched if op == "=" else not matched

    def _matches(self, cell: bytes) -> bool:
        """Regex ``find()`` or case-insensitive substring search."""
        if self.kind == "regexstring":
            assert self.pattern is not None
            return self.pattern.search(cell.decode("latin-1")) is not None
        needle = self.value.decode("utf-8", "surrogateescape").lower()
        return needle in cell.decode("utf-8", "surrogateescape").lower()


# ----------------------------------------------------------------------------------------------
# Filters
# ----------------------------------------------------------------------------------------------


class Filter(ABC):
    """Base class: a filter evaluates one row at a time."""

    @abstractmethod
    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        """Decide which parts of the row survive."""

    def transform(self, cell: Cell) -> Cell:
        """Rewrite a surviving cell (only ``KeyOnlyFilter`` does; lists name it in their
        verdict's ``rewrites``)."""
        return cell

    def has_filter_row(self) -> bool:
        """HBase's ``hasFilterRow``: the filter decides on whole rows, so a scan with it cannot
        return a row in batches (``Scan.setBatch``)."""
        return False

    def is_family_essential(self, family: bytes) -> bool:
        """HBase's ``isFamilyEssential``: whether the filter needs ``family`` to decide on a row
        (a non-essential family is loaded on demand, which reversed scans refuse)."""
        return True


@dataclass(frozen=True)
class RowLevel(Filter):
    """A filter that keeps or drops whole rows based on a predicate over the row key."""

    name: str
    predicate: Callable[[bytes], bool]

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        return Verdict.keep_all(len(cells), self.predicate(row))


@dataclass(frozen=True)
class CellLevel(Filter):
    """A filter that keeps or drops individual cells based on a predicate over the cell."""

    name: str
    predicate: Callable[[Cell], bool]

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        return Verdict(True, tuple(self.predicate(c) for c in cells))


@dataclass(frozen=True)
class PositionLevel(Filter):
    """A filter that keeps cells by their index within the row (pagination-like filters)."""

    name: str
    predicate: Callable[[int], bool]

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        return Verdict(True, tuple(self.predicate(i) for i in range(len(cells))))


@dataclass(frozen=True)
class KeyOnly(Filter):
    """``KeyOnlyFilter``: keeps every cell but strips its value (or replaces it by its length)."""

    len_as_value: bool = False

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        return Verdict(True, (True,) * len(cells), rewrites=((self,),) * len(cells))

    def transform(self, cell: Cell) -> Cell:
        value = struct.pack(">i", len(cell.value)) if self.len_as_value else b""
        return replace(cell, value=value)


@dataclass(frozen=True)
class SingleColumnValue(Filter):
    """``SingleColumnValueFilter`` / ``SingleColumnValueExcludeFilter``.

    The row passes when the tested column matches; a row *without* the column passes unless
    ``filter_if_missing``. The exclude variant also hides the tested column itself.
    """

    family: bytes
    qualifier: bytes
    op: str
    comparator: Comparator
    filter_if_missing: bool = False
    latest_version_only: bool = True
    exclude: bool = False

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        tested = [self._is_tested(c) for c in cells]
        found = [c for c, t in zip(cells, tested, strict=True) if t]
        if not found:
            row_ok = not self.filter_if_missing
        else:
            # Only the newest version is ever visible to filters in this double.
            row_ok = self.comparator.test(self.op, found[0].value)
        cell_ok = tuple(not (self.exclude and t) for t in tested)
        return Verdict(row_ok, cell_ok)

    def _is_tested(self, cell: Cell) -> bool:
        return cell.family == self.family and cell.qualifier == self.qualifier

    def has_filter_row(self) -> bool:
        return True

    def is_family_essential(self, family: bytes) -> bool:
        return not self.filter_if_missing or family == self.family


@dataclass(frozen=True)
class ColumnCountGet(Filter):
    """``ColumnCountGetFilter``: the first ``limit`` cells of a row; HBase ends the whole scan
    once a row has more (its ``filterAllRemaining`` turns true), after returning that row. On
    rows of several families HBase ends it per family's store (a documented divergence,
    :mod:`.server`)."""

    limit: int

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        return Verdict(True, tuple(i < self.limit for i in range(len(cells))),
                       len(cells) > self.limit)


@dataclass(frozen=True)
class And(Filter):
    """``a AND b``: a cell survives only if every operand keeps it."""

    operands: tuple[Filter, ...]

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        verdicts = [f.evaluate(row, cells) for f in self.operands]
        cell_ok = tuple(all(v.cell_ok[i] for v in verdicts) for i in range(len(cells)))
        rewrites = tuple(tuple(r for v in verdicts for r in v.rewrites_of(i))
                         for i in range(len(cells)))
        return Verdict(all(v.row_ok for v in verdicts), cell_ok, any(v.stop for v in verdicts),
                       rewrites)

    def has_filter_row(self) -> bool:
        return any(f.has_filter_row() for f in self.operands)

    def is_family_essential(self, family: bytes) -> bool:
        return any(f.is_family_essential(family) for f in self.operands)


@dataclass(frozen=True)
class Or(Filter):
    """``a OR b``: a cell survives if any operand keeps both it and its row."""

    operands: tuple[Filter, ...]

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        verdicts = [f.evaluate(row, cells) for f in self.operands]
        cell_ok = tuple(any(v.row_ok and v.cell_ok[i] for v in verdicts) for i in range(len(cells)))
        row_ok = any(v.row_ok for v in verdicts)
        rewrites = tuple(tuple(r for v in verdicts if v.row_ok and v.cell_ok[i]
                               for r in v.rewrites_of(i)) for i in range(len(cells)))
        return Verdict(row_ok, cell_ok, all(v.stop for v in verdicts), rewrites)

    def has_filter_row(self) -> bool:
        return any(f.has_filter_row() for f in self.operands)

    def is_family_essential(self, family: bytes) -> bool:
        return any(f.is_family_essential(family) for f in self.operands)


@dataclass(frozen=True)
class Skip(Filter):
    """``SKIP f``: drop the whole row if ``f`` drops any of its cells."""

    inner: Filter

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        v = self.inner.evaluate(row, cells)
        return Verdict(v.row_ok and all(v.cell_ok), (True,) * len(cells), v.stop, v.rewrites)

    def has_filter_row(self) -> bool:
        return True

    def is_family_essential(self, family: bytes) -> bool:
        return self.inner.is_family_essential(family)


@dataclass(frozen=True)
class While(Filter):
    """``WHILE f``: end the whole scan at the first row or cell that ``f`` drops."""

    inner: Filter

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        v = self.inner.evaluate(row, cells)
        if v.row_ok and all(v.cell_ok):
            return v
        if not v.row_ok:
            return Verdict(False, v.cell_ok, True)
        first_bad = v.cell_ok.index(False)
        return Verdict(True, tuple(i < first_bad for i in range(len(cells))), True, v.rewrites)

    def has_filter_row(self) -> bool:
        return True

    def is_family_essential(self, family: bytes) -> bool:
        return self.inner.is_family_essential(family)


def apply_filter(flt: Filter | None, row: bytes, cells: Sequence[Cell]) -> tuple[list[Cell], bool]:
    """Run ``flt`` on one row: return the surviving (transformed) cells and the stop flag."""
    if flt is None:
        return list(cells), False
    verdict = flt.evaluate(row, cells)
    if not verdict.row_ok:
        return [], verdict.stop
    kept = []
    for i, (cell, ok) in enumerate(zip(cells, verdict.cell_ok, strict=True)):
        if ok:
            for rewrite in verdict.rewrites_of(i):
                cell = rewrite.transform(cell)
            kept.append(cell)
    return kept, verdict.stop
