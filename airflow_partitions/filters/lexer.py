"""Hand-written tokenizer of the filter language (no regex engine on user input, no eval)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from airflow_partitions.filters.errors import FilterSyntaxError

Kind: TypeAlias = Literal["ident", "qident", "string", "int", "date", "op", "(", ")", ",", "eof"]

_OPERATORS: Final = ("<=", ">=", "<>", "!=", "=", "<", ">")
_SIMPLE_ESCAPES: Final = {
    "\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "0": "\0",
}
_HEX: Final = {"x": 2, "u": 4, "U": 8}
#: Longer numbers are refused: Python limits int <-> str conversions, and no column needs them.
MAX_DIGITS: Final = 40


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str  # identifiers lower case; operators canonical ("<>" -> "!=")
    value: str | int | dt.date | None
    pos: int


def _is_digit(ch: str) -> bool:
    return len(ch) == 1 and "0" <= ch <= "9"


def _is_ident_start(ch: str) -> bool:
    return ch == "_" or "a" <= ch <= "z" or "A" <= ch <= "Z"


def _is_ident_char(ch: str) -> bool:
    return _is_ident_start(ch) or _is_digit(ch)


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens, ending with an ``eof`` token; errors carry the position."""
    if not isinstance(text, str):
        raise FilterSyntaxError(f"a filter must be text, got {type(text).__name__}", "", 0)
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
        elif ch in "(),":
            tokens.append(Token(ch, ch, None, i))  # type: ignore[arg-type]
            i += 1
        elif ch in "'\"":
            value, end = _read_string(text, i)
            tokens.append(Token("string", value, value, i))
            i = end
        elif ch == "`":
            name, end = _read_quoted_name(text, i)
            tokens.append(Token("qident", name.lower(), name.lower(), i))
            i = end
        elif _is_digit(ch) or (ch == "-" and _is_digit(text[i + 1 : i + 2])):
            token, i = _read_number(text, i)
            tokens.append(token)
        elif _is_ident_start(ch):
            start = i
            while i < n and _is_ident_char(text[i]):
                i += 1
            word = text[start:i].lower()
            tokens.append(Token("ident", word, word, start))
        else:
            for op in _OPERATORS:
                if text.startswith(op, i):
                    canonical = "!=" if op == "<>" else op
                    tokens.append(Token("op", canonical, canonical, i))
                    i += len(op)
                    break
            else:
                raise FilterSyntaxError(f"unexpected character {ch!r}", text, i)
    tokens.append(Token("eof", "", None, n))
    return tokens


def _read_string(text: str, start: int) -> tuple[str, int]:
    """A quoted string; the quote is escaped as ``\\'`` or doubled (``''``)."""
    quote = text[start]
    out: list[str] = []
    i = start + 1
    while True:
        if i >= len(text):
            raise FilterSyntaxError("unterminated string", text, start)
        ch = text[i]
        if ch == quote:
            if text[i + 1 : i + 2] == quote:
                out.append(quote)
                i += 2
                continue
            return "".join(out), i + 1
        if ch == "\\":
            esc = text[i + 1 : i + 2]
            if esc in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[esc])
                i += 2
            elif esc in _HEX:
                width = _HEX[esc]
                digits = text[i + 2 : i + 2 + width]
                if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                    raise FilterSyntaxError(
                        f"\\{esc} needs {width} hex digits", text, i
                    )
                code = int(digits, 16)
                if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                    raise FilterSyntaxError(f"\\{esc}{digits} is not a character", text, i)
                out.append(chr(code))
                i += 2 + width
            else:
                raise FilterSyntaxError(
                    f"unknown escape \\{esc} (use \\\\ for a backslash; LIKE takes ESCAPE '...')",
                    text, i,
                )
            continue
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise FilterSyntaxError("a lone surrogate is not a character", text, i)
        out.append(ch)
        i += 1


def _read_quoted_name(text: str, start: int) -> tuple[str, int]:
    """A backtick-quoted column name (doubled backtick inside)."""
    out: list[str] = []
    i = start + 1
    while True:
        if i >= len(text):
            raise FilterSyntaxError("unterminated quoted name", text, start)
        if text[i] == "`":
            if text[i + 1 : i + 2] == "`":
                out.append("`")
                i += 2
                continue
            if not out:
                raise FilterSyntaxError("empty quoted name", text, start)
            return "".join(out), i + 1
        out.append(text[i])
        i += 1


def _read_number(text: str, start: int) -> tuple[Token, int]:
    """An integer, or a bare ``yyyy-mm-dd`` date: digits joined by ``-``."""
    i = start + 1 if text[start] == "-" else start
    groups: list[str] = []
    while True:
        begin = i
        while i < len(text) and _is_digit(text[i]):
            i += 1
        groups.append(text[begin:i])
        if text[i : i + 1] == "-" and _is_digit(text[i + 1 : i + 2]):
            i += 1
            continue
        break
    raw = text[start:i]
    if len(groups) == 1:
        if len(groups[0]) > MAX_DIGITS:
            raise FilterSyntaxError(f"number longer than {MAX_DIGITS} digits", text, start)
        return Token("int", raw, int(raw), start), i
    if text[start] != "-" and [len(g) for g in groups] == [4, 2, 2]:
        try:
            day = dt.date.fromisoformat(raw)
        except ValueError:
            raise FilterSyntaxError(f"{raw} is not a valid date", text, start) from None
        return Token("date", raw, day, start), i
    raise FilterSyntaxError(
        f"{raw} is neither an integer nor a yyyy-mm-dd date; quote it as a string", text, start
    )
