"""Plan shapes: the Hive-on-HBase table, contradictions, merging, gets, and Hive's bugs not
repeated."""

from __future__ import annotations

import pytest

from airflow_partitions.filters.planner import PeriodPlan, ScanSpec
from airflow_partitions.filters.query_plan import plan_filter
from airflow_partitions.keys import ColumnType as T
from airflow_partitions.keys import (
    RowLayout,
    encode_key,
    encode_value,
    encoded_cell_column,
    key_prefix,
    prefix_successor,
    value_cell_column,
)
from airflow_partitions.kv import FilterList, RowRange, SingleColumnValue
from airflow_partitions.periods import UpdatePeriod

DAILY = UpdatePeriod.DAILY
PERIODS = (DAILY,)


def storage(*columns: tuple[str, T]) -> RowLayout:
    return RowLayout("s", tuple(columns))


ONE = storage(("p1", T.INT))
TWO = storage(("p1", T.INT), ("c1", T.INT))
THREE = storage(("p1", T.INT), ("c1", T.INT), ("c2", T.STRING))


def X(layout: RowLayout, *lead: object) -> bytes:
    return key_prefix(layout.key_schema, "s", "DAILY", lead)


def Xplus(layout: RowLayout, *lead: object) -> bytes:
    nxt = prefix_successor(X(layout, *lead))
    assert nxt is not None
    return nxt


def key(layout: RowLayout, *values: object) -> bytes:
    return encode_key(layout.key_schema, "s", "DAILY", values)


def eq(column: str, value: int) -> SingleColumnValue:
    return SingleColumnValue(encoded_cell_column(column), "=",
                             encode_value(T.INT, value), "binary", True)


def one(layout: RowLayout, text: str, **kw: object) -> PeriodPlan:
    plan = plan_filter(layout, PERIODS, text, **kw)  # type: ignore[arg-type]
    [period] = plan.periods
    return period


# ------------------------------------------------------------------- the Hive-on-HBase table
def test_range_on_the_first_column() -> None:
    p = one(TWO, "p1 > 10 and p1 < 20")
    assert p.scans == (ScanSpec(X(TWO, 11), X(TWO, 20)),) and not p.gets and not p.full_scan


def test_equality_single_column_is_a_get() -> None:
    p = one(ONE, "p1 = 10")
    assert p.gets == (key(ONE, 10),) and not p.scans


def test_all_columns_bound_is_a_get() -> None:
    assert one(TWO, "c1 = 3 and p1 = 10").gets == (key(TWO, 10, 3),)


def test_equality_multi_column_is_a_prefix_scan() -> None:
    assert one(TWO, "p1 = 10").scans == (ScanSpec(X(TWO, 10), Xplus(TWO, 10)),)


def test_or_of_points_is_one_multi_get() -> None:
    p = one(ONE, "p1 = 9 or p1 = 10 or p1 = 9")
    assert p.gets == (key(ONE, 9), key(ONE, 10)) and not p.scans


def test_in_lists_on_all_key_columns_are_multi_gets() -> None:
    p = one(TWO, "p1 in (1, 2) and c1 in (5, 6, 5)")
    assert p.gets == tuple(sorted(key(TWO, a, b) for a in (1, 2) for b in (5, 6)))


def test_or_of_prefixes_merges_adjacent_ranges() -> None:
    assert one(TWO, "p1 = 9 or p1 = 10").scans == (ScanSpec(X(TWO, 9), X(TWO, 11)),)


def test_overlapping_or_is_one_scan_without_filter() -> None:
    p = one(TWO, "p1 > 10 or p1 < 20")
    assert p.scans == (ScanSpec(X(TWO), Xplus(TWO)),) and not p.full_scan


def test_condition_on_a_later_column_is_a_filtered_table_scan() -> None:
    p = one(TWO, "c1 = 5")
    assert p.scans == (ScanSpec(X(TWO), Xplus(TWO), eq("c1", 5)),) and p.full_scan
    assert "leading key column 'p1'" in p.notes[0]


def test_range_plus_condition() -> None:
    assert one(TWO, "p1 > 10 and c1 = 5").scans == (
        ScanSpec(X(TWO, 11), Xplus(TWO), eq("c1", 5)),)
    assert one(TWO, "p1 < 20 and c1 = 5").scans == (ScanSpec(X(TWO), X(TWO, 20), eq("c1", 5)),)


def test_tightest_bounds_win() -> None:
    p = one(TWO, "p1 > 10 and p1 > 20 and p1 < 30 and p1 < 40")
    assert p.scans == (ScanSpec(X(TWO, 21), X(TWO, 30)),)


def test_and_over_or_is_distributed_and_merged() -> None:
    p = one(TWO, "p1 > 10 and (p1 > 20 or c1 = 5)")
    expected = FilterList("OR", (eq("c1", 5), RowRange(X(TWO, 21), True, Xplus(TWO), False)))
    assert p.scans == (ScanSpec(X(TWO, 11), Xplus(TWO), expected),)


def test_one_full_disjunct_makes_one_full_scan_with_combined_filter() -> None:
    p = one(TWO, "p1 = 3 or c1 = 5")
    assert p.full_scan and not p.gets
    assert p.scans == (ScanSpec(X(TWO), Xplus(TWO), FilterList("OR", (eq("p1", 3), eq("c1", 5)))),)


def test_leading_equality_run_plus_one_range_column() -> None:
    p = one(THREE, "p1 = 2015 and c1 > 10 and c1 <= 12 and c2 = 'x'")
    c2 = SingleColumnValue(encoded_cell_column("c2"), "=", encode_value(T.STRING, "x"),
                           "binary", True)
    assert p.scans == (ScanSpec(X(THREE, 2015, 11), X(THREE, 2015, 13), c2),)
    # month > 10 and month <= 11 pins the column: with the rest bound too, that is a get.
    p = one(THREE, "p1 = 2015 and c1 > 10 and c1 <= 11 and c2 = 'x'")
    assert p.gets == (key(THREE, 2015, 11, "x"),) and not p.scans


