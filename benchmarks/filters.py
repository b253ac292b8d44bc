"""Benchmark partition filters: planned reads vs a full scan with client-side filtering.

A storage partitioned by ``(year, month, day, hour, region, dt)`` (``dt`` is the fact's HOURLY
time column; it comes last so the key leads with year..region) gets ``--partitions`` rows,
written straight through the KV layer in the catalog's exact row format (same keys and cells
as ``Catalog.register``; timelines are not needed by filters and are skipped for speed).

For each representative filter, in the same run:

* the plan (``explain``): gets, scans, full scan or not, the residual;
* **rows scanned**: rows inside the planned key ranges plus gets (what the store reads; server
  filters drop rows after reading them), counted with unfiltered scans of the same ranges;
* rows fetched (after server filters), rows returned, round trips and time of
  ``get_partitions_by_filter``;
* the baseline: one full scan of the table (timed once, shared) plus evaluating the filter on
  every row on the client.

"scanned / returned" is 1.0 at best (only matching rows are read); that is the physical limit
for ranges on leading key columns. ``--write PATH`` also writes the markdown table.
"""

from __future__ import annotations

import argparse
import gc
import platform
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow_partitions.catalog import (
    LIVE,
    LOC,
    STAMP,
    STATE,
    Catalog,
    TimelineCache,
    encoded_cell_column,
    get_partitions_by_filter,
    value_cell_column,
)
from airflow_partitions.filters import (
    Binder,
    FilterPlan,
    QueryStats,
    explain_plan,
    parse_filter,
    plan_filter,
    typed_from_text,
)
from airflow_partitions.keys import FIRST_VALUE_FIELD, encode_key, field_bytes

STORAGE = "hits"
FILTERS: list[tuple[str, str]] = [
    ("point (all key columns)", "year = 2015 and month = 6 and day = 15 and hour = 12 "
                                "and region = 'r07' and dt = '2015-06-15-12'"),
    ("IN on all key columns (multi-get)",
     "year = 2015 and month = 6 and day = 15 and hour = 1 and region in ('r01', 'r02', 'r03') "
     "and dt = '2015-06-15-01'"),
    ("leading equality (one month)", "year = 2015 and month = 6"),
    ("leading range", "year = 2015 and month between 3 and 5"),
    ("leading run + range (3 hours)", "year = 2015 and month = 6 and day = 1 and hour >= 3 "
                                      "and hour < 6"),
    ("OR of two days", "(year = 2014 and month = 12 and day = 28) or "
                       "(year = 2015 and month = 1 and day = 1)"),
    ("month + later column (server filter)", "year = 2015 and month = 6 and region = 'r07'"),
    ("month + LIKE prefix", "year = 2015 and month = 6 and region like 'r0%'"),
    ("month + function (residual)", "year = 2015 and month = 6 and upper(region) = 'R07'"),
    ("month + inexact LIKE (residual)", "year = 2015 and month = 6 and region like 'r_7'"),
    ("no leading column (full scan)", "region = 'r07' and hour = 12"),
    ("OR with a full-scan branch", "(year = 2015 and month = 6 and day = 1) or region = 'r07'"),
    ("DNF past 64 disjuncts (fallback)",
     "year = 2015 and month in (1, 2, 3) and day in (1, 2, 3) and hour in (1, 2, 3) "
     "and region in ('r01', 'r02', 'r03')"),
]


@dataclass
class Row:
    name: str
    text: str
    shape: str
    returned: int
    scanned: int
    fetched: int
    round_trips: int
    seconds: float
    baseline_eval: float
    notes: str


