"""What a verified cover costs when it is asked again, after a write, and from scratch.

A verified cover checks its runs' rows at every call (invariant 2). On SQLite the rows it
checked are kept with the change feed's position; asked again, it reads only the rows the
feed names since, and what a new cover adds (docs/cover.md, "A repeated cover"). A sensor
asks again after each registration, so what matters is the cost after a write, not only the
warm repeat. Cases, on SQLite, each timed in the same run (medians of ``--repeat``, CPU time
of this process, GC off); every write is made by another connection (a second catalog on the
same file, as another process would):

* **ten years of hours** (87,600 hours, 0.1% holes): the same cover again (warm); after one
  hour is registered at the end of the range (an append: the last run grows by one); after a
  hole in the middle is filled (an insert: two runs become one); every row checked again (the
  memos emptied);
* **a month of 100 regions** (a declared dimension, 74,400 rows): the same, the insert being
  one region's late hour; and the plain alternative, an ``os.path.exists`` loop over the
  74,400 hour directories (made on disk for the run).

The computation alone (``verify=False``, memos emptied) is the baseline of each case.
``--write PATH`` writes the markdown fragment (docs/benchmarks-verify_memo.md).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pendulum

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.kv import forget_all
from airflow_partitions.periods import UpdatePeriod

H = UpdatePeriod.HOURLY
Case = tuple[str, list[tuple[str, float]]]


def timed(repeat: int, prepare: Callable[[], object], call: Callable[[], object]) -> float:
    """Median CPU seconds of ``call`` over ``repeat`` runs, ``prepare`` (untimed) before each."""
    times = []
    for _ in range(repeat):
        prepare()
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            call()
            times.append(time.process_time() - start)
        finally:
            gc.enable()
    return statistics.median(times)


def hour(start: pendulum.DateTime, i: int) -> str:
    return H.format_ordinal(H.ordinal(start) + i, "UTC")


def case(catalog: Catalog, writer: Catalog, fact: str, storage: str, start: pendulum.DateTime,
         end: pendulum.DateTime, append: list[dict[str, str]], insert: list[dict[str, str]],
         repeat: int) -> list[tuple[str, float]]:
    """The five timings of one dataset: writes (by ``writer``, another connection) are undone
    between runs (dropped again)."""
    def cover() -> object:
        return catalog.cover(fact, start, end)

    def computed() -> object:
        forget_all()
        return catalog.cover(fact, start, end, verify=False)

    def write_then(values: list[dict[str, str]]) -> Callable[[], object]:
        def prepare() -> object:
            writer.drop(storage, "HOURLY", values)
            cover()  # memos warm for the state before the write
            return writer.register(storage, "HOURLY", values)
        return prepare

    cover()
    out = [("computation alone (`verify=False`)", timed(repeat, lambda: None, computed))]
    out.append(("the same cover again (warm)", timed(repeat, cover, cover)))
    out.append(("after one row appended at the end", timed(repeat, write_then(append), cover)))
    out.append(("after one row inserted in the middle", timed(repeat, write_then(insert), cover)))
    out.append(("every row checked again (memos emptied)", timed(repeat, forget_all, cover)))
    return out


def ten_years(catalog: Catalog, writer: Catalog, repeat: int) -> Case:
    start = pendulum.datetime(2015, 1, 1)
    end = start.add(years=10)
    n = H.ordinal(end) - H.ordinal(start)
    holes = set(range(500, n, 1000))
    last = n - 1
    holes.add(last)  # the append fills it
    catalog.create_fact("ten")
    catalog.create_storage("ten", "ten_raw", ["HOURLY"])
    catalog.register("ten_raw", "HOURLY", [{"dt": hour(start, i)} for i in range(n)
                                           if i not in holes])
    middle = sorted(holes)[len(holes) // 2]
    rows = n - len(holes)
    return (f"ten years of hours ({rows:,} rows)",
            case(catalog, writer, "ten", "ten_raw", start, end, [{"dt": hour(start, last)}],
                 [{"dt": hour(start, middle)}], repeat))


def exists_loop(root: Path, hours: list[str], regions: list[str], repeat: int) -> float:
    """Median CPU seconds of ``os.path.exists`` over every hour directory of every region
    (made first): what a plain sensor over the month's files would do."""
    paths = [str(root / f"dt={h}" / f"region={r}") for h in hours for r in regions]
    for path in paths:
        os.makedirs(path, exist_ok=True)
    return timed(repeat, lambda: None, lambda: all(map(os.path.exists, paths)))


