"""put_rows writes what put_many writes, on every backend, and refuses malformed rows."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.kv import InvalidArgument, KVStore, KVTable
from tests.hypothesis_budget import examples
from tests.kv.conftest import TableFactory

COLUMNS = [b"cf:b", b"cf:a", b"meta:z", b"cf:"]
values = st.binary(max_size=40) | st.sampled_from([b"", b"\x00", b"x" * 70_000])


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_put_rows_equals_put_many(new_table: TableFactory, data: st.DataObject) -> None:
    columns = data.draw(st.lists(st.sampled_from(COLUMNS), min_size=1, unique=True))
    keys = data.draw(st.lists(st.binary(min_size=1, max_size=6), max_size=8, unique=True))
    rows = [(key, tuple(data.draw(values) for _ in columns)) for key in keys]
    before = data.draw(st.lists(st.tuples(st.sampled_from(keys or [b"k"]),
                                          st.sampled_from(COLUMNS), values), max_size=4))
    by_rows, by_cells = new_table(), new_table()
    try:
        for table in (by_rows, by_cells):  # some rows exist already: their other cells stay
            for key, column, value in before:
                table.put(key, {column: value})
        by_rows.put_rows(columns, rows, batch_size=3)
        by_cells.put_many([(key, dict(zip(columns, vals, strict=True))) for key, vals in rows],
                          batch_size=3)
        assert list(by_rows.scan()) == list(by_cells.scan())
    finally:
        new_table.release_all()


def test_put_rows_takes_batches_of_round_trips(store: KVStore, table: KVTable) -> None:
    table.put_rows([b"cf:v", b"meta:w"], [(b"r%03d" % i, (b"%d" % i, b"w")) for i in range(25)],
                   batch_size=10)
    assert store.stats.ops["put_many"] == 3
    assert table.get(b"r007") == {b"cf:v": b"7", b"meta:w": b"w"}


@pytest.mark.parametrize(("columns", "rows"), [
    ([], [(b"r", ())]),
    ([b"cf:a", b"cf:a"], [(b"r", (b"1", b"2"))]),
    ([b"nofamily"], [(b"r", (b"1",))]),
    (b"cf:a", [(b"r", (b"1",))]),
    ([b"cf:a"], [(b"r", (b"1", b"2"))]),
    ([b"cf:a"], [(b"r", ())]),
    ([b"cf:a"], [(b"r", ("text",))]),
    ([b"cf:a"], [(b"r", b"1")]),
    ([b"cf:a"], [("r", (b"1",))]),
    ([b"cf:a"], [(b"", (b"1",))]),
])
def test_malformed_rows_are_refused(table: KVTable, columns: Any, rows: Any) -> None:
    with pytest.raises(InvalidArgument):
        table.put_rows(columns, rows)
    assert list(table.scan()) == []


def test_an_unknown_family_is_refused(table: KVTable) -> None:
    with pytest.raises(InvalidArgument, match="family"):
        table.put_rows([b"nope:a"], [(b"r", (b"1",))])
