"""How one storage's partition rows look on the ordered store: key fields and cell names.

The catalog writes partition rows and the filter planner reads them. Both take the rows' shape
from here, so the planner never needs the catalog and the cell names are defined once.

A partition row of storage ``s`` and period ``P`` with values ``v0 .. vN-1`` is:

* key: :func:`~airflow_partitions.keys.codec.encode_key` of ``(s, P, v0, ..., vN-1)``: the
  storage name is the key's db field, the period name its table field;
* ``p:loc``: the partition's location (every registered row has one);
* ``p:v.<col>``: each value as text;
* ``p:k.<col>``: each value as order-preserving bytes (``encode_value``), so a server-side
  filter compares typed values with a binary comparator.

The catalog's own bookkeeping cells (``p:state``, ``p:ts``) are not part of the layout a reader
needs; they live in :mod:`airflow_partitions.catalog.rows.layout`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Final

from airflow_partitions.keys.codec import (
    ColumnType,
    KeySchema,
    PartitionValue,
    SchemaError,
    encode_key,
    key_prefix,
)

#: The cell holding a partition's location; a row without it is not a partition.
LOCATION_CELL: Final = b"p:loc"


def value_cell_column(column: str) -> bytes:
    """The cell holding a partition value as text."""
    return f"p:v.{column}".encode()


def encoded_cell_column(column: str) -> bytes:
    """The cell holding a partition value as order-preserving bytes (keys.encode_value)."""
    return f"p:k.{column}".encode()


@dataclass(frozen=True)
class RowLayout:
    """The partition rows of one storage: key fields, typed columns in key order, cell names.

    Pure data (no store access); ``StorageDef.row_layout`` builds it from a definition.
    """

    #: The storage name: the key's db field (the period name is its table field).
    storage: str
    #: The partition columns in key order.
    columns: tuple[tuple[str, ColumnType], ...]
    #: Built from ``columns`` (which also validates them).
    key_schema: KeySchema = field(init=False, repr=False, compare=False)

    location_cell: ClassVar[bytes] = LOCATION_CELL

    def __post_init__(self) -> None:
        if not isinstance(self.storage, str) or not self.storage:
            raise SchemaError(f"a row layout needs a storage name, got {self.storage!r}")
        object.__setattr__(self, "key_schema", KeySchema(self.columns))

    @property
    def column_names(self) -> tuple[str, ...]:
        return self.key_schema.names

    def value_cell(self, column: str) -> bytes:
        """The cell holding ``column``'s value as text (``p:v.<col>``)."""
        return value_cell_column(column)

    def encoded_cell(self, column: str) -> bytes:
        """The cell holding ``column``'s value as order-preserving bytes (``p:k.<col>``)."""
        return encoded_cell_column(column)

    def period_prefix(self, period: str, leading: Sequence[PartitionValue] = ()) -> bytes:
        """Bytes that start exactly the keys of ``period`` whose first values are ``leading``."""
        return key_prefix(self.key_schema, self.storage, period, leading)

    def row_key(self, period: str, values: Sequence[PartitionValue]) -> bytes:
        """The key of the partition row with these values (every column, key order)."""
        return encode_key(self.key_schema, self.storage, period, values)


__all__ = ["LOCATION_CELL", "RowLayout", "encoded_cell_column", "value_cell_column"]
