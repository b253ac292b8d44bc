"""The cell blob codec: a row's cells survive the round trip, projections agree with a full
decode, and damaged bytes raise CorruptCell, never an IndexError or a struct.error."""

from __future__ import annotations

import struct
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.kv.cell_blob import (
    Projection,
    Selection,
    columns_of,
    decode_cells,
    encode_cells,
    merge_cells,
    select_cells,
)
from airflow_partitions.kv.errors import CorruptCell, DamagedCells
from airflow_partitions.kv.validation import column_selected
from tests.hypothesis_budget import examples

MANY = settings(max_examples=examples(150), deadline=None)

qualifiers = st.sampled_from([b"", b"a", b"b", b"k.dt", b"q\x00", b"q\xff", b":x"])
families = st.sampled_from([b"cf", b"p", b"meta"])
column = st.builds(lambda f, q: f + b":" + q, families, qualifiers)
cells_strategy = st.dictionaries(column, st.binary(max_size=40), max_size=12)
specs = st.lists(column | families, min_size=1, max_size=4, unique=True).map(tuple)
wanted = st.lists(column, min_size=1, max_size=5, unique=True).map(tuple)


@MANY
@given(cells=cells_strategy)
def test_encode_then_decode_is_the_identity(cells: dict[bytes, bytes]) -> None:
    blob = encode_cells(cells)
    decoded = decode_cells(blob)
    assert decoded == cells
    assert list(decoded) == sorted(cells)  # ascending, as HBase returns them
    assert columns_of(blob) == tuple(sorted(cells))


@MANY
@given(cells=cells_strategy, data=st.data())
def test_the_blob_does_not_depend_on_the_order_cells_come_in(cells: dict[bytes, bytes],
                                                             data: st.DataObject) -> None:
    shuffled = dict(data.draw(st.permutations(list(cells.items()))))
    in_order = dict(sorted(cells.items()))
    assert encode_cells(shuffled) == encode_cells(cells) == encode_cells(in_order)


@MANY
@given(cells=cells_strategy, selection=specs)
def test_select_is_the_filtered_decode(cells: dict[bytes, bytes],
                                       selection: tuple[bytes, ...]) -> None:
    blob = encode_cells(cells)
    expected = {c: v for c, v in decode_cells(blob).items() if column_selected(c, selection)}
    assert select_cells(blob, selection) == expected
    assert select_cells(blob, None) == cells


@MANY
@given(cells=cells_strategy, columns=wanted)
def test_projection_is_the_filtered_decode(cells: dict[bytes, bytes],
                                           columns: tuple[bytes, ...]) -> None:
    blob = encode_cells(cells)
    values = tuple(cells.get(c) for c in columns)
    expected = None if all(v is None for v in values) else values
    projection = Projection(columns)
    assert projection.values(blob) == expected
    assert projection.values(blob) == expected  # the cached plan gives the same answer


@MANY
@given(rows=st.lists(cells_strategy, max_size=8), columns=wanted)
def test_a_page_is_the_projection_of_each_row(rows: list[dict[bytes, bytes]],
                                              columns: tuple[bytes, ...]) -> None:
    """Rows with other directories in between, and rows with none of the columns (skipped)."""
    page = [(b"%03d" % i, encode_cells(cells)) for i, cells in enumerate(rows)]
    expected = []
    for (key, _), cells in zip(page, rows, strict=True):
        values = tuple(cells.get(c) for c in columns)
        if any(v is not None for v in values):
            expected.append((key, values))
    projection = Projection(columns)
    assert projection.page(page) == expected
    assert projection.page(page) == expected


@MANY
@given(rows=st.lists(cells_strategy, max_size=8), selection=specs)
def test_a_selected_page_is_select_cells_of_each_row(rows: list[dict[bytes, bytes]],
                                                     selection: tuple[bytes, ...]) -> None:
    page = [(b"%03d" % i, encode_cells(cells)) for i, cells in enumerate(rows)]
    expected = [(key, cells) for key, blob in page if (cells := select_cells(blob, selection))]
    selected = Selection(selection)
    assert selected.page(page) == expected
    assert selected.page(page) == expected


