"""Coverage metrics per slice: how many slices are incomplete, the worst one, and per-slice
gauges while the slices are few (docs/observability.md, docs/dimensions.md).

Why these and not one gauge per slice always: a fact with a thousand regions would send a
thousand series per poke, and each becomes a time series a metrics backend keeps (and bills
for). So every fact with declared dimensions gets two gauges whatever its size, the number of
incomplete slices and what the worst slice lacks; per-slice gauges, tagged with the slice's
dimension values, go out only while the required slices are at most :data:`MAX_SLICE_TAGS`.
Each of them is sent for every required slice, 0 when complete, so a slice that catches up
drops to 0 on a dashboard instead of keeping its last value.

Pure: from the cover's missing ranges (their per-slice entries) and the required slices the
catalog lists; O(entries + required slices).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypedDict

from airflow_partitions.cover.missing import MissingRange
from airflow_partitions.cover.slices.summary import SliceKey, slice_lacks

#: Per-slice gauges are sent only while a request requires at most this many slices.
MAX_SLICE_TAGS: Final = 50
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.-]")


def slice_label(slice_: SliceKey) -> str:
    """``region=eu,source=web``: how the JSON and the text name a slice."""
    return ",".join(f"{c}={v}" for c, v in slice_)


def slice_tags(slice_: SliceKey) -> dict[str, str]:
    """The slice as metric tags, one per dimension column (``{"region": "eu"}``).

    Values keep only ``[A-Za-z0-9_.-]`` (others become ``_``): StatsD's line format and the
    DogStatsD/InfluxDB tag formats reserve ``:``, ``|``, ``,``, ``=`` and ``#``, and Airflow's
    metric-name check allows no more than that. A column named ``fact`` is sent as
    ``dimension_fact`` (the fact tag keeps its name).

    >>> slice_tags((("region", "eu west"), ("fact", "x")))
    {'region': 'eu_west', 'dimension_fact': 'x'}
    """
    return {("dimension_fact" if c == "fact" else c): _UNSAFE.sub("_", v) for c, v in slice_}


class SliceMissingCountJson(TypedDict):
    """One required slice and how many partitions it lacks."""

    slice: str
    dimensions: dict[str, str]
    missing: int


class SliceMetricsJson(TypedDict):
    """:meth:`SliceMetrics.to_json`."""

    required: int
    incomplete: int
    worst: str | None
    worst_missing: int
    per_slice: list[SliceMissingCountJson]


@dataclass(frozen=True)
class SliceMetrics:
    """The per-slice picture of one cover."""

    #: How many slices the request requires (each combination of declared values).
    required: int
    #: How many of them lack at least one partition.
    incomplete: int
    #: The slice lacking the most (by length, finest period counted), None when none lacks.
    worst: SliceKey | None
    #: How many partitions (of its finest lacking period) the worst slice lacks; 0 if none.
    worst_missing: int
    #: Every required slice's missing count (0 when complete), in slice order; empty when
    #: more than :data:`MAX_SLICE_TAGS` slices are required.
    per_slice: tuple[tuple[SliceKey, int], ...]

    def to_json(self) -> SliceMetricsJson:
        """``{"required", "incomplete", "worst", "worst_missing", "per_slice": [...]}``."""
        return {
            "required": self.required,
            "incomplete": self.incomplete,
            "worst": None if self.worst is None else slice_label(self.worst),
            "worst_missing": self.worst_missing,
            "per_slice": [{"slice": slice_label(s), "dimensions": dict(s), "missing": n}
                          for s, n in self.per_slice],
        }


def slice_metrics(missing: Iterable[MissingRange], required: Sequence[SliceKey],
                  max_tags: int = MAX_SLICE_TAGS) -> SliceMetrics | None:
    """The per-slice metrics of a cover's missing ranges over the ``required`` slices; None
    when the request has no slices at all (no declared dimension: the fact-level gauges say
    everything).

    >>> from airflow_partitions.cover.missing import NeededPartitions, ValueRun
    >>> from airflow_partitions.periods import UpdatePeriod
    >>> import pendulum
    >>> t = pendulum.datetime(2015, 1, 1, 5, tz="UTC")
    >>> eu = NeededPartitions(UpdatePeriod.HOURLY, (ValueRun("2015-01-01-05",
    ...     "2015-01-01-23", 19),), 19, (("region", "eu"),))
    >>> m = slice_metrics([MissingRange(t, t.add(hours=19), (eu,))],
    ...                   [(("region", "eu"),), (("region", "us"),)])
    >>> m.incomplete, m.worst, m.worst_missing, m.per_slice
    (1, (('region', 'eu'),), 19, (((('region', 'eu'),), 19), ((('region', 'us'),), 0)))
    """
    lacks = slice_lacks(missing)
    slices = sorted(set(required) | {lack.slice for lack in lacks})
    if not slices:
        return None
    counts: Mapping[SliceKey, int] = {lack.slice: lack.count for lack in lacks}
    worst = lacks[0] if lacks else None
    return SliceMetrics(
        required=len(slices),
        incomplete=len(lacks),
        worst=None if worst is None else worst.slice,
        worst_missing=0 if worst is None else worst.count,
        per_slice=tuple((s, counts.get(s, 0)) for s in slices) if len(slices) <= max_tags
        else (),
    )


__all__ = ["MAX_SLICE_TAGS", "SliceMetrics", "slice_label", "slice_metrics", "slice_tags"]
