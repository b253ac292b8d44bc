"""Hypothesis strategies: partition sets over mixed-type columns, and well-typed filter ASTs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import strategies as st

from airflow_partitions.filters import ast

# Column layout of the oracle storage: dt (time, DAILY or MONTHLY), region, shop, day2.
COLUMNS = ["dt:string", "region:string", "shop:int", "day2:date"]
DAYS = ["2015-01-01", "2015-01-02", "2015-01-03", "2015-02-01", "2016-01-01"]
MONTHS = ["2015-01", "2015-02", "2016-01"]
REGIONS = ["us", "us-east", "US", "eu", "o'k", "a) AND (b", "é", "ü-ß", "u_s", "us%x", "x y"]
SHOPS = [-(2**31), -3, -1, 0, 1, 2, 3, 10, 2**31 - 1]
DAY2 = [dt.date(2015, 1, 1), dt.date(2015, 1, 2), dt.date(2015, 3, 1), dt.date(1999, 12, 31)]


def partition_values(period: str) -> st.SearchStrategy[dict[str, str]]:
    return st.fixed_dictionaries({
        "dt": st.sampled_from(DAYS if period == "DAILY" else MONTHS),
        "region": st.sampled_from(REGIONS),
        "shop": st.sampled_from(SHOPS).map(str),
        "day2": st.sampled_from(DAY2).map(dt.date.isoformat),
    })


_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=4)
_strings = st.one_of(st.sampled_from(REGIONS + DAYS + MONTHS + ["", "u", "us-", "2015"]), _text)
_ints = st.one_of(st.sampled_from(SHOPS), st.integers(-5, 12))
_dates = st.one_of(st.sampled_from(DAY2), st.dates(dt.date(1999, 1, 1), dt.date(2016, 12, 31)))


def _literal(kind: str, column: str | None) -> st.SearchStrategy[ast.Const]:
    """A literal that fits ``kind``; strings for int/date columns are also allowed (coerced)."""
    if kind == "string":
        if column == "dt":
            return st.one_of(_strings, st.dates(dt.date(2015, 1, 1), dt.date(2015, 1, 5)),
                             st.sampled_from(DAYS)).map(ast.Const)
        return _strings.map(ast.Const)
    if kind == "int":
        if column is not None:
            return st.one_of(_ints, _ints.map(str)).map(ast.Const)
        return _ints.map(ast.Const)
    if column is not None:
        return st.one_of(_dates, _dates.map(dt.date.isoformat)).map(ast.Const)
    return _dates.map(ast.Const)


C = ast.Column
OPERANDS: list[tuple[ast.Value, str, str | None]] = [
    (C("dt"), "string", "dt"),
    (C("region"), "string", "region"),
    (C("shop"), "int", "shop"),
    (C("day2"), "date", "day2"),
    (ast.Call("upper", (C("region"),)), "string", None),
    (ast.Call("lower", (C("region"),)), "string", None),
    (ast.Call("length", (C("region"),)), "int", None),
    (ast.Call("substr", (C("region"), ast.Const(1), ast.Const(2))), "string", None),
    (ast.Call("concat", (C("region"), ast.Const("-"), C("dt"))), "string", None),
    (ast.Cast(C("shop"), "string"), "string", None),
    (ast.Cast(C("region"), "int"), "int", None),
    (ast.Cast(C("dt"), "date"), "date", None),
]


def _like_pattern() -> st.SearchStrategy[tuple[str, str | None]]:
    piece = st.one_of(st.sampled_from(["%", "_", "us", "e", "-", "'", "a) AND (b", "é", "o"]),
                      st.sampled_from(["!%", "!_", "!!"]))
    return st.tuples(st.lists(piece, max_size=4).map("".join), st.sampled_from([None, "!"])).map(
        lambda t: (t[0].replace("!", "") if t[1] is None else t[0], t[1])
    )


@st.composite
def predicates(draw: Any) -> ast.Expr:
    operand, kind, column = draw(st.sampled_from(OPERANDS))
    shape = draw(st.sampled_from(["cmp", "cmp", "cmp", "in", "between", "null", "like"]))
    negated = draw(st.booleans())
    if shape == "like" and kind == "string":
        pattern, escape = draw(_like_pattern())
        return ast.Like(operand, pattern, escape, negated)
    if shape == "in":
        items = draw(st.lists(_literal(kind, column), min_size=1, max_size=4))
        return ast.In(operand, tuple(items), negated)
    if shape == "between":
        return ast.Between(operand, draw(_literal(kind, column)), draw(_literal(kind, column)),
                           negated)
    if shape == "null":
        return ast.IsNull(operand, negated)
    op = draw(st.sampled_from(ast.COMPARE_OPS))
    literal = draw(_literal(kind, column))
    if draw(st.booleans()):
        return ast.Compare(literal, op, operand)
    return ast.Compare(operand, op, literal)


def filters(max_leaves: int = 8) -> st.SearchStrategy[ast.Expr]:
    return st.recursive(
        predicates(),
        lambda sub: st.one_of(
            sub.map(ast.Not),
            st.lists(sub, min_size=2, max_size=3).map(lambda xs: ast.And(tuple(xs))),
            st.lists(sub, min_size=2, max_size=3).map(lambda xs: ast.Or(tuple(xs))),
        ),
        max_leaves=max_leaves,
    )


def _key_literal(column: str) -> st.SearchStrategy[ast.Const]:
    pools: dict[str, list[Any]] = {
        "dt": DAYS + MONTHS, "region": REGIONS, "shop": SHOPS, "day2": DAY2,
    }
    return st.sampled_from(pools[column]).map(ast.Const)


@st.composite
def key_predicates(draw: Any) -> ast.Expr:
    """Equalities / IN lists / ranges on a leading run of key columns (gets, tight ranges)."""
    names = ["dt", "region", "shop", "day2"]
    n = draw(st.integers(1, 4))
    items: list[ast.Expr] = []
    for name in names[:n]:
        shape = draw(st.sampled_from(["eq", "eq", "in", "range"]))
        if shape == "eq":
            items.append(ast.Compare(C(name), "=", draw(_key_literal(name))))
        elif shape == "in":
            consts = draw(st.lists(_key_literal(name), min_size=1, max_size=3))
            items.append(ast.In(C(name), tuple(consts)))
        else:
            op = draw(st.sampled_from(["<", "<=", ">", ">="]))
            items.append(ast.Compare(C(name), op, draw(_key_literal(name))))
    return items[0] if len(items) == 1 else ast.And(tuple(items))


def mixed_filters(max_leaves: int = 8) -> st.SearchStrategy[ast.Expr]:
    """Like :func:`filters`, with key-shaped leaves mixed in so gets and ranges get tested."""
    leaf = st.one_of(predicates(), key_predicates())
    return st.recursive(
        leaf,
        lambda sub: st.one_of(
            sub.map(ast.Not),
            st.lists(sub, min_size=2, max_size=3).map(lambda xs: ast.And(tuple(xs))),
            st.lists(sub, min_size=2, max_size=3).map(lambda xs: ast.Or(tuple(xs))),
        ),
        max_leaves=max_leaves,
    )
