"""Partition filters run against the catalog: plan a filter for a storage, explain it, run it.

``get_partitions_by_filter`` always returns exactly what a full scan evaluating the filter on
every registered partition would (registered = the row exists, in any state), in key order per
period: the store narrows, the client applies the residual. Planning itself is pure and lives in
:mod:`airflow_partitions.filters`; this module adds the storage definition and the reads.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING, Final

from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.scan import OnDamaged, scan_row_cells, scan_whole_rows
from airflow_partitions.errors import InvalidInput
from airflow_partitions.filters import (
    DEFAULT_MAX_DNF_DISJUNCTS,
    Explain,
    FilterPlan,
    PeriodPlan,
    QueryStats,
    ast,
    compile_node,
    explain_plan,
    plan_filter,
    typed_from_text,
)
from airflow_partitions.kv import Cells, RowValues
from airflow_partitions.periods import UpdatePeriod

if TYPE_CHECKING:
    from airflow_partitions.catalog.core import CatalogCore
    from airflow_partitions.catalog.definitions.tables import Partition

#: Rows per scan page (one round trip each).
SCAN_BATCH = 5000


def explain(
    catalog: CatalogCore,
    storage: str,
    filter: str | ast.Expr,
    period: UpdatePeriod | str | None = None,
    *,
    allow_unknown: bool = False,
    max_disjuncts: int = DEFAULT_MAX_DNF_DISJUNCTS,
) -> Explain:
    """How ``get_partitions_by_filter`` would read (one storage-definition read, no scans)."""
    sdef = catalog.get_storage(storage)
    return explain_plan(plan_filter(sdef.row_layout, sdef.periods, filter, period,
                                    allow_unknown=allow_unknown, max_disjuncts=max_disjuncts))


def get_partitions_by_filter(
    catalog: CatalogCore,
    storage: str,
    filter: str | ast.Expr,
    period: UpdatePeriod | str | None = None,
    max_parts: int | None = None,
    *,
    stats: QueryStats | None = None,
    allow_unknown: bool = False,
    max_disjuncts: int = DEFAULT_MAX_DNF_DISJUNCTS,
) -> list[Partition]:
    """Registered partitions of ``storage`` matching ``filter``, in key order per period.

    ``max_parts`` (``None`` or negative: no limit) caps the result. Pass ``stats`` to get the
    query's costs filled in. With ``allow_unknown``, terms on columns the storage lacks are
    not applied here (they are the caller's residual, see :func:`explain`).
    """
    sdef = catalog.get_storage(storage)
    plan = plan_filter(sdef.row_layout, sdef.periods, filter, period,
                       allow_unknown=allow_unknown, max_disjuncts=max_disjuncts)
    return execute_plan(catalog, plan, max_parts, stats)


def execute_plan(
    catalog: CatalogCore, plan: FilterPlan, max_parts: int | None = None,
    stats: QueryStats | None = None,
) -> list[Partition]:
    """Run a plan made from a catalog storage's ``row_layout``; the residual is applied here."""
    stats = stats if stats is not None else QueryStats()
    layout = plan.layout
    sdef = catalog.get_storage(layout.storage)
    if sdef.row_layout != layout:
        raise InvalidInput(f"the plan's row layout is not storage {layout.storage!r}'s")
    before = catalog.stats.round_trips
    needs_client = plan.residual is not None
    check = compile_node(plan.split.residual_node, plan.binder)
    known = [plan.binder.column(c) for c in sorted(ast.columns_of(plan.expr))]
    columns = [(f[0], f[1], layout.value_cell(f[0])) for f in known if f is not None]
    limit = None if max_parts is None or max_parts < 0 else max_parts
    out: list[Partition] = []
    stats.full_scan = plan.full_scan
    try:
        for pplan in plan.periods:
            if not needs_client:  # no residual: project the partition's cells, decode tuples
                decoder = PartitionDecoder(sdef, pplan.period)
                rows = _projected_rows(catalog, pplan, stats, _batch_size(limit),
                                       decoder.columns, decoder.check.skip)
                while page := _page(rows, limit, len(out)):  # checked a page at a time
                    stats.rows_fetched += len(page)
                    out.extend(decoder.decode(values) for _, values in decoder.whole(page))
                if limit is not None and len(out) >= limit:
                    return out
                continue
            decoder = PartitionDecoder(sdef, pplan.period)
            for key, cells in _rows(catalog, pplan, stats, _batch_size(limit),
                                    decoder.check.skip):
                if limit is not None and len(out) >= limit:
                    return out
                stats.rows_fetched += 1
                values = tuple(map(cells.get, decoder.columns))
                if needs_client:
                    row = {n: typed_from_text(t, cells.get(c, b"").decode("utf-8", "replace"))
                           for n, t, c in columns}
                    if not check(row):
                        continue
                if _whole(decoder, key, values):
                    out.append(decoder.decode(values))
        return out
    finally:
        stats.rows_returned = len(out)
        stats.round_trips += catalog.stats.round_trips - before


def _page(rows: Iterator[RowValues], limit: int | None, have: int) -> list[RowValues]:
    """The next rows to check together: a page, or what the limit still wants."""
    size = _CHECK_PAGE if limit is None else max(0, min(_CHECK_PAGE, limit - have))
    return list(islice(rows, size))


#: Rows checked together (:meth:`.rows.check.RowCheck.whole`).
_CHECK_PAGE: Final = 1000


def _whole(decoder: PartitionDecoder, key: bytes, values: tuple[bytes | None, ...]) -> bool:
    """Whether a row is whole (:mod:`.rows.check`); a damaged one is logged and left out."""
    reason = decoder.check.damage(key, values)
    if reason is not None:
        decoder.check.skip(key, reason)
    return reason is None


def _batch_size(limit: int | None) -> int:
    """Large pages (fewer round trips on big scans), small when few rows are wanted."""
    return SCAN_BATCH if limit is None else max(100, min(SCAN_BATCH, limit + 1))


def _rows(
    catalog: CatalogCore, plan: PeriodPlan, stats: QueryStats, batch_size: int = 1000,
    on_damaged: OnDamaged | None = None,
) -> Iterator[tuple[bytes, Cells]]:
    """Rows of a period plan in key order: the gets (one ``get_many``) merged with the scans."""
    table = catalog.rows.partitions
    got: list[tuple[bytes, Cells]] = []
    if plan.gets:
        stats.gets += len(plan.gets)
        got = sorted(table.get_many(list(plan.gets)).items())

    def scanned() -> Iterator[tuple[bytes, Cells]]:
        for scan in plan.scans:
            stats.scans += 1
            yield from scan_row_cells(table, scan.start, scan.stop, filter=scan.filter,
                                      on_damaged=on_damaged)

    yield from heapq.merge(got, scanned(), key=lambda item: item[0])


def _projected_rows(
    catalog: CatalogCore, plan: PeriodPlan, stats: QueryStats, batch_size: int,
    columns: tuple[bytes, ...], on_damaged: OnDamaged | None = None,
) -> Iterator[RowValues]:
    """:func:`_rows` projected on ``columns``: unfiltered scans use ``scan_columns``."""
    table = catalog.rows.partitions
    got: list[RowValues] = []
    if plan.gets:
        stats.gets += len(plan.gets)
        found = table.get_many(list(plan.gets), list(columns))
        got = sorted((key, tuple(map(cells.get, columns))) for key, cells in found.items())

    def scanned() -> Iterator[RowValues]:
        for scan in plan.scans:
            stats.scans += 1
            if scan.filter is None:
                yield from scan_whole_rows(table, columns, scan.start, scan.stop,
                                           batch_size=batch_size, on_damaged=on_damaged)
                continue
            for key, cells in scan_row_cells(table, scan.start, scan.stop, filter=scan.filter,
                                             on_damaged=on_damaged):
                yield key, tuple(map(cells.get, columns))

    yield from heapq.merge(got, scanned(), key=lambda item: item[0])


__all__ = ["SCAN_BATCH", "execute_plan", "explain", "get_partitions_by_filter"]
