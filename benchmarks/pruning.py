"""Benchmark: our dynamic partition pruning vs Spark's own DPP vs no pruning, one session.

The fact has DAYS x STORES partitions (default 20 x 100 = 2,000) laid out Hive-style
(``root/dt=YYYY-MM-DD/store=N``) so that Spark can discover them as a partitioned table; the
dimension selects 1% of the store keys. Variants, on the same data in the same SparkSession:

1. **ours**: collect the dimension's keys, prune the catalog cover, read the manifest;
2. **spark-dpp**: ``spark.read.parquet(root)`` joined with the full dimension filtered to the
   same stores (``tier = 'gold'``): Spark needs a selective predicate on the small side;
3. **spark-dpp-unfiltered**: the same join with the pre-selected 1-row dimension, which has no
   predicate, so Spark's DPP does not fire (an honest note: that is the case measured here);
4. **no pruning**: the same join with DPP disabled.

Files and bytes come from Spark's scan metrics (``numFiles``, ``filesSize``, and for DPP
``staticFilesNum``: what planning listed before pruning). Wall time is per variant,
including reading the keys and the catalog for ours and the file listing for Spark's.

    python benchmarks/pruning.py [--days 20] [--stores 100] [--write docs/benchmarks-pruning.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.cover import CoverRequest
from airflow_partitions.pruning import JoinSpec, key_sets_from_json, prune
from airflow_partitions.spark import Source, build_manifest, collect, read_manifest

DAY0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=20, help="DAILY partitions per store")
    parser.add_argument("--stores", type=int, default=100, help="store key values")
    parser.add_argument("--selected", type=int, default=0,
                        help="stores the dimension selects (default 1%% of --stores, >= 1)")
    parser.add_argument("--rows", type=int, default=200, help="rows per partition")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per variant (median)")
    parser.add_argument("--master", default="local[1]", help="Spark master")
    parser.add_argument("--workdir", help="where data goes (default: a temp dir, removed)")
    parser.add_argument("--write", metavar="MD", help="also write the results as Markdown")
    return parser.parse_args(argv)


@dataclass
class Result:
    name: str
    partitions: int
    listed_files: int | None
    files: int
    bytes: int
    seconds: float
    total: int
    note: str = ""


def make_data(root: Path, days: int, stores: int, rows: int) -> list[dict[str, str]]:
    schema = pa.schema([("user_id", pa.int64()), ("amount", pa.int64())])
    values = []
    for d in range(days):
        day = (DAY0 + dt.timedelta(days=d)).strftime("%Y-%m-%d")
        for s in range(stores):
            folder = root / f"dt={day}" / f"store={s}"
            folder.mkdir(parents=True)
            base = (d * stores + s) * rows
            table = pa.table({"user_id": [(base + i) % 997 for i in range(rows)],
                              "amount": [(base + i) % 1000 for i in range(rows)]}, schema=schema)
            pq.write_table(table, folder / "part-0.parquet")
            values.append({"dt": day, "store": str(s)})
    return values


def scan_metrics(plan: Any, root: str) -> tuple[int, int, int | None]:
    """(files, bytes, files listed before pruning) over the fact's FileSourceScanExec nodes."""
    found = [0, 0, None]

    def walk(p: Any) -> None:
        cls = p.getClass().getSimpleName()
        if cls == "AdaptiveSparkPlanExec":
            return walk(p.finalPhysicalPlan())
        if cls.endswith("QueryStageExec"):
            return walk(p.plan())
        if cls == "ReusedExchangeExec":
            return walk(p.child())
        if cls == "FileSourceScanExec" and root in p.relation().location().rootPaths().toString():
            metrics = {}
            it = p.metrics().iterator()
            while it.hasNext():
                kv = it.next()
                metrics[kv._1()] = kv._2().value()
            found[0] += metrics.get("numFiles", 0)
            found[1] += metrics.get("filesSize", 0)
            if "staticFilesNum" in metrics:
                found[2] = (found[2] or 0) + metrics["staticFilesNum"]
        children = p.children()
        for i in range(children.size()):
            walk(children.apply(i))
        subs = p.subqueries()
        for i in range(subs.size()):
            walk(subs.apply(i))
        return None

    walk(plan)
    return found[0], found[1], found[2]


