"""Unit tests of the HBase filter-language parser and evaluator used by the test double."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.testing.hbase.filter_language import (
    And,
    Cell,
    FilterArgumentError,
    FilterLanguageError,
    FilterSyntaxError,
    Or,
    UnknownFilterError,
    apply_filter,
    parse_filter,
    supported_filters,
    tokenize,
)
from tests.hypothesis_budget import examples

ROW = [
    Cell(b"cf", b"a", b"1", 5),
    Cell(b"cf", b"b", b"Hello\nWorld", 6),
    Cell(b"cf2", b"c", b"", 7),
]


def run(flt: str | bytes, row: bytes = b"row", cells: list[Cell] = ROW) -> list[Cell]:
    kept, _ = apply_filter(parse_filter(flt), row, cells)
    return kept


def quals(flt: str | bytes, row: bytes = b"row") -> list[bytes]:
    return [c.qualifier for c in run(flt, row)]


# ---------------------------------------------------------------------------------------------
# Lexing and parsing
# ---------------------------------------------------------------------------------------------


def test_quoted_literal_doubles_quotes_and_keeps_raw_bytes() -> None:
    (tok, end) = tokenize(b"'it''s) AND \x00\xff'")
    assert tok.kind == "str" and tok.text == b"it's) AND \x00\xff"
    assert end.kind == "end"


@given(st.binary(max_size=20))
@settings(max_examples=examples(60), deadline=None)
def test_any_bytes_round_trip_through_quoting(value: bytes) -> None:
    literal = b"'" + value.replace(b"'", b"''") + b"'"
    flt = b"ValueFilter(=, 'binary:" + value.replace(b"'", b"''") + b"')"
    assert tokenize(literal)[0].text == value
    assert run(flt, cells=[Cell(b"f", b"q", value)]) == [Cell(b"f", b"q", value)]
    assert run(flt, cells=[Cell(b"f", b"q", value + b"x")]) == []


def test_and_binds_tighter_than_or() -> None:
    tree = parse_filter("PrefixFilter('a') OR PrefixFilter('b') AND PrefixFilter('c')")
    assert isinstance(tree, Or)
    assert isinstance(tree.operands[1], And)
    grouped = parse_filter("(PrefixFilter('a') OR PrefixFilter('b')) AND PrefixFilter('c')")
    assert isinstance(grouped, And) and isinstance(grouped.operands[0], Or)


def test_whitespace_is_optional_around_parentheses() -> None:
    assert quals("(KeyOnlyFilter())AND(ColumnPrefixFilter ( 'a' ))") == [b"a"]


@pytest.mark.parametrize(
    ("text", "error", "position", "message"),
    [
        ("", FilterSyntaxError, 0, "empty filter"),
        ("PrefixFilter('abc", FilterSyntaxError, 13, "unterminated"),
        ("PrefixFilter('a') and PrefixFilter('b')", FilterSyntaxError, 18, "uppercase"),
        ("PrefixFilter('a') PrefixFilter('b')", FilterSyntaxError, 18, "expected AND, OR"),
        ("(PrefixFilter('a')", FilterSyntaxError, 18, "expected ')'"),
        ("PrefixFilter 'a'", FilterSyntaxError, 13, "expected '('"),
        ("PrefixFilter('a' 'b')", FilterSyntaxError, 17, "expected ',' or ')'"),
        ("PrefixFilter('a') AND", FilterSyntaxError, 21, "expected a filter name"),
        ("PrefixFilter('a') # x", FilterSyntaxError, 18, "unexpected character"),
        ("NoSuchFilter('a')", UnknownFilterError, 0, "unknown or unsupported filter"),
        ("PrefixFilter()", FilterArgumentError, 0, "takes 1 argument"),
        ("PrefixFilter(a)", FilterArgumentError, 13, "quoted string"),
        ("RowFilter('binary:a', =)", FilterArgumentError, 10, "must be one of"),
        ("RowFilter(=, 'binary')", FilterArgumentError, 13, "type:value"),
        ("RowFilter(=, 'bogus:x')", FilterArgumentError, 13, "unknown comparator"),
        ("RowFilter(>, 'substring:x')", FilterArgumentError, 13, "only be used with = and !="),
        ("RowFilter(=, 'regexstring:(')", FilterArgumentError, 13, "invalid regular expression"),
        ("SingleColumnValueFilter('f','q',=,'binary:v',true)", FilterArgumentError, 0, "4 or 6"),
        ("SingleColumnValueFilter('f','q',=,'binary:v',yes,true)", FilterArgumentError, 45, "true"),
        ("ColumnRangeFilter('a', 1, 'b', true)", FilterArgumentError, 23, "true or false"),
        ("ColumnCountGetFilter('2')", FilterArgumentError, 21, "integer"),
    ],
)
def test_errors_are_typed_and_located(
    text: str, error: type[FilterLanguageError], position: int, message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)) as info:
        parse_filter(text)
    assert info.value.position == position
    assert isinstance(info.value, ValueError)


def test_supported_filters_are_listed() -> None:
    assert {"PrefixFilter", "SingleColumnValueFilter", "ColumnRangeFilter"} <= set(
        supported_filters()
    )


# ---------------------------------------------------------------------------------------------
# Comparators and direction
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "kept"),
    [
        ("=", [b"m"]),
        ("!=", [b"a", b"z"]),
        ("<", [b"a"]),
        ("<=", [b"a", b"m"]),
        (">", [b"z"]),
        (">=", [b"m", b"z"]),
    ],
)
def test_row_filter_direction_is_row_op_value(op: str, kept: list[bytes]) -> None:
    flt = parse_filter(f"RowFilter({op}, 'binary:m')")
    assert [r for r in (b"a", b"m", b"z") if apply_filter(flt, r, ROW)[0]] == kept


def test_binary_comparison_is_unsigned_bytewise() -> None:
    flt = parse_filter(b"RowFilter(>, 'binary:\x7f')")
    assert apply_filter(flt, b"\x80", ROW)[0]
    assert not apply_filter(flt, b"\x00\xff", ROW)[0]


def test_binaryprefix_compares_only_the_prefix_length() -> None:
    assert quals("ValueFilter(=, 'binaryprefix:Hel')") == [b"b"]
    assert quals("ValueFilter(<, 'binaryprefix:2')") == [b"a", b"c"]


def test_regexstring_is_find_with_dotall_on_latin1() -> None:
    assert quals("ValueFilter(=, 'regexstring:lo.W')") == [b"b"]  # DOTALL: '.' matches '\n'
    assert quals("ValueFilter(=, 'regexstring:^World')") == []  # no MULTILINE
    assert quals("ValueFilter(!=, 'regexstring:o')") == [b"a", b"c"]
    cells = [Cell(b"f", b"q", b"\xe9t\xe9")]
    assert run(b"ValueFilter(=, 'regexstring:^\xe9.\xe9$')", cells=cells) == cells


def test_substring_is_case_insensitive() -> None:
    assert quals("ValueFilter(=, 'substring:WORLD')") == [b"b"]
    assert quals("ValueFilter(!=, 'substring:world')") == [b"a", b"c"]


# ---------------------------------------------------------------------------------------------
# Filters
# ---------------------------------------------------------------------------------------------


def test_single_column_value_filter_missing_and_present() -> None:
    assert quals("SingleColumnValueFilter('cf', 'zz', =, 'binary:1')") == [b"a", b"b", b"c"]
    assert quals("SingleColumnValueFilter('cf', 'zz', =, 'binary:1', true, true)") == []
    assert quals("SingleColumnValueFilter('cf', 'a', =, 'binary:1', true, false)") == [
        b"a",
        b"b",
        b"c",
    ]
    assert quals("SingleColumnValueFilter('cf', 'a', !=, 'binary:1')") == []
    # family and qualifier must both match: cf2:a does not exist
    assert quals("SingleColumnValueFilter('cf2', 'a', =, 'binary:x', TRUE, TRUE)") == []
    assert quals("SingleColumnValueExcludeFilter('cf', 'a', =, 'binary:1')") == [b"b", b"c"]


def test_column_filters() -> None:
    assert quals("ColumnPrefixFilter('b')") == [b"b"]
    assert quals("MultipleColumnPrefixFilter('a', 'c')") == [b"a", b"c"]
    assert quals("ColumnRangeFilter('a', false, 'c', true)") == [b"b", b"c"]
    assert quals("ColumnRangeFilter('', true, '', true)") == [b"a", b"b", b"c"]
    assert quals("QualifierFilter(>=, 'binary:b')") == [b"b", b"c"]
    assert quals("FamilyFilter(=, 'binary:cf2')") == [b"c"]
    assert quals("TimestampsFilter(5, 7)") == [b"a", b"c"]
    assert quals("ColumnCountGetFilter(2)") == [b"a", b"b"]
    assert quals("ColumnPaginationFilter(1, 1)") == [b"b"]
    assert quals("FirstKeyOnlyFilter()") == [b"a"]


def test_key_only_filter_strips_values() -> None:
    assert [c.value for c in run("KeyOnlyFilter()")] == [b"", b"", b""]
    assert [c.value for c in run("KeyOnlyFilter(true)")] == [
        b"\x00\x00\x00\x01",
        b"\x00\x00\x00\x0b",
        b"\x00\x00\x00\x00",
    ]



def test_key_only_filter_rewrites_only_the_cells_its_branch_of_an_or_kept() -> None:
    """HBase's OR list transforms a cell only by the operands that included it: a
    ``KeyOnlyFilter`` ANDed with a filter that dropped the cell leaves its value alone when
    another operand keeps it. The expected values are what HBase 2.6 answered for this row."""
    cells = [Cell(b"cf", b"a", b"1"), Cell(b"cf", b"b", b"Hello\nWorld"), Cell(b"cf2", b"c", b"zz")]

    def values(flt: str) -> dict[bytes, bytes]:
        return {c.family + b":" + c.qualifier: c.value for c in run(flt, cells=cells)}

    assert values("PrefixFilter('row') OR (KeyOnlyFilter() AND FamilyFilter(=, 'binary:cf2'))"
                  ) == {b"cf:a": b"1", b"cf:b": b"Hello\nWorld", b"cf2:c": b""}
    assert values("PrefixFilter('x') OR (KeyOnlyFilter(true) AND FamilyFilter(=, 'binary:cf'))"
                  ) == {b"cf:a": b"\x00\x00\x00\x01", b"cf:b": b"\x00\x00\x00\x0b"}
    assert values("PrefixFilter('row') OR (KeyOnlyFilter() AND FamilyFilter(=, 'binary:cf'))"
                  ) == {b"cf:a": b"", b"cf:b": b"", b"cf2:c": b"zz"}


def test_row_filters() -> None:
    assert quals("PrefixFilter('ro')") == [b"a", b"b", b"c"]
    assert quals("PrefixFilter('x')") == []
    assert quals("InclusiveStopFilter('row')") == [b"a", b"b", b"c"]
    assert quals("InclusiveStopFilter('rov')") == []


def test_or_keeps_cells_any_branch_keeps() -> None:
    assert quals("ColumnPrefixFilter('a') OR ColumnPrefixFilter('c')") == [b"a", b"c"]
    # a failing row-level branch contributes nothing; the cell branch still applies
    assert quals("PrefixFilter('x') OR ColumnPrefixFilter('c')") == [b"c"]
    assert quals("PrefixFilter('r') OR ColumnPrefixFilter('c')") == [b"a", b"b", b"c"]


def test_skip_and_while() -> None:
    assert quals("SKIP ValueFilter(!=, 'binary:1')") == []
    assert quals("SKIP ValueFilter(!=, 'binary:zzz')") == [b"a", b"b", b"c"]
    flt = parse_filter("WHILE ValueFilter(!=, 'binary:Hello\nWorld')")
    kept, stop = apply_filter(flt, b"row", ROW)
    assert [c.qualifier for c in kept] == [b"a"] and stop
    kept, stop = apply_filter(parse_filter("WHILE PrefixFilter('r')"), b"row", ROW)
    assert len(kept) == 3 and not stop
    kept, stop = apply_filter(parse_filter("WHILE PrefixFilter('x')"), b"row", ROW)
    assert kept == [] and stop


def test_apply_filter_without_filter_keeps_everything() -> None:
    assert apply_filter(None, b"r", ROW) == (ROW, False)
