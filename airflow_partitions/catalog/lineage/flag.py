"""Whether a storage may hold derived partitions: so a stale check skips the ones that cannot.

Why: a partition is stale only if its row records inputs (``p:in``, :mod:`.lineage.inputs`),
so without this :func:`.lineage.staleness.find_stale` would scan every row of every storage in
the window to find the derived ones. A raw storage of 1,000 regions holds 744,000 rows a month,
none derived (the Partitions view's default stale check took 2.1 s there). The storage's catalog
row says whether any of its rows may record inputs, in the cell ``m:lineage``:

- ``none``: no row records inputs. Written when the storage is created (it has no rows), only
  if the cell is still absent, so a concurrent register with inputs wins.
- ``some``: a row may record inputs. Written by every register with inputs *before* its rows
  (a crash in between leaves ``some`` with no derived row: a scan for nothing, never a miss).
  Nothing ever turns ``some`` back into ``none``.
- absent: a storage created before the flag existed; a stale check scans it, as before.
  ``reconcile`` settles it once from the rows (:func:`settle`).

Readers take the flag from the fact's cached state (the storage row is read with the timelines,
no extra round trip), which is as fresh as the cover's timelines: a register bumps the
generation after its rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from airflow_partitions.catalog.rows.layout import INPUTS, storage_row
from airflow_partitions.keys import prefix_successor
from airflow_partitions.kv import CorruptCell

if TYPE_CHECKING:
    from airflow_partitions.catalog.definitions.tables import StorageDef
    from airflow_partitions.catalog.rows.layout import CatalogRows

LINEAGE: Final = b"m:lineage"
NONE: Final = b"none"
SOME: Final = b"some"


def may_have_derived(cells: Mapping[bytes, bytes]) -> bool:
    """From a storage row's cells: False only when no row of the storage records inputs."""
    return cells.get(LINEAGE) != NONE


def created(rows: CatalogRows, storage: str, also: Mapping[bytes, bytes]) -> None:
    """A new storage (no rows yet): present, ``also`` (the slice marker), and no lineage."""
    rows.set_present(storage, True, also)
    rows.catalog.check_and_put(storage_row(storage), LINEAGE, None, NONE)


def mark(rows: CatalogRows, storage: str) -> None:
    """Before rows with inputs are written: the storage may hold derived partitions. One put."""
    rows.catalog.put(storage_row(storage), {LINEAGE: SOME})


def settle(rows: CatalogRows, sdef: StorageDef) -> bytes:
    """Set an absent flag from the rows (``reconcile``); a flag already set is left alone.

    Cost: nothing when the flag is set; else one projected scan of the storage's rows (their
    lineage cell only), stopping at the first row that records inputs, and one check-and-put
    (a register with inputs that came in between has set ``some``: it stays).
    """
    current = rows.catalog.get(storage_row(sdef.name), [LINEAGE]).get(LINEAGE)
    if current is not None:
        return current
    try:
        for period in sdef.periods:
            prefix = rows.period_prefix(sdef, period)
            for _, (inputs,) in rows.partitions.scan_columns([INPUTS], prefix,
                                                             prefix_successor(prefix)):
                if inputs:
                    mark(rows, sdef.name)
                    return SOME
    except CorruptCell:  # a row that does not decode may record inputs: assume it does
        mark(rows, sdef.name)
        return SOME
    if rows.catalog.check_and_put(storage_row(sdef.name), LINEAGE, None, NONE):
        return NONE
    return rows.catalog.get(storage_row(sdef.name), [LINEAGE]).get(LINEAGE) or SOME


__all__ = ["LINEAGE", "NONE", "SOME", "created", "mark", "may_have_derived", "settle"]
