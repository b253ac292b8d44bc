"""Taking back what a timeline advertised without a row: the one repair a verified cover makes.

Why here: a cover is checked against the rows before anyone acts on it, and a value the
timeline lists but no live row backs must not be offered again. The plain cover and the
per-slice cover find such values alike and repair them alike, through the writer's own
protocol steps (check-and-put, then the fact's generation), so a concurrent register that made
the value live again is never undone.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from airflow_partitions.catalog import writer
from airflow_partitions.catalog.slices import writer as slice_writer

if TYPE_CHECKING:
    from airflow_partitions.catalog.core import CatalogCore
    from airflow_partitions.catalog.definitions.tables import StorageDef
    from airflow_partitions.cover import Slice
    from airflow_partitions.periods import UpdatePeriod

log = logging.getLogger(__name__)


def unadvertise_timelines(catalog: CatalogCore, defs: dict[str, StorageDef], column: str,
                          unbacked: dict[tuple[str, UpdatePeriod], set[int]]) -> None:
    """Remove each (storage, period) timeline's ``unbacked`` ordinals; bump the fact's
    generation where one changed. Cost: one check-and-put per timeline touched."""
    for (storage, period), ordinals in unbacked.items():
        sdef = defs[storage]
        values = {period.format_ordinal(o, sdef.tz) for o in ordinals}
        _, changed = writer.unadvertise(catalog.rows, sdef, period, column, values)
        if changed:
            catalog.rows.bump_generation(sdef.fact)


def settle_slice_timelines(catalog: CatalogCore, sdef: StorageDef, period: UpdatePeriod,
                           column: str, wanted: Mapping[Slice, set[str]]) -> None:
    """Settle the slice timelines of ``wanted`` (slice -> time values) against their rows,
    with a warning and a generation bump when one changed. Cost: one scan of those values'
    rows."""
    if slice_writer.settle_slices(catalog.rows, sdef, period, column, wanted):
        log.warning("cover of %s: repaired slice timelines of %s %s that advertised "
                    "partitions without a row", sdef.fact, sdef.name, period.name)
        catalog.rows.bump_generation(sdef.fact)
