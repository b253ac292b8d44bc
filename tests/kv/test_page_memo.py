"""The rows memo: a value kept with the rows it came from, bounded by rows, oldest first."""

from __future__ import annotations

from airflow_partitions.kv.cell_blob import encode_cells
from airflow_partitions.kv.page_memo import RowsMemo, forget_all

WANTED = (b"cf:a", b"cf:b")


def row(key: bytes, a: bytes, b: bytes) -> tuple[bytes, bytes]:
    return key, encode_cells({b"cf:a": a, b"cf:b": b})


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
