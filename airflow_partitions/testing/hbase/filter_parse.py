"""The HBase filter language's parsing: filter text -> tokens -> the filters of
:mod:`.filter_eval`, with each filter's argument rules as the reference guide gives them, and
the errors (carrying byte positions) that bad filter text raises.

Half of :mod:`airflow_partitions.testing.hbase.filter_language`. Test double support.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, NoReturn

from airflow_partitions.testing.hbase.filter_eval import (
    And,
    Cell,
    CellLevel,
    ColumnCountGet,
    Comparator,
    CompareOp,
    Filter,
    KeyOnly,
    Or,
    PositionLevel,
    RowLevel,
    SingleColumnValue,
    Skip,
    While,
)

__all__ = [
    "FilterArgumentError",
    "FilterLanguageError",
    "FilterSyntaxError",
    "UnknownFilterError",
    "parse_filter",
    "supported_filters",
    "tokenize",
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
    if len(set(prefixes)) != len(prefixes):
        raise args.fail("prefixes must be distinct")  # as HBase's constructor
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
    return ColumnCountGet(args.integer(0))


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
