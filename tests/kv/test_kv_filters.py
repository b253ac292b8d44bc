"""Filter rendering (HBase filter language) and Python evaluation, without a store."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.kv import (
    ColumnRange,
    InvalidScan,
    PrefixFilter,
    RowRange,
    SingleColumnValue,
)
from airflow_partitions.kv.scan_filters import (
    FilterList,
    all_of,
    any_of,
    apply_filter,
    matches,
    render_hbase,
    render_hbase_bytes,
)
from airflow_partitions.testing.hbase.filter_language import Cell, parse_filter
from airflow_partitions.testing.hbase.filter_language import apply_filter as server_apply
from tests.hypothesis_budget import examples


@pytest.mark.parametrize(
    ("flt", "text"),
    [
        (PrefixFilter(b"ab"), "PrefixFilter ('ab')"),
        (PrefixFilter(b"it's"), "PrefixFilter ('it''s')"),
        (
            RowRange(b"a", True, b"b", False),
            "(RowFilter (>=, 'binary:a') AND RowFilter (<, 'binary:b'))",
        ),
        (RowRange(b"a", False, None), "RowFilter (>, 'binary:a')"),
        (RowRange(None, True, b"z", True), "RowFilter (<=, 'binary:z')"),
        (RowRange(), "RowFilter (>=, 'binary:')"),
        (ColumnRange(b"q1", True, b"q2", False), "ColumnRangeFilter ('q1', true, 'q2', false)"),
        (ColumnRange(None, True, None, True), "ColumnRangeFilter ('', true, '', true)"),
        (
            SingleColumnValue(b"cf:s", "=", b"x"),
            "SingleColumnValueFilter ('cf', 's', =, 'binary:x')",
        ),
        (
            SingleColumnValue(b"cf:s", "!=", b"^a'", "regexstring", True),
            "SingleColumnValueFilter ('cf', 's', !=, 'regexstring:^a''', true, true)",
        ),
        (
            all_of(PrefixFilter(b"a"), any_of(PrefixFilter(b"b"), PrefixFilter(b"c"))),
            "(PrefixFilter ('a') AND (PrefixFilter ('b') OR PrefixFilter ('c')))",
        ),
        (FilterList("OR", (PrefixFilter(b"x"),)), "PrefixFilter ('x')"),
    ],
)
def test_render_hbase(flt: object, text: str) -> None:
    assert render_hbase(flt) == text  # type: ignore[arg-type]


def test_render_is_bytes_exact_for_non_ascii() -> None:
    flt = SingleColumnValue(b"cf:v", "=", b"\xc3\xa9\xff\x00")
    wire = render_hbase_bytes(flt)
    assert wire.endswith(b"'binary:\xc3\xa9\xff\x00')")
    assert render_hbase(flt).encode("latin-1") == wire


@pytest.mark.parametrize(
    "bad",
    [
        lambda: PrefixFilter("a"),  # type: ignore[arg-type]
        lambda: SingleColumnValue(b"nocolon", "=", b"v"),
        lambda: SingleColumnValue(b"cf:q", "~", b"v"),  # type: ignore[arg-type]
        lambda: SingleColumnValue(b"cf:q", "<", b"v", "substring"),
        lambda: SingleColumnValue(b"cf:q", "=", b"(", "regexstring"),
        lambda: SingleColumnValue(b"cf:q", "=", b"v", "glob"),  # type: ignore[arg-type]
        lambda: FilterList("XOR", (PrefixFilter(b"a"),)),  # type: ignore[arg-type]
        lambda: FilterList("AND", ()),
        lambda: FilterList("AND", ("PrefixFilter('a')",)),  # type: ignore[arg-type]
        lambda: ColumnRange(b"a", 1),  # type: ignore[arg-type]
    ],
)
def test_invalid_filters_raise_invalid_scan(bad: object) -> None:
    with pytest.raises(InvalidScan):
        bad()  # type: ignore[operator]


def test_matches_semantics() -> None:
    cells = {b"cf:s": b"Hello World", b"cf:n": b"\x05"}
    assert matches(SingleColumnValue(b"cf:s", "=", b"lo W", "regexstring"), b"r", cells)  # find()
    assert matches(SingleColumnValue(b"cf:s", "=", b"WORLD", "substring"), b"r", cells)
    assert not matches(SingleColumnValue(b"cf:s", "=", b"^World", "regexstring"), b"r", cells)
    assert matches(SingleColumnValue(b"cf:x", "=", b"v"), b"r", cells)  # missing passes
    assert not matches(SingleColumnValue(b"cf:x", "=", b"v", filter_if_missing=True), b"r", cells)
    assert matches(SingleColumnValue(b"cf:n", ">", b"\x04"), b"r", cells)
    assert apply_filter(ColumnRange(b"n", True, b"o", False), b"r", cells) == {b"cf:n": b"\x05"}
    assert apply_filter(ColumnRange(b"x", True, None), b"r", cells) is None
    assert matches(RowRange(b"r", True, b"r", True), b"r", cells)
    assert not matches(RowRange(b"r", False, None), b"r", cells)


# -- the rendered text means the same thing to the test server's parser ------------------------

awkward = st.binary(max_size=6) | st.sampled_from(
    [b"'", b"''", b" AND ", b") OR (", b"\\", b"\x00"]
)
leaf = st.one_of(
    st.builds(PrefixFilter, awkward),
    st.builds(RowRange, st.none() | awkward, st.booleans(), st.none() | awkward, st.booleans()),
    st.builds(ColumnRange, st.none() | awkward, st.booleans(), st.none() | awkward, st.booleans()),
    st.builds(
        SingleColumnValue, st.just(b"cf:q"), st.sampled_from(["<", "=", "!=", ">="]), awkward
    ),
)
trees = st.recursive(
    leaf,
    lambda inner: st.builds(
        FilterList,
        st.sampled_from(["AND", "OR"]),
        st.lists(inner, min_size=1, max_size=3).map(tuple),
    ),
    max_leaves=6,
)
row_cells = st.dictionaries(
    st.sampled_from([b"cf:q", b"cf:" + b"'", b"cf:a", b"cf:\x00"]), awkward, min_size=1, max_size=3
)


@settings(max_examples=examples(200), deadline=None)
@given(flt=trees, row=awkward.filter(bool), cells=row_cells)
def test_rendered_filters_parse_to_the_same_meaning(flt, row, cells) -> None:  # type: ignore[no-untyped-def]
    parsed = parse_filter(render_hbase_bytes(flt))
    server_cells = [Cell(c.split(b":")[0], c.split(b":", 1)[1], v) for c, v in cells.items()]
    kept, _ = server_apply(parsed, row, server_cells)
    ours = apply_filter(flt, row, cells)
    assert ({c.family + b":" + c.qualifier: c.value for c in kept} or None) == ours
