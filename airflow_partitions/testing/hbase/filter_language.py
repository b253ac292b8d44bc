"""Parser and evaluator for a subset of the HBase filter language (test double support).

The HBase Thrift test double (:mod:`airflow_partitions.testing.hbase.server`) uses this module to
honour ``TScan.filterString``. It follows the HBase reference guide, chapter "Thrift API and
Filter Language", so code tested against the double behaves the same on a real cluster.

Syntax
    ``FilterName ('arg', arg, ...)`` combined with ``AND``, ``OR`` (uppercase), the unary
    ``SKIP`` and ``WHILE``, and parentheses. Precedence, highest first: parentheses,
    ``SKIP``/``WHILE``, ``AND``, ``OR``. String literals use single quotes; a quote inside is
    doubled (``'it''s'``). The filter string is handled as raw bytes, so quoted values may hold
    NUL, non-ASCII bytes, ``)`` or `` AND ``.

Comparators (``'type:value'``)
    ``binary`` (unsigned lexicographic), ``binaryprefix`` (compares only the first
    ``len(value)`` bytes), ``regexstring`` (Java ``Matcher.find()`` semantics, i.e. Python
    :func:`re.search` with ``DOTALL`` as HBase's default; pattern *and* cell bytes are decoded as
    latin-1 so every byte maps to one character) and ``substring`` (case-insensitive; bytes
    decoded as UTF-8 like HBase's ``Bytes.toString``). ``regexstring`` and ``substring`` only
    accept ``=`` and ``!=``, as in HBase.

Comparison direction
    ``RowFilter (>=, 'binary:x')`` keeps rows whose key is ``>= x``: the *cell* is the left operand.

Evaluation model
    A filter sees one row at a time: its key and its visible cells (latest version, after column
    selection) in (family, qualifier) order. It answers with a :class:`Verdict`: whether the row
    survives, which cells survive, and whether the scan can stop (``WHILE``). ``AND`` keeps a
    cell only if every operand keeps it, ``OR`` if any operand keeps it. This simplifies HBase's
    cell-by-cell ``ReturnCode`` machinery and gives the same results for the supported filters.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, NoReturn

__all__ = [
    "Cell",
    "Comparator",
    "CompareOp",
    "Filter",
    "FilterArgumentError",
    "FilterLanguageError",
    "FilterSyntaxError",
    "UnknownFilterError",
    "Verdict",
    "apply_filter",
    "parse_filter",
    "supported_filters",
]


# ----------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------


class FilterLanguageError(ValueError):
    """A filter string could not be parsed; ``position`` is the byte offset of the problem."""

    def __init__(self, message: str, position: int, text: bytes = b"") -> None:
        self.message = message
        self.position = position
        self.text = text
        super().__init__(self._render())

    def _render(self) -> str:
        """Point at the offending byte so a human can fix the filter quickly."""
        if not self.text:
            return f"{self.message} (at position {self.position})"
        shown = self.text.decode("latin-1")
        return f"{self.message} (at position {self.position}): {shown!r}"


class FilterSyntaxError(FilterLanguageError):
    """The filter string is not well formed (quotes, parentheses, operators)."""


class UnknownFilterError(FilterLanguageError):
    """The filter name is not one the test double implements."""


class FilterArgumentError(FilterLanguageError):
    """A filter got the wrong number or kind of arguments."""


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
    later row of the scan can pass, so the scan ends after this row.
    """

    row_ok: bool
    cell_ok: tuple[bool, ...]
    stop: bool = False

    @staticmethod
    def keep_all(n: int, row_ok: bool = True) -> Verdict:
        """Verdict of a row-level filter: every cell follows the row decision."""
        return Verdict(row_ok, (True,) * n)


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


class Filter:
    """Base class: a filter evaluates one row at a time."""

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        """Decide which parts of the row survive."""
        raise NotImplementedError

    def transform(self, cell: Cell) -> Cell:
        """Rewrite a surviving cell (only ``KeyOnlyFilter`` does)."""
        return cell


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
        return Verdict.keep_all(len(cells))

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


