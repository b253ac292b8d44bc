"""Every server filter the planner emits, run on a real HBase: its parser accepts the string,
and the plan's rows plus the residual are exactly what a full scan evaluated in Python gives.

The test double parses the filter language with our own reading of it; only a real region
server proves that HBase reads each string as meant. The oracle here scans each period's rows
with no server filter and evaluates the filter tree on the decoded values with an evaluator
written for this module (it shares no code with the planner or ``filters.types``).
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeAlias

import happybase
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, TimelineCache, get_partitions_by_filter
from airflow_partitions.filters import ast
from airflow_partitions.filters.query_plan import plan_filter
from airflow_partitions.keys import ColumnType
from airflow_partitions.kv import render_hbase_bytes
from tests.filters.strategies import COLUMNS, DAY2, DAYS, MONTHS, REGIONS, SHOPS, mixed_filters
from tests.filters.test_plans import ONE, THREE, TWO
from tests.hypothesis_budget import examples
from tests.kv.conftest import REAL_HBASE_ENV, REAL_HBASE_SKIP

Py: TypeAlias = str | int | dt.date | None
Row: TypeAlias = dict[str, Py]
Ident: TypeAlias = tuple[str, tuple[tuple[str, str], ...]]


# ------------------------------------------------------------------ the independent evaluator
def _parse_day(text: str) -> dt.date | None:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def _kind(value: ast.Value, types: dict[str, str]) -> str:
    """The SQL type of a non-literal operand: a column's, or what a function returns."""
    if isinstance(value, ast.Column):
        return types[value.name.lower()]
    if isinstance(value, ast.Cast):
        return value.type
    assert isinstance(value, ast.Call), value
    return "int" if value.name.lower() == "length" else "string"


def _literal(value: Py, kind: str) -> Py:
    """A literal as the other side's type (the documented coercions, docs/filters.md)."""
    if kind == "string":
        return value.isoformat() if isinstance(value, dt.date) else value
    if kind == "int":
        return int(value) if isinstance(value, str) else value
    return _parse_day(value) if isinstance(value, str) else value


def _value(node: ast.Value, row: Row, kind: str | None) -> Py:
    if isinstance(node, ast.Const):
        return _literal(node.value, kind) if kind is not None else node.value
    if isinstance(node, ast.Column):
        return row[node.name.lower()]
    if isinstance(node, ast.Cast):
        inner = _value(node.arg, row, None)
        if inner is None:
            return None
        if node.type == "string":
            return inner.isoformat() if isinstance(inner, dt.date) else str(inner)
        if node.type == "int":
            if isinstance(inner, int):
                return inner
            text = inner.strip() if isinstance(inner, str) else ""
            return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None
        if isinstance(inner, dt.date):
            return inner
        return _parse_day(inner.strip()) if isinstance(inner, str) else None
    assert isinstance(node, ast.Call), node
    args = [_value(a, row, None) for a in node.args]
    if any(a is None for a in args):
        return None
    name = node.name.lower()
    if name == "upper":
        return str(args[0]).upper()
    if name == "lower":
        return str(args[0]).lower()
    if name == "length":
        return len(str(args[0]))
    if name == "concat":
        return "".join(str(a) for a in args)
    assert name == "substr", name
    text, start = str(args[0]), int(args[1]) - 1  # type: ignore[arg-type]
    return text[start:] if len(args) == 2 else text[start:start + int(args[2])]  # type: ignore[arg-type]


def _compare(a: Py, op: str, b: Py) -> bool | None:
    if a is None or b is None:
        return None
    x: Any = a
    return bool({"=": x == b, "!=": x != b, "<": x < b, "<=": x <= b, ">": x > b,
                 ">=": x >= b}[op])


def _like(text: str, pattern: str, escape: str | None) -> bool:
    parts, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape and i + 1 < len(pattern):
            parts.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        parts.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.fullmatch("".join(parts), text, re.DOTALL) is not None


def _flip(value: bool | None, negated: bool) -> bool | None:
    return None if value is None else value != negated