@MANY
@given(old=cells_strategy, new=cells_strategy.filter(bool))
def test_merge_puts_the_new_cells_over_the_old(old: dict[bytes, bytes],
                                               new: dict[bytes, bytes]) -> None:
    merged = merge_cells(encode_cells(old), encode_cells(new))
    assert decode_cells(merged) == {**old, **new}


def test_large_rows_use_the_per_cell_form() -> None:
    cells = {b"cf:big": b"x" * 70_000, b"cf:small": b"y"}
    blob = encode_cells(cells)
    assert blob[0] == 5  # u32 integers, a checksum per value
    assert decode_cells(blob) == cells
    assert Projection((b"cf:small",)).values(blob) == (b"y",)
    with pytest.raises(CorruptCell):
        decode_cells(blob[:-1])


def _readers(blob: bytes) -> None:
    """Everything that reads a blob; each must raise CorruptCell or return."""
    for read in (
        lambda: decode_cells(blob),
        lambda: select_cells(blob, (b"cf", b"p:k.dt")),
        lambda: Projection((b"cf:a", b"p:k.dt")).values(blob),
        lambda: Selection((b"cf", b"p:k.dt")).page([(b"k", blob)]),
        lambda: columns_of(blob),
        lambda: merge_cells(blob, encode_cells({b"cf:a": b"1"})),
    ):
        try:
            read()
        except CorruptCell:
            pass


@MANY
@given(cells=cells_strategy, data=st.data())
def test_every_truncation_is_corrupt(cells: dict[bytes, bytes], data: st.DataObject) -> None:
    blob = encode_cells(cells)
    cut = data.draw(st.integers(0, len(blob) - 1))
    with pytest.raises(CorruptCell):
        decode_cells(blob[:cut])
    _readers(blob[:cut])


@MANY
@given(junk=st.binary(max_size=80))
def test_random_bytes_are_corrupt_or_decode(junk: bytes) -> None:
    _readers(junk)


@MANY
@given(cells=cells_strategy.filter(bool), data=st.data())
def test_a_flipped_byte_is_corrupt_or_decodes(cells: dict[bytes, bytes],
                                              data: st.DataObject) -> None:
    blob = bytearray(encode_cells(cells))
    at = data.draw(st.integers(0, len(blob) - 1))
    blob[at] ^= data.draw(st.integers(1, 255))
    _readers(bytes(blob))


@MANY
@given(cells=cells_strategy.filter(bool), data=st.data())
def test_every_flipped_byte_is_found(cells: dict[bytes, bytes], data: st.DataObject) -> None:
    """A flipped byte in a value (say a version read as 0) is never silent: the checksum
    makes every one a CorruptCell for every reader of the values."""
    blob = bytearray(encode_cells(cells))
    at = data.draw(st.integers(0, len(blob) - 1))
    blob[at] ^= data.draw(st.integers(1, 255))
    damaged = bytes(blob)
    every = tuple(cells)
    for read in (lambda: decode_cells(damaged), lambda: select_cells(damaged, None)):
        with pytest.raises(CorruptCell):
            read()
    # A projection whose columns the damaged directory no longer names skips the row (it is
    # never used; a full read names it); one that finds them raises.
    for partial in (lambda: Projection(every).values(damaged),
                    lambda: Selection(every).page([(b"k", damaged)]) or None):
        try:
            assert partial() is None
        except CorruptCell:
            pass


