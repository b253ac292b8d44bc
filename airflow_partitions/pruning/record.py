"""The decision record of one pruning: what pruned, with how many values, and what it saved.

It is plain data: ``to_json()`` goes into the manifest (under ``"pruning"``) and XCom,
``to_text()`` is the one readable block the operator logs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, TypedDict

from airflow_partitions.pruning.query import QueryJson
from airflow_partitions.pruning.spec import JoinSpec, JoinSpecJson, PairCheck

#: How many values of each set the record shows.
SAMPLE: Final = 8


class ColumnPruningJson(TypedDict):
    """:meth:`ColumnPruning.to_json`."""

    column: str
    type: str
    values: int
    sample: list[str | int]
    sources: list[str]


class PairRecordJson(TypedDict):
    """:meth:`PairRecord.to_json`."""

    join: int
    small: str
    big_key: str
    small_key: str
    column: str | None
    used: bool
    code: str | None
    reason: str | None
    values: int | None
    nulls_dropped: int


class StorageRecordJson(TypedDict):
    """:meth:`StorageRecord.to_json`."""

    storage: str
    pruned: bool
    bail_out: str | None
    partitions_before: int | None
    partitions_after: int
    columns: list[ColumnPruningJson]
    pairs: list[PairRecordJson]
    query: QueryJson | None


class CoverInfoJson(TypedDict):
    """The cover a pruning started from (all None but the count for a bare partition list)."""

    fact: str | None
    start: str | None
    end: str | None
    partitions: int


class DecisionRecordJson(TypedDict):
    """:meth:`DecisionRecord.to_json`: the manifest's ``"pruning"`` and the XCom."""

    version: int
    pruned: bool
    bail_out: str | None
    partitions_before: int | None
    partitions_after: int
    max_values: int
    joins: list[JoinSpecJson]
    cover: CoverInfoJson | None
    storages: list[StorageRecordJson]


@dataclass
class ColumnPruning:
    """One pruned partition column: the intersection of its key pairs' value sets."""

    column: str
    ctype: str
    values: int
    sample: list[str | int]  # JSON values (dates and timestamps as ISO text)
    sources: list[str]  # "small.column" of every pair that fed it

    def to_json(self) -> ColumnPruningJson:
        return {"column": self.column, "type": self.ctype, "values": self.values,
                "sample": self.sample, "sources": self.sources}


@dataclass
class PairRecord:
    """One key pair: used to prune, or skipped and why."""

    check: PairCheck
    values: int | None = None  # distinct non-NULL values collected
    nulls: int = 0

    @property
    def used(self) -> bool:
        return self.check.code is None

    def to_json(self) -> PairRecordJson:
        c = self.check
        return {"join": c.join, "small": c.small, "big_key": c.big_key,
                "small_key": c.small_key, "column": c.column, "used": self.used,
                "code": c.code, "reason": c.reason, "values": self.values,
                "nulls_dropped": self.nulls}


@dataclass
class StorageRecord:
    """What happened to one storage table's partitions."""

    storage: str
    before: int | None
    after: int
    columns: list[ColumnPruning] = field(default_factory=list)
    pairs: list[PairRecord] = field(default_factory=list)
    bail_out: str | None = None
    query: QueryJson | None = None

    @property
    def pruned(self) -> bool:
        return self.bail_out is None and bool(self.columns)

    def to_json(self) -> StorageRecordJson:
        return {"storage": self.storage, "pruned": self.pruned, "bail_out": self.bail_out,
                "partitions_before": self.before, "partitions_after": self.after,
                "columns": [c.to_json() for c in self.columns],
                "pairs": [p.to_json() for p in self.pairs], "query": self.query}


@dataclass
class DecisionRecord:
    """The whole decision: per storage, plus the totals and the joins it was made for."""

    joins: list[JoinSpec]
    storages: list[StorageRecord]
    max_values: int
    cover: CoverInfoJson | None = None

    @property
    def before(self) -> int | None:
        counts = [s.before for s in self.storages]
        return None if any(c is None for c in counts) else sum(c or 0 for c in counts)

    @property
    def after(self) -> int:
        return sum(s.after for s in self.storages)

    @property
    def pruned(self) -> bool:
        return any(s.pruned for s in self.storages)

    @property
    def bail_out(self) -> str | None:
        """Why nothing was pruned (``None`` when some storage was)."""
        if self.pruned:
            return None
        reasons = [f"{s.storage}: {s.bail_out}" for s in self.storages if s.bail_out]
        return "; ".join(reasons) or "no storage to prune"

    def to_json(self) -> DecisionRecordJson:
        return {
            "version": 1,
            "pruned": self.pruned,
            "bail_out": self.bail_out,
            "partitions_before": self.before,
            "partitions_after": self.after,
            "max_values": self.max_values,
            "joins": [j.to_json() for j in self.joins],
            "cover": self.cover,
            "storages": [s.to_json() for s in self.storages],
        }

    def to_text(self) -> str:
        before = "?" if self.before is None else str(self.before)
        head = "dynamic partition pruning: "
        if self.pruned:
            head += f"{before} -> {self.after} partition(s)"
            if self.before:
                head += f" ({100 * (1 - self.after / self.before):.1f}% pruned)"
        else:
            head += f"BAILED OUT, reading all {before} partition(s): {self.bail_out}"
        lines = [head]
        if self.cover:
            lines.append(f"  cover: {self.cover.get('fact')} [{self.cover.get('start')}, "
                         f"{self.cover.get('end')}) {self.cover.get('partitions')} partition(s)")
        lines.extend(f"  join #{i}: {j.describe()}" for i, j in enumerate(self.joins))
        for s in self.storages:
            sb = "?" if s.before is None else str(s.before)
            state = "pruned" if s.pruned else f"not pruned ({s.bail_out})"
            lines.append(f"  storage {s.storage}: {sb} -> {s.after} partition(s), {state}")
            for c in s.columns:
                more = ", ..." if c.values > len(c.sample) else ""
                shown = ", ".join(repr(v) for v in c.sample)
                lines.append(f"    {c.column} IN {c.values} value(s) [{shown}{more}] "
                             f"from {', '.join(c.sources)}")
            for p in s.pairs:
                k = p.check
                pair = f"#{k.join} big.{k.big_key} = {k.small}.{k.small_key}"
                if p.used:
                    lines.append(f"    used    {pair}: {p.values} value(s), "
                                 f"{p.nulls} NULL(s) dropped")
                else:
                    lines.append(f"    skipped {pair}: {k.code}: {k.reason}")
            if s.query:
                q = s.query
                lines.append(f"    catalog: {q.get('strategy')}, {q.get('scans')} scan(s), "
                             f"{q.get('gets')} get(s), {q.get('rows_fetched')} row(s) fetched, "
                             f"{q.get('rows_returned')} returned")
        lines.append(f"  value-set limit: {self.max_values} per key")
        return "\n".join(lines)