@dataclass(frozen=True)
class And(Filter):
    """``a AND b``: a cell survives only if every operand keeps it."""

    operands: tuple[Filter, ...]

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        verdicts = [f.evaluate(row, cells) for f in self.operands]
        cell_ok = tuple(all(v.cell_ok[i] for v in verdicts) for i in range(len(cells)))
        return Verdict(all(v.row_ok for v in verdicts), cell_ok, any(v.stop for v in verdicts))

    def transform(self, cell: Cell) -> Cell:
        for f in self.operands:
            cell = f.transform(cell)
        return cell


@dataclass(frozen=True)
class Or(Filter):
    """``a OR b``: a cell survives if any operand keeps both it and its row."""

    operands: tuple[Filter, ...]

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        verdicts = [f.evaluate(row, cells) for f in self.operands]
        cell_ok = tuple(any(v.row_ok and v.cell_ok[i] for v in verdicts) for i in range(len(cells)))
        row_ok = any(v.row_ok for v in verdicts)
        return Verdict(row_ok, cell_ok, all(v.stop for v in verdicts))

    def transform(self, cell: Cell) -> Cell:
        for f in self.operands:
            cell = f.transform(cell)
        return cell


@dataclass(frozen=True)
class Skip(Filter):
    """``SKIP f``: drop the whole row if ``f`` drops any of its cells."""

    inner: Filter

    def evaluate(self, row: bytes, cells: Sequence[Cell]) -> Verdict:
        v = self.inner.evaluate(row, cells)
        return Verdict(v.row_ok and all(v.cell_ok), (True,) * len(cells), v.stop)

    def transform(self, cell: Cell) -> Cell:
        return self.inner.transform(cell)


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
        return Verdict(True, tuple(i < first_bad for i in range(len(cells))), True)

    def transform(self, cell: Cell) -> Cell:
        return self.inner.transform(cell)


def apply_filter(flt: Filter | None, row: bytes, cells: Sequence[Cell]) -> tuple[list[Cell], bool]:
    """Run ``flt`` on one row: return the surviving (transformed) cells and the stop flag."""
    if flt is None:
        return list(cells), False
    verdict = flt.evaluate(row, cells)
    if not verdict.row_ok:
        return [], verdict.stop
    kept = [flt.transform(c) for c, ok in zip(cells, verdict.cell_ok, strict=True) if ok]
    return kept, verdict.stop


# ----------------------------------------------------------------------------------------------
# Tokenizer
# ----------------------------------------------------------------------------------------------

_WORD_BYTES: Final = frozenset(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.+"
)
_WHITESPACE: Final = frozenset(b" \t\r\n")
_OPERATORS: Final = (b"<=", b">=", b"!=", b"<", b">", b"=")


@dataclass(frozen=True)
class Token:
    """A lexical token; ``kind`` is one of ``( ) , str word op end``."""

    kind: str
    text: bytes
    pos: int


def tokenize(text: bytes) -> list[Token]:
    """Split a filter string into tokens, decoding quoted literals ('' is a quote)."""
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in _WHITESPACE:
            i += 1
        elif ch in b"(),":
            tokens.append(Token(chr(ch), bytes([ch]), i))
            i += 1
        elif ch == ord("'"):
            literal, end = _read_quoted(text, i)
            tokens.append(Token("str", literal, i))
            i = end
        elif ch in _WORD_BYTES:
            end = i
            while end < len(text) and text[end] in _WORD_BYTES:
                end += 1
            tokens.append(Token("word", text[i:end], i))
            i = end
        else:
            i = _read_operator(text, i, tokens)
    tokens.append(Token("end", b"", len(text)))
    return tokens


def _read_quoted(text: bytes, start: int) -> tuple[bytes, int]:
    """Read a single-quoted literal starting at ``start``; return (bytes, index after it)."""
    out = bytearray()
    i = start + 1
    while i < len(text):
        if text[i] == ord("'"):
            if i + 1 < len(text) and text[i + 1] == ord("'"):
                out.append(ord("'"))
                i += 2
                continue
            return bytes(out), i + 1
        out.append(text[i])
        i += 1
    raise FilterSyntaxError("unterminated quoted string", start, text)


