"""Count the rows of every partition a manifest lists; write them as JSON.

    spark-submit count_rows.py --partitions-manifest PATH --output OUT.json [--format parquet]

(or the manifest as the spark conf ``spark.airflow_partitions.manifest``.)

The output (written by the driver, so a local path) is::

    {"fact", "start", "end", "total": N,
     "partitions": [{"storage", "period", "value", "values", "location", "rows"}, ...]}

in manifest order, including partitions with no rows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from airflow_partitions.spark.manifest import MANIFEST_ARG, load_manifest
from airflow_partitions.spark.reader import manifest_location, read_manifest


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="count_rows", description=__doc__.splitlines()[0])
    parser.add_argument(MANIFEST_ARG, dest="manifest")
    parser.add_argument("--output", required=True)
    parser.add_argument("--format", default="parquet")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("count_rows").getOrCreate()
    try:
        manifest = load_manifest(manifest_location(spark, args.manifest)[0])
        df = read_manifest(spark, manifest, args.format, include_source=True)
        rows = df.groupBy("_location").count().collect()
        counts = {row["_location"]: int(row["count"]) for row in rows}
    finally:
        spark.stop()
    rows_of = [counts.get(p.location, 0) for p in manifest.partitions]
    partitions = [{**p.to_json(), "rows": n} for p, n in zip(manifest.partitions, rows_of,
                                                              strict=True)]
    result = {
        "fact": manifest.fact,
        "start": manifest.start,
        "end": manifest.end,
        "total": sum(rows_of),
        "partitions": partitions,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
