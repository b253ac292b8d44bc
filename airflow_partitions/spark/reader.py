"""Read exactly the partitions a manifest lists, with their partition columns.

Each location is read directly (``spark.read.load(location)``), never a parent directory with a
filter, so no partition that the manifest does not list can leak in. Partition values are added
as literal string columns, and the per-location frames are combined with
``unionByName(allowMissingColumns=True)``, so storages with different columns combine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_partitions.spark.manifest import Manifest, ManifestPartition, load_manifest

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Columns added by ``read_manifest(..., include_source=True)``.
SOURCE_COLUMNS = ("_storage", "_period", "_location")


def _with_columns(df: DataFrame, part: ManifestPartition, include_source: bool) -> DataFrame:
    from pyspark.sql import functions as F

    columns: dict[str, Any] = {c: F.lit(v) for c, v in part.values.items()}
    if include_source:
        columns.update({
            "_storage": F.lit(part.storage),
            "_period": F.lit(part.period),
            "_location": F.lit(part.location),
        })
    return df.withColumns(columns)


def _union_all(frames: list[DataFrame]) -> DataFrame:
    """Pairwise (balanced) union by name: plan depth log2(n), not n."""
    while len(frames) > 1:
        paired = [
            frames[i].unionByName(frames[i + 1], allowMissingColumns=True)
            for i in range(0, len(frames) - 1, 2)
        ]
        if len(frames) % 2:
            paired.append(frames[-1])
        frames = paired
    return frames[0]


def read_manifest(
    spark: SparkSession,
    manifest: str | Manifest,
    format: str = "parquet",
    *,
    options: Mapping[str, str] | None = None,
    include_source: bool = False,
) -> DataFrame:
    """A DataFrame over exactly the manifest's locations, with the partition columns.

    :param manifest: a manifest path (``--partitions-manifest``) or a loaded :class:`Manifest`.
    :param format: the data source format of every location (``parquet``, ``orc``, ``json``...).
    :param options: reader options applied to every location.
    :param include_source: also add ``_storage``, ``_period`` and ``_location`` columns.

    A partition column that the files also hold is replaced by the manifest's value. The
    residual filter (``manifest.residual``) is NOT applied: the job decides how to apply it.
    An empty manifest gives an empty DataFrame with the source columns only.
    """
    loaded = manifest if isinstance(manifest, Manifest) else load_manifest(manifest)
    frames = []
    for part in loaded.partitions:
        reader = spark.read.format(format)
        if options:
            reader = reader.options(**options)
        frames.append(_with_columns(reader.load(part.location), part, include_source))
    if not frames:
        from pyspark.sql.types import StringType, StructField, StructType

        names = SOURCE_COLUMNS if include_source else ()
        return spark.createDataFrame([], StructType([StructField(n, StringType()) for n in names]))
    return _union_all(frames)
