"""The PySpark side: read the partitions a manifest lists (see docs/airflow.md, "The manifest").

``load_manifest`` is pure; ``read_manifest`` imports pyspark when called, so this package can be
imported where pyspark is not installed. The bundled jobs (``jobs/``, files ``spark-submit`` runs
by path: :func:`job_path`) import pyspark only when they run, so the names other packages use
from them (``Source`` and ``collect`` of ``collect_keys``, ``join_totals``, ``Report``) are
exported here too. Inside the room, modules import each other by module path, never through this
``__init__``. A Spark executor imports this package too (unpickling ``task_hold``'s functions),
where the core's dependencies may be missing: what it imports stays on the standard library
(``tests/spark/test_imports.py``).
"""

from airflow_partitions.spark.jobs import job_path
from airflow_partitions.spark.jobs.collect_keys import Source, collect
from airflow_partitions.spark.jobs.events_aggregate import Report
from airflow_partitions.spark.jobs.regional_join import join_totals
from airflow_partitions.spark.key_file import (
    ColumnEntryJson,
    KeyDocumentJson,
    SourceEntryJson,
    column_entries,
    column_entry,
    decode_value,
    key_document,
    read_key_file,
    source_entry,
    write_key_file,
)
from airflow_partitions.spark.local_rows import frame_of_rows
from airflow_partitions.spark.manifest import (
    KEYS_SUFFIX,
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
    prune_manifests,
    write_manifest,
)
from airflow_partitions.spark.reader import (
    SOURCE_COLUMNS,
    EmptyLocation,
    MissingLocation,
    PartitionDataError,
    manifest_location,
    read_manifest,
)
from airflow_partitions.spark.synthetic import (
    REGIONS,
    SLICE_REGIONS,
    events_for_hour,
    expected_slice_totals,
    expected_totals,
    hours,
    totals,
)
from airflow_partitions.spark.task_hold import HOLD_CONF, RELEASE

__all__ = [
    "HOLD_CONF",
    "KEYS_SUFFIX",
    "MANIFEST_ARG",
    "MANIFEST_CONF",
    "MANIFEST_VERSION",
    "REGIONS",
    "RELEASE",
    "SLICE_REGIONS",
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
    "Report",
    "Source",
    "SourceEntryJson",
    "UnsupportedManifestVersion",
    "build_manifest",
    "collect",
    "column_entries",
    "column_entry",
    "decode_value",
    "events_for_hour",
    "expected_slice_totals",
    "expected_totals",
    "frame_of_rows",
    "hours",
    "job_path",
    "join_totals",
    "key_document",
    "load_manifest",
    "manifest_location",
    "prune_manifests",
    "read_key_file",
    "read_manifest",
    "source_entry",
    "totals",
    "write_key_file",
    "write_manifest",
]
