"""Update periods, time partitions and ranges of them: the time model of the whole project.

Every partition of a period is identified by an integer *ordinal* (consecutive partitions have
consecutive ordinals), so timelines and the cover work on integers and intervals instead of
date strings. Instants are time-zone aware; calendar periods (DAILY and coarser) follow the
table's zone, so a DAILY partition on a DST day is 23 or 25 hours long.

Value formats follow Apache Lens (``yyyy-MM-dd-HH`` ...) except WEEKLY (ISO week, ``2015-W07``)
and QUARTERLY (``2015-Q1``). Parsing is strict: ``2015-13-45`` is an error, never rolled over.
Sub-daily values whose wall-clock time occurs twice (DST fall-back) carry their UTC offset,
``2015-10-25-02+01:00``, because the plain value would name two partitions.

Each period's facts (its length, nesting, unit words, Lens's spelling) are one entry of
``specs.SPECS``, read through :attr:`UpdatePeriod.spec`; other modules derive their per-period
tables from it, so a new period changes only this folder.
"""

from airflow_partitions.periods.fast_parse import (
    fast_ordinal,
    fast_ordinal_near,
    fast_ordinals,
    fast_value_bytes,
)
from airflow_partitions.periods.nesting import STRADDLING, nested_chain, straddles
from airflow_partitions.periods.partition import TimePartitionRange, ordinal_values
from airflow_partitions.periods.specs import PeriodSpec
from airflow_partitions.periods.update_period import TimePartition, UpdatePeriod
from airflow_partitions.periods.zones import UTC, TzLike, zone, zone_name

__all__ = [
    "STRADDLING",
    "UTC",
    "PeriodSpec",
    "TimePartition",
    "TimePartitionRange",
    "TzLike",
    "UpdatePeriod",
    "fast_ordinal",
    "fast_ordinal_near",
    "fast_ordinals",
    "fast_value_bytes",
    "nested_chain",
    "ordinal_values",
    "straddles",
    "zone",
    "zone_name",
]