def test_a_gap_in_the_key_stops_the_range() -> None:
    p = one(THREE, "p1 = 1 and c2 = 'x'")
    [scan] = p.scans
    assert (scan.start, scan.stop) == (X(THREE, 1), Xplus(THREE, 1))
    assert isinstance(scan.filter, SingleColumnValue) and scan.filter.column == b"p:k.c2"


# ------------------------------------------------------------------------- contradictions
@pytest.mark.parametrize("text", [
    "p1 >= 5 and p1 < 3", "p1 = 1 and p1 = 2", "p1 = 1 and p1 != 1", "p1 > 2147483647",
    "p1 < -2147483648", "p1 > 4 and p1 < 5", "p1 in (1, 2) and p1 not in (2, 1)",
    "p1 between 5 and 3", "c1 is null", "not (p1 is not null)",
])
def test_contradictions_read_nothing(text: str) -> None:
    p = one(TWO, text)
    assert not p.scans and not p.gets


def test_string_contradictions() -> None:
    layout = storage(("r", T.STRING), ("n", T.INT))
    assert not one(layout, "r = 'us' and r not like 'u%'").scans
    assert not one(layout, "r like 'us%' and r like 'eu%'").scans
    assert not one(layout, "r = 'a' and r = 'b'").scans


# ------------------------------------------------------------------- Hive's bugs, not ours
def test_non_leading_equality_is_equality_not_ge() -> None:
    [scan] = one(THREE, "c1 = 5").scans
    assert scan.filter == eq("c1", 5)
    [scan] = one(THREE, "p1 > 1 and c1 = 5").scans
    assert scan.filter == eq("c1", 5)


def test_lt_and_le_on_the_same_value_keep_the_strict_bound() -> None:
    assert one(TWO, "p1 < 10 and p1 <= 10").scans == (ScanSpec(X(TWO), X(TWO, 10)),)
    assert one(TWO, "p1 <= 10 and p1 < 10").scans == (ScanSpec(X(TWO), X(TWO, 10)),)
    layout = storage(("r", T.STRING), ("n", T.INT))
    [scan] = one(layout, "r < 'm' and r <= 'm'").scans
    assert scan.stop == X(layout, "m")


def test_or_branches_do_not_share_markers() -> None:
    p = one(TWO, "p1 >= 5 and (p1 < 8 or p1 < 3)")
    assert p.scans == (ScanSpec(X(TWO, 5), X(TWO, 8)),)
    p = one(TWO, "p1 >= 5 and (p1 < 8 or p1 > 20)")
    assert p.scans == (ScanSpec(X(TWO, 5), X(TWO, 8)), ScanSpec(X(TWO, 21), Xplus(TWO)))


def test_like_is_not_a_regex_and_prefixes_push_down() -> None:
    layout = storage(("r", T.STRING), ("n", T.INT))
    [scan] = one(layout, "r like 'us%'").scans  # leading column: a prefix range
    assert scan.start == X(layout) + b"\x01us" and scan.stop == X(layout) + b"\x01ut"
    assert scan.filter is None
    [scan] = one(layout, "n = 1 and r like 'us%'").scans
    assert scan.filter == eq("n", 1) and scan.start == X(layout) + b"\x01us"
    layout2 = storage(("n", T.INT), ("r", T.STRING))
    [scan] = one(layout2, "r like 'us%'").scans
    assert scan.filter == SingleColumnValue(value_cell_column("r"), "=", b"us", "binaryprefix",
                                            True)
    plan = plan_filter(layout2, PERIODS, "r like 'u.s%'")
    assert plan.residual is None  # '.' is a literal character: still an exact prefix
    plan = plan_filter(layout2, PERIODS, "r like 'u_s%'")
    assert str(plan.residual) == "r LIKE 'u_s%'"  # '_' is not expressible exactly


# --------------------------------------------------------------------------- gets & merges
def test_gets_inside_a_scan_join_it() -> None:
    p = one(TWO, "(p1 = 1 and c1 = 1) or p1 = 1")
    assert not p.gets and p.scans == (ScanSpec(X(TWO, 1), Xplus(TWO, 1)),)
    p = one(TWO, "(p1 = 1 and c1 = 1) or (p1 = 1 and c1 > 5)")  # outside the range: a get
    assert p.gets == (key(TWO, 1, 1),) and p.scans == (ScanSpec(X(TWO, 1, 6), Xplus(TWO, 1)),)
    p = one(THREE, "(p1 = 1 and c1 = 1 and c2 = 'a') or (p1 = 1 and c2 = 'b')")
    [scan] = p.scans
    assert not p.gets and isinstance(scan.filter, FilterList) and scan.filter.op == "OR"
    point = key(THREE, 1, 1, "a")
    assert scan.filter.filters[1] == RowRange(point, True, point, True)


def test_dnf_bound_falls_back_to_one_filtered_scan() -> None:
    text = "p1 >= 3 and (c1 = 1 or c1 = 2) and (c1 = 3 or c1 = 4) and (c1 = 5 or c1 = 6)"
    p = one(TWO, text, max_disjuncts=4)
    assert p.disjuncts is None and "fallback" in p.notes[0]
    [scan] = p.scans
    assert (scan.start, scan.stop) == (X(TWO, 3), Xplus(TWO))
    assert isinstance(scan.filter, FilterList) and scan.filter.op == "AND"
    assert one(TWO, text).disjuncts == 8
