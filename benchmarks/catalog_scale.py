"""Catalog at scale: full scans with decoding, bulk registration, a 10M catalog.

Every ratio compares against baselines measured in the same run on the same machine:

* **scan**: a bare ``sqlite3`` SELECT of the same rows (the physical reference: SQLite walking
  its B-tree, Python receiving one ``(key, cell blob)`` tuple per row), the same bare SELECT
  of the same cells in the older layout (one SQL row per cell, a copy made for the
  run) and the per-row path (a KV scan of every cell into a dict per row, then
  ``partition_from_cells``), against ``Catalog.list_partitions`` and a one-month filter;
* **registration**: a bare ``sqlite3`` INSERT of exactly the rows the catalog wrote (same
  schema, pragmas and batches), the same for the same cells in the older layout, and the
  code of the older layout (``git archive`` of ``--baseline-rev``, run in a subprocess), against
  one bulk ``Catalog.register`` call;
* **10M** (``--huge N``): a catalog of N HOURLY partitions generated with the bulk path, then
  the warm poke (round trips), a cold one-month cover, the timeline's ranges.

    python benchmarks/catalog_scale.py [--scan 1000000] [--register 1000000]
        [--baseline-register 100000] [--huge 0] [--dir DIR] [--write PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import resource
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pendulum

from airflow_partitions.catalog import (
    LOC,
    Catalog,
    TimelineCache,
    get_partitions_by_filter,
    partition_from_cells,
)
from airflow_partitions.keys import prefix_successor
from airflow_partitions.kv import decode_cells
from airflow_partitions.periods import UpdatePeriod

sys.path.insert(0, str(Path(__file__).resolve().parent))
import filters as filter_bench  # the filter benchmark's storage and row writer

HOURLY = UpdatePeriod.HOURLY
START = pendulum.datetime(2015, 1, 1)
ROOT = Path(__file__).resolve().parent.parent
MONTH = "year = 2014 and month = 1"


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.0f}/s" if seconds > 0 else "-"


def hours(lo: int, n: int) -> list[dict[str, str]]:
    base = HOURLY.ordinal(START) + lo
    return [{"dt": HOURLY.format_ordinal(base + i)} for i in range(n)]


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- scans -------------------------------------------------------------------------------------


def scan_bench(workdir: Path, partitions: int) -> dict[str, Any]:
    db = workdir / "scan.db"
    catalog = Catalog(f"sqlite:///{db}", data_root="/data", cache=TimelineCache())
    t0 = time.perf_counter()
    total = filter_bench.build(catalog, partitions, 62)
    print(f"scan: built {total:,} rows in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    sdef = catalog.get_storage(filter_bench.STORAGE)
    period = sdef.periods[0]
    prefix = catalog.rows.period_prefix(sdef, period)
    stop = prefix_successor(prefix)
    out: dict[str, Any] = {"rows": total}

    def bare() -> int:
        with sqlite3.connect(db) as conn:
            rows = conn.execute('SELECT row, cells FROM "kv_partitions" WHERE row >= ? '
                                "AND row < ? ORDER BY row", (prefix, stop))
            return sum(1 for _ in rows)

    cell_db = workdir / "scan-cells.db"
    out["cells"] = copy_as_cells(db, cell_db)

    def bare_cells() -> int:
        with sqlite3.connect(cell_db) as conn:
            cells = conn.execute('SELECT row, col, val FROM "kv_partitions" WHERE row >= ? '
                                 "AND row < ? ORDER BY row, col", (prefix, stop))
            return len({row for row, _, _ in cells})

    def old_path() -> int:
        count = 0
        for _, cells in catalog.rows.partitions.scan(prefix=prefix):
            if LOC in cells:
                partition_from_cells(sdef, period, cells)
                count += 1
        return count

    def new_path() -> int:
        return sum(1 for _ in catalog.list_partitions(filter_bench.STORAGE))

    # Interleaved, best of two each: the machine is shared and noisy.
    timings: dict[str, float] = {}
    for _ in range(2):
        for name, fn in (("bare", bare), ("bare_cells", bare_cells), ("old", old_path),
                         ("new", new_path)):
            gc.collect()
            t0 = time.perf_counter()
            count = fn()
            seconds = time.perf_counter() - t0
            timings[name] = min(seconds, timings.get(name, float("inf")))
            out[f"{name}_count"] = count
            print(f"scan {name}: {count:,} in {seconds:.2f} s", file=sys.stderr)
    out.update(timings)

    def old_month() -> int:
        plan_rows = 0
        sdef_ = catalog.get_storage(filter_bench.STORAGE)
        lead = catalog.rows.period_prefix(sdef_, period, (2014, 1))
        for _, cells in catalog.rows.partitions.scan(prefix=lead, batch_size=5000):
            if LOC in cells and partition_from_cells(sdef_, period, cells):
                plan_rows += 1
        return plan_rows

    for name, fn in (("month_old", old_month),
                     ("month_new", lambda: len(get_partitions_by_filter(
                         catalog, filter_bench.STORAGE, MONTH)))):
        best = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            out[f"{name}_count"] = fn()
            best = min(best, time.perf_counter() - t0)
        out[name] = best
    catalog.close()
    return out


# -- registration ------------------------------------------------------------------------------


def register_bench(workdir: Path, partitions: int) -> dict[str, Any]:
    db = workdir / "register.db"
    catalog = Catalog(f"sqlite:///{db}", data_root="/data", cache=TimelineCache())
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"])
    values = hours(0, partitions)
    rss0 = max_rss_mb()
    catalog.stats.reset()
    gc.collect()
    t0 = time.perf_counter()
    result = catalog.register("raw", "HOURLY", values)
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {"partitions": partitions, "new": seconds,
                           "round_trips": catalog.stats.round_trips,
                           "changed": result.changed, "rss_growth_mb": max_rss_mb() - rss0}
    del values
    ranges = catalog.timeline("raw", "HOURLY").ordinal_ranges()
    out["ranges"] = len(ranges)
    catalog.close()
    out["bare"] = bare_insert(db, workdir / "bare.db")
    out["cells"] = copy_as_cells(db, workdir / "cells.db")
    out["bare_cells"] = bare_insert_cells(workdir / "cells.db", workdir / "bare-cells.db")
    out["db_bytes"] = db.stat().st_size
    return out


_CELL_TABLE = ('CREATE TABLE "kv_partitions" (row BLOB NOT NULL, col BLOB NOT NULL, '
               "val BLOB NOT NULL, PRIMARY KEY (row, col)) WITHOUT ROWID")
_ROW_TABLE = ('CREATE TABLE "kv_partitions" (row BLOB NOT NULL PRIMARY KEY, '
              "cells BLOB NOT NULL) WITHOUT ROWID")


def _connect(path: Path, schema: str) -> sqlite3.Connection:
    """A new file with the catalog's pragmas (WAL, synchronous NORMAL) and one table."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(schema)
    return conn


