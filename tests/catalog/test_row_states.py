"""read_rows answers as get_many does, by a range scan or by gets, on every backend."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog.rows import states as row_states
from airflow_partitions.catalog.rows.states import read_rows
from airflow_partitions.kv import KVTable, open_store
from tests.helpers import unique
from tests.hypothesis_budget import examples

COLUMNS = [b"p:state", b"p:loc"]


@pytest.fixture
def table(store_url: str) -> KVTable:
    store = open_store(store_url)
    name = unique("rs")
    store.create_table(name, ["p", "q"])
    table = store.table(name)
    # Rows 0..1199: every third has no p: cells (only q:), every fifth no p:loc.
    table.put_many([(b"k%05d" % i, {b"q:x": b"1"} if i % 3 == 0 else
                     {b"p:state": b"live", **({} if i % 5 == 0 else {b"p:loc": b"/d/%d" % i})})
                    for i in range(1200)], batch_size=500)
    return table


def reference(table: KVTable, keys: list[bytes]) -> dict[bytes, dict[bytes, bytes]]:
    return table.get_many(keys, COLUMNS)


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picked=st.lists(st.integers(0, 1500), max_size=700), step=st.sampled_from([1, 2, 3, 7]))
def test_read_rows_equals_get_many(table: KVTable, picked: list[int], step: int) -> None:
    keys = [b"k%05d" % (i * step) for i in picked]
    assert read_rows(table, keys, COLUMNS) == reference(table, keys)


def test_dense_keys_take_one_range_scan(table: KVTable, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_gets(*args: object, **kwargs: object) -> None:
        raise AssertionError("dense keys must not be read by gets")

    monkeypatch.setattr(table, "get_many", no_gets)
    keys = [b"k%05d" % i for i in range(100, 900)]
    found = read_rows(table, keys, COLUMNS)
    assert len(found) == len([i for i in range(100, 900) if i % 3])


def test_sparse_keys_fall_back_to_gets(table: KVTable, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys 5 apart leave 4 foreign rows per wanted one: more than the slack allows."""
    scanned: list[int] = []
    original = table.scan_columns

    def counting(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for row in original(*args, **kwargs):  # type: ignore[arg-type]
            scanned.append(1)
            yield row

    monkeypatch.setattr(table, "scan_columns", counting)
    keys = [b"k%05d" % i for i in range(0, 1200, 4)]
    assert read_rows(table, keys, COLUMNS) == reference(table, keys)
    assert len(scanned) <= row_states.SLACK * len(keys) + 1
