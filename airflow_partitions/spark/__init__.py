"""The PySpark side: read the partitions a manifest lists (see docs/airflow.md, "The manifest").

``load_manifest`` is pure; ``read_manifest`` imports pyspark when called, so this package can be
imported where pyspark is not installed.
"""

from airflow_partitions.spark.key_file import ColumnEntryJson, KeyDocumentJson, SourceEntryJson
from airflow_partitions.spark.manifest import (
    MANIFEST_ARG,
    MANIFEST_CONF,
    MANIFEST_VERSION,
    InputJson,
    Manifest,
    ManifestError,
    ManifestJson,
    ManifestPartition,
    ManifestPartitionJson,
    PartitionRowJson,
    UnsupportedManifestVersion,
    build_manifest,
    load_manifest,
    write_manifest,
)
from airflow_partitions.spark.reader import (
    SOURCE_COLUMNS,
    EmptyLocation,
    MissingLocation,
    PartitionDataError,
    read_manifest,
)

__all__ = [
    "MANIFEST_ARG",
    "MANIFEST_CONF",
    "MANIFEST_VERSION",
    "SOURCE_COLUMNS",
    "ColumnEntryJson",
    "EmptyLocation",
    "InputJson",
    "KeyDocumentJson",
    "Manifest",
    "ManifestError",
    "ManifestJson",
    "ManifestPartition",
    "ManifestPartitionJson",
    "MissingLocation",
    "PartitionDataError",
    "PartitionRowJson",
    "SourceEntryJson",
    "UnsupportedManifestVersion",
    "build_manifest",
    "load_manifest",
    "read_manifest",
    "write_manifest",
]
