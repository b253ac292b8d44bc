"""Coverage as a sensor, a trigger and the metrics watch it: one room above the catalog.

Each module reads the catalog through its facade (:class:`~airflow_partitions.catalog.Catalog`)
and its cached :class:`~airflow_partitions.catalog.FactState`, and imports no ``airflow``:

* :mod:`.watch`: :class:`CoverageWatch`, what a sensor or trigger pokes (one round trip while
  nothing changed: the store's change stamp, or the generation read where the store has none),
  and :class:`GenerationProbe`, the same two-step read for the trigger's poller;
* :mod:`.measure`: which cached timelines a request's coverage metrics read (the numbers
  themselves are :mod:`airflow_partitions.cover.gauges`, pure).
"""

from airflow_partitions.watch.measure import (
    measure,
    metrics_of,
    request_slices,
    request_timelines,
)
from airflow_partitions.watch.watch import REMINDER_SECONDS, CoverageWatch, GenerationProbe

__all__ = [
    "REMINDER_SECONDS",
    "CoverageWatch",
    "GenerationProbe",
    "measure",
    "metrics_of",
    "request_slices",
    "request_timelines",
]
