"""The catalog query of a pruning: "partitions where x IN (...) AND y IN (...)".

The query is built as a filter tree (never as text, so values holding quotes need no escaping)
and planned by :mod:`airflow_partitions.filters`:

* **in-lists**: ``x IN (...) AND x BETWEEN min AND max AND ...`` plus the cover's time ranges.
  The planner turns it into one ``get_many`` when every key column is bound, else into scans
  merged where their ranges touch (values of a non-leading column share one scan, with a
  server-side filter). The redundant ``BETWEEN`` keeps a fallback scan narrow.
* **ranges**: when the IN lists would expand past ``max_disjuncts`` conjuncts, or plan into
  more than ``max_scans`` separate scans (one per value of a leading column), one scan per
  period bounded by the ``BETWEEN`` terms is cheaper; the value sets are then applied on the
  client. Either way the answer is the same set of partitions.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NotRequired, TypedDict

from airflow_partitions.catalog import StorageDef, execute_plan
from airflow_partitions.filters import QueryStats, ast, plan_filter
from airflow_partitions.keys import ColumnType
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.pruning.values import Typed, partition_value, sort_key

if TYPE_CHECKING:
    from airflow_partitions.catalog import Catalog, Partition

#: How many conjuncts the IN lists (times the cover's time runs) may expand into before the
#: query reads one range scan per period and applies the value sets on the client instead.
DEFAULT_MAX_IN_LIST_DISJUNCTS: Final = 4096
DEFAULT_MAX_SCANS: Final = 64
TimeValues = Mapping[UpdatePeriod, Sequence[str]]
PartKey = tuple[str, str, tuple[tuple[str, str], ...]]


def part_key(part: Partition) -> PartKey:
    """Identity of a partition row: storage, period, values."""
    return (part.storage, part.period.name, tuple(sorted(part.values.items())))


def matches(part: Partition, sdef: StorageDef, columns: Mapping[str, set[Typed]]) -> bool:
    """Whether a partition's values are in every pruned column's set."""
    types = dict(sdef.columns)
    for column, allowed in columns.items():
        text = part.values.get(column)
        if text is None or partition_value(types[column], text) not in allowed:
            return False
    return True


def time_values(parts: Iterable[Partition], sdef: StorageDef, time_column: str
                ) -> dict[UpdatePeriod, list[str]]:
    """A cover's time values of one storage per period, in time order."""
    ordinals: dict[UpdatePeriod, set[int]] = {}
    for part in parts:
        if part.storage == sdef.name and time_column in part.values:
            ordinals.setdefault(part.period, set()).add(
                part.period.parse_ordinal(part.values[time_column], sdef.tz))
    return {p: [p.format_ordinal(o, sdef.tz) for o in sorted(ordinals[p])]
            for p in sorted(ordinals)}


def runs_of(period: UpdatePeriod, values: Sequence[str], tz: str) -> list[tuple[str, str]]:
    """Consecutive time values as (first, last) runs: one BETWEEN each."""
    out: list[tuple[str, str]] = []
    last = None
    for value in values:
        ordinal = period.parse_ordinal(value, tz)
        if out and last is not None and ordinal == last + 1:
            out[-1] = (out[-1][0], value)
        else:
            out.append((value, value))
        last = ordinal
    return out


def _const(ctype: ColumnType, value: Typed) -> ast.Const:
    if isinstance(value, dt.datetime):  # the grammar has no timestamp literal: ISO text
        return ast.Const(value.isoformat())
    return ast.Const(value)


def _terms(sdef: StorageDef, columns: Mapping[str, set[Typed]], in_lists: bool,
           ranges: Sequence[tuple[str, str]] | None, time_column: str,
           time_in: Sequence[str] | None = None) -> list[ast.Expr]:
    types = dict(sdef.columns)
    terms: list[ast.Expr] = []
    for column, values in columns.items():
        ordered = sorted(values, key=sort_key)
        ctype = types[column]
        ref = ast.Column(column)
        if in_lists:
            terms.append(ast.In(ref, tuple(_const(ctype, v) for v in ordered)))
        terms.append(ast.Between(ref, _const(ctype, ordered[0]), _const(ctype, ordered[-1])))
    if time_in is not None:
        terms.append(ast.In(ast.Column(time_column), tuple(ast.Const(v) for v in time_in)))
    elif ranges is not None:
        ref = ast.Column(time_column)
        between: list[ast.Expr] = [ast.Between(ref, ast.Const(lo), ast.Const(hi))
                                   for lo, hi in ranges]
        terms.append(between[0] if len(between) == 1 else ast.Or(tuple(between)))
    return terms


