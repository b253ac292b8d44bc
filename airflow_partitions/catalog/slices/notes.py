"""The notes a cover carries about partition columns that are not declared dimensions.

Why: a column that is not a declared dimension keeps its old meaning, any value counts (an hour of a
``(dt, region)`` storage is there as soon as one region has it). This is never silent, so that
nobody mistakes it for per-region coverage: every status line and JSON answer of a cover over such a
storage says ``region: not a dimension, any value counts``
(:attr:`~airflow_partitions.cover.result.Cover.notes`; docs/dimensions.md). The verified cover calls
:func:`cover_notes` once per computed cover: O(storages x columns), no store access.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.slices.dimensions import (
    Dimension,
    DomainValue,
    required_slices,
    select_slices,
    undeclared_notes,
)
from airflow_partitions.cover import CoverRequest
from airflow_partitions.errors import InvalidInput

#: Any range: the slices :func:`unselected_note` tries hold every declared value, spans dropped.
_ANY_DAY = (dt.datetime(2000, 1, 1, tzinfo=dt.UTC), dt.datetime(2000, 1, 2, tzinfo=dt.UTC))


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


class NothingSelected(InvalidInput):
    """A ``where`` that selects no declared slice (:func:`unselected_note`): no registration
    can satisfy it, so a sensor stops at once instead of waiting for its timeout, and a plan
    is refused instead of planning the time-only path."""


def unselected_note(storages: Iterable[StorageDef], request: CoverRequest) -> str | None:
    """The note saying ``request.where`` selects no slice the storages ever declare (their
    domains united per column, spans ignored), or None when it selects one or there is no
    ``where``.

    Why: a ``where`` whose values are all outside the domains (``region = 'euu'``, a typo)
    leaves no slice required, and the time-only path would answer from hours any region has;
    no registration can ever satisfy it, so the cover says so and is never coverable. A value
    declared only outside the range (``apac`` from next year) is selected: that is "nothing
    required here", not a typo. Cost: O(product of the domain sizes x filter size).

    >>> from airflow_partitions.catalog.definitions.tables import ColumnType
    >>> from airflow_partitions.catalog.slices.dimensions import parse_dimensions
    >>> from airflow_partitions.periods import UpdatePeriod
    >>> raw = StorageDef("raw", "ev", (("dt", ColumnType.STRING), ("region",
    ...     ColumnType.STRING)), ("dt",), (UpdatePeriod.HOURLY,), "/{dt}/{region}",
    ...     dimensions=parse_dimensions(["region=eu,us"]))
    >>> def where(text):
    ...     return CoverRequest.of("ev", "2015-01-01T00:00Z", "2015-01-02T00:00Z", where=text)
    >>> print(unselected_note([raw], where("region = 'euu'")))
    where "region = 'euu'" matches no declared slice of ev (declared: region=eu,us)
    >>> unselected_note([raw], where("region IN ('euu', 'eu')")) is None
    True
    """
    if request.where is None:
        return None
    domains: dict[str, dict[str, None]] = {}
    for sdef in storages:
        for d in sdef.dimensions:
            domains.setdefault(d.column, {}).update(dict.fromkeys(d.value_names()))
    if not domains:
        return None
    dimensions = [Dimension(c, tuple(DomainValue(v) for v in values))
                  for c, values in domains.items()]
    if select_slices(required_slices(dimensions, *_ANY_DAY), dimensions, request.where):
        return None
    declared = "; ".join(d.text() for d in dimensions)
    return (f'where "{request.where}" matches no declared slice of {request.fact} '
            f"(declared: {declared})")


__all__ = ["cover_notes", "unselected_note"]