def regions_month(catalog: Catalog, writer: Catalog, repeat: int) -> Case:
    start = pendulum.datetime(2015, 1, 1)
    end = start.add(months=1)
    regions = [f"r{i:03d}" for i in range(100)]
    catalog.create_fact("reg")
    catalog.create_storage("reg", "reg_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=[f"region={','.join(regions)}"])
    hours = [hour(start, i) for i in range(744)]
    late = {(hours[-1], regions[0]), (hours[372], regions[50])}
    catalog.register("reg_raw", "HOURLY", [{"dt": h, "region": r} for h in hours
                                           for r in regions if (h, r) not in late])
    rows = case(catalog, writer, "reg", "reg_raw", start, end,
                [{"dt": hours[-1], "region": regions[0]}],
                [{"dt": hours[372], "region": regions[50]}], repeat)
    loop = exists_loop(Path(catalog.data_root) / "exists", hours, regions, repeat)
    rows.append(("`os.path.exists` over the 74,400 hour directories", loop))
    return (f"a month of 100 regions ({744 * 100 - len(late):,} rows)", rows)


READING = (
    "Reading: a cover asked again checks its rows as they are now (invariant 2) but reads only "
    "what the change feed names since its last read (SQLite triggers record every write, by "
    "any connection or process): the warm call reads no row; after one registration it reads "
    "that hour's rows and takes again only the runs they change. With ten years of hours, an "
    "hour appended or a hole filled reads that hour and repacks one chunk of 4,096 rows. With "
    "100 regions, one region's late hour reads that hour's 100 rows and takes one region's run "
    "again; what is left is the cover's computation from the timelines. Every row checked "
    "again is the first question's cost (what HBase pays at every call: it keeps no feed)."
)


def render(cases: list[Case], repeat: int) -> str:
    argv = " ".join(shlex.quote(a) for a in sys.argv[1:])
    load = os.getloadavg()[0]
    lines = [
        "## A verified cover asked again (`benchmarks/verify_memo.py`)", "",
        f"Command: `python benchmarks/verify_memo.py {argv}`", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, SQLite; load average {load:.1f} at the end. CPU time, "
        f"medians of {repeat}, GC off; every ratio is against the computation alone in the "
        "same run. A write (by another connection) is undone (dropped again) and the cover "
        "asked once before each timed call, so each call is the first after its write.", "",
        "| case | call | CPU time | ÷ computation |", "| --- | --- | ---: | ---: |",
    ]
    for name, rows in cases:
        base = rows[0][1]
        lines += [f"| {name} | {label} | {t * 1e3:.1f} ms | {t / base:.1f}x |"
                  for label, t in rows]
    regions = dict(cases[-1][1])
    loop = regions["`os.path.exists` over the 74,400 hour directories"]
    after = regions["after one row appended at the end"]
    lines += ["", f"A month of 100 regions after one registration: {after * 1e3:.1f} ms, "
              f"{loop / after:.0f}x ahead of the `os.path.exists` loop ({loop * 1e3:.0f} ms)."]
    lines += ["", READING]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Catalog(f"sqlite:///{tmp}/bench.db", data_root=tmp, cache=TimelineCache())
        writer = Catalog(f"sqlite:///{tmp}/bench.db", data_root=tmp, cache=TimelineCache())
        cases = [ten_years(catalog, writer, args.repeat),
                 regions_month(catalog, writer, args.repeat)]
        writer.close()
        catalog.close()
    text = render(cases, args.repeat)
    print(text)
    if args.write:
        args.write.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
