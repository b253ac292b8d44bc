"""The notes a cover carries about partition columns that are not declared dimensions.

Why: a column that is not a declared dimension keeps its old meaning, any value counts (an hour of a
``(dt, region)`` storage is there as soon as one region has it). This is never silent, so that
nobody mistakes it for per-region coverage: every status line and JSON answer of a cover over such a
storage says ``region: not a dimension, any value counts``
(:attr:`~airflow_partitions.cover.result.Cover.notes`; docs/dimensions.md). The verified cover calls
:func:`cover_notes` once per computed cover: O(storages x columns), no store access.
"""

from __future__ import annotations

from collections.abc import Iterable

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.slices.dimensions import undeclared_notes
from airflow_partitions.cover import CoverRequest


def cover_notes(storages: Iterable[StorageDef], request: CoverRequest,
                column: str) -> tuple[str, ...]:
    """One note per non-time partition column that some storage the request may read (it has
    the time ``column`` and ``request.storages`` allows it) does not declare a dimension.

    A column declared by one storage and not by another names the storages that do not:
    ``region: not a dimension of ev_rollup, any value counts``.

    >>> from airflow_partitions.catalog.definitions.tables import ColumnType
    >>> from airflow_partitions.catalog.slices.dimensions import parse_dimensions
    >>> from airflow_partitions.periods import UpdatePeriod
    >>> def storage(name, dims=()):
    ...     return StorageDef(name, "ev", (("dt", ColumnType.STRING), ("region",
    ...         ColumnType.STRING)), ("dt",), (UpdatePeriod.HOURLY,), "/{dt}/{region}",
    ...         dimensions=parse_dimensions(dims))
    >>> request = CoverRequest.of("ev", "2015-01-01T00:00Z", "2015-01-02T00:00Z")
    >>> cover_notes([storage("raw")], request, "dt")
    ('region: not a dimension, any value counts',)
    >>> cover_notes([storage("raw", ["region=eu,us"]), storage("agg")], request, "dt")
    ('region: not a dimension of agg, any value counts',)
    >>> cover_notes([storage("raw", ["region=eu,us"])], request, "dt")
    ()
    """
    allowed = set(request.storages) if request.storages is not None else None
    having: dict[str, list[str]] = {}  # column -> storages that have it (not as time column)
    lacking: dict[str, list[str]] = {}  # column -> storages where it is not a dimension
    for sdef in sorted(storages, key=lambda s: s.name):
        if column not in sdef.time_columns or (allowed is not None and sdef.name not in allowed):
            continue
        undeclared = set(sdef.undeclared_columns)
        for c in sdef.column_names:
            if c in sdef.time_columns:
                continue
            having.setdefault(c, []).append(sdef.name)
            if c in undeclared:
                lacking.setdefault(c, []).append(sdef.name)
    notes = []
    for c, names in lacking.items():
        if names == having[c]:  # not a dimension anywhere it appears
            notes.extend(undeclared_notes([c], ()))
        else:
            notes.append(f"{c}: not a dimension of {', '.join(names)}, any value counts")
    return tuple(notes)


__all__ = ["cover_notes"]
