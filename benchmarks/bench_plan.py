"""Benchmark ``plan`` against a naive per-partition planner, measured in the same run.

The workload: one year of the example pipeline on a SQLite catalog: ``raw`` HOURLY (every hour
but 0.1% holes), ``rollup`` DAILY (every day but 10) and MONTHLY (10 of 12 months), with a
producer for each period. ``plan`` reads each timeline once through the catalog's cache; the
baseline asks the store whether each partition of each period exists (one get per partition,
8,760 + 365 + 12) and then plans from those answers, which is what a planner without timelines
would do. Timings are the best of ``--repeat`` runs with the garbage collector off. ``--write
PATH`` writes the markdown fragment (docs/benchmarks-plan.md).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from typing import TypeVar

import pendulum

from airflow_partitions.catalog import Catalog, Producer
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.planning import plan

T = TypeVar("T")
H, D, M = UpdatePeriod.HOURLY, UpdatePeriod.DAILY, UpdatePeriod.MONTHLY
START, END = pendulum.datetime(2015, 1, 1), pendulum.datetime(2016, 1, 1)


def best_of(repeat: int, fn: Callable[[], T]) -> tuple[float, T]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            result = fn()
            best = min(best, time.perf_counter() - t0)
        finally:
            gc.enable()
    assert result is not None
    return best, result


def build(url: str, seed: int) -> tuple[Catalog, dict[str, int]]:
    rng = random.Random(seed)
    catalog = Catalog(url)
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"],
                           producers={"HOURLY": Producer("events_hourly_ingest")})
    catalog.create_storage("events", "rollup", ["DAILY", "MONTHLY"], priority=10,
                           producers={"DAILY": Producer("events_daily_rollup"),
                                      "MONTHLY": Producer("events_monthly_rollup")})
    n_hours, n_days = 8760, 365
    hour_holes = set(rng.sample(range(n_hours), n_hours // 1000))
    day_holes = set(rng.sample(range(n_days), 10))
    month_holes = set(rng.sample(range(12), 2))
    catalog.register("raw", "HOURLY", [{"dt": H.format(START.add(hours=h))}
                                       for h in range(n_hours) if h not in hour_holes])
    catalog.register("rollup", "DAILY", [{"dt": D.format(START.add(days=d))}
                                         for d in range(n_days) if d not in day_holes])
    catalog.register("rollup", "MONTHLY", [{"dt": M.format(START.add(months=m))}
                                           for m in range(12) if m not in month_holes])
    return catalog, {"hour holes": len(hour_holes), "day holes": len(day_holes),
                     "month holes": len(month_holes)}


def naive(catalog: Catalog) -> int:
    """Ask the store about every partition of every period, then count the runs to plan with
    the same coarsest-first rule (months, then the days of missing months, then hours)."""
    def exists(storage: str, period: UpdatePeriod, value: str) -> bool:
        return catalog.get_partition(storage, period, {"dt": value}) is not None

    hours = {H.format(START.add(hours=h)) for h in range(8760)
             if exists("raw", H, H.format(START.add(hours=h)))}
    days = {D.format(START.add(days=d)) for d in range(365)
            if exists("rollup", D, D.format(START.add(days=d)))}
    runs = 0
    for m in range(12):
        month = START.add(months=m)
        if exists("rollup", M, M.format(month)):
            continue
        runs += 1
        for d in range(month.days_in_month):
            day = month.add(days=d)
            if D.format(day) not in days:
                runs += 1 + sum(H.format(day.add(hours=h)) not in hours for h in range(24))
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2015)
    parser.add_argument("--write", metavar="PATH")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        catalog, holes = build(f"sqlite:///{tmp}/bench.db", args.seed)
        cold_catalog = Catalog(f"sqlite:///{tmp}/bench.db")
        t_cold, _ = best_of(1, lambda: plan(cold_catalog, "events", START, END))
        t_plan, result = best_of(args.repeat, lambda: plan(catalog, "events", START, END))
        before = catalog.stats.round_trips
        plan(catalog, "events", START, END)
        trips = catalog.stats.round_trips - before
        t_naive, naive_runs = best_of(max(1, args.repeat // 2), lambda: naive(catalog))
        catalog.close()
        cold_catalog.close()
    counts = result.counts()
    command = "python benchmarks/bench_plan.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [
        "## Plan (`benchmarks/bench_plan.py`)", "",
        f"Command: `{command.strip()}`", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; SQLite catalog. One year of the example pipeline: "
        f"HOURLY with {holes['hour holes']} holes, DAILY with {holes['day holes']}, MONTHLY "
        f"with {holes['month holes']}, a producer for each period. The naive planner asks the "
        "store about each of the 9,137 partitions (one get each), then plans with the same rule.",
        "",
        "| planner | time | store round trips | runs planned |",
        "| --- | ---: | ---: | ---: |",
        f"| `plan`, warm cache (best of {args.repeat}) | {t_plan * 1000:.1f} ms | {trips} | "
        f"{len(result.runs)} ({counts['gap']} gap, {counts['input']} input) |",
        f"| `plan`, cold catalog (first call) | {t_cold * 1000:.1f} ms | - | "
        f"{len(result.runs)} |",
        f"| naive per-partition gets | {t_naive * 1000:.1f} ms | 9,137 | {naive_runs} |",
        "",
        f"`plan` is {t_naive / t_plan:,.0f}x faster than the naive planner warm, "
        f"{t_naive / t_cold:,.0f}x cold; the cover after the runs has "
        f"{len(result.cover_after)} partitions and the range is "
        f"{'coverable' if result.coverable_after() else 'not coverable'}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        with open(args.write, "w") as out:
            out.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
