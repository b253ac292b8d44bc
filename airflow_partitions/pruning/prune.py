"""Dynamic partition pruning: small tables' join-key value sets -> the big table's partitions.

Hive's MapJoin pruning, for a big storage table joined with small tables:

1. **Which keys may prune** (:func:`analyse`). Per key pair (big key, small key) of every join:
   the big table must be on the inner side (an outer join that keeps every big row cannot
   prune), neither key may be wrapped in a function, the big key must be a partition column,
   and the small key's value set must be collected and hold at most ``max_values`` values.
   Pairs failing a rule are skipped with the reason; if no pair is left, pruning **bails out**
   and the unpruned partition list is used.
2. **Value sets** are typed as the big column (:mod:`.values`); NULL keys never match
   (SQL), so they are dropped. Several pairs on one column (cascaded joins on the same key)
   intersect; pairs on different columns AND together, so cascades on different keys intersect
   their prunings too.
3. **The catalog query** (:mod:`.query`) asks for partitions where every pruned column
   is IN its set, planned by the filter planner; given a time cover, it is restricted to the
   cover's time ranges and intersected with the cover's partitions.

Pruning only ever removes partitions whose rows cannot find a join partner, so the join's
result is unchanged (tests check this against an unpruned join on random data).

Pure: no airflow, no pyspark.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from airflow_partitions.catalog import StorageDef, VerifiedCover
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.pruning.query import (
    DEFAULT_MAX_IN_LIST_DISJUNCTS,
    DEFAULT_MAX_SCANS,
    QueryJson,
    matches,
    part_key,
    query_storage,
    time_values,
)
from airflow_partitions.pruning.record import (
    SAMPLE,
    ColumnPruning,
    CoverInfoJson,
    DecisionRecord,
    PairRecord,
    StorageRecord,
)
from airflow_partitions.pruning.spec import (
    NO_VALUE_SET,
    VALUE_SET_TOO_LARGE,
    JoinSpec,
    PairCheck,
    check_pairs,
    join_specs,
)
from airflow_partitions.pruning.values import (
    DEFAULT_MAX_VALUES,
    Typed,
    ValueSets,
    find_values,
    json_value,
    sort_key,
    typed_set,
)

if TYPE_CHECKING:
    from airflow_partitions.catalog import Catalog, Partition


@dataclass
class Analysis:
    """What may prune one storage: typed value sets per partition column, or why nothing."""

    storage: StorageDef
    columns: dict[str, set[Typed]]
    pairs: list[PairRecord]
    bail_out: str | None

    def record(self, before: int | None, after: int) -> StorageRecord:
        types = dict(self.storage.columns)
        cols = [
            ColumnPruning(
                c, types[c].value, len(v),
                [json_value(x) for x in sorted(v, key=sort_key)[:SAMPLE]],
                [f"{p.check.small}.{p.check.small_key}" for p in self.pairs
                 if p.used and p.check.column == c],
            )
            for c, v in self.columns.items()
        ]
        return StorageRecord(self.storage.name, before, after, cols, self.pairs, self.bail_out)


def analyse(
    joins: Sequence[JoinSpec | Mapping[str, object]] | JoinSpec,
    storage: StorageDef,
    value_sets: ValueSets,
    *,
    max_values: int = DEFAULT_MAX_VALUES,
) -> Analysis:
    """Apply the bail-out rules to every key pair and type the usable value sets (pure)."""
    if max_values < 1:
        raise InvalidInput(f"max_values must be at least 1, got {max_values}")
    specs = join_specs(joins)
    types = dict(storage.columns)
    columns: dict[str, set[Typed]] = {}
    records: list[PairRecord] = []
    for check in check_pairs(specs, storage.column_names):
        if check.column is None:
            records.append(PairRecord(check))
            continue
        found = find_values(value_sets, check.small, check.small_key)
        if found is None:
            records.append(PairRecord(_skip(check, NO_VALUE_SET,
                                            f"no values were collected for "
                                            f"{check.small}.{check.small_key}")))
            continue
        if found.overflow or len(set(found.values)) > max_values:
            shown = f"more than {max_values}" if found.overflow else str(len(set(found.values)))
            records.append(PairRecord(
                _skip(check, VALUE_SET_TOO_LARGE,
                      f"{check.small}.{check.small_key} has {shown} distinct values "
                      f"(limit {max_values})"), None, found.nulls))
            continue
        typed = typed_set(found, types[check.column], check.column)
        records.append(PairRecord(check, len(typed.values), typed.nulls))
        if check.column in columns:
            columns[check.column] &= typed.values
        else:
            columns[check.column] = set(typed.values)
    bail_out = None
    if not columns:
        reasons = list(dict.fromkeys(f"{r.check.code}: {r.check.reason}" for r in records))
        bail_out = "no join key can prune; " + "; ".join(reasons)
    return Analysis(storage, columns, records, bail_out)


def _skip(check: PairCheck, code: str, reason: str) -> PairCheck:
    return PairCheck(check.join, check.small, check.big_key, check.small_key, None, code, reason)


def prune_partitions(partitions: Iterable[Partition], analysis: Analysis) -> list[Partition]:
    """Keep the partitions of the analysed storage whose values can match (order kept);
    other storages' partitions and everything after a bail-out are kept as they are."""
    if analysis.bail_out is not None:
        return list(partitions)
    name = analysis.storage.name
    return [p for p in partitions
            if p.storage != name or matches(p, analysis.storage, analysis.columns)]