def copy_as_cells(source: Path, target: Path) -> int:
    """The partition rows of ``source`` in the older layout: one SQL row per cell.

    Why: the old layout's own ceilings (a bare INSERT, a bare SELECT) are measured on the
    very cells the catalog holds now.
    """
    conn = _connect(target, _CELL_TABLE)
    count = 0
    with sqlite3.connect(source) as src:
        rows = src.execute('SELECT row, cells FROM "kv_partitions" ORDER BY row')
        while batch := rows.fetchmany(20_000):
            cells = [(row, col, val) for row, blob in batch
                     for col, val in decode_cells(blob).items()]
            conn.execute("BEGIN")
            conn.executemany('INSERT INTO "kv_partitions" VALUES (?, ?, ?)', cells)
            conn.execute("COMMIT")
            count += len(cells)
    conn.close()
    return count


def bare_insert(source: Path, target: Path) -> float:
    """The same rows (key and cell blob) written with bare sqlite3: same schema, pragmas and
    put batches of 5,000, the upsert a blind insert."""
    with sqlite3.connect(source) as src:
        rows = src.execute('SELECT row, cells FROM "kv_partitions" ORDER BY row').fetchall()
    conn = _connect(target, _ROW_TABLE)
    t0 = time.perf_counter()
    for i in range(0, len(rows), 5000):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany('INSERT OR REPLACE INTO "kv_partitions" VALUES (?, ?)',
                         rows[i : i + 5000])
        conn.execute("COMMIT")
    seconds = time.perf_counter() - t0
    conn.close()
    return seconds


