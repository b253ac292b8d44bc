"""The page memo: a page read again with the same bytes gets the same projection,
and a page whose bytes changed in any way is projected again (so damage is never hidden)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.kv.cell_blob import Projection, encode_cells
from airflow_partitions.kv.errors import CorruptCell
from airflow_partitions.kv.page_memo import PageMemo, RowsMemo, forget_all
from tests.hypothesis_budget import examples

WANTED = (b"cf:a", b"cf:b")


def row(key: bytes, a: bytes, b: bytes) -> tuple[bytes, bytes]:
    return key, encode_cells({b"cf:a": a, b"cf:b": b})


def test_equal_bytes_reuse_the_projection_and_changed_bytes_do_not() -> None:
    memo = PageMemo()
    page = [row(b"k1", b"1", b"x"), row(b"k2", b"2", b"y")]
    first = memo.project(Projection(WANTED), page)
    assert first == [(b"k1", (b"1", b"x")), (b"k2", (b"2", b"y"))]
    again = [(bytes(k), bytes(v)) for k, v in page]  # equal bytes, new objects (a new read)
    assert memo.project(Projection(WANTED), again) is first
    changed = [page[0], row(b"k2", b"3", b"y")]  # same keys, first and last: only bytes differ
    assert memo.project(Projection(WANTED), changed) == [(b"k1", (b"1", b"x")),
                                                         (b"k2", (b"3", b"y"))]
    assert memo.project(Projection((b"cf:b",)), page) == [(b"k1", (b"x",)), (b"k2", (b"y",))]


def test_a_page_damaged_after_it_was_remembered_still_raises() -> None:
    memo = PageMemo()
    page = [row(b"k1", b"1", b"x"), row(b"k2", b"2", b"y")]
    memo.project(Projection(WANTED), page)
    damaged = [page[0], (b"k2", page[1][1][:-1] + bytes([page[1][1][-1] ^ 1]))]
    with pytest.raises(CorruptCell, match="checksum"):
        memo.project(Projection(WANTED), damaged)
    with pytest.raises(CorruptCell, match="checksum"):  # and it was not remembered either
        memo.project(Projection(WANTED), damaged)


def test_the_bound_drops_the_oldest_entries_first() -> None:
    memo: RowsMemo[str, int] = RowsMemo(max_rows=5)
    memo.put("a", [1, 2], 10)
    memo.put("b", [3, 4], 20)
    memo.put("c", [5, 6], 30)  # 6 rows: "a" goes
    assert memo.get("a", [1, 2]) is None
    assert memo.get("b", [3, 4]) == 20 and memo.get("c", [5, 6]) == 30
    assert memo.get("b", [3, 5]) is None  # other rows, same key: not the value
    memo.put("big", list(range(6)), 99)  # alone over the bound: not kept, nothing dropped
    assert memo.get("big", list(range(6))) is None and memo.get("b", [3, 4]) == 20
    memo.put("d", ["one"], 40, size=5)  # stands for 5 rows: everything else goes
    assert memo.get("b", [3, 4]) is None and memo.get("d", ["one"]) == 40
    forget_all()
    assert memo.get("d", ["one"]) is None


cells = st.binary(max_size=6)
pages = st.lists(st.tuples(cells, cells), min_size=1, max_size=6)


@settings(max_examples=examples(200))
@given(first=pages, second=pages, flips=st.lists(st.integers(0, 10_000), max_size=3))
def test_the_memo_answers_what_the_projection_answers(first: list[tuple[bytes, bytes]],
                                                       second: list[tuple[bytes, bytes]],
                                                       flips: list[int]) -> None:
    """Whatever was remembered before, a page's answer (values or error) is its own."""
    memo = PageMemo()

    def raw(values: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        return [row(b"k%03d" % i, a, b) for i, (a, b) in enumerate(values)]

    def answer(project: object, page: list[tuple[bytes, bytes]]) -> object:
        try:
            return project(Projection(WANTED), page)  # type: ignore[operator]
        except CorruptCell as exc:
            return type(exc)

    def plain(projection: Projection, page: list[tuple[bytes, bytes]]) -> object:
        return projection.page(page)

    before, after = raw(first), raw(second)
    for flip in flips:  # damage some bytes of the second page, keys kept
        i = flip % len(after)
        key, blob = after[i]
        at = flip % len(blob)
        after[i] = (key, blob[:at] + bytes([blob[at] ^ 0x40]) + blob[at + 1:])
    assert answer(memo.project, before) == answer(plain, before)
    assert answer(memo.project, after) == answer(plain, after)
    assert answer(memo.project, before) == answer(plain, before)