def build(catalog: Catalog, partitions: int, regions: int) -> int:
    """Write partition rows in the catalog's format; returns how many were written."""
    catalog.create_fact("web", time_columns=["dt"])
    sdef = catalog.create_storage(
        "web", STORAGE, ["HOURLY"],
        columns=["year:int", "month:int", "day:int", "hour:int", "region", "dt"])
    stamp = str(int(time.time())).encode()
    batch: list[tuple[bytes, dict[bytes, bytes]]] = []
    written = 0
    columns = [(c, value_cell_column(c), encoded_cell_column(c)) for c in sdef.column_names]
    done = False
    for year in (2014, 2015, 2016, 2017):
        for month in range(1, 13):
            for day in range(1, 29):
                for hour in range(24):
                    dt = f"{year}-{month:02d}-{day:02d}-{hour:02d}"
                    for r in range(regions):
                        values = (year, month, day, hour, f"r{r:02d}", dt)
                        key = encode_key(sdef.key_schema, STORAGE, "HOURLY", values)
                        cells = {LOC: f"/data/{dt}/r{r:02d}".encode(), STATE: LIVE, STAMP: stamp}
                        for i, (_, vcol, kcol) in enumerate(columns):
                            cells[vcol] = str(values[i]).encode()
                            cells[kcol] = field_bytes(key, FIRST_VALUE_FIELD + i)
                        batch.append((key, cells))
                        written += 1
                        if len(batch) == 5000:
                            catalog.rows.partitions.put_many(batch, batch_size=5000)
                            batch = []
                        if written >= partitions:
                            done = True
                            break
                    if done:
                        break
                if done:
                    break
            if done:
                break
        if done:
            break
    if batch:
        catalog.rows.partitions.put_many(batch, batch_size=5000)
    return written


def rows_in_ranges(catalog: Catalog, text: str, total: int) -> int:
    """Rows the store reads for a plan: every row in its ranges, plus its gets."""
    plan = storage_plan(catalog, text)
    count = 0
    for period in plan.periods:
        count += len(period.gets)
        if period.full_scan:
            count += total
            continue
        for scan in period.scans:
            count += sum(1 for _ in catalog.rows.partitions.scan(
                start=scan.start, stop=scan.stop, columns=[STATE]))
    return count


def storage_plan(catalog: Catalog, text: str) -> FilterPlan:
    sdef = catalog.get_storage(STORAGE)
    return plan_filter(sdef.row_layout, sdef.periods, text)


def shape_of(catalog: Catalog, text: str) -> tuple[str, str]:
    ex = explain_plan(storage_plan(catalog, text))
    parts = []
    if ex.gets:
        parts.append(f"{len(ex.gets)} get(s)")
    if ex.scans:
        kind = "full scan" if ex.full_scan else f"{len(ex.scans)} scan(s)"
        filtered = sum(1 for s in ex.scans if s.server_filter)
        parts.append(kind + (" + server filter" if filtered else ""))
    if not parts:
        parts.append("nothing to read")
    if ex.residual:
        parts.append(f"residual `{ex.residual}`")
    notes = "; ".join(n for p in ex.periods for n in p.notes)
    return ", ".join(parts), notes


def baseline_rows(catalog: Catalog) -> tuple[list[dict[str, Any]], float]:
    """One full scan of the storage, decoding every row's values (the shared baseline)."""
    sdef = catalog.get_storage(STORAGE)
    cols = [(c, t, value_cell_column(c)) for c, t in sdef.columns]
    prefix = catalog.rows.period_prefix(sdef, sdef.periods[0])
    started = time.perf_counter()
    rows = [
        {c: typed_from_text(t, cells[v].decode()) for c, t, v in cols}
        for _, cells in catalog.rows.partitions.scan(prefix=prefix, batch_size=5000)
    ]
    return rows, time.perf_counter() - started


def run(args: argparse.Namespace) -> list[Row]:
    if args.dir:
        return _run(args, Path(args.dir))
    with tempfile.TemporaryDirectory(prefix="bench-filters-") as tmp:
        return _run(args, Path(tmp))


