"""The projected-row decoder (issue 18) decodes exactly as ``partition_from_cells`` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.model import StorageDef
from airflow_partitions.catalog.row_decode import PartitionDecoder
from airflow_partitions.catalog.rows import LOC, VERSION, partition_from_cells, value_cell_column
from airflow_partitions.errors import CorruptPartitionRow
from airflow_partitions.periods import UpdatePeriod
from tests.hypothesis_budget import examples

COLUMNS = ["dt", "region", "n"]
cell_text = st.text(max_size=6).map(str.encode) | st.binary(max_size=6)
row_cells = st.fixed_dictionaries(
    {},
    optional={
        LOC: cell_text,
        VERSION: st.integers(-(2**63), 2**63 - 1).map(lambda v: v.to_bytes(8, "big", signed=True))
        | st.binary(max_size=9),
        b"p:state": st.sampled_from([b"live", b"dropping"]),
        **{value_cell_column(c): cell_text for c in COLUMNS},
    },
)


@pytest.fixture(scope="module")
def sdef(tmp_path_factory: pytest.TempPathFactory) -> StorageDef:
    tmp: Path = tmp_path_factory.mktemp("decode")
    with Catalog(f"sqlite:///{tmp}/c.db", data_root=str(tmp), cache=TimelineCache()) as cat:
        cat.create_fact("events")
        return cat.create_storage("events", "raw", ["HOURLY"],
                                  columns=["dt", "region", "n:int"])


@settings(max_examples=examples(300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=row_cells)
def test_decoder_equals_partition_from_cells(sdef: StorageDef, cells: dict[bytes, bytes]) -> None:
    decoder = PartitionDecoder(sdef, UpdatePeriod.HOURLY)
    values = tuple(cells.get(c) for c in decoder.columns)

    def outcome(decode: object) -> object:
        try:
            return decode()  # type: ignore[operator]
        except (CorruptPartitionRow, UnicodeDecodeError) as exc:
            return type(exc)

    new = outcome(lambda: decoder.decode(values))
    if LOC not in cells:
        assert new is None
        return
    assert new == outcome(lambda: partition_from_cells(sdef, UpdatePeriod.HOURLY, cells))
