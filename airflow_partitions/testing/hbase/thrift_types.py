"""The shapes of happybase's ``Hbase.thrift`` structs, as the test double reads and builds them.

thriftpy2 generates the struct classes at run time from the ``.thrift`` file, so they have no
static types; these protocols name the fields the double uses, so its handler and store are
typed against them (a generated struct has every field, ``None`` when the client left it out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

#: Thrift ``Text``: happybase may send ``str`` where the IDL says binary.
Text = bytes | str
#: A call's ``attributes`` map (``map<Text, Text>``), which the double ignores.
Attrs = Mapping[Text, Text] | None


class ColumnDescriptor(Protocol):
    """A column family's descriptor; the double rewrites ``name`` to ``family:``."""

    name: bytes
    maxVersions: int | None


class Mutation(Protocol):
    @property
    def isDelete(self) -> bool | None: ...
    @property
    def column(self) -> Text: ...
    @property
    def value(self) -> Text | None: ...


class BatchMutation(Protocol):
    @property
    def row(self) -> bytes: ...
    @property
    def mutations(self) -> Sequence[Mutation] | None: ...


class TIncrement(Protocol):
    @property
    def table(self) -> bytes: ...
    @property
    def row(self) -> bytes: ...
    @property
    def column(self) -> bytes: ...
    @property
    def ammount(self) -> int | None: ...  # sic: the IDL's spelling


class TAppend(Protocol):
    @property
    def table(self) -> Text: ...
    @property
    def row(self) -> Text: ...
    @property
    def columns(self) -> Sequence[bytes] | None: ...
    @property
    def values(self) -> Sequence[bytes] | None: ...


class TScan(Protocol):
    @property
    def startRow(self) -> bytes | None: ...
    @property
    def stopRow(self) -> bytes | None: ...
    @property
    def columns(self) -> list[bytes] | None: ...
    @property
    def timestamp(self) -> int | None: ...
    @property
    def filterString(self) -> Text | None: ...
    @property
    def batchSize(self) -> int | None: ...
    @property
    def reversed(self) -> bool | None: ...
    @property
    def sortColumns(self) -> bool | None: ...


class TCell(Protocol):
    @property
    def value(self) -> bytes: ...
    @property
    def timestamp(self) -> int: ...


class TColumn(Protocol):
    @property
    def columnName(self) -> bytes: ...
    @property
    def cell(self) -> TCell: ...


class TRowResult(Protocol):
    """One row read: ``columns`` by name, or ``sortedColumns`` when the scan asked for order."""

    @property
    def row(self) -> bytes: ...
    @property
    def columns(self) -> Mapping[bytes, TCell] | None: ...
    @property
    def sortedColumns(self) -> Sequence[TColumn] | None: ...


class TRegionInfo(Protocol):
    @property
    def name(self) -> bytes: ...
    @property
    def id(self) -> int: ...
