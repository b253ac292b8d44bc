"""The sparse-history rule: when EndsAndHoles would store far more values than Ranges.

EndsAndHoles lists every missing partition between its ends, so one hour registered ten years
after the rest makes it list 87,600 holes, and every reader parses them. Ranges stores two
values per run of partitions whatever the gaps. The catalog stores a timeline as Ranges once
this rule says so, unless the user chose EndsAndHoles explicitly.
"""

from __future__ import annotations

from typing import Final

from airflow_partitions.timelines.base import PartitionTimeline
from airflow_partitions.timelines.ends_and_holes import EndsAndHolesTimeline

#: Switch once the holes outnumber the ranges by this factor ...
HOLES_PER_RANGE: Final = 8
#: ... and there are more than this many holes (small timelines keep Lens's default shape).
MIN_HOLES: Final = 1000


def is_sparse(timeline: PartitionTimeline) -> bool:
    """Whether this EndsAndHoles timeline lists far more holes than it has ranges; O(1).

    >>> t = EndsAndHolesTimeline("HOURLY")
    >>> t.add_ordinal(0), t.add_ordinal(87_600)
    (True, True)
    >>> is_sparse(t)
    True
    """
    if not isinstance(timeline, EndsAndHolesTimeline):
        return False
    holes = timeline.hole_count()
    return holes > MIN_HOLES and holes > HOLES_PER_RANGE * timeline.range_count()
