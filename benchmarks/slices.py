"""Benchmark ``compute_slice_cover``: a warm one-month hourly cover at 1, 10, 100, 1,000 slices.

Each slice is one region with its own HOURLY timeline (a ``(dt, region)`` storage); the
timelines are built before timing (warm: what a long-lived process with the timeline cache
pays). Workloads:

1. **rollup lags**: every region has every hour; a global DAILY rollup (no region column) has
   all days but the last two (the rollup runs late);
2. **one late hour each**: no rollup, and region ``i`` misses hour ``i mod 744`` of the month
   (up to 744 slices answer differently: no two of them share a class, each has a missing
   range);
3. **regions only**: every region has every hour, no rollup.

Ratios are against 1 slice of the same workload, measured in the same run. Timings are the
median of ``--repeat`` runs (``time.perf_counter``), GC off. ``--write PATH`` writes the
markdown fragment (docs/benchmarks-slices.md).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pendulum

from airflow_partitions.cover import (
    CoverRequest,
    RequiredSlice,
    SliceCover,
    SliceSource,
    compute_slice_cover,
    slice_of,
    to_us,
)
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import new_timeline

T = TypeVar("T")

START = pendulum.datetime(2015, 1, 1)
END = pendulum.datetime(2015, 2, 1)
SIZES = (1, 10, 100, 1000)
H, D = UpdatePeriod.HOURLY, UpdatePeriod.DAILY


def median_of(repeat: int, fn: Callable[[], T],
              setup: Callable[[], object] | None = None) -> tuple[float, T]:
    """Median wall time of ``repeat`` runs (GC off), and the last result (also used by
    ``slice_timelines.py``); ``setup`` runs before each, untimed."""
    times = []
    result = None
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
    assert result is not None
    return statistics.median(times), result


def workload(name: str, n: int) -> tuple[list[SliceSource], list[RequiredSlice]]:
    """The sources and required slices of one workload with ``n`` regions."""
    h0, h1 = H.ordinal(START), H.ordinal(END)
    d0, d1 = D.ordinal(START), D.ordinal(END)
    sources = []
    required = []
    for i in range(n):
        region = slice_of({"region": f"r{i:04d}"})
        hourly = new_timeline("EndsAndHoles", H)
        ranges = [(h0, h1)]
        if name == "one late hour each":
            late = h0 + i % (h1 - h0)
            ranges = [(h0, late), (late + 1, h1)]
        hourly.add_ordinal_ranges(ranges)
        sources.append(SliceSource("events_raw", 0, H, hourly, region))
        required.append(RequiredSlice(region, ((to_us(START), to_us(END)),)))
    if name == "rollup lags":
        daily = new_timeline("EndsAndHoles", D)
        daily.add_ordinal_ranges([(d0, d1 - 2)])
        sources.append(SliceSource("events_rollup", 10, D, daily))
    return sources, required


WORKLOADS = ("rollup lags", "one late hour each", "regions only")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per measure (median)")
    parser.add_argument("--write", type=Path, help="write the markdown fragment to this path")
    args = parser.parse_args(argv)
    command = "python benchmarks/slices.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    print(command)
    request = CoverRequest(None, START, END)
    rows = []
    for name in WORKLOADS:
        base = None
        for n in SIZES:
            sources, required = workload(name, n)
            compute_slice_cover(sources, required, request)  # warm
            seconds, cover = median_of(
                args.repeat, lambda s=sources, r=required: compute_slice_cover(s, r, request))
            base = seconds if base is None else base
            rows.append((name, n, seconds, seconds / base, cover))
            print(f"{name:>20} {n:>5} slices: {seconds * 1e3:8.2f} ms "
                  f"({seconds / base:5.1f}x), {cover.partition_count} partitions")
    text = render(command, rows)
    if args.write:
        args.write.write_text(text)
        print(f"wrote {args.write}")
    return 0


def render(command: str, rows: list[tuple[str, int, float, float, SliceCover]]) -> str:
    lines = [
        "## Slice covers (`benchmarks/slices.py`)",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared), "
        f"Python {platform.python_version()}. One month (744 hours) in UTC, warm timelines "
        "(EndsAndHoles), median of the repeats, GC off; the ratio is against 1 slice of the "
        "same workload in the same run. Goal: no faster than linear growth, and 100 slices "
        "within 20x one slice.",
        "",
        "| workload | slices | `compute_slice_cover` | ÷ 1 slice | distinct partitions | "
        "missing ranges | proven minimal |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, n, seconds, ratio, cover in rows:
        lines.append(f"| {name} | {n:,} | {seconds * 1e3:.2f} ms | {ratio:.1f}x | "
                     f"{cover.partition_count:,} | {len(cover.missing):,} | "
                     f"{'yes' if cover.proven_minimal else 'no'} |")
    lines += [
        "",
        "Workloads: *rollup lags*: every region has every hour, a global DAILY rollup all days "
        "but the last two; *one late hour each*: no rollup, and region i misses hour i mod 744 "
        "of the month (no two slices alike up to 744, each with a missing range); *regions "
        "only*: every hour of every region, no rollup.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
