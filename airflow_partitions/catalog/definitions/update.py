"""Changing a stored storage definition: its producers and its declared dimensions.

Why a module: every other part of a definition is immutable, so the mutable parts get one
safe write path. The definition is one cell (``m:def``), so an update is a read, a change and a
check-and-put against the bytes read; a lost race re-reads and re-applies the change, so two
concurrent ``set_producers`` of different periods both land. The fact's generation is bumped
afterwards so warm caches (sensors, planners) see the new producers at their next check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

from airflow_partitions.arguments import shown
from airflow_partitions.catalog.cache import UnknownStorage
from airflow_partitions.catalog.definitions.producers import (
    InvalidProducer,
    Producer,
    check_producers,
)
from airflow_partitions.catalog.definitions.stored import decode_storage
from airflow_partitions.catalog.definitions.tables import StorageDef, check_safe_value, encode_json
from airflow_partitions.catalog.rows.layout import (
    DEF,
    MAX_SWAP_ATTEMPTS,
    CatalogRows,
    storage_row,
)
from airflow_partitions.catalog.slices.dimensions import (
    Dimension,
    UndeclaredValue,
    parse_dimension,
    parse_dimensions,
)
from airflow_partitions.errors import ConcurrentUpdateError, WrongType
from airflow_partitions.periods import UpdatePeriod


def producer_changes(storage: StorageDef,
                     changes: Mapping[str, Producer | None]) -> dict[str, Producer | None]:
    """Check a ``{period: Producer | None}`` mapping against the storage, before any write."""
    if not isinstance(changes, Mapping):
        raise WrongType(f"producers must map a period to a Producer or None, not "
                        f"{shown(changes)}")
    out: dict[str, Producer | None] = {}
    for key, producer in changes.items():
        name = UpdatePeriod.of(key).name
        if producer is not None and not isinstance(producer, Producer):
            raise InvalidProducer(f"the producer of {name} must be a Producer or None, not "
                                  f"{shown(producer)}")
        check_producers(storage.name, storage.periods, {name: producer or Producer("check")})
        out[name] = producer
    return out


def apply_changes(storage: StorageDef, changes: Mapping[str, Producer | None]) -> StorageDef:
    """The definition with ``changes`` applied (``None`` removes a period's producer)."""
    producers = dict(storage.producers)
    for name, producer in changes.items():
        if producer is None:
            producers.pop(name, None)
        else:
            producers[name] = producer
    return dataclasses.replace(storage, producers=producers)


def set_producers(rows: CatalogRows, storage: str,
                  changes: Mapping[str, Producer | None]) -> StorageDef:
    """Apply ``changes`` to the stored definition with check-and-put, retrying lost races.

    Returns the definition as stored. Cost: two round trips, plus two per lost race, plus the
    generation bump (skipped when nothing changed).
    """
    return update_definition(
        rows, storage, lambda current: apply_changes(current, producer_changes(current, changes)))


def declared_dimensions(specs: Iterable[str]) -> tuple[Dimension, ...]:
    """``--dimension`` specs as declared at creation: :func:`parse_dimensions`, every value
    one a partition location can hold (:func:`check_safe_value`, the rule registration
    applies), since a value required forever that no partition can carry is never filled."""
    dimensions = parse_dimensions(specs)
    for d in dimensions:
        for value in d.value_names():
            check_safe_value(d.column, value)
    return dimensions


def add_dimension_values(current: StorageDef, spec: str) -> StorageDef:
    """The definition with the values of ``spec`` (``region=apac@2025-06-01T00:00:00Z``)
    added to its column's domain, declaring the column if it was not yet a dimension; a
    ``value@..UNTIL`` retires a declared value from that instant instead.

    ``value@..UNTIL`` of a value the domain lacks is refused (:class:`UndeclaredValue`): as a
    declaration it would require the value since the beginning of time, which a misspelt
    retirement never means. An added value must fit a location (:func:`check_safe_value`).
    """
    change = parse_dimension(spec)
    dimensions = {d.column: d for d in current.dimensions}
    dimension = dimensions.get(change.column)
    for value in change.values:
        if value.since is None and value.until is not None:
            if dimension is None:
                raise UndeclaredValue(
                    f"{change.column} is not a declared dimension of {current.name}, so "
                    f"{value.value} cannot be retired (declared: "
                    f"{', '.join(dimensions) or 'none'})")
            dimension = dimension.retired(value.value, value.until)
            continue
        check_safe_value(change.column, value.value)
        if dimension is None:
            dimension = Dimension(change.column, (value,))
        else:
            dimension = dimension.with_value(value)
    assert dimension is not None  # parse_dimension refuses a spec without values
    dimensions[change.column] = dimension
    return dataclasses.replace(current, dimensions=tuple(dimensions.values()))


def set_dimension(rows: CatalogRows, storage: str, spec: str) -> StorageDef:
    """``storage set-dimension``: :func:`add_dimension_values` with check-and-put, as
    :func:`set_producers`. Cost: the same."""
    return update_definition(rows, storage, lambda current: add_dimension_values(current, spec))


def update_definition(rows: CatalogRows, storage: str,
                      change: Callable[[StorageDef], StorageDef]) -> StorageDef:
    """Apply ``change`` to the stored definition with check-and-put, retrying lost races
    (``change`` runs again on the definition re-read). Returns the definition as stored."""
    row = storage_row(storage)
    for _ in range(MAX_SWAP_ATTEMPTS):
        raw = rows.catalog.get(row, [DEF]).get(DEF)
        if raw is None:
            raise UnknownStorage(f"storage {shown(storage)} is not in the catalog")
        current = decode_storage(storage, raw)
        updated = change(current)
        if updated == current:
            return current
        if rows.catalog.check_and_put(row, DEF, raw, encode_json(updated.to_json())):
            rows.bump_generation(current.fact)
            return updated
    raise ConcurrentUpdateError(
        f"the definition of storage {storage!r} kept changing for {MAX_SWAP_ATTEMPTS} attempts; "
        "nothing was written, retry"
    )