def evaluate(expr: ast.Expr, row: Row, types: dict[str, str]) -> bool | None:
    """SQL three-valued truth of ``expr`` on one partition's typed values."""
    if isinstance(expr, ast.Not):
        return _flip(evaluate(expr.operand, row, types), True)
    if isinstance(expr, ast.And | ast.Or):
        results = [evaluate(item, row, types) for item in expr.items]
        decisive = isinstance(expr, ast.Or)
        if decisive in results:
            return decisive
        return None if None in results else not decisive
    if isinstance(expr, ast.Compare):
        if isinstance(expr.left, ast.Const):
            kind = _kind(expr.right, types)
        else:
            kind = _kind(expr.left, types)
        return _compare(_value(expr.left, row, kind), expr.op, _value(expr.right, row, kind))
    if isinstance(expr, ast.IsNull):
        return (_value(expr.operand, row, None) is None) != expr.negated
    kind = _kind(expr.operand, types)
    operand = _value(expr.operand, row, kind)
    if isinstance(expr, ast.Like):
        hit = None if operand is None else _like(str(operand), expr.pattern, expr.escape)
        return _flip(hit, expr.negated)
    if isinstance(expr, ast.In):
        found = [_compare(operand, "=", _value(i, row, kind)) for i in expr.items]
        hit = True if True in found else None if None in found else False
        return _flip(hit, expr.negated)
    assert isinstance(expr, ast.Between), expr
    low = _compare(operand, ">=", _value(expr.low, row, kind))
    high = _compare(operand, "<=", _value(expr.high, row, kind))
    both = False if False in (low, high) else None if None in (low, high) else True
    return _flip(both, expr.negated)


def test_the_evaluator_follows_the_documented_semantics() -> None:
    types = {"r": "string", "n": "int", "d": "date"}
    row: Row = {"r": "us-east", "n": 7, "d": dt.date(2015, 1, 2)}
    from airflow_partitions.filters.parser import parse_filter

    for text, want in [("r LIKE 'us%'", True), ("r LIKE 'u_'", False), ("n = '7'", True),
                       ("d > '2015-01-01'", True), ("cast(r AS int) = 1", None),
                       ("NOT cast(r AS int) = 1", None), ("cast(r AS int) IS NULL", True),
                       ("substr(r, 2, 3) = 's-e'", True), ("length(r) BETWEEN 1 AND 7", True),
                       ("r IN ('eu', 'us-east')", True), ("n NOT IN (1, 2)", True),
                       ("cast(r AS int) = 1 OR n = 7", True), ("r LIKE 'a!%' ESCAPE '!'", False)]:
        assert evaluate(parse_filter(text), row, types) is want, text


# ---------------------------------------------------------------------------- the catalog
#: The planner's own test cases (tests/filters/test_plans.py), per layout; the catalog puts
#: its time column ``dt`` last, so each text also runs pinned to one day (all key columns
#: bound gives gets again).
PLANNER_CASES: dict[str, list[str]] = {
    "one": ["p1 = 10", "p1 = 9 or p1 = 10 or p1 = 9"],
    "two": [
        "p1 > 10 and p1 < 20", "c1 = 3 and p1 = 10", "p1 = 10", "p1 in (1, 2) and c1 in (5, 6, 5)",
        "p1 = 9 or p1 = 10", "p1 > 10 or p1 < 20", "c1 = 5", "p1 > 10 and c1 = 5",
        "p1 < 20 and c1 = 5", "p1 > 10 and p1 > 20 and p1 < 30 and p1 < 40",
        "p1 > 10 and (p1 > 20 or c1 = 5)", "p1 = 3 or c1 = 5",
        "p1 >= 5 and p1 < 3", "p1 = 1 and p1 = 2", "p1 = 1 and p1 != 1", "p1 > 2147483647",
        "p1 < -2147483648", "p1 > 4 and p1 < 5", "p1 in (1, 2) and p1 not in (2, 1)",
        "p1 between 5 and 3", "c1 is null", "not (p1 is not null)",
        "p1 < 10 and p1 <= 10", "p1 <= 10 and p1 < 10", "p1 >= 5 and (p1 < 8 or p1 < 3)",
        "p1 >= 5 and (p1 < 8 or p1 > 20)", "(p1 = 1 and c1 = 1) or p1 = 1",
        "(p1 = 1 and c1 = 1) or (p1 = 1 and c1 > 5)",
        "p1 >= 3 and (c1 = 1 or c1 = 2) and (c1 = 3 or c1 = 4) and (c1 = 5 or c1 = 6)",
    ],
    "three": [
        "p1 = 2015 and c1 > 10 and c1 <= 12 and c2 = 'x'",
        "p1 = 2015 and c1 > 10 and c1 <= 11 and c2 = 'x'", "p1 = 1 and c2 = 'x'", "c1 = 5",
        "p1 > 1 and c1 = 5", "(p1 = 1 and c1 = 1 and c2 = 'a') or (p1 = 1 and c2 = 'b')",
    ],
    "rn": [
        "r = 'us' and r not like 'u%'", "r like 'us%' and r like 'eu%'", "r = 'a' and r = 'b'",
        "r < 'm' and r <= 'm'", "r like 'us%'", "n = 1 and r like 'us%'",
    ],
    "nr": ["r like 'us%'", "r like 'u.s%'", "r like 'u_s%'"],
}
P1 = [-3, 1, 2, 3, 5, 8, 9, 10, 11, 19, 20, 21, 30, 2015, 2**31 - 1]
C1 = [-(2**31), 1, 3, 5, 6, 11, 12]
RS = ["us", "usa", "us-east", "u.s", "uxs", "u_s", "eu", "a", "b", "m", "ma", "l", "o'k", "é"]
PINNED_DAYS = ["2015-01-01", "2015-01-02"]


