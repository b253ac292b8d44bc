"""One batch over N declared slices: its slice cells are read once and swapped together.

Each slice step of a register or drop reads the batch's slice cells of one (period, column)
in one ``get`` and sends their compare-and-swaps in one ``check_and_put_many``. On SQLite that
is one transaction over the storage row, so the round trips of a batch do not grow with its
slices (one check-and-put per slice would re-encode the whole row each time: O(N^2)); on HBase
each changed cell is one Thrift1 call, a bounded number per slice. Counted, never timed, on
both backends; the slice timelines are checked against a recount of the rows.
"""

from __future__ import annotations

from airflow_partitions.catalog import Catalog
from tests.catalog.slice_truth import rows_slices, stored_slices

HOUR = "2015-01-01-00"


def _storage(catalog: Catalog, name: str, n: int, *,
             declared: bool) -> tuple[str, list[dict[str, str]]]:
    regions = [f"r{i:03d}" for i in range(n)]
    catalog.create_fact(name)
    catalog.create_storage(name, f"{name}_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=[f"region={','.join(regions)}"] if declared else [])
    return f"{name}_raw", [{"dt": HOUR, "region": r} for r in regions]


def _round_trips(catalog: Catalog, name: str, n: int, *, declared: bool) -> tuple[int, int]:
    """Round trips of one register and one drop of one hour over n regions."""
    storage, values = _storage(catalog, name, n, declared=declared)
    catalog.stats.reset()
    catalog.register(storage, "HOURLY", values)
    registered = catalog.stats.round_trips
    assert not declared or stored_slices(catalog, storage) == rows_slices(catalog, storage)
    catalog.stats.reset()
    catalog.drop(storage, "HOURLY", values)
    dropped = catalog.stats.round_trips
    assert not declared or stored_slices(catalog, storage) == rows_slices(catalog, storage)
    return registered, dropped


def _slice_round_trips(catalog: Catalog, n: int) -> tuple[int, int]:
    """What declaring the n regions adds to the batch's round trips (a drop deletes each row
    with its own conditional delete, declared or not: that part grows with the partitions)."""
    declared = _round_trips(catalog, f"declared{n}", n, declared=True)
    plain = _round_trips(catalog, f"plain{n}", n, declared=False)
    return declared[0] - plain[0], declared[1] - plain[1]


def test_round_trips_of_a_batch_follow_its_backend(catalog: Catalog) -> None:
    small = _slice_round_trips(catalog, 50)
    large = _slice_round_trips(catalog, 100)
    if catalog.kv.url.startswith("sqlite"):
        assert large == small, (small, large)  # one transaction per step, whatever N is
        assert max(small) <= 12, small
    else:  # one swap per changed cell, and a bounded number of reads per step
        growth = [b - a for a, b in zip(small, large, strict=True)]
        assert all(g <= 50 * 3 for g in growth), (small, large)