def bare_insert_cells(source: Path, target: Path) -> float:
    """The same cells in the old layout (one SQL row per cell), batches of 5,000 rows."""
    with sqlite3.connect(source) as src:
        cells = src.execute('SELECT row, col, val FROM "kv_partitions" ORDER BY row, col'
                            ).fetchall()
    per_batch = 5000 * 6
    conn = _connect(target, _CELL_TABLE)
    t0 = time.perf_counter()
    for i in range(0, len(cells), per_batch):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany('INSERT OR REPLACE INTO "kv_partitions" VALUES (?, ?, ?)',
                         cells[i : i + per_batch])
        conn.execute("COMMIT")
    seconds = time.perf_counter() - t0
    conn.close()
    return seconds


_BASELINE_CODE = """
import sys, time, pendulum
from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog import TimelineCache
from airflow_partitions.periods import UpdatePeriod
H = UpdatePeriod.HOURLY
n = int(sys.argv[2])
base = H.ordinal(pendulum.datetime(2015, 1, 1))
values = [{"dt": H.format_ordinal(base + i)} for i in range(n)]
cat = Catalog("sqlite:///" + sys.argv[1], data_root="/data", cache=TimelineCache())
cat.create_fact("events"); cat.create_storage("events", "raw", ["HOURLY"])
t0 = time.perf_counter(); cat.register("raw", "HOURLY", values)
print(time.perf_counter() - t0)
"""


def baseline_register(workdir: Path, rev: str, partitions: int) -> float:
    """The code of ``rev`` (the older layout) registering ``partitions``, in a subprocess."""
    src = workdir / "baseline-src"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "airflow_partitions"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    done = subprocess.run([sys.executable, "-c", _BASELINE_CODE, str(workdir / "old.db"),
                           str(partitions)], check=True, capture_output=True, text=True,
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}, cwd=src)
    return float(done.stdout.strip().splitlines()[-1])


# -- a huge catalog ----------------------------------------------------------------------------


def huge_bench(workdir: Path, partitions: int, call: int) -> dict[str, Any]:
    db = workdir / "huge.db"
    url = f"sqlite:///{db}"
    catalog = Catalog(url, data_root="/data", cache=TimelineCache())
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"])
    t0 = time.perf_counter()
    for lo in range(0, partitions, call):
        catalog.register("raw", "HOURLY", hours(lo, min(call, partitions - lo)))
        print(f"huge: {lo + call:,} after {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    out: dict[str, Any] = {"partitions": partitions, "generate": time.perf_counter() - t0,
                           "db_bytes": sum(p.stat().st_size for p in workdir.glob("huge.db*"))}
    catalog.close()
    month_start = START.add(hours=partitions // 2).start_of("month")
    month_end = month_start.add(months=1)

    cold = []
    for _ in range(5):  # a new process's view each time: fresh catalog, fresh cache
        fresh = Catalog(url, data_root="/data", cache=TimelineCache())
        t0 = time.perf_counter()
        cover = fresh.cover("events", month_start, month_end)
        cold.append(time.perf_counter() - t0)
        out["cover_partitions"] = len(cover.partitions)
        out["cover_trips"] = fresh.stats.round_trips
        fresh.close()
    out["cold_cover"] = sorted(cold)[len(cold) // 2]
    warm = Catalog(url, data_root="/data", cache=TimelineCache())
    warm.fact_state("events")
    warm.stats.reset()
    t0 = time.perf_counter()
    warm.fact_state("events")
    out["warm"] = time.perf_counter() - t0
    out["warm_trips"] = warm.stats.round_trips
    t0 = time.perf_counter()
    ranges = warm.timeline("raw", "HOURLY").ordinal_ranges()
    out["timeline"] = time.perf_counter() - t0
    out["ranges"] = len(ranges)
    end_all = START.add(hours=partitions)
    commands = {
        "timeline_show": ["timeline", "show", "raw"],
        "coverage": ["coverage", "events", "--start", START.isoformat(),
                     "--end", end_all.isoformat()],
    }
    for name, command in commands.items():
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "airflow_partitions.cli.entry_point",
                               "--store", url, *command], capture_output=True, text=True)
        out[name] = time.perf_counter() - t0
        out[name + "_ok"] = done.returncode == 0
        out[name + "_lines"] = len(done.stdout.splitlines())
        if done.returncode:
            print(done.stderr[-2000:], file=sys.stderr)
    warm.close()
    return out