def _read_operator(text: bytes, i: int, tokens: list[Token]) -> int:
    """Read a compare operator at ``i`` or fail on a stray character."""
    for op in _OPERATORS:
        if text.startswith(op, i):
            tokens.append(Token("op", op, i))
            return i + len(op)
    char = text[i : i + 1].decode("latin-1")
    raise FilterSyntaxError(f"unexpected character {char!r}", i, text)


# ----------------------------------------------------------------------------------------------
# Parser
# ----------------------------------------------------------------------------------------------

_KEYWORDS: Final = frozenset({b"AND", b"OR", b"SKIP", b"WHILE"})


class _Parser:
    """Recursive-descent parser: or_expr := and_expr (OR and_expr)*, and so on."""

    def __init__(self, text: bytes) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, kind: str, what: str) -> Token:
        tok = self.take()
        if tok.kind != kind:
            self.fail(f"expected {what}, found {_describe(tok)}", tok.pos)
        return tok

    def fail(self, message: str, pos: int) -> NoReturn:
        raise FilterSyntaxError(message, pos, self.text)

    def is_keyword(self, word: bytes) -> bool:
        tok = self.peek()
        return tok.kind == "word" and tok.text == word

    def parse(self) -> Filter:
        if self.peek().kind == "end":
            self.fail("empty filter string", 0)
        result = self.parse_or()
        tok = self.peek()
        if tok.kind == "word" and tok.text.upper() in _KEYWORDS:
            self.fail(f"operators must be uppercase: {tok.text.decode()!r}", tok.pos)
        if tok.kind != "end":
            self.fail(f"expected AND, OR or end of filter, found {_describe(tok)}", tok.pos)
        return result

    def parse_or(self) -> Filter:
        operands = [self.parse_and()]
        while self.is_keyword(b"OR"):
            self.take()
            operands.append(self.parse_and())
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def parse_and(self) -> Filter:
        operands = [self.parse_unary()]
        while self.is_keyword(b"AND"):
            self.take()
            operands.append(self.parse_unary())
        return operands[0] if len(operands) == 1 else And(tuple(operands))

    def parse_unary(self) -> Filter:
        tok = self.peek()
        if tok.kind == "(":
            self.take()
            inner = self.parse_or()
            self.expect(")", "')'")
            return inner
        if tok.kind == "word" and tok.text in (b"SKIP", b"WHILE"):
            self.take()
            operand = self.parse_unary()
            return Skip(operand) if tok.text == b"SKIP" else While(operand)
        return self.parse_filter_call()

    def parse_filter_call(self) -> Filter:
        tok = self.take()
        if tok.kind != "word" or tok.text in _KEYWORDS:
            self.fail(f"expected a filter name, found {_describe(tok)}", tok.pos)
        if tok.text.upper() in _KEYWORDS:
            self.fail(f"operators must be uppercase: {tok.text.decode()!r}", tok.pos)
        self.expect("(", f"'(' after filter name {tok.text.decode('latin-1')!r}")
        args = self.parse_args()
        return _build_filter(tok, args, self.text)

    def parse_args(self) -> list[Token]:
        args: list[Token] = []
        if self.peek().kind == ")":
            self.take()
            return args
        while True:
            tok = self.take()
            if tok.kind not in ("str", "word", "op"):
                self.fail(f"expected an argument, found {_describe(tok)}", tok.pos)
            args.append(tok)
            sep = self.take()
            if sep.kind == ")":
                return args
            if sep.kind != ",":
                self.fail(f"expected ',' or ')', found {_describe(sep)}", sep.pos)


def _describe(tok: Token) -> str:
    """Human-readable token description for error messages."""
    if tok.kind == "end":
        return "end of filter"
    if tok.kind == "str":
        return f"string {tok.text.decode('latin-1')!r}"
    return repr(tok.text.decode("latin-1"))


