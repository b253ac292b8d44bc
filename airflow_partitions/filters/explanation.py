"""A :class:`~airflow_partitions.filters.query_plan.FilterPlan` as data and text: ``explain``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from airflow_partitions.filters.planner import ScanSpec
from airflow_partitions.filters.query_plan import FilterPlan
from airflow_partitions.kv import render_hbase


class ExplainScanJson(TypedDict):
    """:meth:`ExplainScan.to_json`: one key range (hex rows) and its HBase filter string."""

    start: str
    stop: str
    server_filter: str | None


class PeriodExplainJson(TypedDict):
    """:meth:`PeriodExplain.to_json`: one period's reads."""

    period: str
    full_scan: bool
    scans: list[ExplainScanJson]
    gets: list[str]
    notes: list[str]


class ExplainJson(TypedDict):
    """:meth:`Explain.to_json`, the JSON of ``explain``."""

    full_scan: bool
    scans: list[ExplainScanJson]
    gets: list[str]
    residual: str | None


@dataclass(frozen=True)
class ExplainScan:
    start: str
    stop: str
    server_filter: str | None

    def to_json(self) -> ExplainScanJson:
        return {"start": self.start, "stop": self.stop, "server_filter": self.server_filter}


@dataclass(frozen=True)
class PeriodExplain:
    period: str
    full_scan: bool
    scans: tuple[ExplainScan, ...]
    gets: tuple[str, ...]
    notes: tuple[str, ...]

    def to_json(self) -> PeriodExplainJson:
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

    def to_json(self) -> ExplainJson:
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
        storage=plan.layout.storage,
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