def test_blobs_written_before_the_checksum_are_still_read() -> None:
    """A tag-1 blob (no checksum), as older files hold, is still read."""
    legacy = bytes.fromhex("01 00 12 00 02 00 04 00 05 63 66 3a 61 63 66 3a 62 62 00 18 00 19"
                           " 00 1b 31 78 79")
    assert decode_cells(legacy) == {b"cf:a": b"1", b"cf:bb": b"xy"}
    assert Projection((b"cf:bb",)).values(legacy) == (b"xy",)
    merged = merge_cells(legacy, encode_cells({b"cf:c": b"z"}))
    assert merged[0] == 3 and decode_cells(merged) == {b"cf:a": b"1", b"cf:bb": b"xy",
                                                       b"cf:c": b"z"}


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"", "too short"),
        (b"\x07abc", "unknown tag 7"),
        (b"\x01\x00\x09\x00\x01\x00\x04cf:a", "directory"),
        (struct.pack(">BHHH", 1, 7, 1, 9), "column names"),
    ],
)
def test_corrupt_blobs_say_what_is_wrong(blob: bytes, message: str) -> None:
    with pytest.raises(CorruptCell, match=message):
        decode_cells(blob)


def test_unsorted_columns_are_corrupt() -> None:
    good = encode_cells({b"cf:a": b"1", b"cf:b": b"2"})
    swapped = good.replace(b"cf:acf:b", b"cf:bcf:a")
    with pytest.raises(CorruptCell, match="sorted"):
        decode_cells(swapped)


wide_cells = st.dictionaries(column, st.binary(min_size=1, max_size=40), min_size=2,
                             max_size=12).filter(
    lambda cells: len({c.partition(b":")[0] for c in cells}) > 1)


def _value_spans(blob: bytes) -> dict[bytes, tuple[int, int]]:
    """Where each value of a per-cell (tag 5) blob lies, read from its directory."""
    size, n = struct.unpack_from(">II", blob, 1)
    lengths = struct.unpack_from(f">{n}I", blob, 9)
    names_at = 9 + 4 * n
    starts = [names_at]
    for length in lengths:
        starts.append(starts[-1] + length)
    columns = [blob[a:b] for a, b in pairwise(starts)]
    offsets = struct.unpack_from(f">{n + 1}I", blob, size)
    return {c: (offsets[i], offsets[i + 1]) for i, c in enumerate(columns)}


@MANY
@given(cells=wide_cells)
def test_rows_of_several_families_round_trip_in_the_per_cell_form(
        cells: dict[bytes, bytes]) -> None:
    blob = encode_cells(cells)
    assert blob[0] == 5
    assert decode_cells(blob) == cells
    assert select_cells(blob, None) == cells
    wanted_cols = tuple(sorted(cells))[:2]
    assert Projection(wanted_cols).values(blob) == tuple(cells[c] for c in wanted_cols)


@MANY
@given(cells=wide_cells, data=st.data())
def test_a_flipped_byte_in_a_value_costs_only_that_value(cells: dict[bytes, bytes],
                                                         data: st.DataObject) -> None:
    """Any single flipped byte: inside a value, only that value is damaged (named, its
    neighbours read); anywhere else, the directory's CRC catches it (the whole blob)."""
    blob = bytearray(encode_cells(cells))
    spans = _value_spans(bytes(blob))
    at = data.draw(st.integers(0, len(blob) - 1))
    blob[at] ^= data.draw(st.integers(1, 255))
    damaged = bytes(blob)
    inside = [c for c, (a, b) in spans.items() if a <= at < b]
    with pytest.raises(CorruptCell) as caught:
        decode_cells(damaged)
    if inside:
        assert isinstance(caught.value, DamagedCells)
        assert caught.value.columns() == tuple(inside)
        assert caught.value.cells == {c: v for c, v in cells.items() if c not in inside}
        others = tuple(c for c in cells if c not in inside)
        assert select_cells(damaged, others) == {c: cells[c] for c in others}
        assert Projection(others).values(damaged) == tuple(cells[c] for c in others)
        # a write keeps the damaged cell damaged, and a write over it heals the row
        merged = merge_cells(damaged, encode_cells({b"zz:new": b"1"}))
        with pytest.raises(DamagedCells):
            decode_cells(merged)
        healed = merge_cells(damaged, encode_cells({inside[0]: b"fresh"}))
        assert decode_cells(healed) == {**cells, inside[0]: b"fresh"}
    else:
        assert not isinstance(caught.value, DamagedCells)
        assert "checksum" in str(caught.value) or "corrupt" in str(caught.value)
