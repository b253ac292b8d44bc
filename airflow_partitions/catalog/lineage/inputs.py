"""Lineage: the exact input partitions a derived partition was built from, as stored in ``p:in``.

Why per row: staleness (:mod:`.lineage.staleness`) must compare what a job read with what is there
now, partition by partition, and the row put that writes a partition is the only atomic write
the store offers, so the lineage travels in it.

The cell is compact JSON ``{"v": 1, "in": [[storage, period, {column: value}, version], ...]}``
with the inputs validated against their storages (canonical values), de-duplicated and sorted,
so equal lineages are equal bytes and a retried registration compares unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from airflow_partitions.arguments import shown
from airflow_partitions.catalog.definitions.tables import PartitionSpec, StorageDef, make_spec
from airflow_partitions.errors import CorruptPartitionRow, InvalidInput, WrongType
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.spark import InputJson

#: At most this many inputs per partition: a yearly rollup of hours is 8,784, a monthly rollup
#: of hours by 10 regions 7,440. More is almost surely a job recording the wrong thing.
MAX_INPUTS: Final = 10_000
#: And at most this many bytes of encoded lineage per partition row (HBase's default cell limit
#: is 10 MiB; a lineage this large makes every cover of the partition slow).
MAX_LINEAGE_BYTES: Final = 2 * 1024 * 1024
_FORMAT: Final = 1


class TooManyInputs(InvalidInput):
    """A registration records more inputs (or more lineage bytes) than the limit allows."""


class InvalidLineage(InvalidInput):
    """An input partition is malformed: not a mapping, unknown storage, bad values or version."""


@dataclass(frozen=True, order=True)
class PartitionInput:
    """One input partition a job read: which partition, at which version."""

    storage: str
    period: str
    values: tuple[tuple[str, str], ...]  # (column, canonical value) in column order
    version: int

    @property
    def value_map(self) -> dict[str, str]:
        return dict(self.values)

    @property
    def node(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """The partition this input names, without its version (a lineage graph node)."""
        return (self.storage, self.period, self.values)

    def describe(self) -> str:
        """``events_raw HOURLY 2015-01-02-05`` (non-time columns appended as ``col=value``)."""
        return f"{self.storage} {self.period} " + " ".join(v for _, v in self.values)

    def to_json(self) -> InputJson:
        return {"storage": self.storage, "period": self.period, "values": self.value_map,
                "version": self.version}


def parse_inputs(
    inputs: object, storage_def: Callable[[str], StorageDef]
) -> tuple[PartitionInput, ...]:
    """Validate ``[{storage, period, values, version}, ...]`` into canonical, sorted inputs.

    ``storage_def`` looks a storage up (``UnknownStorage`` for a name the catalog lacks).
    """
    if isinstance(inputs, str | bytes) or not isinstance(inputs, Iterable):
        raise WrongType(f"inputs must be a list of {{storage, period, values, version}}, not "
                        f"{shown(inputs)}")
    items = list(inputs)
    if len(items) > MAX_INPUTS:
        raise TooManyInputs(
            f"{len(items):,} inputs recorded for one registration; the limit is {MAX_INPUTS:,} "
            "per partition: record the partitions the job read, not every file"
        )
    seen: dict[tuple[str, str, tuple[tuple[str, str], ...]], PartitionInput] = {}
    for index, item in enumerate(items):
        one = _parse_one(index, item, storage_def)
        other = seen.setdefault(one.node, one)
        if other.version != one.version:
            raise InvalidLineage(f"input {one.describe()} is given twice, at versions "
                                 f"{other.version} and {one.version}")
    return tuple(sorted(seen.values()))


def _parse_one(index: int, item: object, storage_def: Callable[[str], StorageDef]
               ) -> PartitionInput:
    where = f"inputs[{index}]"
    if not isinstance(item, Mapping):
        raise InvalidLineage(f"{where} must be a mapping with storage, period, values and "
                             f"version, not {shown(item)}")
    missing = [k for k in ("storage", "period", "values") if k not in item]
    if missing:
        raise InvalidLineage(f"{where} lacks {', '.join(missing)}")
    version = item.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidLineage(f"{where}: version must be a positive integer, not "
                             f"{shown(version)}")
    if not isinstance(item["storage"], str) or not isinstance(item["values"], Mapping):
        raise InvalidLineage(f"{where} needs a storage name and a values mapping, not "
                             f"{shown(dict(item))}")
    sdef = storage_def(item["storage"])
    spec, _ = make_spec(sdef, item["period"], item["values"])
    return PartitionInput(sdef.name, spec.period.name, spec.values, version)


def check_not_own_input(inputs: tuple[PartitionInput, ...],
                        specs: Iterable[tuple[PartitionSpec, bytes]]) -> None:
    """Refuse a partition recorded as its own input: it would be stale forever after."""
    nodes = {i.node for i in inputs}
    for spec, _ in specs:
        if (spec.storage, spec.period.name, spec.values) in nodes:
            raise InvalidLineage(f"partition {spec.storage} {spec.period.name} "
                                 f"{' '.join(v for _, v in spec.values)} is given as its own "
                                 "input")


def encode_inputs(inputs: tuple[PartitionInput, ...]) -> bytes:
    """The ``p:in`` cell; :class:`TooManyInputs` when it would exceed the byte limit."""
    body = {"v": _FORMAT, "in": [[i.storage, i.period, dict(i.values), i.version]
                                 for i in inputs]}
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    if len(raw) > MAX_LINEAGE_BYTES:
        raise TooManyInputs(
            f"the lineage of one partition would take {len(raw):,} bytes, more than the limit "
            f"of {MAX_LINEAGE_BYTES:,}; record fewer inputs per partition"
        )
    return raw


def decode_inputs(raw: bytes | None, where: str) -> tuple[PartitionInput, ...]:
    """The inputs of a ``p:in`` cell (none when absent); ``CorruptPartitionRow`` otherwise."""
    if not raw:
        return ()
    try:
        body = json.loads(raw)
        if body["v"] != _FORMAT:
            raise ValueError(f"lineage format {body['v']!r} is not {_FORMAT}")
        out = []
        for storage, period, values, version in body["in"]:
            UpdatePeriod.of(period)
            if not isinstance(version, int) or not isinstance(values, dict):
                raise TypeError(f"bad input entry {[storage, period, values, version]!r}")
            out.append(PartitionInput(str(storage), str(period),
                                      tuple((str(c), str(v)) for c, v in values.items()),
                                      version))
        return tuple(out)
    except (ValueError, KeyError, TypeError, InvalidInput) as exc:
        raise CorruptPartitionRow(f"the lineage cell p:in of {where} does not decode: "
                                  f"{exc}") from None


__all__ = ["MAX_INPUTS", "InvalidLineage", "PartitionInput", "TooManyInputs",
           "check_not_own_input", "decode_inputs", "encode_inputs", "parse_inputs"]
