"""The partition catalog: facts own storage tables, storage tables own partitions.

The public entry point is :class:`Catalog`; the modules below it each own one job (see
``docs/architecture.md``).
"""

from airflow_partitions.catalog.facade import (
    CRASH_ENV,
    AlreadyExists,
    Catalog,
    ConcurrentUpdateError,
    InvalidDefinition,
    Partition,
    PartitionConflict,
    ReconcileReport,
    TimelineDiff,
    WriteResult,
)

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
