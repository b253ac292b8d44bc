"""Collect the DISTINCT values of small tables' join-key columns (partition pruning, step 1).

Only the key columns are read (``select`` before ``distinct``, so Parquet/ORC read just those
columns). Each column stops at ``--max-values + 1`` distinct values and is then flagged
``overflow``: the pruning bails out for it without Spark ever collecting a huge set.

    spark-submit collect_keys.py --source /data/dims/regions --column region \\
        [--source db.shops --column id --column kind] --output keys.json [--format parquet]

``--source`` starts a group; the ``--column``/``--name``/``--format`` after it belong to it. A
source is read as a table when ``--kind table`` is given or it has no ``/`` and ``:`` (e.g.
``db.shops``), else as files. The output (JSON, written by the driver, so on a cluster give a
path the operator can read, e.g. a shared mount) in the format of
:mod:`airflow_partitions.spark.key_file`, the contract with the pruning operator.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from airflow_partitions.spark.key_file import (
    ColumnEntryJson,
    KeyDocumentJson,
    column_entry,
    key_document,
    source_entry,
    write_key_file,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MAX_VALUES: Final = 10_000


@dataclass
class Source:
    """One small table to read, and the key columns wanted from it."""

    source: str
    columns: list[str] = field(default_factory=list)
    name: str | None = None
    format: str = "parquet"
    kind: str = "auto"

    @property
    def label(self) -> str:
        return self.name or self.source

    @property
    def is_table(self) -> bool:
        if self.kind != "auto":
            return self.kind == "table"
        return "/" not in self.source and ":" not in self.source


class _Group(argparse.Action):
    """``--source`` opens a group; the options after it fill that group in."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        groups: list[Source] = getattr(namespace, "sources", None) or []
        if self.dest == "source":
            groups.append(Source(str(values), format=namespace.default_format))
        elif not groups:
            parser.error(f"{option_string} must follow a --source")
        elif self.dest == "column":
            groups[-1].columns.append(str(values))
        else:
            setattr(groups[-1], self.dest, str(values))
        namespace.sources = groups


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="collect_keys", description=__doc__.split("\n\n")[0])
    parser.set_defaults(sources=[], default_format="parquet")
    parser.add_argument("--source", action=_Group, required=True,
                        help="a small table: a path (files) or a table name; repeatable")
    parser.add_argument("--column", action=_Group, help="a key column of the last --source")
    parser.add_argument("--name", action=_Group, help="the label of the last --source")
    parser.add_argument("--format", action=_Group,
                        help="the file format of the last --source (default parquet)")
    parser.add_argument("--kind", action=_Group, choices=["auto", "path", "table"],
                        help="read the last --source as files or as a table")
    parser.add_argument("--output", required=True, help="where to write the JSON key sets")
    parser.add_argument("--max-values", type=int, default=DEFAULT_MAX_VALUES,
                        help="stop a column after this many distinct values (then overflow)")
    args = parser.parse_args(argv)
    for source in args.sources:
        if not source.columns:
            parser.error(f"--source {source.source} has no --column")
    if args.max_values < 1:
        parser.error("--max-values must be at least 1")
    return args


def collect(spark: SparkSession, sources: Sequence[Source],
            max_values: int = DEFAULT_MAX_VALUES) -> KeyDocumentJson:
    """The key sets document (see the module docstring); each column is its own small job."""
    out = []
    for src in sources:
        if src.is_table:
            frame = spark.table(src.source)
        else:
            frame = spark.read.format(src.format).load(src.source)
        frame = frame.select(*src.columns)  # read only the key columns
        columns: dict[str, ColumnEntryJson] = {}
        for column in src.columns:
            distinct = frame.select(column).distinct().limit(max_values + 2)
            values = [row[0] for row in distinct.collect()]
            has_null = any(v is None for v in values)
            present = [v for v in values if v is not None]
            overflow = len(present) > max_values
            spark_type = frame.schema[column].dataType.simpleString()
            columns[column] = column_entry(spark_type, present, has_null=has_null,
                                           overflow=overflow)
        out.append(source_entry(src.label, columns, source=src.source,
                                kind="table" if src.is_table else "path",
                                file_format=src.format))
    return key_document(out, max_values)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("collect_keys").getOrCreate()
    try:
        doc = collect(spark, args.sources, args.max_values)
        write_key_file(doc, args.output)
        for src in doc["sources"]:
            sizes = ", ".join(
                f"{column}: {'overflow' if entry['overflow'] else len(entry['values'])}"
                for column, entry in src["columns"].items())
            print(f"collect_keys: {src['name']}: {sizes}", flush=True)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