# -- report ------------------------------------------------------------------------------------


def markdown(args: argparse.Namespace, scan: dict[str, Any] | None,
             reg: dict[str, Any] | None, huge: dict[str, Any] | None) -> str:
    lines = [
        "## Catalog at scale (`benchmarks/catalog_scale.py`)",
        "",
        f"Command: `python benchmarks/catalog_scale.py {shlex.join(sys.argv[1:])}`",
        "",
        f"Machine: {platform.machine()}, 2 cores shared with other jobs, Python "
        f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}. Baselines are measured "
        "in the same run; scans are the best of two, interleaved.",
        "",
    ]
    if scan:
        n = scan["rows"]
        lines += [
            f"Full scan of {n:,} partition rows (the filter benchmark's storage: 6 key columns, "
            f"16 cells a row, {scan['cells']:,} cells; one SQL row per partition row):",
            "",
            "| read | rows | seconds | rows/s | ÷ bare SELECT rate | ÷ old layout's bare SELECT |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
            f"| bare `sqlite3` SELECT of every row (key and cell blob; physical reference) "
            f"| {n:,} | {scan['bare']:.2f} | {rate(n, scan['bare'])} | 1.00 "
            f"| {scan['bare_cells'] / scan['bare']:.2f} |",
            f"| bare `sqlite3` SELECT of every cell in the layout before (one SQL row per cell) "
            f"| {n:,} | {scan['bare_cells']:.2f} | {rate(n, scan['bare_cells'])} "
            f"| {scan['bare'] / scan['bare_cells']:.2f} | 1.00 |",
            f"| per-row path (KV scan into dicts + `partition_from_cells`) | "
            f"{scan['old_count']:,} | {scan['old']:.2f} | {rate(n, scan['old'])} "
            f"| {scan['bare'] / scan['old']:.2f} | {scan['bare_cells'] / scan['old']:.2f} |",
            f"| `list_partitions` (projected scan + `PartitionDecoder`) | {scan['new_count']:,} "
            f"| {scan['new']:.2f} | {rate(n, scan['new'])} | {scan['bare'] / scan['new']:.2f} "
            f"| {scan['bare_cells'] / scan['new']:.2f} |",
            f"| per-row path, one month (`{MONTH}` range) | {scan['month_old_count']:,} "
            f"| {scan['month_old']:.2f} | {rate(scan['month_old_count'], scan['month_old'])} "
            f"| - | - |",
            f"| `get_partitions_by_filter('{MONTH}')` | {scan['month_new_count']:,} "
            f"| {scan['month_new']:.2f} | {rate(scan['month_new_count'], scan['month_new'])} "
            f"| - | - |",
            "",
        ]
    if reg:
        n = reg["partitions"]
        lines += [
            f"Bulk registration of {n:,} HOURLY partitions (one `register` call; storage with "
            f"the one column `dt`: 6 cells a row, {reg['cells']:,} cells, one SQL row per "
            "partition row):",
            "",
            "| writer | partitions | seconds | partitions/s | ÷ bare INSERT rate |",
            "| --- | ---: | ---: | ---: | ---: |",
            f"| bare `sqlite3` INSERT of the same rows (key and cell blob; physical reference) "
            f"| {n:,} | {reg['bare']:.2f} | {rate(n, reg['bare'])} | 1.00 |",
            f"| bare `sqlite3` INSERT of the same cells in the layout before (one SQL row per "
            f"cell) | {n:,} | {reg['bare_cells']:.2f} | {rate(n, reg['bare_cells'])} "
            f"| {reg['bare'] / reg['bare_cells']:.2f} |",
        ]
        if reg.get("old") is not None:
            m = args.baseline_register
            lines.append(
                f"| the code with the older layout (`{args.baseline_rev}`, {m:,} partitions) "
                f"| {m:,} "
                f"| {reg['old']:.2f} | {rate(m, reg['old'])} "
                f"| {(m / reg['old']) / (n / reg['bare']):.2f} |")
        lines += [
            f"| bulk `register` now | {n:,} | {reg['new']:.2f} | {rate(n, reg['new'])} "
            f"| {reg['bare'] / reg['new']:.2f} |",
            "",
            f"{reg['round_trips']:,} round trips; {reg['ranges']} timeline range(s) after; "
            f"the process's peak RSS grew {reg['rss_growth_mb']:,.0f} MB during the call "
            f"(the caller's input list of {n:,} dicts is made before it); SQLite file "
            f"{reg['db_bytes'] / 1e6:,.0f} MB.",
            "",
        ]
    if huge:
        n = huge["partitions"]
        lines += [
            f"A catalog of {n:,} HOURLY partitions, generated with bulk `register` calls of "
            f"{args.huge_call:,}: {huge['generate']:,.0f} s "
            f"({rate(n, huge['generate'])}), {huge['db_bytes'] / 1e9:,.2f} GB on disk.",
            "",
            "| question | time | round trips | note |",
            "| --- | ---: | ---: | --- |",
            f"| warm poke (generation read) | {huge['warm'] * 1e6:,.0f} µs "
            f"| {huge['warm_trips']} | |",
            f"| cold cover of one month (new catalog, median of 5) "
            f"| {huge['cold_cover'] * 1e3:,.1f} ms | {huge['cover_trips']} "
            f"| {huge['cover_partitions']} partition(s) |",
            f"| timeline ranges (warm) | {huge['timeline'] * 1e3:,.2f} ms | - "
            f"| {huge['ranges']} range(s) |",
            f"| `airflow-partitions timeline show raw` (new process, imports included) "
            f"| {huge['timeline_show']:,.2f} s | - | exit "
            f"{'0' if huge['timeline_show_ok'] else 'non-zero'}, "
            f"{huge['timeline_show_lines']} line(s) |",
            f"| `airflow-partitions coverage events` over the whole history (new process) "
            f"| {huge['coverage']:,.2f} s | - | exit "
            f"{'0' if huge['coverage_ok'] else 'non-zero'}, {huge['coverage_lines']} line(s) |",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scan", type=int, default=1_000_000, help="rows to scan (0: skip)")
    parser.add_argument("--register", type=int, default=1_000_000,
                        help="partitions in the bulk register (0: skip)")
    parser.add_argument("--baseline-register", type=int, default=100_000,
                        help="partitions the pre-issue-18 code registers (0: skip)")
    parser.add_argument("--baseline-rev", default="76e6f7a",
                        help="a git revision with the older layout (one SQL row per cell)")
    parser.add_argument("--huge", type=int, default=0, help="partitions of the huge catalog")
    parser.add_argument("--huge-call", type=int, default=1_000_000,
                        help="partitions per register call while generating it")
    parser.add_argument("--dir", type=Path, help="work directory (default: a temporary one)")
    parser.add_argument("--write", type=Path, help="also write the markdown here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        work = Path(tmp)
        scan = scan_bench(work, args.scan) if args.scan else None
        reg = register_bench(work, args.register) if args.register else None
        if reg is not None and args.baseline_register:
            reg["old"] = baseline_register(work, args.baseline_rev, args.baseline_register)
        for name in ("scan.db", "scan-cells.db", "register.db", "bare.db", "old.db",
                     "cells.db", "bare-cells.db"):
            for path in work.glob(name + "*"):
                path.unlink()
        huge = (huge_bench(work, args.huge, args.huge_call)
                if args.huge else None)
    print(json.dumps({"scan": scan, "register": reg, "huge": huge}, default=str),
          file=sys.stderr)
    text = markdown(args, scan, reg, huge)
    print(text)
    if args.write:
        args.write.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
