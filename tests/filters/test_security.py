"""Hostile values cannot change a server filter's structure, and they match exactly.

Values holding ``'``, ``\\``, ``)``, `` AND ``, NUL and non-ASCII are written as partition rows
in the catalog's exact row format (the catalog itself refuses ``\\`` and NUL in values, which
land in paths), then filtered for. The rendered HBase filter string is parsed back with the
test double's own filter-language parser, and its tree must be the one the plan meant.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from airflow_partitions.catalog import (
    LIVE,
    LOC,
    STAMP,
    STATE,
    Catalog,
    encoded_cell_column,
    get_partitions_by_filter,
    value_cell_column,
)
from airflow_partitions.filters import ast
from airflow_partitions.filters.query_plan import plan_filter
from airflow_partitions.keys import FIRST_VALUE_FIELD, encode_key, field_bytes
from airflow_partitions.kv import (
    FilterList,
    RowRange,
    ScanFilter,
    SingleColumnValue,
    render_hbase_bytes,
)
from airflow_partitions.testing.hbase import filter_language as hfl
from tests.helpers import unique

HOSTILE = [
    "it's", "a\\b", "x) AND (y", "v AND w", "nul\0byte", "é", "日本", "'; DROP TABLE x; --",
    "\\')", "''", "a OR b", "\x7f\x01", "SingleColumnValueFilter ('p', 'k.n', =, 'binary:')",
]


def write_raw(catalog: Catalog, storage: str, values: list[tuple[int, str]]) -> None:
    """Partition rows exactly as ``Catalog.register`` writes them (cells and key)."""
    sdef = catalog.get_storage(storage)
    rows = []
    for n, region in values:
        typed = ("2015-01-01", n, region)
        key = encode_key(sdef.key_schema, storage, "DAILY", typed)
        cells = {LOC: f"/loc/{n}/{region!r}".encode(), STATE: LIVE,
                 STAMP: str(int(time.time())).encode()}
        for index, (column, _) in enumerate(sdef.columns):
            cells[value_cell_column(column)] = str(typed[index]).encode()
            cells[encoded_cell_column(column)] = field_bytes(key, FIRST_VALUE_FIELD + index)
        rows.append((key, cells))
    catalog.rows.partitions.put_many(rows)


def shape(f: ScanFilter) -> Any:
    """Our filter as a comparable tree."""
    if isinstance(f, FilterList):
        return (f.op, tuple(_flatten(f.op, [shape(m) for m in f.filters])))
    if isinstance(f, SingleColumnValue):
        family, _, qualifier = f.column.partition(b":")
        return ("SCV", family, qualifier, f.op, f.comparator, f.value, f.filter_if_missing)
    if isinstance(f, RowRange):
        return ("AND", (("ROW",), ("ROW",)))
    raise AssertionError(f)


def parsed_shape(f: hfl.Filter) -> Any:
    """The test double's parse of the rendered string, as the same kind of tree."""
    if isinstance(f, hfl.And | hfl.Or):
        op = "AND" if isinstance(f, hfl.And) else "OR"
        return (op, tuple(_flatten(op, [parsed_shape(m) for m in f.operands])))
    if isinstance(f, hfl.SingleColumnValue):
        return ("SCV", f.family, f.qualifier, f.op, f.comparator.kind, f.comparator.value,
                f.filter_if_missing)
    if isinstance(f, hfl.RowLevel):
        return ("ROW",)
    raise AssertionError(f)


def _flatten(op: str, items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        out.extend(item[1] if item[0] == op else (item,))
    return out


@pytest.fixture(scope="module")
def hostile(catalog: Catalog) -> str:
    name = unique("hostile")
    catalog.create_storage("ev", name, ["DAILY"], columns=["dt", "n:int", "region"])
    write_raw(catalog, name, [(i, v) for i, v in enumerate(HOSTILE)] + [(99, "plain")])
    return name


def _regions(catalog: Catalog, storage: str, text: str) -> list[str]:
    return sorted(p.values["region"] for p in get_partitions_by_filter(catalog, storage, text))


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_keep_the_filter_structure_and_match_exactly(
    catalog: Catalog, hostile: str, value: str
) -> None:
    sdef = catalog.get_storage(hostile)
    lit = ast.quote_string(value)
    others = [v for v in HOSTILE if v != value]
    cases = [
        (f"n >= 0 AND region = {lit}", [value]),
        (f"n >= 0 AND region != {lit}", sorted([*others, "plain"])),
        (f"n >= 0 AND region IN ({lit}, 'plain')", sorted([value, "plain"])),
        (f"n >= 0 AND region LIKE {ast.quote_string(value[:3] + '%')}",
         sorted(v for v in [*HOSTILE, "plain"] if v.startswith(value[:3]))),
    ]
    for text, expected in cases:
        assert _regions(catalog, hostile, text) == expected, text
        [period] = plan_filter(sdef.row_layout, sdef.periods, text).periods
        for scan in period.scans:
            assert scan.filter is not None
            rendered = render_hbase_bytes(scan.filter)
            assert parsed_shape(hfl.parse_filter(rendered)) == shape(scan.filter), rendered


def test_hostile_values_in_a_leading_column_and_gets(catalog: Catalog) -> None:
    name = unique("hostlead")
    catalog.create_storage("ev", name, ["DAILY"], columns=["dt", "n:int", "region"])
    write_raw(catalog, name, [(1, v) for v in HOSTILE])
    for value in HOSTILE:
        text = f"dt = '2015-01-01' AND n = 1 AND region = {ast.quote_string(value)}"
        assert _regions(catalog, name, text) == [value]
        sdef = catalog.get_storage(name)
        assert plan_filter(sdef.row_layout, sdef.periods, text).periods[0].gets


def test_filter_string_literal_cannot_inject_filter_syntax() -> None:
    """A value made of filter syntax renders as one quoted comparator argument."""
    value = b"x', true, true) OR RowFilter (>=, 'binary:"
    f = SingleColumnValue(b"p:k.region", "=", value, "binary", True)
    parsed = hfl.parse_filter(render_hbase_bytes(f))
    assert isinstance(parsed, hfl.SingleColumnValue)
    assert parsed.comparator.value == value
