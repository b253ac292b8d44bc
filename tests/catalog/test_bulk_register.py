"""A bulk register in chunks writes exactly what one chunk writes: rows, timelines, results.
The chunk size is shrunk so random batches span several chunks."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, writer
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.rows.layout import STAMP
from tests.hypothesis_budget import examples

regions = st.sampled_from(["us", "eu", "ap"])
hours = st.integers(0, 200).map(lambda h: f"2015-01-{1 + h // 24:02d}-{h % 24:02d}")
batches = st.lists(st.lists(st.fixed_dictionaries({"dt": hours, "region": regions}),
                            max_size=25), min_size=1, max_size=4)


def snapshot(cat: Catalog) -> tuple[object, ...]:
    rows = [(key, {c: v for c, v in cells.items() if c != STAMP})
            for key, cells in cat.rows.partitions.scan()]
    timeline = cat.timeline("raw", "HOURLY").ordinal_ranges(None, None)
    return rows, timeline


def fresh(path: Path) -> Catalog:
    cat = Catalog(f"sqlite:///{path}", data_root="/data", cache=TimelineCache())
    cat.create_fact("events")
    cat.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    return cat


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=batches, restate=st.booleans())
def test_chunked_register_equals_one_chunk(tmp_path_factory: pytest.TempPathFactory,
                                           monkeypatch: pytest.MonkeyPatch,
                                           calls: list[list[dict[str, str]]],
                                           restate: bool) -> None:
    tmp = tmp_path_factory.mktemp("bulk")
    one, chunked = fresh(tmp / "one.db"), fresh(tmp / "chunked.db")
    try:
        for values in calls:
            if not values:
                continue
            monkeypatch.setattr(writer, "BULK_CHUNK", 1_000_000)
            expected = one.register("raw", "HOURLY", values, restate=restate)
            monkeypatch.setattr(writer, "BULK_CHUNK", 4)
            got = chunked.register("raw", "HOURLY", values, restate=restate)
            assert got == expected
        assert snapshot(chunked) == snapshot(one)
    finally:
        one.close()
        chunked.close()