@dataclass(frozen=True)
class PruneResult:
    """The partitions to read, and the record of how they were chosen."""

    partitions: list[Partition]
    record: DecisionRecord


def prune(
    catalog: Catalog,
    joins: Sequence[JoinSpec | Mapping[str, object]] | JoinSpec,
    value_sets: ValueSets,
    *,
    storage: str | None = None,
    cover: VerifiedCover | Sequence[Partition] | None = None,
    time_column: str | None = None,
    period: UpdatePeriod | str | None = None,
    max_values: int = DEFAULT_MAX_VALUES,
    query_catalog: bool = True,
    max_disjuncts: int = DEFAULT_MAX_IN_LIST_DISJUNCTS,
    max_scans: int = DEFAULT_MAX_SCANS,
    count_before: bool = False,
) -> PruneResult:
    """The big table's partitions that the joins can use, with the decision record.

    :param storage: the big storage table; required without a cover. With a cover, every
        storage in it is pruned by its own partition columns, unless ``storage`` names one.
    :param cover: a verified cover (or its partition list): the result is its partitions
        that survive pruning, in cover order; the catalog query is restricted to its time
        ranges (``time_column``, default the storage's first time column).
    :param query_catalog: with a cover, ``False`` prunes the cover's partitions in memory
        instead of querying the catalog (same answer, no round trips).
    :param count_before: without a cover, also count the unpruned partitions (a full listing).
    """
    specs = join_specs(joins)
    period_ = UpdatePeriod.of(period) if period is not None else None
    parts = None if cover is None else list(
        cover.partitions if isinstance(cover, VerifiedCover) else cover)
    if parts is None:
        if storage is None:
            raise InvalidInput("prune() needs storage= when no cover is given")
        names = [storage]
    else:
        names = list(dict.fromkeys(p.storage for p in parts))
    records: list[StorageRecord] = []
    keep: dict[str, list[Partition]] = {}
    for name in names:
        sdef = catalog.get_storage(name)
        own = None if parts is None else [p for p in parts if p.storage == name]
        if storage is not None and name != storage:
            assert own is not None
            records.append(StorageRecord(name, len(own), len(own),
                                         bail_out="not the big table being pruned"))
            keep[name] = own
            continue
        analysis = analyse(specs, sdef, value_sets, max_values=max_values)
        kept, query = _prune_one(catalog, analysis, own, time_column, period_, query_catalog,
                                 max_disjuncts, max_scans)
        before = len(own) if own is not None else None
        if before is None and (count_before or analysis.bail_out is not None):
            before = len(kept) if analysis.bail_out is not None else sum(
                1 for _ in catalog.list_partitions(name, period_))
        rec = analysis.record(before, len(kept))
        rec.query = query
        records.append(rec)
        keep[name] = kept
    if parts is not None:
        wanted = {part_key(p) for kept in keep.values() for p in kept}
        result = [p for p in parts if part_key(p) in wanted]
    else:
        result = [p for name in names for p in keep[name]]
    return PruneResult(result, DecisionRecord(specs, records, max_values, _cover_info(cover)))


def _prune_one(
    catalog: Catalog, analysis: Analysis, own: list[Partition] | None, time_column: str | None,
    period: UpdatePeriod | None, query_catalog: bool, max_disjuncts: int, max_scans: int,
) -> tuple[list[Partition], QueryJson | None]:
    sdef = analysis.storage
    if analysis.bail_out is not None:
        if own is not None:
            return own, None
        return list(catalog.list_partitions(sdef.name, period)), None
    if own is not None and not query_catalog:
        return prune_partitions(own, analysis), {"strategy": "in memory (cover partitions)"}
    column = time_column if time_column in sdef.time_columns else sdef.time_columns[0]
    times = None if own is None else time_values(own, sdef, column)
    rows = None if own is None else Counter(p.period for p in own)
    found, report = query_storage(catalog, sdef, analysis.columns, times=times, scan_rows=rows,
                                  time_column=column, period=period,
                                  max_disjuncts=max_disjuncts, max_scans=max_scans)
    if own is not None:  # the cover decides which time partitions count
        wanted = {part_key(p) for p in found}
        found = [p for p in own if part_key(p) in wanted]
    return found, report.to_json()


def _cover_info(cover: VerifiedCover | Sequence[Partition] | None) -> CoverInfoJson | None:
    if cover is None:
        return None
    if isinstance(cover, VerifiedCover):
        c = cover.cover
        return {"fact": c.fact, "start": c.start.isoformat(), "end": c.end.isoformat(),
                "partitions": len(cover.partitions)}
    return {"fact": None, "start": None, "end": None, "partitions": len(cover)}


__all__ = ["Analysis", "PruneResult", "analyse", "prune", "prune_partitions"]