def timed(name: str, repeat: int, run: Callable[[], tuple[Any, int, str]], root: str) -> Result:
    """Run a variant ``repeat`` times; metrics from the last run, median wall time."""
    times = []
    frame, partitions, note = None, 0, ""
    for _ in range(repeat):
        start = time.perf_counter()
        frame, partitions, note = run()
        total = int(frame.collect()[0][0] or 0)
        times.append(time.perf_counter() - start)
    assert frame is not None
    files, size, listed = scan_metrics(frame._jdf.queryExecution().executedPlan(), root)
    return Result(name, partitions, listed, files, size, statistics.median(times), total, note)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    selected = args.selected or max(1, args.stores // 100)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="pruning-bench-"))
    root = work / "fact"
    if root.exists():
        shutil.rmtree(root)
    t = time.perf_counter()
    values = make_data(root, args.days, args.stores, args.rows)
    gold = set(range(0, args.stores, max(1, args.stores // selected)))
    gold = set(sorted(gold)[:selected])
    pq.write_table(pa.table({"store": pa.array(sorted(gold), pa.int32())}),
                   str(work / "dim_selected.parquet"))
    pq.write_table(pa.table({"store": pa.array(range(args.stores), pa.int32()),
                             "tier": ["gold" if s in gold else "basic"
                                      for s in range(args.stores)]}),
                   str(work / "dim_all.parquet"))
    print(f"data: {len(values)} partitions in {time.perf_counter() - t:.1f}s under {work}",
          flush=True)

    db = work / "catalog.db"
    if db.exists():
        db.unlink()
    catalog = Catalog(f"sqlite:///{db}", data_root=str(work), cache=TimelineCache())
    catalog.create_fact("sales", ["dt"])
    catalog.create_storage("sales", "sales_daily", ["DAILY"], columns=["dt", "store:int"],
                           location=f"{root}/dt={{dt}}/store={{store}}")
    catalog.register("sales_daily", "DAILY", values)

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (SparkSession.builder.master(args.master).appName("pruning-bench")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    end = DAY0 + dt.timedelta(days=args.days)
    record: dict[str, Any] = {}

    def ours() -> tuple[Any, int, str]:
        source = Source(str(work / "dim_selected.parquet"), ["store"], "dim")
        keys = key_sets_from_json(collect(spark, [source]))
        verified = catalog.cover_with_partitions(CoverRequest.of("sales", DAY0, end))
        result = prune(catalog, JoinSpec.of("dim", "store"), keys, cover=verified)
        record.update(result.record.to_json())
        manifest = build_manifest("sales", DAY0.isoformat(), end.isoformat(),
                                  (p.to_json() for p in result.partitions), "dt")
        fact = read_manifest(spark, manifest).withColumn("store", F.col("store").cast("int"))
        dim = spark.read.parquet(str(work / "dim_selected.parquet"))
        return (fact.join(dim, "store").agg(F.sum("amount")), len(manifest.partitions),
                "catalog IN-set query on the cover")

    def spark_join(dpp: bool, dim_name: str, filtered: bool) -> Callable[[], tuple[Any, int,
                                                                                    str]]:
        def run() -> tuple[Any, int, str]:
            spark.conf.set("spark.sql.optimizer.dynamicPartitionPruning.enabled", str(dpp).lower())
            fact = spark.read.parquet(str(root))
            dim = spark.read.parquet(str(work / dim_name))
            if filtered:
                dim = dim.where(F.col("tier") == "gold").select("store")
            return fact.join(dim, "store").agg(F.sum("amount")), 0, ""
        return run

    timed("warm-up", 1, spark_join(False, "dim_selected.parquet", False), str(root))
    results = [
        timed("ours (pruned manifest)", args.repeat, ours, str(root)),
        timed("Spark DPP (filtered dimension)", args.repeat,
              spark_join(True, "dim_all.parquet", True), str(root)),
        timed("Spark DPP (pre-selected dimension)", args.repeat,
              spark_join(True, "dim_selected.parquet", False), str(root)),
        timed("no pruning", args.repeat, spark_join(False, "dim_selected.parquet", False),
              str(root)),
    ]
    spark.stop()
    catalog.close()
    totals = {r.total for r in results}
    assert len(totals) == 1, f"variants disagree: {[(r.name, r.total) for r in results]}"
    for r in results[1:]:
        r.partitions = r.files  # one file per partition in this layout
        if r.listed_files is None:  # without DPP, Spark reads every file it listed
            r.listed_files = r.files
    table = render(results, args, len(values), selected, record)
    print(table)
    if args.write:
        Path(args.write).write_text(table + "\n")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def render(results: list[Result], args: argparse.Namespace, partitions: int, selected: int,
           record: dict[str, Any]) -> str:
    base = results[-1]
    query = record.get("storages", [{}])[0].get("query") or {}
    lines = [
        "# Benchmark: dynamic partition pruning",
        "",
        f"`python benchmarks/pruning.py --days {args.days} --stores {args.stores}` "
        f"({partitions} partitions, {args.rows} rows each; the dimension selects {selected} "
        f"of {args.stores} stores; Spark `{args.master}`, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s); median of {args.repeat} run(s) after one warm-up).",
        "",
        "| variant | partitions read | files listed at planning | files read | bytes read "
        "| wall s | bytes vs no pruning | time vs no pruning |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        listed = "-" if r.listed_files is None else str(r.listed_files)
        lines.append(
            f"| {r.name} | {r.partitions} | {listed} | {r.files} | {r.bytes:,} | "
            f"{r.seconds:.2f} | {r.bytes / base.bytes:.3f} | {r.seconds / base.seconds:.2f} |")
    lines += [
        "",
        f"All variants return the same total. Ours asked the catalog with strategy "
        f"`{query.get('strategy')}`: {query.get('scans')} scan(s), {query.get('gets')} get(s), "
        f"{query.get('rows_fetched')} row(s) fetched for {record.get('partitions_after')} "
        f"kept of {record.get('partitions_before')}; the job never lists the other partitions.",
        "",
        "Notes:",
        "- Spark's DPP lists every partition when the table is opened (`spark.read.parquet`"
        " builds an in-memory file index of all directories: *files listed at planning*) and "
        "prunes at execution, from the broadcast of the dimension.",
        "- Spark's DPP fires only when the small side carries a selective predicate "
        "(`tier = 'gold'`); joined with an already-selected dimension (no predicate) it reads "
        "everything. Our pruning uses the small table's values whatever produced them.",
        "- Ours reads exactly the pruned partitions' directories, one scan over all of them "
        "(`read_manifest`); it wins by never touching the rest.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