class QueryJson(TypedDict):
    """How the catalog was asked, in the decision record: :meth:`QueryReport.to_json` (the
    filter, :class:`~airflow_partitions.filters.QueryStats`' counts, notes), or only the
    ``strategy`` when the cover's partitions were pruned in memory."""

    strategy: str
    filter: NotRequired[str]
    rows_fetched: NotRequired[int]
    rows_returned: NotRequired[int]
    round_trips: NotRequired[int]
    scans: NotRequired[int]
    gets: NotRequired[int]
    full_scan: NotRequired[bool]
    notes: NotRequired[list[str]]


@dataclass
class QueryReport:
    """How the catalog was asked, summed over periods (goes into the decision record)."""

    strategy: str = "in-lists"
    filter: str = ""
    stats: QueryStats | None = None
    notes: tuple[str, ...] = ()

    def to_json(self) -> QueryJson:
        stats = (self.stats or QueryStats()).to_json()
        text = self.filter if len(self.filter) <= 400 else self.filter[:397] + "..."
        return {"strategy": self.strategy, "filter": text, **stats, "notes": list(self.notes)}


def query_storage(
    catalog: Catalog,
    sdef: StorageDef,
    columns: Mapping[str, set[Typed]],
    *,
    times: TimeValues | None = None,
    scan_rows: Mapping[UpdatePeriod, int] | None = None,
    time_column: str | None = None,
    period: UpdatePeriod | None = None,
    max_disjuncts: int = DEFAULT_MAX_IN_LIST_DISJUNCTS,
    max_scans: int = DEFAULT_MAX_SCANS,
) -> tuple[list[Partition], QueryReport]:
    """Registered partitions of ``sdef`` whose pruned columns hold allowed values (and, given
    a cover's ``times``, whose time value is one of them), in key order per period.

    With ``times``, a range scan reads every partition of the cover's runs (``scan_rows`` per
    period: the cover knows how many). When every key column is bound and fewer keys than
    that would do, the time values become an IN list too and the query is one multi-get.
    """
    time_col = time_column or sdef.time_columns[0]
    if times is not None:
        periods = [p for p in sdef.periods if p in times and (period is None or p == period)]
    else:
        periods = [period] if period is not None else list(sdef.periods)
    report = QueryReport(stats=QueryStats())
    assert report.stats is not None
    if any(not v for v in columns.values()):
        report.strategy, report.notes = "none", ("an empty value set: no partition can match",)
        return [], report
    size = math.prod(len(v) for v in columns.values())
    out: list[Partition] = []
    filters: list[str] = []
    bound = set(sdef.column_names) <= {*columns, time_col}
    for p in periods:
        values = None if times is None else times[p]
        run_list = None if values is None else runs_of(p, values, sdef.tz)
        width = size * (len(run_list) if run_list else 1)
        time_in = None
        gets = size * len(values) if values is not None else 0
        if values is not None and bound and gets <= max_disjuncts and gets < (
                (scan_rows or {}).get(p, 0)):
            time_in, width = values, size * len(values)
            report.notes += (f"{p.name}: every key column bound: {width} get(s)",)
        in_lists = width <= max_disjuncts
        plan = None
        if in_lists:
            expr = _and(_terms(sdef, columns, True, run_list, time_col, time_in))
            plan = plan_filter(sdef.row_layout, sdef.periods, expr, p,
                               max_disjuncts=max(width, 1))
            scans = sum(len(pp.scans) for pp in plan.periods)
            if scans > max_scans:
                in_lists = False
                report.notes += (f"{p.name}: IN lists plan into {scans} scans (> {max_scans}): "
                                 "one range scan instead",)
        else:
            report.notes += (f"{p.name}: IN lists expand to {width} conjuncts "
                             f"(> {max_disjuncts}): one range scan instead",)
        if not in_lists:
            report.strategy = "ranges+client filter"
            expr = _and(_terms(sdef, columns, False, run_list, time_col))
            plan = plan_filter(sdef.row_layout, sdef.periods, expr, p)
        assert plan is not None
        filters.append(str(plan.expr))
        stats = QueryStats()
        rows = execute_plan(catalog, plan, None, stats)
        _add(report.stats, stats)
        out.extend(r for r in rows if in_lists or matches(r, sdef, columns))
    report.stats.rows_returned = len(out)
    report.filter = " | ".join(dict.fromkeys(filters))
    return out, report


def _and(terms: list[ast.Expr]) -> ast.Expr:
    return terms[0] if len(terms) == 1 else ast.And(tuple(terms))


def _add(total: QueryStats, one: QueryStats) -> None:
    total.rows_fetched += one.rows_fetched
    total.round_trips += one.round_trips
    total.scans += one.scans
    total.gets += one.gets
    total.full_scan = total.full_scan or one.full_scan
