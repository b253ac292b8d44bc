"""Projected scans (``scan_columns``) equal ``scan(columns=...)`` on every backend.

SQLite reads them straight out of each row's cell blob, HBase uses the generic projection of
``scan``; both must return the same rows, values and order as the model, for any range, limit
and page. Projected reads by key (``get_columns``) return what such a scan returns for those
keys: the catalog reads a sensor's rows either way.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions.kv import InvalidArgument, InvalidScan, KVTable
from tests.kv.kv_model import model_scan
from tests.kv.test_kv_scan import HYPO, keys, load, rows_strategy, small_keys

COLUMNS = [b"cf:a", b"cf:b", b"meta:a", b"cf:"]
projections = st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=4, unique=True)


@HYPO
@given(
    rows=rows_strategy,
    proj=projections,
    start=st.none() | keys,
    stop=st.none() | keys,
    batch=st.integers(1, 7),
    limit=st.none() | st.integers(0, 10),
)
def test_scan_columns_matches_the_model(new_table, rows, proj, start, stop, batch, limit) -> None:  # type: ignore[no-untyped-def]
    table = new_table()
    try:
        load(table, rows)
        got = list(table.scan_columns(proj, start, stop, batch_size=batch, limit=limit))
        expected = [(key, tuple(cells.get(c) for c in proj))
                    for key, cells in model_scan(rows, start, stop, columns=proj, limit=limit)]
        assert got == expected
    finally:
        new_table.drop_last()


@HYPO
@given(rows=rows_strategy, proj=projections, wanted=st.lists(small_keys, max_size=16))
def test_get_columns_is_the_projected_scan_of_those_keys(new_table, rows, proj, wanted) -> None:  # type: ignore[no-untyped-def]
    table = new_table()
    try:
        load(table, rows)
        asked = wanted + list(rows)[::2]  # absent keys, repeated keys, present keys
        expected = [(key, tuple(rows[key].get(c) for c in proj)) for key in sorted(set(asked))
                    if key in rows and any(c in rows[key] for c in proj)]
        assert table.get_columns(asked, proj) == expected
    finally:
        new_table.drop_last()


def test_scan_columns_prefix_and_pages(table: KVTable) -> None:
    table.put_many([(b"r%03d" % i, {b"cf:a": b"%d" % i, b"meta:x": b"m"}) for i in range(25)])
    table.put(b"s", {b"cf:a": b"s"})
    got = list(table.scan_columns([b"cf:b", b"cf:a"], prefix=b"r", batch_size=4))
    assert got == [(b"r%03d" % i, (None, b"%d" % i)) for i in range(25)]
    assert list(table.scan_columns([b"meta:x"], start=b"r020", limit=2)) == [
        (b"r020", (b"m",)), (b"r021", (b"m",))]


@pytest.mark.parametrize("columns", [[], b"cf:a", [b"cf"], [b"cf:a", b"cf:a"]])
def test_scan_columns_refuses_bad_projections(table: KVTable, columns: object) -> None:
    with pytest.raises((InvalidScan, InvalidArgument)):
        list(table.scan_columns(columns))  # type: ignore[arg-type]