def _run(args: argparse.Namespace, tmp: Path) -> list[Row]:
    catalog = Catalog(f"sqlite:///{tmp}/bench.db", data_root=str(tmp / "data"),
                      cache=TimelineCache())
    started = time.perf_counter()
    total = build(catalog, args.partitions, args.regions)
    print(f"built {total:,} partitions in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    rows_all, scan_seconds = baseline_rows(catalog)
    args.scan_seconds = scan_seconds
    args.total = total
    print(f"full scan: {scan_seconds:.1f} s", file=sys.stderr)
    sdef = catalog.get_storage(STORAGE)
    out = []
    for name, text in FILTERS:
        gc.collect()
        stats = QueryStats()
        t0 = time.perf_counter()
        got = get_partitions_by_filter(catalog, STORAGE, text, stats=stats)
        seconds = time.perf_counter() - t0
        predicate = Binder(sdef.columns).compile(parse_filter(text))
        t0 = time.perf_counter()
        expected = sum(1 for r in rows_all if predicate(r) is True)
        baseline_eval = time.perf_counter() - t0
        assert expected == len(got), (name, expected, len(got))
        shape, notes = shape_of(catalog, text)
        out.append(Row(name, text, shape, len(got), rows_in_ranges(catalog, text, total),
                       stats.rows_fetched, stats.round_trips, seconds, baseline_eval, notes))
        print(f"{name}: {len(got)} rows in {seconds * 1000:.1f} ms", file=sys.stderr)
    catalog.close()
    return out


def markdown(rows: list[Row], args: argparse.Namespace) -> str:
    lines = [
        "## Partition filters (`benchmarks/filters.py`)",
        "",
        f"Command: `python benchmarks/filters.py {shlex.join(sys.argv[1:])}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, sqlite backend. "
        f"{args.total:,} partitions of one storage keyed `(year, month, day, hour, region, dt)` "
        f"({args.regions} regions per hour), written through the KV layer in the catalog's row "
        "format. Baseline: one full scan decoding every row "
        f"(**{args.scan_seconds:.1f} s**, shared by all filters) plus evaluating the filter on "
        "the client (the \"client eval\" column).",
        "",
        "| filter | plan | returned | scanned | scanned ÷ returned | fetched | round trips "
        "| time | baseline (scan + client eval) | speed-up |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        ratio = f"{r.scanned / r.returned:,.2f}" if r.returned else "-"
        base = args.scan_seconds + r.baseline_eval
        lines.append(
            f"| {r.name}: `{r.text}` | {r.shape} | {r.returned:,} | {r.scanned:,} | {ratio} "
            f"| {r.fetched:,} | {r.round_trips} | {r.seconds * 1000:,.1f} ms "
            f"| {base:,.2f} s ({r.baseline_eval * 1000:,.0f} ms) | {_speedup(base / r.seconds)} |"
        )
    lines += ["", "Full scans and fallbacks, and why:", ""]
    for r in rows:
        if "full scan" in r.shape or "fallback" in r.notes:
            lines.append(f"- {r.name}: {r.notes}")
    lines += [
        "",
        "\"scanned\" counts rows inside the planned key ranges plus gets: what the store reads. "
        "Server-side filters (HBase region servers; the sqlite backend evaluates them in Python) "
        "drop rows after reading them, so a later-column condition costs the whole leading range "
        "(\"fetched\" is what crosses the wire). Leading-column equalities and ranges reach the "
        "physical limit of 1.0; a residual (functions, inexact LIKE) is checked on the client "
        "after the store narrowed by what it can check.",
        "",
        "On sqlite, a filtered full scan is *slower* than the baseline: the sqlite backend "
        "evaluates `SingleColumnValue` filters per row in Python (`kv.scan_filters.apply_filter`)"
        ", which costs more than the compiled client predicate. On HBase those filters run in "
        "the region servers and only matching rows cross the network. The DNF fallback reads "
        "the `year = 2015` range (half the table) with the filter tree; raising "
        "`max_disjuncts` to 81 or more turns that filter into 81 gets.",
        "",
    ]
    return "\n".join(lines)


def _speedup(factor: float) -> str:
    return f"{factor:,.0f}x" if factor >= 10 else f"{factor:.2f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1_000_000,
                        help="number of partitions (default 1,000,000)")
    parser.add_argument("--regions", type=int, default=62,
                        help="regions per hour (default 62: 1M = 2014..2015 x 12 x 28 x 24 x 62)")
    parser.add_argument("--dir", help="where to put the sqlite file (default: a temporary "
                                      "directory, removed at the end; 1M partitions take ~2 GB)")
    parser.add_argument("--write", metavar="PATH", help="also write the markdown table here")
    args = parser.parse_args(argv)
    rows = run(args)
    text = markdown(rows, args)
    print(text)
    if args.write:
        Path(args.write).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
