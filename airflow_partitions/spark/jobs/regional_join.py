"""The pruning example's jobs: write regional events and a dimension, and join them.

``setup`` writes the ``regions_of_interest`` dimension (if absent) and the events of every hour
of ``[start, end)`` split by region, one Parquet directory per (hour, region) partition::

    spark-submit regional_join.py setup --dimension PATH --regions us-east,eu-west
        --start 2024-01-01T00:00:00+00:00 --end 2024-01-01T06:00:00+00:00
        --location-template '/data/.../dt={dt}/region={region}'

``join`` reads exactly the manifest's partitions, joins them with the dimension on the region
key, and writes per-region totals as JSON with the files Spark read (``inputFiles()``), so a
test or a benchmark can prove which partitions were touched::

    spark-submit regional_join.py join --partitions-manifest PATH --dimension PATH
        --output report.json [--how inner|left_semi] [--key region] [--dimension-key region]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict
from urllib.parse import urlparse

from airflow_partitions.spark.local_rows import frame_of_rows
from airflow_partitions.spark.manifest import MANIFEST_ARG, Manifest, load_manifest
from airflow_partitions.spark.reader import manifest_location, read_manifest
from airflow_partitions.spark.synthetic import REGIONS, events_for_hour, hours

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class Totals(TypedDict):
    events: int
    amount_cents: int


class JoinReport(TypedDict):
    """What ``join_totals`` reports (the job's ``--output`` JSON)."""

    fact: str
    start: str
    end: str
    partitions_read: int
    totals: dict[str, Totals]
    input_files: list[str]
    bytes_read: NotRequired[int | None]
    total: NotRequired[Totals]

EVENT_SCHEMA = "event_time timestamp, user_id long, amount_cents long"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="regional_join", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    setup = sub.add_parser("setup", help="write the dimension (if absent) and regional events")
    setup.add_argument("--dimension", required=True, help="Parquet path of the dimension")
    setup.add_argument("--regions", required=True, help="comma-separated regions it selects")
    setup.add_argument("--start", required=True, help="first hour (ISO-8601 with offset)")
    setup.add_argument("--end", required=True, help="end hour, excluded")
    setup.add_argument("--location-template", required=True,
                       help="a partition's directory; {dt} (HOURLY value) and {region}")
    setup.add_argument("--seed", type=int, default=7, help="synthetic data seed")
    join = sub.add_parser("join", help="join the manifest's events with the dimension")
    join.add_argument(MANIFEST_ARG, dest="manifest",
                      help="default: the spark conf spark.airflow_partitions.manifest")
    join.add_argument("--dimension", required=True, help="Parquet path (or table) to join")
    join.add_argument("--output", required=True, help="the JSON report to write")
    join.add_argument("--how", choices=["inner", "left_semi"], default="inner")
    join.add_argument("--key", default="region", help="the events' join column")
    join.add_argument("--dimension-key", default="region", help="the dimension's join column")
    return parser.parse_args(argv)


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def write_dimension(spark: SparkSession, path: str, regions: Sequence[str]) -> bool:
    """Write the dimension unless it exists (a user may have edited it); True if written."""
    if os.path.exists(path):
        return False
    rows = [(r, f"region {r}") for r in regions]
    frame_of_rows(spark, rows, "region string, label string").coalesce(1) \
        .write.mode("errorifexists").parquet(path)
    return True


def write_events(spark: SparkSession, start: dt.datetime, end: dt.datetime, template: str,
                 seed: int = 7) -> list[dict[str, str]]:
    """Every (hour, region) partition of ``[start, end)``; returns their values."""
    # Here, not at the top: ``airflow_partitions.spark`` exports ``join_totals``, and a Spark
    # executor imports that package without the core's dependencies (pendulum).
    from airflow_partitions.periods import UpdatePeriod

    hourly = UpdatePeriod.HOURLY
    written = []
    for hour in hours(start, end):
        value = hourly.format(hour, "UTC")
        events = events_for_hour(hour, seed)
        for region in REGIONS:
            rows = [(e.event_time, e.user_id, e.amount_cents) for e in events
                    if e.region == region]
            frame = frame_of_rows(spark, rows, EVENT_SCHEMA)
            frame.coalesce(1).write.mode("overwrite").parquet(
                template.format(dt=value, region=region))
            written.append({"dt": value, "region": region})
    return written


def join_totals(spark: SparkSession, manifest: Manifest, dimension: str, how: str = "inner",
                key: str = "region", dimension_key: str = "region") -> JoinReport:
    """Totals per region of the events that join the dimension, and the files read."""
    from pyspark.sql import functions as F

    report: JoinReport = {
        "fact": manifest.fact, "start": manifest.start, "end": manifest.end,
        "partitions_read": len(manifest.partitions), "totals": {}, "input_files": [],
    }
    if manifest.partitions:
        events = read_manifest(spark, manifest)
        if "/" in dimension or ":" in dimension:
            dim = spark.read.parquet(dimension)
        else:
            dim = spark.table(dimension)
        dim = dim.select(F.col(dimension_key).alias("_dim_key"))
        joined = events.join(dim, events[key] == dim["_dim_key"], how)
        rows = (joined.groupBy(key)
                .agg(F.count(F.lit(1)).alias("events"),
                     F.sum("amount_cents").cast("long").alias("amount_cents"))
                .collect())
        report["totals"] = {r[key]: {"events": int(r["events"]),
                                     "amount_cents": int(r["amount_cents"] or 0)}
                            for r in sorted(rows, key=lambda r: r[key])}
        report["input_files"] = sorted(events.inputFiles())
    report["bytes_read"] = _local_bytes(report["input_files"])
    report["total"] = {
        "events": sum(t["events"] for t in report["totals"].values()),
        "amount_cents": sum(t["amount_cents"] for t in report["totals"].values()),
    }
    return report


def _local_bytes(files: Sequence[str]) -> int | None:
    """Sizes of local input files (``None`` when any is remote: a cluster's storage)."""
    total = 0
    for uri in files:
        parsed = urlparse(uri)
        if parsed.scheme not in ("", "file"):
            return None
        total += os.path.getsize(parsed.path)
    return total


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName(f"regional_join {args.command}").getOrCreate()
    try:
        if args.command == "setup":
            regions = [r.strip() for r in args.regions.split(",") if r.strip()]
            made = write_dimension(spark, args.dimension, regions)
            parts = write_events(spark, _instant(args.start), _instant(args.end),
                                 args.location_template, args.seed)
            print(f"regional_join setup: dimension {'written' if made else 'kept'}, "
                  f"{len(parts)} partitions written", flush=True)
        else:
            manifest = load_manifest(manifest_location(spark, args.manifest)[0])
            report = join_totals(spark, manifest, args.dimension, args.how, args.key,
                                 args.dimension_key)
            folder = os.path.dirname(os.path.abspath(args.output))
            os.makedirs(folder, exist_ok=True)
            with open(args.output, "w", encoding="utf-8") as out:
                json.dump(report, out, indent=1)
            print(f"regional_join: {report['total']['events']} events from "
                  f"{report['partitions_read']} partitions -> {args.output}", flush=True)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
