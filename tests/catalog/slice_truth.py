"""What the stored slice timelines advertise, and what the rows say they should (tests only)."""

from __future__ import annotations

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import Slice

SliceValues = dict[tuple[str, str, Slice], set[str]]


def stored_slices(catalog: Catalog, storage: str) -> SliceValues:
    """(period, column, slice) -> time values its stored slice timeline advertises (fresh);
    empty timelines are left out."""
    catalog.cache.invalidate()
    sdef = catalog.get_storage(storage)
    state = catalog.fact_state(sdef.fact).storages[storage]
    out: SliceValues = {}
    for (period, column), by_slice in state.slices.items():
        for slice_, timeline in by_slice.items():
            values = {p.value for p in timeline}
            if values:
                out[(period.name, column, slice_)] = values
    return out


def rows_slices(catalog: Catalog, storage: str) -> SliceValues:
    """The brute-force recount: (period, column, slice) -> time values with a row."""
    sdef = catalog.get_storage(storage)
    dims = sorted(d.column for d in sdef.dimensions)
    out: SliceValues = {}
    for part in catalog.list_partitions(storage):
        slice_ = tuple((c, part.values[c]) for c in dims)
        for column in sdef.time_columns:
            out.setdefault((part.period.name, column, slice_), set()).add(part.values[column])
    return out


def built(catalog: Catalog, storage: str) -> bool:
    """Whether every timeline of the storage has usable slice timelines (the marker)."""
    catalog.cache.invalidate()
    sdef = catalog.get_storage(storage)
    state = catalog.fact_state(sdef.fact).storages[storage]
    return all(state.slice_timelines(p, c) is not None
               for p in sdef.periods for c in sdef.time_columns)
