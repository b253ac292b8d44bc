"""SQL ``LIKE`` patterns: ``%`` any run of characters, ``_`` exactly one, ``ESCAPE`` for literals.

Matching is our own (no regex built from user text), so a pattern cannot behave like a Java
regex the way Hive's planner treated it. The planner also asks what HBase can do exactly:
a pattern without wildcards is an equality, ``prefix%`` is a prefix, anything else is checked
on the client (the literal prefix can still narrow the scan as a pre-filter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from airflow_partitions.filters.errors import FilterTypeError

Piece: TypeAlias = tuple[Literal["lit", "one", "any"], str]


@dataclass(frozen=True)
class LikePattern:
    """A parsed pattern: literal runs, ``one`` (``_``) and ``any`` (``%``) pieces."""

    pieces: tuple[Piece, ...]

    @property
    def prefix(self) -> str:
        """The literal text every match starts with."""
        out = []
        for kind, text in self.pieces:
            if kind != "lit":
                break
            out.append(text)
        return "".join(out)

    @property
    def kind(self) -> Literal["exact", "prefix", "all", "other"]:
        """``exact``: no wildcard; ``prefix``: literal then only ``%``; ``all``: only ``%``."""
        kinds = [k for k, _ in self.pieces]
        if "one" not in kinds and "any" not in kinds:
            return "exact"
        if "one" in kinds:
            return "other"
        first_any = kinds.index("any")
        if any(k != "any" for k in kinds[first_any:]):
            return "other"
        return "prefix" if first_any else "all"

    def matches(self, text: str) -> bool:
        return _match(self.pieces, text)


def parse_like(pattern: str, escape: str | None = None) -> LikePattern:
    """Split a pattern into pieces; a dangling escape character is a typed error."""
    pieces: list[Piece] = []
    lit: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape:
            if i + 1 >= len(pattern):
                raise FilterTypeError(f"LIKE pattern {pattern!r} ends with its escape {escape!r}")
            lit.append(pattern[i + 1])
            i += 2
            continue
        if ch in "%_":
            if lit:
                pieces.append(("lit", "".join(lit)))
                lit = []
            kind: Literal["any", "one"] = "any" if ch == "%" else "one"
            if not (kind == "any" and pieces and pieces[-1][0] == "any"):  # '%%' is '%'
                pieces.append((kind, ch))
        else:
            lit.append(ch)
        i += 1
    if lit:
        pieces.append(("lit", "".join(lit)))
    return LikePattern(tuple(pieces))


def _match(pieces: tuple[Piece, ...], text: str) -> bool:
    """Greedy wildcard matching with one backtrack point: iterative, O(pattern x text)."""
    toks: list[str | bool | None] = []  # a character, None for '_', True for '%'
    for kind, lit in pieces:
        if kind == "lit":
            toks.extend(lit)
        else:
            toks.append(None if kind == "one" else True)
    p = t = 0
    star, mark = -1, 0
    while t < len(text):
        if p < len(toks) and toks[p] is not True and (toks[p] is None or toks[p] == text[t]):
            p += 1
            t += 1
        elif p < len(toks) and toks[p] is True:
            star, mark = p, t
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            t = mark
        else:
            return False
    while p < len(toks) and toks[p] is True:
        p += 1
    return p == len(toks)
