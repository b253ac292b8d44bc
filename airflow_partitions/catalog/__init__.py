"""The partition catalog: facts own storage tables, storage tables own partitions.

The public entry point is :class:`Catalog`; the modules below it each own one job (see
``docs/architecture.md``). Everything another package uses is exported here, and other packages
import it from here (``from airflow_partitions.catalog import StorageDef``), never from the
modules (``tests/test_architecture.py`` checks it): what the modules are called, and which one
holds a name, may change without anyone outside noticing.
"""

from airflow_partitions.catalog.cache import FactState, TimelineCache, UnknownFact
from airflow_partitions.catalog.covers.verified import CoverVerificationError, VerifiedCover
from airflow_partitions.catalog.decoded_cells import forget_kept
from airflow_partitions.catalog.definitions.locations import UnsafeLocation
from airflow_partitions.catalog.definitions.producers import (
    InvalidProducer,
    Producer,
    parse_producer_items,
    parse_rule,
)
from airflow_partitions.catalog.definitions.tables import (
    FactDef,
    InvalidDefinition,
    Partition,
    StorageDef,
    make_spec,
    partition_range,
    range_values,
    render_location,
    template_root,
)
from airflow_partitions.catalog.facade import AlreadyExists, Catalog
from airflow_partitions.catalog.lens_table import ImportedTimeline, parse_parameters
from airflow_partitions.catalog.lineage.staleness import StalePartition, overlap_window
from airflow_partitions.catalog.pause_point import HOST_ENV
from airflow_partitions.catalog.query import execute_plan, explain, get_partitions_by_filter
from airflow_partitions.catalog.repair import ReconcileReport, TimelineDiff
from airflow_partitions.catalog.rows.layout import (
    LIVE,
    LOC,
    STAMP,
    STATE,
    CatalogRows,
    encoded_cell_column,
    partition_from_cells,
    storage_row,
    timeline_column,
    value_cell_column,
)
from airflow_partitions.catalog.slices.completeness import (
    SliceCompleteness,
    complete_sources,
    completeness,
)
from airflow_partitions.catalog.slices.dimensions import (
    Dimension,
    DomainValue,
    NotADimension,
    parse_dimensions,
    required_slices,
    select_slices,
    undeclared_notes,
)
from airflow_partitions.catalog.slices.notes import NothingSelected, unselected_note
from airflow_partitions.catalog.writer import CRASH_ENV, PartitionConflict, WriteResult
from airflow_partitions.errors import ConcurrentUpdateError

__all__ = [
    "CRASH_ENV",
    "HOST_ENV",
    "LIVE",
    "LOC",
    "STAMP",
    "STATE",
    "AlreadyExists",
    "Catalog",
    "CatalogRows",
    "ConcurrentUpdateError",
    "CoverVerificationError",
    "Dimension",
    "DomainValue",
    "FactDef",
    "FactState",
    "ImportedTimeline",
    "InvalidDefinition",
    "InvalidProducer",
    "NotADimension",
    "NothingSelected",
    "Partition",
    "PartitionConflict",
    "Producer",
    "ReconcileReport",
    "SliceCompleteness",
    "StalePartition",
    "StorageDef",
    "TimelineCache",
    "TimelineDiff",
    "UnknownFact",
    "UnsafeLocation",
    "VerifiedCover",
    "WriteResult",
    "complete_sources",
    "completeness",
    "encoded_cell_column",
    "execute_plan",
    "explain",
    "forget_kept",
    "get_partitions_by_filter",
    "make_spec",
    "overlap_window",
    "parse_dimensions",
    "parse_parameters",
    "parse_producer_items",
    "parse_rule",
    "partition_from_cells",
    "partition_range",
    "range_values",
    "render_location",
    "required_slices",
    "select_slices",
    "storage_row",
    "template_root",
    "timeline_column",
    "undeclared_notes",
    "unselected_note",
    "value_cell_column",
]
