"""The projected-row decoder decodes exactly as ``partition_from_cells`` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.definitions.tables import StorageDef, typed_value
from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.layout import (
    LOC,
    VERSION,
    partition_from_cells,
    value_cell_column,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import encode_key
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


def _key_of(sdef: StorageDef, cells: dict[bytes, bytes]) -> bytes:
    """The key the row's value cells name, or a key no text matches when they name none."""
    try:
        typed = [typed_value(c, t, cells[value_cell_column(c)].decode())
                 for c, t in sdef.columns]
        return encode_key(sdef.key_schema, sdef.name, "HOURLY", typed)
    except (KeyError, UnicodeDecodeError, InvalidInput):
        return b"\x00"


@settings(max_examples=examples(300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=row_cells)
def test_decoder_equals_partition_from_cells(sdef: StorageDef, cells: dict[bytes, bytes]) -> None:
    """On a whole row the two decode alike; a row the check refuses is never decoded
    (no state, no location, bytes that are not UTF-8, a version not 8 bytes)."""
    decoder = PartitionDecoder(sdef, UpdatePeriod.HOURLY)
    values = tuple(cells.get(c) for c in decoder.columns)
    key = _key_of(sdef, cells)
    reason = decoder.check.damage(key, values)
    whole = decoder.check.whole([values], [key])
    assert whole == (reason is None)
    if reason is not None:
        return
    assert LOC in cells and cells[b"p:state"] in (b"live", b"dropping")
    assert decoder.decode(values) == partition_from_cells(sdef, UpdatePeriod.HOURLY, cells)
