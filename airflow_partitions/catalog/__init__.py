"""The partition catalog: facts own storage tables, storage tables own partitions.

The public entry point is :class:`Catalog`; the modules below it each own one job (see
``docs/architecture.md``).
"""

from airflow_partitions.catalog.facade import AlreadyExists, Catalog
from airflow_partitions.catalog.model import InvalidDefinition, Partition
from airflow_partitions.catalog.repair import ReconcileReport, TimelineDiff
from airflow_partitions.catalog.writer import CRASH_ENV, PartitionConflict, WriteResult
from airflow_partitions.errors import ConcurrentUpdateError

__all__ = [
    "CRASH_ENV",
    "AlreadyExists",
    "Catalog",
    "ConcurrentUpdateError",
    "InvalidDefinition",
    "Partition",
    "PartitionConflict",
    "ReconcileReport",
    "TimelineDiff",
    "WriteResult",
]
