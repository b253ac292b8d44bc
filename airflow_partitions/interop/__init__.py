"""The Airflow layer's dealings with formats outside the catalog, parsed and named without
``airflow``: one room above the catalog, so the hook, the CLI, the operators and their tests
share one reading of each.

* :mod:`.connection`: the store URL a ``partition_catalog`` connection describes (the hook and
  the CLI read a connection the same way);
* :mod:`.partition_values`: partition values as the operators take them (mappings, lists,
  ranges, JSON text), and the Airflow asset partition keys they emit;
* :mod:`.lineage_datasets`: OpenLineage dataset names per storage root and the partition subsets
  a run read or wrote (``operators/openlineage_facets.py`` turns them into facets).
"""

from airflow_partitions.interop.connection import (
    CONN_TYPE,
    HBASE_PARAMS,
    InvalidConnection,
    extra_field,
    store_url_from_fields,
)
from airflow_partitions.interop.lineage_datasets import (
    DatasetName,
    StorageSubset,
    SubsetPartition,
    dataset_name,
    local_file_stats,
    manifest_subsets,
    registered_subset,
    storage_dataset,
    storage_root,
)
from airflow_partitions.interop.partition_values import (
    COMPOSITE_DELIMITER,
    KEY_STYLES,
    MAX_KEY_LENGTH,
    KeyFactsJson,
    composite_segments,
    expand_values,
    key_facts,
    partition_key,
    partition_keys,
)

__all__ = [
    "COMPOSITE_DELIMITER",
    "CONN_TYPE",
    "HBASE_PARAMS",
    "KEY_STYLES",
    "MAX_KEY_LENGTH",
    "DatasetName",
    "InvalidConnection",
    "KeyFactsJson",
    "StorageSubset",
    "SubsetPartition",
    "composite_segments",
    "dataset_name",
    "expand_values",
    "extra_field",
    "key_facts",
    "local_file_stats",
    "manifest_subsets",
    "partition_key",
    "partition_keys",
    "registered_subset",
    "storage_dataset",
    "storage_root",
    "store_url_from_fields",
]
