"""Join specifications for dynamic partition pruning, and which key pairs may prune.

A join spec says how the big table meets one small table: the key pairs (big key, small key),
the join type, and which side the big table is on. A key is a bare column or a function of one;
only bare columns can prune, because a function's result cannot be mapped back to partition
values without evaluating it on every partition (Hive's rule, kept here).

Pure: no catalog, no airflow, no pyspark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, TypedDict, cast

from airflow_partitions.errors import InvalidInput
from airflow_partitions.filters import ast, parse_filter

JoinType: TypeAlias = Literal["inner", "left", "right", "full", "left_semi"]
Side: TypeAlias = Literal["left", "right"]
#: A join's key pairs as :meth:`JoinSpec.of` takes them: ``{big: small}``, (big, small) pairs
#: (keys as text or :class:`KeyExpr`), or one column name for both sides.
KeyPairs: TypeAlias = "Mapping[str, str] | Iterable[tuple[str | KeyExpr, str | KeyExpr]] | str"
JOIN_TYPES: Final[tuple[JoinType, ...]] = ("inner", "left", "right", "full", "left_semi")
_ALIASES: Final = {
    "inner": "inner", "left": "left", "left_outer": "left", "leftouter": "left",
    "right": "right", "right_outer": "right", "rightouter": "right", "full": "full",
    "full_outer": "full", "fullouter": "full", "outer": "full", "left_semi": "left_semi",
    "leftsemi": "left_semi", "semi": "left_semi",
}
_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Why a key pair cannot prune (stable codes for the decision record).
OUTER_PRESERVES_BIG: Final = "outer_join_preserves_big"
FUNCTION_ON_BIG_KEY: Final = "function_on_big_key"
FUNCTION_ON_SMALL_KEY: Final = "function_on_small_key"
NOT_A_PARTITION_COLUMN: Final = "not_a_partition_column"
VALUE_SET_TOO_LARGE: Final = "value_set_too_large"
NO_VALUE_SET: Final = "no_value_set"


class JoinSpecJson(TypedDict):
    """:meth:`JoinSpec.to_json`: ``on`` as ``[[big, small], ...]`` (keys as text)."""

    small: str
    on: list[list[str]]
    how: JoinType
    big_side: Side


class InvalidJoinSpec(InvalidInput):
    """A join specification is malformed (unknown join type, empty keys, a literal key...)."""


@dataclass(frozen=True)
class KeyExpr:
    """A join key: a bare column, or ``function`` (its text) applied to a column."""

    column: str
    function: str | None = None

    @property
    def wrapped(self) -> bool:
        return self.function is not None

    def __str__(self) -> str:
        return self.function if self.function is not None else self.column


def col(name: str) -> KeyExpr:
    """A bare-column key."""
    if not isinstance(name, str) or not _IDENT.fullmatch(name.strip()):
        raise InvalidJoinSpec(f"join key column {name!r} is not an identifier")
    return KeyExpr(name.strip())


def fn(text: str, column: str) -> KeyExpr:
    """A key wrapped in a function, for functions the filter grammar does not know
    (``fn("to_date(ts)", "ts")``): it never prunes, but the record names it."""
    return KeyExpr(col(column).column, text)


def parse_key(key: str | KeyExpr) -> KeyExpr:
    """``region`` -> bare column; ``upper(region)`` or ``cast(d AS date)`` -> wrapped.

    Bare identifiers keep their case (Spark resolves them); anything else is read with the
    filter grammar's value syntax (functions: upper, lower, length, substr, concat, cast).
    """
    if isinstance(key, KeyExpr):
        return key
    if not isinstance(key, str) or not key.strip():
        raise InvalidJoinSpec(f"join key must be non-empty text, got {key!r}")
    text = key.strip()
    if _IDENT.fullmatch(text) and text.lower() not in ast.RESERVED:
        return KeyExpr(text)
    parsed = parse_filter(f"{text} IS NULL")
    if not isinstance(parsed, ast.IsNull) or parsed.negated:
        raise InvalidJoinSpec(f"join key {text!r} is not a column or a function of one")
    value = parsed.operand
    if isinstance(value, ast.Column):
        return KeyExpr(value.name)
    columns = sorted(ast.columns_of(value))
    if isinstance(value, ast.Const) or not columns:
        raise InvalidJoinSpec(f"join key {text!r} is a literal, not a column")
    if len(columns) > 1:
        raise InvalidJoinSpec(f"join key {text!r} reads several columns: {columns}")
    return KeyExpr(columns[0], str(value))


@dataclass(frozen=True)
class JoinSpec:
    """One equi-join of the big table with a small table ``small``.

    ``on`` holds (big key, small key) pairs, ANDed. ``big_side`` is where the big table stands
    in ``how`` (``big LEFT JOIN small`` is ``how="left", big_side="left"``). In a chain of
    joins (``((big JOIN a) JOIN b) ...``), give one spec per join, each with the side the big
    table's rows are on.
    """

    small: str
    on: tuple[tuple[KeyExpr, KeyExpr], ...]
    how: JoinType = "inner"
    big_side: Side = "left"

    def __post_init__(self) -> None:
        if not self.small or not isinstance(self.small, str):
            raise InvalidJoinSpec(f"the small table needs a name, got {self.small!r}")
        if not self.on:
            raise InvalidJoinSpec(f"join with {self.small!r} has no key pairs")
        if self.how not in JOIN_TYPES:
            raise InvalidJoinSpec(f"join type {self.how!r}: use one of {', '.join(JOIN_TYPES)}")
        if self.big_side not in ("left", "right"):
            raise InvalidJoinSpec(f"big_side must be 'left' or 'right', not {self.big_side!r}")

    @classmethod
    def of(
        cls,
        small: str,
        on: KeyPairs,
        how: str = "inner",
        big_side: str = "left",
    ) -> JoinSpec:
        """``JoinSpec.of("dim", {"region": "region"}, how="left_semi")``; a string ``on`` is
        one column of the same name on both sides."""
        if isinstance(on, str):
            pairs: list[tuple[Any, Any]] = [(on, on)]
        elif isinstance(on, Mapping):
            pairs = list(on.items())
        else:
            pairs = []
            for pair in on:
                items = tuple(pair)
                if len(items) != 2:
                    raise InvalidJoinSpec(f"a key pair needs (big key, small key), got {pair!r}")
                pairs.append((items[0], items[1]))
        kind = _ALIASES.get("_".join(str(how).lower().split()))
        if kind is None:
            raise InvalidJoinSpec(f"join type {how!r}: use one of {', '.join(JOIN_TYPES)}")
        side = str(big_side).strip().lower()
        if side not in ("left", "right"):
            raise InvalidJoinSpec(f"big_side must be 'left' or 'right', not {big_side!r}")
        return cls(small, tuple((parse_key(b), parse_key(s)) for b, s in pairs),
                   cast(JoinType, kind), cast(Side, side))

    @classmethod
    def from_json(cls, data: Mapping[str, object] | JoinSpec) -> JoinSpec:
        """``{"small": ..., "on": {big: small} | [[big, small], ...], "how", "big_side"}``."""
        if isinstance(data, JoinSpec):
            return data
        if not isinstance(data, Mapping) or "small" not in data or "on" not in data:
            raise InvalidJoinSpec(f"a join spec needs 'small' and 'on', got {data!r}")
        unknown = set(data) - {"small", "on", "how", "big_side"}
        if unknown:
            raise InvalidJoinSpec(f"unknown join spec key(s): {sorted(unknown)}")
        # the JSON's values as they are: ``of`` and the constructor check each
        return cls.of(cast(str, data["small"]), cast(KeyPairs, data["on"]),
                      cast(str, data.get("how", "inner")), cast(str, data.get("big_side", "left")))

    def to_json(self) -> JoinSpecJson:
        return {"small": self.small, "on": [[str(b), str(s)] for b, s in self.on],
                "how": self.how, "big_side": self.big_side}

    @property
    def preserves_big(self) -> bool:
        """Whether every big-table row survives this join (then its keys cannot prune)."""
        if self.how == "full":
            return True
        return self.how in ("left", "right") and self.how == self.big_side

    def describe(self) -> str:
        keys = " AND ".join(f"big.{b} = {self.small}.{s}" for b, s in self.on)
        word = {"inner": "INNER JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN",
                "full": "FULL JOIN", "left_semi": "LEFT SEMI JOIN"}[self.how]
        order = f"big {word} {self.small}" if self.big_side == "left" else \
            f"{self.small} {word} big"
        return f"{order} ON {keys}"


def join_specs(specs: Sequence[JoinSpec | Mapping[str, object]] | JoinSpec) -> list[JoinSpec]:
    """Specs from objects or their JSON form (as an operator receives them)."""
    if isinstance(specs, JoinSpec):
        return [specs]
    out = [JoinSpec.from_json(s) for s in specs]
    if not out:
        raise InvalidJoinSpec("no joins given: nothing can prune")
    return out


@dataclass(frozen=True)
class PairCheck:
    """One key pair of one join, and whether it may prune ``column`` of a storage."""

    join: int
    small: str
    big_key: str
    small_key: str
    column: str | None  # the big table's partition column, when the pair may prune
    code: str | None = None  # why not (one of the codes above)
    reason: str | None = None


def check_pairs(specs: Sequence[JoinSpec], partition_columns: Sequence[str]) -> list[PairCheck]:
    """The compile-time rules of docs/pruning.md, per key pair: the big table must be on the inner
    side,
    neither key may be wrapped in a function, and the big key must be a partition column."""
    by_lower = {c.lower(): c for c in partition_columns}
    out: list[PairCheck] = []
    for index, spec in enumerate(specs):
        for big, small in spec.on:
            base = (index, spec.small, str(big), str(small))
            if spec.preserves_big:
                why = (f"join #{index} ({spec.describe()}) keeps every big-table row, matched "
                       "or not")
                out.append(PairCheck(*base, None, OUTER_PRESERVES_BIG, why))
            elif big.wrapped:
                out.append(PairCheck(*base, None, FUNCTION_ON_BIG_KEY,
                                     f"the big-table key {big} is wrapped in a function"))
            elif small.wrapped:
                out.append(PairCheck(*base, None, FUNCTION_ON_SMALL_KEY,
                                     f"the small-table key {spec.small}.{small} is wrapped in a "
                                     "function"))
            elif big.column.lower() not in by_lower:
                out.append(PairCheck(*base, None, NOT_A_PARTITION_COLUMN,
                                     f"{big.column!r} is not a partition column "
                                     f"({', '.join(partition_columns)})"))
            else:
                out.append(PairCheck(*base, by_lower[big.column.lower()]))
    return out


def keys_to_collect(specs: Sequence[JoinSpec], partition_columns: Sequence[str] | None = None,
                    ) -> dict[str, list[str]]:
    """small table -> the bare key columns worth collecting (only pairs that may prune)."""
    out: dict[str, list[str]] = {}
    columns = partition_columns
    for spec in specs:
        for big, small in spec.on:
            if spec.preserves_big or big.wrapped or small.wrapped:
                continue
            if columns is not None and big.column.lower() not in {c.lower() for c in columns}:
                continue
            wanted = out.setdefault(spec.small, [])
            if small.column not in wanted:
                wanted.append(small.column)
    return out
