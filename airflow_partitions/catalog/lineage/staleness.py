"""Staleness: which derived partitions were built from inputs that changed since.

A partition is *derived* when its row records inputs (``p:in``, :mod:`.lineage.inputs`). It is
*stale* when one of those inputs was restated (its version now differs from the recorded one), was
dropped (no live row), or is stale itself: transitively, so an hour restated makes the day built
from it stale, and the month built from that day too.

Why reads are batched: a monthly rollup over hours reaches hundreds of rows. The derived
partitions are read with one scan per storage period (narrowed to the range when the time
column leads the key), then the lineage graph is closed level by level with ``get_many`` in
``GET_BATCH`` chunks: one round trip per batch and level, never one per partition.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from airflow_partitions.catalog.cache import UnknownStorage
from airflow_partitions.catalog.definitions.json_types import PartitionJson
from airflow_partitions.catalog.definitions.tables import Partition, StorageDef, make_spec
from airflow_partitions.catalog.lineage.inputs import PartitionInput, decode_inputs
from airflow_partitions.catalog.rows.layout import (
    INPUTS,
    LIVE,
    LOC,
    STATE,
    VERSION,
    decode_version,
    partition_from_cells,
    value_cell_column,
)
from airflow_partitions.cover import to_instant
from airflow_partitions.defaults import GET_BATCH
from airflow_partitions.errors import InvalidInput, InvalidRange
from airflow_partitions.keys import prefix_successor
from airflow_partitions.kv import SingleColumnValue, all_of
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.spark import InputJson

if TYPE_CHECKING:
    from airflow_partitions.catalog.core import CatalogCore

#: How many root causes a transitive change names (the rest are counted, not listed).
MAX_VIA: Final = 5
Node = tuple[str, str, tuple[tuple[str, str], ...]]  # (storage, period, values)


class ChangedInputJson(InputJson):
    """A changed input in ``stale --json``: the input as recorded, why, and through what."""

    reason: str
    current_version: int | None
    via: list[ChangedInputJson]


class StalePartitionJson(PartitionJson):
    """A stale partition in ``stale --json``."""

    changed: list[ChangedInputJson]


@dataclass(frozen=True)
class ChangedInput:
    """One recorded input of a stale partition, and what happened to it.

    ``reason`` is ``restated`` (``current_version`` differs from ``input.version``),
    ``dropped`` (no live row; ``current_version`` None) or ``stale`` (the input is derived and
    stale itself; ``via`` names the restated or dropped partitions further up, at most
    :data:`MAX_VIA`).
    """

    input: PartitionInput
    reason: str
    current_version: int | None
    via: tuple[ChangedInput, ...] = ()

    def describe(self) -> str:
        """``input events_raw HOURLY 2015-01-02-05 restated`` (the versions are in the JSON)."""
        text = f"input {self.input.describe()} {self.reason}"
        if self.via:
            return f"{text} via {self.via[0].input.describe()} {self.via[0].reason}" + (
                f" and {len(self.via) - 1} more" if len(self.via) > 1 else "")
        return text

    def to_json(self) -> ChangedInputJson:
        return {**self.input.to_json(), "reason": self.reason,
                "current_version": self.current_version,
                "via": [v.to_json() for v in self.via]}


@dataclass(frozen=True)
class StalePartition:
    """A derived partition whose recorded inputs changed (``changed``, in input order)."""

    partition: Partition
    changed: tuple[ChangedInput, ...]

    def reason(self) -> str:
        """The first change and a count of the others (one line)."""
        more = len(self.changed) - 1
        return self.changed[0].describe() + (f" and {more} more" if more else "")

    def describe(self) -> str:
        """``events_daily DAILY 2015-01-02: input events_raw HOURLY 2015-01-02-05 restated ...``."""
        p = self.partition
        return f"{p.storage} {p.period.name} {' '.join(p.values.values())}: {self.reason()}"

    def to_json(self) -> StalePartitionJson:
        return {**self.partition.to_json(), "changed": [c.to_json() for c in self.changed]}


@dataclass
class _Row:
    """What staleness needs of one partition row."""

    live: bool
    version: int = 1
    inputs: tuple[PartitionInput, ...] = ()


@dataclass
class _Graph:
    """The lineage reachable from the derived partitions, closed over every input."""

    rows: dict[Node, _Row] = field(default_factory=dict)


def find_stale(catalog: CatalogCore, fact: str, start: dt.datetime | str | None = None,
               end: dt.datetime | str | None = None, *,
               time_column: str | None = None) -> list[StalePartition]:
    """The stale derived partitions of ``fact``'s storages overlapping ``[start, end)``.

    Either bound may be None (open). Order: storage name, period, row key.
    """
    fdef = catalog.get_fact(fact)
    column = time_column or fdef.time_columns[0]
    if column not in fdef.time_columns:
        raise InvalidInput(f"{column!r} is not a time column of fact {fact!r} "
                           f"({', '.join(fdef.time_columns)})")
    lo = None if start is None else to_instant(start, "start")
    hi = None if end is None else to_instant(end, "end")
    if lo is not None and hi is not None and hi < lo:
        raise InvalidRange(f"the range [{lo.isoformat()}, {hi.isoformat()}) is reversed")
    states = catalog.fact_state(fact).storages
    derived: list[tuple[Node, Partition]] = []
    graph = _Graph()
    for name in sorted(states):
        sdef = states[name].definition
        if column not in sdef.time_columns or not states[name].may_have_derived:
            continue  # no row of it records inputs (lineage_flag): none can be stale
        for period in sdef.periods:
            for part, row in _scan_derived(catalog, sdef, period, column, lo, hi):
                node = (sdef.name, period.name, tuple(part.values.items()))
                graph.rows[node] = row
                derived.append((node, part))
    _close(catalog, graph)
    changes = _evaluate(graph, [node for node, _ in derived])
    return [StalePartition(part, changes[node]) for node, part in derived if changes[node]]


def overlap_window(period: UpdatePeriod, tz: str, start: dt.datetime | None,
                   end: dt.datetime | None) -> tuple[int | None, int | None]:
    """Ordinals ``[lo, hi)`` of the partitions of ``period`` overlapping ``[start, end)``."""
    lo = None if start is None else period.ordinal(start, tz)
    if end is None:
        return lo, None
    hi = period.ordinal(end, tz)
    if period.start_of(hi, tz) < end:
        hi += 1
    return lo, hi


def _scan_derived(catalog: CatalogCore, sdef: StorageDef, period: UpdatePeriod, column: str,
                  start: dt.datetime | None, end: dt.datetime | None
                  ) -> Iterator[tuple[Partition, _Row]]:
    """Live rows with recorded inputs of one storage period inside the window: one scan."""
    lo, hi = overlap_window(period, sdef.tz, start, end)
    if lo is not None and hi is not None and lo >= hi:
        return
    rows = catalog.rows
    vcol = value_cell_column(column)
    columns = [LOC, STATE, VERSION, INPUTS, *(value_cell_column(c) for c in sdef.column_names)]
    derived = all_of(SingleColumnValue(STATE, "=", LIVE, filter_if_missing=True),
                     SingleColumnValue(INPUTS, ">", b"", filter_if_missing=True))
    low = high = None
    if sdef.column_names[0] == column:  # the time column leads the key: scan the window only
        if lo is not None:
            low = rows.period_prefix(sdef, period, (period.format_ordinal(lo, sdef.tz),))
        if hi is not None:
            high = rows.period_prefix(sdef, period, (period.format_ordinal(hi, sdef.tz),))
    prefix = rows.period_prefix(sdef, period)
    scan = rows.partitions.scan(start=low or prefix, stop=high or prefix_successor(prefix),
                                columns=columns, filter=derived)
    for _, cells in scan:
        if cells.get(STATE) != LIVE or LOC not in cells:
            continue
        ordinal = period.parse_ordinal(cells.get(vcol, b"").decode(), sdef.tz)
        if (lo is not None and ordinal < lo) or (hi is not None and ordinal >= hi):
            continue
        part = partition_from_cells(sdef, period, cells)
        inputs = decode_inputs(cells.get(INPUTS), f"{sdef.name} {period.name} {part.values}")
        if inputs:
            yield part, _Row(True, part.version, inputs)


def _close(catalog: CatalogCore, graph: _Graph) -> None:
    """Read every input reachable from the known rows, one ``get_many`` batch at a time."""
    frontier = _unknown_inputs(graph, list(graph.rows.values()))
    while frontier:
        keyed: dict[bytes, Node] = {}
        for node in frontier:
            key = _row_key(catalog, node)
            if key is None:
                graph.rows[node] = _Row(False)
            else:
                keyed[key] = node
        found: list[_Row] = []
        keys = list(keyed)
        for i in range(0, len(keys), GET_BATCH):
            cells_of = catalog.rows.partitions.get_many(keys[i : i + GET_BATCH],
                                                        [STATE, VERSION, INPUTS])
            for key in keys[i : i + GET_BATCH]:
                row = _row_of(keyed[key], cells_of.get(key, {}))
                graph.rows[keyed[key]] = row
                found.append(row)
        frontier = _unknown_inputs(graph, found)


def _unknown_inputs(graph: _Graph, rows: Iterable[_Row]) -> list[Node]:
    out: dict[Node, None] = {}
    for row in rows:
        for item in row.inputs:
            if item.node not in graph.rows:
                out.setdefault(item.node, None)
    return list(out)


def _row_key(catalog: CatalogCore, node: Node) -> bytes | None:
    """The row key of an input, or None when its storage or period no longer exists."""
    storage, period_name, values = node
    try:
        sdef = catalog.get_storage(storage)
        spec, typed = make_spec(sdef, period_name, dict(values))
    except (UnknownStorage, InvalidInput):
        return None
    return catalog.rows.partition_key(sdef, spec.period, typed)


def _row_of(node: Node, cells: Mapping[bytes, bytes]) -> _Row:
    if cells.get(STATE) != LIVE:  # absent, or on its way out (a drop marked it)
        return _Row(False)
    where = f"{node[0]} {node[1]} {dict(node[2])}"
    return _Row(True, decode_version(cells.get(VERSION)), decode_inputs(cells.get(INPUTS), where))


def _evaluate(graph: _Graph, roots: list[Node]) -> dict[Node, tuple[ChangedInput, ...]]:
    """Each node's changed inputs, by an iterative depth-first walk (chains may be long).

    An input on the current path (a cycle, which lineage should never hold) counts as fresh.
    """
    done: dict[Node, tuple[ChangedInput, ...]] = {}
    on_path: set[Node] = set()
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            row = graph.rows[node]
            if expanded:
                done[node] = _changes(graph, row, done)
                on_path.discard(node)
                continue
            on_path.add(node)
            stack.append((node, True))
            stack.extend((i.node, False) for i in row.inputs
                         if i.node not in done and i.node not in on_path
                         and graph.rows[i.node].live)
    return done


def _changes(graph: _Graph, row: _Row, done: Mapping[Node, tuple[ChangedInput, ...]]
             ) -> tuple[ChangedInput, ...]:
    out = []
    for item in row.inputs:
        now = graph.rows[item.node]
        if not now.live:
            out.append(ChangedInput(item, "dropped", None))
        elif now.version != item.version:
            out.append(ChangedInput(item, "restated", now.version))
        elif done.get(item.node):
            out.append(ChangedInput(item, "stale", now.version, _roots(done[item.node])))
    return tuple(out)


def _roots(changed: tuple[ChangedInput, ...]) -> tuple[ChangedInput, ...]:
    """The restated or dropped partitions at the origin of these changes, at most MAX_VIA."""
    out: dict[Node, ChangedInput] = {}
    for change in changed:
        for root in change.via or (change,):
            out.setdefault(root.input.node, root)
    return tuple(out.values())[:MAX_VIA]


__all__ = ["ChangedInput", "StalePartition", "find_stale", "overlap_window"]