# ----------------------------------------------------------------------------------------------
# Argument conversion and filter construction
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Args:
    """The arguments of one filter call, with typed accessors that report positions."""

    name: str
    name_pos: int
    tokens: list[Token]
    text: bytes

    def fail(self, message: str, pos: int | None = None) -> FilterArgumentError:
        where = self.name_pos if pos is None else pos
        return FilterArgumentError(f"{self.name}: {message}", where, self.text)

    def count(self, *allowed: int) -> None:
        if len(self.tokens) not in allowed:
            wanted = " or ".join(str(n) for n in allowed)
            got = len(self.tokens)
            raise self.fail(f"takes {wanted} argument(s), got {got}")

    def string(self, i: int) -> bytes:
        tok = self.tokens[i]
        if tok.kind != "str":
            raise self.fail(f"argument {i + 1} must be a quoted string", tok.pos)
        return tok.text

    def boolean(self, i: int) -> bool:
        tok = self.tokens[i]
        word = tok.text.lower()
        if tok.kind != "word" or word not in (b"true", b"false"):
            raise self.fail(f"argument {i + 1} must be true or false", tok.pos)
        return word == b"true"

    def integer(self, i: int) -> int:
        tok = self.tokens[i]
        if tok.kind != "word" or not re.fullmatch(rb"-?[0-9]+", tok.text):
            raise self.fail(f"argument {i + 1} must be an integer", tok.pos)
        return int(tok.text)

    def op(self, i: int) -> str:
        tok = self.tokens[i]
        if tok.kind != "op":
            symbols = ", ".join(CompareOp.SYMBOLS)
            raise self.fail(f"argument {i + 1} must be one of {symbols}", tok.pos)
        return tok.text.decode("ascii")

    def comparator(self, i: int, op: str) -> Comparator:
        raw = self.string(i)
        pos = self.tokens[i].pos
        kind, sep, value = raw.partition(b":")
        if not sep:
            raise self.fail("comparator must look like 'type:value'", pos)
        kind_s = kind.decode("latin-1")
        if kind_s not in ("binary", "binaryprefix", "regexstring", "substring"):
            raise self.fail(f"unknown comparator type {kind_s!r}", pos)
        if kind_s in ("regexstring", "substring") and op not in ("=", "!="):
            raise self.fail(f"a {kind_s} comparator can only be used with = and !=", pos)
        pattern = self._compile(value, pos) if kind_s == "regexstring" else None
        return Comparator(kind_s, value, pattern)

    def _compile(self, value: bytes, pos: int) -> re.Pattern[str]:
        try:
            return re.compile(value.decode("latin-1"), re.DOTALL)
        except re.error as exc:
            raise self.fail(f"invalid regular expression: {exc}", pos) from exc


def _compare_filter(args: _Args) -> tuple[str, Comparator]:
    """Arguments of the CompareFilter family: (op, 'comparator:value')."""
    args.count(2)
    op = args.op(0)
    return op, args.comparator(1, op)


def _row_filter(args: _Args) -> Filter:
    op, cmp = _compare_filter(args)
    return RowLevel("RowFilter", lambda row: cmp.test(op, row))


def _family_filter(args: _Args) -> Filter:
    op, cmp = _compare_filter(args)
    return CellLevel("FamilyFilter", lambda c: cmp.test(op, c.family))


def _qualifier_filter(args: _Args) -> Filter:
    op, cmp = _compare_filter(args)
    return CellLevel("QualifierFilter", lambda c: cmp.test(op, c.qualifier))


def _value_filter(args: _Args) -> Filter:
    op, cmp = _compare_filter(args)
    return CellLevel("ValueFilter", lambda c: cmp.test(op, c.value))


def _prefix_filter(args: _Args) -> Filter:
    args.count(1)
    prefix = args.string(0)
    return RowLevel("PrefixFilter", lambda row: row.startswith(prefix))


def _inclusive_stop_filter(args: _Args) -> Filter:
    args.count(1)
    stop = args.string(0)
    # Forward-scan semantics; rows past the stop row are dropped rather than ending the scan.
    return RowLevel("InclusiveStopFilter", lambda row: row <= stop)


def _column_prefix_filter(args: _Args) -> Filter:
    args.count(1)
    prefix = args.string(0)
    return CellLevel("ColumnPrefixFilter", lambda c: c.qualifier.startswith(prefix))


