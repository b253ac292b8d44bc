"""The catalog side: plan a filter for a storage, explain the plan, run it.

``get_partitions_by_filter`` always returns exactly what a full scan evaluating the filter on
every registered partition would (registered = the row exists, in any state), in key order per
period: the store narrows, the client applies the residual.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_partitions.catalog.model import StorageDef
from airflow_partitions.catalog.rows import LOC, value_cell_column
from airflow_partitions.errors import InvalidInput
from airflow_partitions.filters import ast
from airflow_partitions.filters.decompose import StorageSplit, split_for_storage
from airflow_partitions.filters.normalise import DEFAULT_MAX_DISJUNCTS, compile_node
from airflow_partitions.filters.parser import parse_filter
from airflow_partitions.filters.planner import PeriodPlan, ScanSpec, plan_period
from airflow_partitions.filters.types import Binder, typed_from_text
from airflow_partitions.kv.base import Cells
from airflow_partitions.kv.scan_filters import render_hbase
from airflow_partitions.periods import UpdatePeriod

if TYPE_CHECKING:
    from airflow_partitions.catalog.facade import Catalog, Partition

#: Rows per scan page (one round trip each).
SCAN_BATCH = 5000


@dataclass
class QueryStats:
    """What a query cost: rows the store sent back vs rows returned, and round trips.

    ``rows_fetched`` counts rows after the server-side filter (what crossed the wire); the rows a
    region server reads are those in the scanned key ranges (``explain`` shows them).
    """

    rows_fetched: int = 0
    rows_returned: int = 0
    round_trips: int = 0
    scans: int = 0
    gets: int = 0
    full_scan: bool = False

    @property
    def ratio(self) -> float:
        """Rows fetched per row returned (1.0 is the physical limit)."""
        if self.rows_returned:
            return self.rows_fetched / self.rows_returned
        return float("inf") if self.rows_fetched else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "rows_fetched": self.rows_fetched,
            "rows_returned": self.rows_returned,
            "round_trips": self.round_trips,
            "scans": self.scans,
            "gets": self.gets,
            "full_scan": self.full_scan,
        }


@dataclass(frozen=True)
class FilterPlan:
    """A parsed, typed filter with its per-period reads and its client-side residual."""

    storage: StorageDef
    expr: ast.Expr
    split: StorageSplit
    periods: tuple[PeriodPlan, ...]
    binder: Binder = field(compare=False)

    @property
    def residual(self) -> ast.Expr | None:
        return self.split.residual

    @property
    def full_scan(self) -> bool:
        return any(p.full_scan for p in self.periods)


def plan_filter(
    sdef: StorageDef,
    filter: str | ast.Expr,
    period: UpdatePeriod | str | None = None,
    *,
    allow_unknown: bool = False,
    max_disjuncts: int = DEFAULT_MAX_DISJUNCTS,
) -> FilterPlan:
    """Plan ``filter`` on a storage: pure (no store access), so plans are cheap to inspect."""
    if max_disjuncts < 1:
        raise InvalidInput(f"max_disjuncts must be at least 1, got {max_disjuncts}")
    expr = parse_filter(filter) if isinstance(filter, str) else filter
    binder = Binder(sdef.columns, allow_unknown=allow_unknown)
    split = split_for_storage(expr, binder)
    periods = _periods(sdef, period)
    plans = tuple(plan_period(sdef, p, split.pushed, max_disjuncts) for p in periods)
    return FilterPlan(sdef, expr, split, plans, binder)


def _periods(sdef: StorageDef, period: UpdatePeriod | str | None) -> list[UpdatePeriod]:
    if period is None:
        return list(sdef.periods)
    wanted = UpdatePeriod.of(period)
    if wanted not in sdef.periods:
        raise InvalidInput(
            f"storage {sdef.name!r} has no {wanted.name} partitions "
            f"(its periods: {', '.join(p.name for p in sdef.periods)})"
        )
    return [wanted]


# ------------------------------------------------------------------------------------ explain
@dataclass(frozen=True)
class ExplainScan:
    start: str
    stop: str
    server_filter: str | None

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "stop": self.stop, "server_filter": self.server_filter}


@dataclass(frozen=True)
class PeriodExplain:
    period: str
    full_scan: bool
    scans: tuple[ExplainScan, ...]
    gets: tuple[str, ...]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "period": self.period,
            "full_scan": self.full_scan,
            "scans": [s.to_json() for s in self.scans],
            "gets": list(self.gets),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Explain:
    """The plan as data. With several periods, ``scans``/``gets`` are every period's, in period
    order (each period is its own key range), ``full_scan`` is true if any period full-scans,
    and ``periods`` keeps the breakdown."""

    storage: str
    filter: str
    full_scan: bool
    scans: tuple[ExplainScan, ...]
    gets: tuple[str, ...]
    residual: str | None
    periods: tuple[PeriodExplain, ...]

    def to_json(self) -> dict[str, Any]:
        """Exactly ``{"full_scan", "scans": [{"start", "stop", "server_filter"}], "gets",
        "residual"}`` (hex rows, HBase filter-language strings)."""
        return {
            "full_scan": self.full_scan,
            "scans": [s.to_json() for s in self.scans],
            "gets": list(self.gets),
            "residual": self.residual,
        }

    def to_text(self) -> str:
        lines = [f"storage {self.storage}: {self.filter}"]
        for p in self.periods:
            kind = "full scan" if p.full_scan else f"{len(p.scans)} scan(s), {len(p.gets)} get(s)"
            lines.append(f"period {p.period}: {kind}")
            for s in p.scans:
                lines.append(f"  scan [{s.start}, {s.stop})")
                lines.append(f"    server filter: {_printable(s.server_filter or '-')}")
            if p.gets:
                lines.append(f"  get_many ({len(p.gets)} rows): " + ", ".join(p.gets))
            lines.extend(f"  note: {n}" for n in p.notes)
        lines.append(f"residual (client): {self.residual or '-'}")
        return "\n".join(lines)


def _printable(text: str) -> str:
    """Filter strings carry raw key bytes: show non-printables as ``\\xNN`` for terminals."""
    return "".join(
        ch if ch.isprintable() and ord(ch) < 0x7F and ch != "\\" else f"\\x{ord(ch):02x}"
        for ch in text
    )


def explain_plan(plan: FilterPlan) -> Explain:
    periods = tuple(
        PeriodExplain(
            p.period.name,
            p.full_scan,
            tuple(_explain_scan(s) for s in p.scans),
            tuple(g.hex() for g in p.gets),
            p.notes,
        )
        for p in plan.periods
    )
    return Explain(
        storage=plan.storage.name,
        filter=str(plan.expr),
        full_scan=plan.full_scan,
        scans=tuple(s for p in periods for s in p.scans),
        gets=tuple(g for p in periods for g in p.gets),
        residual=None if plan.residual is None else str(plan.residual),
        periods=periods,
    )


def _explain_scan(scan: ScanSpec) -> ExplainScan:
    flt = None if scan.filter is None else render_hbase(scan.filter)
    return ExplainScan(scan.start.hex(), scan.stop.hex(), flt)


def explain(
    catalog: Catalog,
    storage: str,
    filter: str | ast.Expr,
    period: UpdatePeriod | str | None = None,
    *,
    allow_unknown: bool = False,
    max_disjuncts: int = DEFAULT_MAX_DISJUNCTS,
) -> Explain:
    """How ``get_partitions_by_filter`` would read (one storage-definition read, no scans)."""
    sdef = catalog.get_storage(storage)
    return explain_plan(plan_filter(sdef, filter, period, allow_unknown=allow_unknown,
                                    max_disjuncts=max_disjuncts))


# ---------------------------------------------------------------------------------- execute
def get_partitions_by_filter(
    catalog: Catalog,
    storage: str,
    filter: str | ast.Expr,
    period: UpdatePeriod | str | None = None,
    max_parts: int | None = None,
    *,
    stats: QueryStats | None = None,
    allow_unknown: bool = False,
    max_disjuncts: int = DEFAULT_MAX_DISJUNCTS,
) -> list[Partition]:
    """Registered partitions of ``storage`` matching ``filter``, in key order per period.

    ``max_parts`` (``None`` or negative: no limit) caps the result. Pass ``stats`` to get the
    query's costs filled in. With ``allow_unknown``, terms on columns the storage lacks are
    not applied here (they are the caller's residual, see :func:`explain`).
    """
    sdef = catalog.get_storage(storage)
    plan = plan_filter(sdef, filter, period, allow_unknown=allow_unknown,
                       max_disjuncts=max_disjuncts)
    return execute_plan(catalog, plan, max_parts, stats)


def execute_plan(
    catalog: Catalog, plan: FilterPlan, max_parts: int | None = None,
    stats: QueryStats | None = None,
) -> list[Partition]:
    stats = stats if stats is not None else QueryStats()
    before = catalog.stats.round_trips
    sdef = plan.storage
    needs_client = plan.residual is not None
    check = compile_node(plan.split.residual_node, plan.binder)
    known = [plan.binder.column(c) for c in sorted(ast.columns_of(plan.expr))]
    columns = [(f[0], f[1], value_cell_column(f[0])) for f in known if f is not None]
    limit = None if max_parts is None or max_parts < 0 else max_parts
    out: list[Partition] = []
    stats.full_scan = plan.full_scan
    try:
        for pplan in plan.periods:
            for _, cells in _rows(catalog, pplan, stats, _batch_size(limit)):
                if limit is not None and len(out) >= limit:
                    return out
                stats.rows_fetched += 1
                if LOC not in cells:
                    continue
                if needs_client:
                    row = {n: typed_from_text(t, cells.get(c, b"").decode("utf-8", "replace"))
                           for n, t, c in columns}
                    if not check(row):
                        continue
                out.append(catalog.partition_from_cells(sdef, pplan.period, cells))
        return out
    finally:
        stats.rows_returned = len(out)
        stats.round_trips += catalog.stats.round_trips - before


def _batch_size(limit: int | None) -> int:
    """Large pages (fewer round trips on big scans), small when few rows are wanted."""
    return SCAN_BATCH if limit is None else max(100, min(SCAN_BATCH, limit + 1))


def _rows(
    catalog: Catalog, plan: PeriodPlan, stats: QueryStats, batch_size: int = 1000
) -> Iterator[tuple[bytes, Cells]]:
    """Rows of a period plan in key order: the gets (one ``get_many``) merged with the scans."""
    table = catalog.io.partitions
    got: list[tuple[bytes, Cells]] = []
    if plan.gets:
        stats.gets += len(plan.gets)
        got = sorted(table.get_many(list(plan.gets)).items())

    def scanned() -> Iterator[tuple[bytes, Cells]]:
        for scan in plan.scans:
            stats.scans += 1
            yield from table.scan(start=scan.start, stop=scan.stop, filter=scan.filter,
                                  batch_size=batch_size)

    yield from heapq.merge(got, scanned(), key=lambda item: item[0])