def _planner_storages(catalog: Catalog) -> None:
    layouts = {"one": ONE, "two": TWO, "three": THREE}
    for name, layout in layouts.items():
        columns = [f"{c}:{t.value}" for c, t in layout.columns] + ["dt"]
        catalog.create_storage("ev", name, ["DAILY"], columns=columns)
        every: list[list[Any]] = [list(P1), list(C1), ["a", "b", "x"]]
        pools = every[:len(layout.columns)]
        grid: list[list[Any]] = [[]]
        for pool in pools:
            grid = [[*g, v] for g in grid for v in pool]
        catalog.register(name, "DAILY", [
            {**{c: str(v) for (c, _), v in zip(layout.columns, values, strict=True)}, "dt": d}
            for values in grid for d in PINNED_DAYS])
    for name, columns in (("rn", ["r", "n:int", "dt"]), ("nr", ["n:int", "r", "dt"])):
        catalog.create_storage("ev", name, ["DAILY"], columns=columns)
        catalog.register(name, "DAILY", [{"r": r, "n": str(n), "dt": d}
                                         for r in RS for n in (0, 1, 2) for d in PINNED_DAYS])


def _oracle_storage(catalog: Catalog) -> None:
    """The hypothesis sample's storage: tests/filters' mixed columns, 150 partitions."""
    rng = random.Random(11)
    catalog.create_storage("ev", "mixed", ["DAILY", "MONTHLY"], columns=COLUMNS)
    for period, times, n in (("DAILY", DAYS, 120), ("MONTHLY", MONTHS, 30)):
        catalog.register("mixed", period, [
            {"dt": rng.choice(times), "region": rng.choice(REGIONS),
             "shop": str(rng.choice(SHOPS)), "day2": rng.choice(DAY2).isoformat()}
            for _ in range(n)])


class RealHBase:
    """The module's catalog on the real server, a raw happybase table on the same rows, and
    each storage's full scan (read once: the rows do not change)."""

    def __init__(self, catalog: Catalog, raw: happybase.Table) -> None:
        self.catalog = catalog
        self.raw = raw
        self.full: dict[str, dict[bytes, tuple[Ident, Row]]] = {}

    def types(self, storage: str) -> dict[str, str]:
        return {c.lower(): t.value for c, t in self.catalog.get_storage(storage).columns}

    def rows(self, storage: str) -> dict[bytes, tuple[Ident, Row]]:
        """Every row of every period, read with no server filter, values decoded here."""
        if storage not in self.full:
            sdef = self.catalog.get_storage(storage)
            out: dict[bytes, tuple[Ident, Row]] = {}
            for period in sdef.periods:
                prefix = sdef.row_layout.period_prefix(period.name)
                for key, cells in self.raw.scan(row_prefix=prefix):
                    texts = {c: cells[b"p:v." + c.encode()].decode() for c in sdef.column_names}
                    row: Row = {c.lower(): _typed(t, texts[c]) for c, t in sdef.columns}
                    out[key] = ((period.name, tuple(sorted(texts.items()))), row)
            self.full[storage] = out
        return self.full[storage]


