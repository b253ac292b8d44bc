"""What the Partitions view draws: lanes of stretches per storage, period and slice.

Each module reads the catalog through its facade (:class:`~airflow_partitions.catalog.Catalog`)
and its cached :class:`~airflow_partitions.catalog.FactState`, and imports no ``airflow``:

* :mod:`.fact_lanes`: the lanes per (storage, period), from the timelines' ranges (with a small
  process-wide cache of verified covers per generation);
* :mod:`.stretches`: the stretch states and their tiling of a window, shared by the lanes;
* :mod:`.slice_lanes`: the lanes per slice of a storage with declared dimensions;
* :mod:`.recent`: the small thread-safe cache of last answers both keep.
"""

from airflow_partitions.lanes.fact_lanes import (
    FactJson,
    FactViewJson,
    LaneJson,
    StorageJson,
    ViewCoverJson,
    fact_view,
    facts_json,
    forget_covers,
)
from airflow_partitions.lanes.slice_lanes import (
    DimensionGroupJson,
    SlicedStorageJson,
    SliceLaneJson,
    UndeclaredJson,
    forget_presence,
    read_presence,
    sliced_storage,
)
from airflow_partitions.lanes.stretches import (
    MISSING,
    NOT_APPLICABLE,
    REGISTERED,
    STALE,
    Stretch,
    StretchJson,
)

__all__ = [
    "MISSING",
    "NOT_APPLICABLE",
    "REGISTERED",
    "STALE",
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
    "read_presence",
    "sliced_storage",
]
