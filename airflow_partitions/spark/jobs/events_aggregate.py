"""Aggregate events per region from exactly the partitions a manifest lists, whatever the mix.

Raw HOURLY partitions hold one row per event; rollup partitions (DAILY, MONTHLY) hold one row
per region with ``events`` and ``amount_cents``. Both are read through the manifest and summed
the same way (a raw row counts as one event), so a rollup of rollups equals the raw totals.

    spark-submit events_aggregate.py --partitions-manifest PATH --output PATH [--format json]
    spark-submit --conf spark.airflow_partitions.manifest=PATH events_aggregate.py --output PATH

``parquet`` writes the rollup partition (region, events, amount_cents), overwriting it so a
re-run is idempotent; ``json`` writes a report: totals per region and overall, and how many
partitions of each period were read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict

from airflow_partitions.spark.manifest import MANIFEST_ARG, MANIFEST_CONF, Manifest, load_manifest
from airflow_partitions.spark.reader import manifest_location, read_manifest
from airflow_partitions.spark.task_hold import HOLD_CONF, held

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession


class Totals(TypedDict):
    events: int
    amount_cents: int


class Report(TypedDict):
    """The JSON report of an aggregation (``--format json``)."""

    fact: str
    start: str
    end: str
    partitions_read: dict[str, int]
    totals: dict[str, Totals]
    total: Totals


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="events_aggregate",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument(MANIFEST_ARG, dest="manifest",
                        help="the partitions manifest written by CoveredSparkSubmitOperator "
                             f"(default: the spark conf {MANIFEST_CONF})")
    parser.add_argument("--output", required=True, help="the rollup location or report file")
    parser.add_argument("--format", choices=["parquet", "json"], default="parquet")
    return parser.parse_args(argv)


def aggregate(spark: SparkSession, manifest: Manifest) -> DataFrame:
    """(region, events, amount_cents) over the manifest's partitions."""
    from pyspark.sql import functions as F

    frame = read_manifest(spark, manifest)
    hold = spark.conf.get(HOLD_CONF, None)
    if hold:  # the cluster test's seam: each reading task waits to be released
        frame = held(spark, frame, hold)
    if "events" not in frame.columns:
        frame = frame.withColumn("events", F.lit(None).cast("long"))
    return (
        frame.groupBy("region")
        .agg(F.sum(F.coalesce(F.col("events"), F.lit(1))).cast("long").alias("events"),
             F.sum("amount_cents").cast("long").alias("amount_cents"))
        .orderBy("region")
    )


def report(manifest: Manifest, rows: list[Row]) -> Report:
    """The JSON report of an aggregation."""
    totals: dict[str, Totals] = {
        r["region"]: {"events": int(r["events"]), "amount_cents": int(r["amount_cents"])}
        for r in rows}
    return {
        "fact": manifest.fact,
        "start": manifest.start,
        "end": manifest.end,
        "partitions_read": dict(Counter(p.period for p in manifest.partitions)),
        "totals": totals,
        "total": {
            "events": sum(t["events"] for t in totals.values()),
            "amount_cents": sum(t["amount_cents"] for t in totals.values()),
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("events_aggregate").getOrCreate()
    try:
        path, route = manifest_location(spark, args.manifest)
        manifest = load_manifest(path)
        print(f"events_aggregate: manifest {path} (by {route}), "
              f"{len(manifest.partitions)} partitions", flush=True)
        result = aggregate(spark, manifest)
        if args.format == "parquet":
            result.coalesce(1).write.mode("overwrite").parquet(args.output)
            print(f"events_aggregate: wrote the rollup of {len(manifest.partitions)} "
                  f"partitions to {args.output}", flush=True)
        else:
            doc = report(manifest, result.collect())
            os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
            with open(args.output, "w", encoding="utf-8") as out:
                json.dump(doc, out, indent=1)
            print(f"events_aggregate: report of {doc['total']['events']} events written to "
                  f"{args.output}", flush=True)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