def _typed(ctype: ColumnType, text: str) -> Py:
    if ctype is ColumnType.INT:
        return int(text)
    if ctype is ColumnType.DATE:
        return dt.date.fromisoformat(text)
    return text


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    target = os.environ.get(REAL_HBASE_ENV, "").strip()
    if not target:
        pytest.skip(REAL_HBASE_SKIP)
    prefix = "fp" + uuid.uuid4().hex[:10]
    data = Path(tmp_path_factory.mktemp("plans")) / "data"
    catalog = Catalog(f"hbase://{target}?table_prefix={prefix}", data_root=str(data),
                      cache=TimelineCache())
    host, port = target.rsplit(":", 1)
    conn = happybase.Connection(host, int(port), autoconnect=True)
    try:
        catalog.create_fact("ev")
        _planner_storages(catalog)
        _oracle_storage(catalog)
        yield RealHBase(catalog, conn.table(f"{prefix}_partitions".encode()))
    finally:
        conn.close()
        for name in catalog.kv.list_tables():
            catalog.kv.drop_table(name, missing_ok=True)
        catalog.close()


def check(real: RealHBase, storage: str, text: str, bound: int = 64) -> None:
    """The plan's result, and its raw server filters plus the residual, equal the oracle."""
    catalog = real.catalog
    sdef = catalog.get_storage(storage)
    everything = real.rows(storage)
    types = real.types(storage)
    plan = plan_filter(sdef.row_layout, sdef.periods, text, max_disjuncts=bound)
    expected = {key for key, (_, row) in everything.items()
                if evaluate(plan.expr, row, types) is True}

    got = get_partitions_by_filter(catalog, storage, text, max_disjuncts=bound)
    idents = [(p.period.name, tuple(sorted(p.values.items()))) for p in got]
    assert len(idents) == len(set(idents)), f"duplicates for {text}"
    assert set(idents) == {everything[key][0] for key in expected}, text

    # The same reads sent by happybase itself: each filter string goes to HBase's parser as is.
    fetched: set[bytes] = set()
    for period in plan.periods:
        for scan in period.scans:
            flt = render_hbase_bytes(scan.filter) if scan.filter is not None else None
            keys = [k for k, _ in real.raw.scan(row_start=scan.start, row_stop=scan.stop,
                                                filter=flt)]
            assert len(keys) == len(set(keys)) and not fetched & set(keys), text
            fetched.update(keys)
        fetched.update(k for k, _ in real.raw.rows(list(period.gets)))
    residual: Callable[[Row], bool] = (
        (lambda row: True) if plan.residual is None
        else (lambda row: evaluate(plan.residual, row, types) is True))  # type: ignore[arg-type]
    assert expected <= fetched, f"{text}: the server dropped matching rows"
    assert {k for k in fetched if residual(everything[k][1])} == expected, text


@pytest.mark.parametrize(("storage", "text"), [
    (storage, text) for storage, texts in PLANNER_CASES.items() for text in texts])
def test_planner_cases_on_real_hbase(real: RealHBase, storage: str, text: str) -> None:
    check(real, storage, text)
    check(real, storage, f"({text}) and dt = '2015-01-02'")
    check(real, storage, text, bound=2)  # past the bound: one scan carrying the whole tree


def test_the_cases_read_rows_and_push_filters(real: RealHBase) -> None:
    """The cases are not vacuous: they return rows, and real filters reach the server."""
    sent = 0
    for storage, texts in PLANNER_CASES.items():
        sdef = real.catalog.get_storage(storage)
        for text in texts:
            plan = plan_filter(sdef.row_layout, sdef.periods, text)
            sent += sum(s.filter is not None for p in plan.periods for s in p.scans)
    assert sent >= 10
    assert len(get_partitions_by_filter(real.catalog, "two", "c1 = 5")) == len(P1) * 2
    assert len(real.rows("mixed")) > 100  # distinct partitions of the 150 drawn


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(expr=mixed_filters(max_leaves=10), bound=st.sampled_from([2, 64]))
def test_sampled_filters_on_real_hbase(real: RealHBase, expr: ast.Expr, bound: int) -> None:
    check(real, "mixed", str(expr), bound)
