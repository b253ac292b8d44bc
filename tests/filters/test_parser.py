"""The language: parsing, canonical printing, typed errors, LIKE semantics, fuzzing."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.errors import InvalidInput
from airflow_partitions.filters import ast
from airflow_partitions.filters.decompose import decompose
from airflow_partitions.filters.errors import (
    FilterError,
    FilterSyntaxError,
    FilterTypeError,
    UnknownColumnError,
)
from airflow_partitions.filters.like import parse_like
from airflow_partitions.filters.parser import parse_filter
from airflow_partitions.filters.query_plan import plan_filter
from airflow_partitions.filters.types import Binder
from airflow_partitions.keys import ColumnType as T
from airflow_partitions.keys import RowLayout
from airflow_partitions.periods import UpdatePeriod
from tests.filters.strategies import mixed_filters
from tests.hypothesis_budget import examples

C = ast.Column
LAYOUT = RowLayout("s", (("dt", T.STRING), ("region", T.STRING), ("shop", T.INT),
                         ("day2", T.DATE)))
PERIODS = (UpdatePeriod.DAILY,)


def test_the_issue_caret_example() -> None:
    text = "dt >= '2015-01-01' and and region = 'us'"
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text)
    assert str(info.value) == (
        "dt >= '2015-01-01' and and region = 'us'\n"
        "                       ^ expected a comparison"
    )
    assert info.value.position == 23
    assert isinstance(info.value, InvalidInput)


@pytest.mark.parametrize(("text", "position", "message"), [
    ("", 0, "expected a comparison"),
    ("a = ", 4, "expected a column"),
    ("a = 'x", 4, "unterminated string"),
    ("a = 1)", 5, "expected AND, OR"),
    ("(a = 1", 6, "expected ')'"),
    ("a in ()", 6, "expected a literal"),
    ("a like b", 7, "quoted LIKE pattern"),
    ("a like 'x' escape 'ab'", 18, "exactly one character"),
    ("a not = 1", 6, "expected LIKE, IN or BETWEEN"),
    ("a = 2015-13-01", 4, "not a valid date"),
    ("a = 2015-01-01-05", 4, "neither an integer nor a yyyy-mm-dd date"),
    ("a = DATE '2015-1-1'", 9, "DATE needs"),
    ("foo(a) = 1", 0, "unknown function"),
    ("a = 'x\\q'", 6, "unknown escape"),
    ("a # 1", 2, "unexpected character"),
    ("and = 1", 0, "expected a comparison"),
    ("a between 1 or 2", 12, "expected AND in BETWEEN"),
    ("cast(a as float) = 1", 10, "expected int, string or date"),
])
def test_syntax_errors_point_at_the_problem(text: str, position: int, message: str) -> None:
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text)
    assert info.value.position == position, str(info.value)
    assert message in info.value.message
    assert str(info.value).splitlines()[1].index("^") == position


def test_grammar_and_canonical_form() -> None:
    expr = parse_filter(
        "Region NOT LIKE 'u!_%' escape '!' AND (shop <> 3 Or NOT shop in (1, '2')) and "
        "day2 between 2015-01-01 AND date '2015-02-01' AND upper(region) IS NOT NULL "
        "AND 5 < length(region) and cast(shop as STRING) = \"it's\""
    )
    assert str(expr) == (
        "region NOT LIKE 'u!_%' ESCAPE '!' AND (shop != 3 OR NOT shop IN (1, '2')) AND "
        "day2 BETWEEN DATE '2015-01-01' AND DATE '2015-02-01' AND upper(region) IS NOT NULL "
        "AND 5 < length(region) AND cast(shop AS string) = 'it\\'s'"
    )
    assert parse_filter(str(expr)) == expr


def test_literals_and_escapes() -> None:
    expr = parse_filter("a = 'x''y\\n\\t\\0\\\\\\u00e9\\U0001F600' OR b = \"q\\\"\" OR c = -7")
    assert isinstance(expr, ast.Or)
    first = expr.items[0]
    assert isinstance(first, ast.Compare)
    assert first.right == ast.Const("x'y\n\t\0\\é\U0001F600")
    assert expr.items[1] == ast.Compare(C("b"), "=", ast.Const('q"'))
    assert expr.items[2] == ast.Compare(C("c"), "=", ast.Const(-7))
    assert parse_filter(str(expr)) == expr
    day = ast.Const(dt.date(2015, 1, 2))
    assert parse_filter("d = 2015-01-02") == ast.Compare(C("d"), "=", day)


def test_keywords_and_names_are_case_insensitive_values_are_not() -> None:
    assert parse_filter("REGION = 'US' aNd Shop > 1") == parse_filter("region = 'US' and shop > 1")
    assert parse_filter("region = 'US'") != parse_filter("region = 'us'")
    assert parse_filter("`Date` = 1") == ast.Compare(C("date"), "=", ast.Const(1))
    assert str(parse_filter("`date` = 1")) == "`date` = 1"


def test_nesting_is_bounded() -> None:
    with pytest.raises(FilterSyntaxError, match="nesting deeper"):
        parse_filter("(" * 500 + "a = 1" + ")" * 500)
    with pytest.raises(FilterSyntaxError, match="nesting deeper"):
        parse_filter("NOT " * 500 + "a = 1")
    assert parse_filter(" AND ".join(["a = 1"] * 2000))  # long flat chains are fine


@pytest.mark.parametrize(("text", "error"), [
    ("shop = 'abc'", "not an integer"),
    ("region = 5", "quote it"),
    ("shop = 2147483648", "out of the int range"),
    ("day2 = 5", "not a yyyy-mm-dd date"),
    ("day2 = '2015-02-30'", "not a yyyy-mm-dd date"),
    ("region like 'a!' escape '!'", "ends with its escape"),
    ("shop like '1%'", "needs string"),
    ("upper(shop) = 'X'", "needs string"),
    ("length(region) = 'x'", "not an integer"),
    ("1 = 1", "two literals"),
    ("'a' is null", "must be a column"),
    ("substr(region, 0) = 'x'", "position >= 1"),
    ("substr(region, shop) = 'x'", "integer literals"),
    ("region = shop", "compares string with int"),
    ("upper(region, region) = 'x'", "takes 1..1 arguments"),
])
def test_type_errors(text: str, error: str) -> None:
    with pytest.raises(FilterTypeError, match=error):
        plan_filter(LAYOUT, PERIODS, text)


def test_unknown_columns_are_errors_unless_allowed() -> None:
    with pytest.raises(UnknownColumnError, match="unknown column 'colour'"):
        plan_filter(LAYOUT, PERIODS, "colour = 'red' and shop = 1")
    plan = plan_filter(LAYOUT, PERIODS, "colour = 'red' and shop = 1", allow_unknown=True)
    assert str(plan.residual) == "colour = 'red'"
    assert plan.split.unknown_columns == {"colour"}


def test_literal_coercion() -> None:
    binder = Binder(LAYOUT.columns)
    assert binder.coerce(ast.Const("12"), C("shop")) == 12
    assert binder.coerce(ast.Const("2015-01-02"), C("day2")) == dt.date(2015, 1, 2)
    assert binder.coerce(ast.Const(dt.date(2015, 1, 2)), C("dt")) == "2015-01-02"


@pytest.mark.parametrize(("pattern", "escape", "text", "expected"), [
    ("us%", None, "us-east", True),
    ("us%", None, "US-east", False),
    ("u_s", None, "uxs", True),
    ("u_s", None, "us", False),
    ("a.c", None, "abc", False),  # not a regex
    ("a.c", None, "a.c", True),
    ("(a|b)", None, "a", False),
    ("%", None, "", True),
    ("_%", None, "", False),
    ("a!%b", "!", "a%b", True),
    ("a!%b", "!", "axb", False),
    ("a!_%", "!", "a_z", True),
    ("a!_%", "!", "abz", False),
    ("%é_", None, "xéü", True),
    ("a%b%c", None, "abxbc", True),
    ("a%b%c", None, "abxbcd", False),
])
def test_like_is_sql_like(pattern: str, escape: str | None, text: str, expected: bool) -> None:
    assert parse_like(pattern, escape).matches(text) is expected


def test_decompose_seed_001() -> None:
    pushed, residual = decompose(parse_filter("x > 3 AND upper(y) = 'XYZ'"))
    assert str(pushed) == "x > 3"
    assert str(residual) == "upper(y) = 'XYZ'"
    pushed, residual = decompose(parse_filter("x > 3 AND y = 1 AND (x = 1 OR z = 2)"),
                                 allowed_columns=["X", "z"], allowed_ops=["=", ">", "OR"])
    assert str(pushed) == "x > 3 AND (x = 1 OR z = 2)"
    assert str(residual) == "y = 1"
    pushed, residual = decompose(parse_filter("x LIKE 'a%'"), allowed_ops=["="])
    assert pushed is None and str(residual) == "x LIKE 'a%'"
    pushed, residual = decompose(parse_filter("x = 1"))
    assert str(pushed) == "x = 1" and residual is None


def test_storage_split_relaxes_residual_terms() -> None:
    text = "shop > 3 AND (region LIKE 'us%east' OR upper(region) = 'X')"
    plan = plan_filter(LAYOUT, PERIODS, text)
    assert str(plan.residual) == "region LIKE 'us%east' OR upper(region) = 'X'"
    plan = plan_filter(LAYOUT, PERIODS, "region LIKE 'us%east' AND shop = 1")
    assert str(plan.residual) == "region LIKE 'us%east'"
    # The pushed side keeps the LIKE's literal prefix (a binaryprefix pre-filter).
    [scan] = plan.periods[0].scans
    assert scan.filter is not None and "us" in repr(scan.filter)


# ------------------------------------------------------------------------------- fuzzing
_tokens = st.sampled_from([
    "a", "shop", "region", "dt", "day2", "=", "!=", "<>", "<", ">=", "(", ")", ",", "'x'", "'",
    '"', "1", "-2", "2015-01-01", "DATE", "AND", "OR", "NOT", "LIKE", "IN", "BETWEEN", "IS",
    "NULL", "ESCAPE", "upper(", "cast(", "AS", "int", "substr(", "`", "\\", "%", "_", "é", "\0",
])


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=60), st.lists(_tokens, max_size=14).map(" ".join)))
def test_fuzz_parser_raises_only_typed_errors(text: str) -> None:
    try:
        expr = parse_filter(text)
    except FilterSyntaxError as exc:
        assert 0 <= exc.position <= len(text)
        assert "^" in str(exc)
        return
    assert parse_filter(str(expr)) == expr
    try:
        plan_filter(LAYOUT, PERIODS, expr)
    except FilterError:
        pass


@settings(max_examples=examples(200), deadline=None)
@given(mixed_filters())
def test_canonical_string_round_trips(expr: ast.Expr) -> None:
    assert parse_filter(str(expr)) == expr
