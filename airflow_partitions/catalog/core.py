"""What the catalog's helpers use of a catalog: its rows, its cache and its definitions.

Why: the helpers behind :class:`~airflow_partitions.catalog.Catalog` (the verified cover,
staleness, repair, filters, Lens tables) would each import ``facade.py`` if they took the facade
itself, while the facade imports them: one import circle, and every helper free to call back any
of the facade's writes. They take this protocol instead: the store's rows, the per-process
timeline cache, the store's round-trip counters and three reads of definitions and timelines.
The facade satisfies it and composes the helpers; the helpers import nothing above themselves.
Writes go through :mod:`.writer` with the rows, never back through the facade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from airflow_partitions.catalog.cache import FactState, TimelineCache
    from airflow_partitions.catalog.definitions.tables import FactDef, StorageDef
    from airflow_partitions.catalog.rows.layout import CatalogRows
    from airflow_partitions.kv import Cells, StoreStats


class CatalogCore(Protocol):
    """The narrow view of a catalog its helpers get (the facade is one)."""

    @property
    def rows(self) -> CatalogRows:
        """The catalog's layout on the store: every read and write of rows and cells."""

    @property
    def cache(self) -> TimelineCache:
        """The process's timeline cache for this store."""

    @property
    def stats(self) -> StoreStats:
        """Round trips made to the store."""

    def get_fact(self, name: str) -> FactDef:
        """A fact's definition (``UnknownFact`` when there is none)."""

    def get_storage(self, name: str) -> StorageDef:
        """A storage's definition (``UnknownStorage`` when there is none)."""

    def fact_state(self, fact: str, *, refresh: bool = False,
                   read: dict[bytes, Cells] | None = None) -> FactState:
        """The fact's cached timelines, read again when its generation moved (from ``read``,
        catalog rows the caller just read, where it holds them)."""


__all__ = ["CatalogCore"]
