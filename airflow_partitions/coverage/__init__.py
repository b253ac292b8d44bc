"""Coverage as the Airflow layer and the Partitions view consume it: one room above the catalog.

Each module reads the catalog through its facade (:class:`~airflow_partitions.catalog.Catalog`)
and its cached :class:`~airflow_partitions.catalog.FactState`, and imports no ``airflow``:

* :mod:`.watch`: :class:`CoverageWatch`, what a sensor or trigger pokes (one generation read
  while nothing changed);
* :mod:`.metrics`: which cached timelines a request's coverage metrics read (the numbers
  themselves are :mod:`airflow_partitions.cover.metrics`, pure);
* :mod:`.view`: what the Partitions view draws, per (storage, period) lane, from the timelines'
  ranges (with a small process-wide cache of verified covers per generation);
* :mod:`.view_stretches`: the stretch states and their tiling of a window, shared by the lanes;
* :mod:`.slice_view`: the lanes per slice of a storage with declared dimensions.
"""

from airflow_partitions.coverage.metrics import (
    measure,
    metrics_of,
    request_slices,
    request_timelines,
)
from airflow_partitions.coverage.slice_view import (
    DimensionGroupJson,
    SlicedStorageJson,
    SliceLaneJson,
    UndeclaredJson,
    forget_presence,
    read_presence,
    sliced_storage,
)
from airflow_partitions.coverage.view import (
    FactJson,
    FactViewJson,
    LaneJson,
    StorageJson,
    ViewCoverJson,
    fact_view,
    facts_json,
    forget_covers,
)
from airflow_partitions.coverage.view_stretches import (
    MISSING,
    NOT_APPLICABLE,
    REGISTERED,
    STALE,
    Stretch,
    StretchJson,
)
from airflow_partitions.coverage.watch import REMINDER_SECONDS, CoverageWatch

__all__ = [
    "MISSING",
    "NOT_APPLICABLE",
    "REGISTERED",
    "REMINDER_SECONDS",
    "STALE",
    "CoverageWatch",
    "DimensionGroupJson",
    "FactJson",
    "FactViewJson",
    "LaneJson",
    "SliceLaneJson",
    "SlicedStorageJson",
    "StorageJson",
    "Stretch",
    "StretchJson",
    "UndeclaredJson",
    "ViewCoverJson",
    "fact_view",
    "facts_json",
    "forget_covers",
    "forget_presence",
    "measure",
    "metrics_of",
    "read_presence",
    "request_slices",
    "request_timelines",
    "sliced_storage",
]