def _multiple_column_prefix_filter(args: _Args) -> Filter:
    if not args.tokens:
        raise args.fail("takes at least 1 argument")
    prefixes = tuple(args.string(i) for i in range(len(args.tokens)))
    return CellLevel("MultipleColumnPrefixFilter", lambda c: c.qualifier.startswith(prefixes))


def _column_range_filter(args: _Args) -> Filter:
    args.count(4)
    low, low_incl = args.string(0), args.boolean(1)
    high, high_incl = args.string(2), args.boolean(3)

    def in_range(c: Cell) -> bool:
        q = c.qualifier
        above = not low or (q >= low if low_incl else q > low)
        below = not high or (q <= high if high_incl else q < high)
        return above and below

    return CellLevel("ColumnRangeFilter", in_range)


def _single_column_value(args: _Args, exclude: bool) -> Filter:
    args.count(4, 6)
    op = args.op(2)
    flags = (args.boolean(4), args.boolean(5)) if len(args.tokens) == 6 else (False, True)
    return SingleColumnValue(
        family=args.string(0),
        qualifier=args.string(1),
        op=op,
        comparator=args.comparator(3, op),
        filter_if_missing=flags[0],
        latest_version_only=flags[1],
        exclude=exclude,
    )


def _key_only_filter(args: _Args) -> Filter:
    args.count(0, 1)
    return KeyOnly(args.boolean(0) if args.tokens else False)


def _first_key_only_filter(args: _Args) -> Filter:
    args.count(0)
    return PositionLevel("FirstKeyOnlyFilter", lambda i: i == 0)


def _column_count_get_filter(args: _Args) -> Filter:
    args.count(1)
    limit = args.integer(0)
    return PositionLevel("ColumnCountGetFilter", lambda i: i < limit)


def _column_pagination_filter(args: _Args) -> Filter:
    args.count(2)
    limit, offset = args.integer(0), args.integer(1)
    return PositionLevel("ColumnPaginationFilter", lambda i: offset <= i < offset + limit)


def _timestamps_filter(args: _Args) -> Filter:
    stamps = frozenset(args.integer(i) for i in range(len(args.tokens)))
    return CellLevel("TimestampsFilter", lambda c: c.timestamp in stamps)


_BUILDERS: Final[dict[str, Callable[[_Args], Filter]]] = {
    "ColumnCountGetFilter": _column_count_get_filter,
    "ColumnPaginationFilter": _column_pagination_filter,
    "ColumnPrefixFilter": _column_prefix_filter,
    "ColumnRangeFilter": _column_range_filter,
    "FamilyFilter": _family_filter,
    "FirstKeyOnlyFilter": _first_key_only_filter,
    "InclusiveStopFilter": _inclusive_stop_filter,
    "KeyOnlyFilter": _key_only_filter,
    "MultipleColumnPrefixFilter": _multiple_column_prefix_filter,
    "PrefixFilter": _prefix_filter,
    "QualifierFilter": _qualifier_filter,
    "RowFilter": _row_filter,
    "SingleColumnValueExcludeFilter": lambda a: _single_column_value(a, exclude=True),
    "SingleColumnValueFilter": lambda a: _single_column_value(a, exclude=False),
    "TimestampsFilter": _timestamps_filter,
    "ValueFilter": _value_filter,
}


def supported_filters() -> list[str]:
    """Names of the filters this module implements, sorted."""
    return sorted(_BUILDERS)


def _build_filter(name_tok: Token, args: list[Token], text: bytes) -> Filter:
    """Dispatch a parsed filter call to its builder."""
    name = name_tok.text.decode("latin-1")
    builder = _BUILDERS.get(name)
    if builder is None:
        known = ", ".join(supported_filters())
        raise UnknownFilterError(
            f"unknown or unsupported filter {name!r} (supported: {known})", name_tok.pos, text
        )
    return builder(_Args(name, name_tok.pos, args, text))


def parse_filter(text: bytes | str) -> Filter:
    """Parse an HBase filter-language string into an evaluable :class:`Filter`.

    ``str`` input is encoded as UTF-8, which is what clients send over Thrift.
    Raises a :class:`FilterLanguageError` subclass carrying the byte position of the problem.
    """
    raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return _Parser(raw).parse()
