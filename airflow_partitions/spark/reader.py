"""Read exactly the partitions a manifest lists, with their partition columns.

A month of hourly data is 720 partitions, a year 8,760. Reading each location on its own
(``spark.read.load(location)``, unioned) costs one file-index listing, one schema inference and
one scan node per partition at planning time. So the reader makes one scan per *group* (a
storage: its partitions share a format and a schema): ``spark.read.load(*locations)``, which lists
exactly those locations (never a parent directory, so no unlisted partition can leak in). Each
row gets its partition's values back by its file: the scan's ``_metadata.file_path`` is joined to
a small broadcast table ``file -> values``, built on the driver from the files Spark listed. No
Spark partition discovery is involved, so any location template works, and the values are the
manifest's text, never Spark's inferred types.

A group falls back to the per-location union (the old reader, ``scan="per-location"``) when its
files cannot be attributed to locations exactly: globs in a location, nested locations, or files
Spark lists outside every location (a scheme-less location qualified elsewhere).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from airflow_partitions.errors import PartitionsError
from airflow_partitions.spark.local_rows import frame_of_rows
from airflow_partitions.spark.locations import (
    attribute,
    location_key,
    spark_path_forms,
    unattributable,
)
from airflow_partitions.spark.manifest import (
    MANIFEST_ARG,
    MANIFEST_CONF,
    Manifest,
    ManifestError,
    ManifestPartition,
    load_manifest,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

#: Columns added by ``read_manifest(..., include_source=True)``.
SOURCE_COLUMNS = ("_storage", "_period", "_location")
Scan = Literal["grouped", "per-location"]
_FILE: Final = "__ap_file"
_KEY: Final = "__ap_key"


class PartitionDataError(PartitionsError):
    """A listed partition's data cannot be read as it is; the message names the partitions."""


class MissingLocation(PartitionDataError):
    """A listed partition's location does not exist."""


class EmptyLocation(PartitionDataError):
    """A listed partition's location holds no data files (Spark cannot infer a schema)."""


def manifest_location(spark: SparkSession, given: str | None) -> tuple[str, str]:
    """The manifest's path and the route it came by: ``given`` (``--partitions-manifest``),
    else the spark conf ``spark.airflow_partitions.manifest`` (what ``manifest_conf=True``
    passes, e.g. on a cluster). One conf lookup on the driver; raises :class:`ManifestError`
    when neither names one."""
    if given:
        return given, MANIFEST_ARG
    path = spark.conf.get(MANIFEST_CONF, None)
    if not path:
        raise ManifestError(f"no manifest: pass {MANIFEST_ARG} PATH or the spark conf "
                            f"{MANIFEST_CONF}")
    return str(path), MANIFEST_CONF


def _describe(parts: Sequence[ManifestPartition], limit: int = 5) -> str:
    shown = "; ".join(f"{p.storage} {p.period} {p.value} at {p.location}" for p in parts[:limit])
    more = f" (and {len(parts) - limit} more)" if len(parts) > limit else ""
    return shown + more


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


def _load(spark: SparkSession, fmt: str, options: Mapping[str, str] | None,
          parts: Sequence[ManifestPartition], paths: Sequence[str]) -> DataFrame:
    """``spark.read.load(*paths)``, with Spark's path errors turned into typed ones."""
    from pyspark.errors import AnalysisException

    reader = spark.read.format(fmt)
    if options:
        reader = reader.options(**options)
    try:
        return reader.load(list(paths) if len(paths) > 1 else paths[0])
    except AnalysisException as exc:
        condition = exc.getCondition()
        if condition == "PATH_NOT_FOUND":
            wanted = location_key((exc.getMessageParameters() or {}).get("path", ""))
            named = [p for p in parts if location_key(p.location)[2] == wanted[2]] or list(parts)
            raise MissingLocation(
                f"a listed partition's location does not exist: {_describe(named)}") from exc
        if condition == "UNABLE_TO_INFER_SCHEMA":
            raise EmptyLocation(
                f"no data files to read ({fmt}) in: {_describe(parts)}") from exc
        raise


def _per_location(spark: SparkSession, fmt: str, options: Mapping[str, str] | None,
                  parts: Sequence[ManifestPartition], include_source: bool) -> DataFrame:
    """The old reader: one ``load`` per location, literal columns, unioned by name."""
    return _union_all([
        _with_columns(_load(spark, fmt, options, [p], [p.location]), p, include_source)
        for p in parts
    ])


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _single_scan(spark: SparkSession, fmt: str, options: Mapping[str, str] | None,
                 parts: Sequence[ManifestPartition], include_source: bool) -> DataFrame | None:
    """One scan over every location of ``parts``; None when files cannot be attributed, or the
    source lists no files or cannot load several paths at once (not a file source)."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    paths = list(dict.fromkeys(p.location for p in parts))
    if unattributable(paths):
        return None
    try:
        scan = _load(spark, fmt, options, parts, paths)
        file_path = scan.metadataColumn("_metadata")["file_path"]
    except AnalysisException:
        return None
    attribution = attribute(scan.inputFiles(), paths)
    if attribution.unmatched or not attribution.files:
        return None
    if empty := set(attribution.empty(paths)):
        raise EmptyLocation(f"no data files to read ({fmt}) in: "
                            f"{_describe([p for p in parts if p.location in empty])}")

    value_columns = list(dict.fromkeys(c for p in parts for c in p.values))
    added = value_columns + (list(SOURCE_COLUMNS) if include_source else [])
    by_location: dict[str, list[ManifestPartition]] = {}
    for part in parts:
        by_location.setdefault(part.location, []).append(part)
    rows: list[list[str | None]] = []
    for uri, location in attribution.files.items():
        for part in by_location[location]:
            row = [part.values.get(c) for c in value_columns]
            if include_source:
                row += [part.storage, part.period, part.location]
            rows.extend([form, *row] for form in spark_path_forms(uri))
    internal = [f"__ap_{i}" for i in range(len(added))]
    complete = {c for c in value_columns if all(c in p.values for p in parts)}
    schema = StructType([StructField(_KEY, StringType(), False)] + [
        StructField(name, StringType(), c not in complete and c not in SOURCE_COLUMNS)
        for name, c in zip(internal, added, strict=True)
    ])
    files = F.broadcast(frame_of_rows(spark, rows, schema))

    source = scan.select("*", file_path.alias(_FILE))
    joined = source.join(files, source[_FILE] == files[_KEY], "inner")
    lowered = {c.lower(): i for i, c in enumerate(added)}
    selected, replaced = [], set()
    for column in scan.columns:  # a partition column the files also hold takes its place
        i = lowered.get(column.lower())
        if i is None:
            selected.append(F.col(_quoted(column)))
        else:
            selected.append(F.col(internal[i]).alias(added[i]))
            replaced.add(i)
    selected += [F.col(internal[i]).alias(added[i]) for i in range(len(added))
                 if i not in replaced]
    return joined.select(*selected)


def read_manifest(
    spark: SparkSession,
    manifest: str | Manifest,
    format: str | Mapping[str, str] = "parquet",
    *,
    options: Mapping[str, str] | None = None,
    include_source: bool = False,
    scan: Scan = "grouped",
) -> DataFrame:
    """A DataFrame over exactly the manifest's locations, with the partition columns.

    :param manifest: a manifest path (``--partitions-manifest``) or a loaded :class:`Manifest`.
    :param format: the data source format of every location (``parquet``, ``orc``, ``json``...),
        or a mapping storage -> format.
    :param options: reader options applied to every location (``mergeSchema``...).
    :param include_source: also add ``_storage``, ``_period`` and ``_location`` columns.
    :param scan: ``grouped`` (default): one scan per storage; ``per-location``: one scan per
        location, unioned (the pre-issue-18 reader, for files whose schemas drift within a
        storage in ways ``mergeSchema`` cannot reconcile).

    Partition columns are the manifest's values as strings; one the files also hold is replaced
    by the manifest's value. Groups (and per-location frames) combine with
    ``unionByName(allowMissingColumns=True)``. The residual filter (``manifest.residual``) is NOT
    applied: the job decides how to apply it. An empty manifest gives an empty DataFrame with
    the source columns only. A location that does not exist raises :class:`MissingLocation`, one
    without data files :class:`EmptyLocation`.
    """
    if scan not in ("grouped", "per-location"):
        raise ValueError(f"scan must be 'grouped' or 'per-location', got {scan!r}")
    loaded = manifest if isinstance(manifest, Manifest) else load_manifest(manifest)
    if not loaded.partitions:
        from pyspark.sql.types import StringType, StructField, StructType

        names = SOURCE_COLUMNS if include_source else ()
        return frame_of_rows(spark, [], StructType([StructField(n, StringType()) for n in names]))
    groups: dict[tuple[str, str], list[ManifestPartition]] = {}
    for part in loaded.partitions:
        fmt = format if isinstance(format, str) else _format_of(format, part.storage)
        groups.setdefault((part.storage, fmt), []).append(part)
    frames = []
    for (storage, fmt), parts in groups.items():
        frame = None
        if scan == "grouped":
            frame = _single_scan(spark, fmt, options, parts, include_source)
            if frame is None:
                log.warning("read_manifest: storage %r: one scan cannot attribute files to "
                            "locations exactly (globs, nested or re-qualified locations, or "
                            "not a file source); reading its %d locations one by one",
                            storage, len(parts))
        frames.append(frame if frame is not None
                      else _per_location(spark, fmt, options, parts, include_source))
    return _union_all(frames)


def _format_of(formats: Mapping[str, str], storage: str) -> str:
    try:
        return formats[storage]
    except KeyError:
        raise PartitionDataError(
            f"no format given for storage {storage!r} (formats given for "
            f"{sorted(formats)})") from None
