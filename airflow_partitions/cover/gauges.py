"""Coverage metrics: what a dashboard graphs about a fact, computed from a cover and timelines.

Why pure: the sensor, the trigger and the ``metrics`` command publish the same numbers, and the
numbers are tested here without Airflow or a store; the Airflow layer only sends them
(``airflow_partitions.hooks.stats``).

- **covered fraction** (per fact): covered time over requested time, in ``[0, 1]``;
- **missing partitions** (per fact): for each missing range, how many partitions of the finest
  period registering would fill it (the first ``needed`` entry, finest first); 0 when coverable;
- **lateness** (per storage): ``now`` minus the end of the storage's latest registered partition
  (of the cover's time column, over all its periods); negative when that partition ends in the
  future, absent when the storage has no partition;
- with declared dimensions (:mod:`.slices.gauges`): **incomplete slices** and the **worst
  slice's missing partitions** (per fact), and per slice its missing partitions (tagged with
  its dimension values) while at most ``MAX_SLICE_TAGS`` (50) slices are required.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, NotRequired, TypedDict

from airflow_partitions.cover.result import Cover
from airflow_partitions.cover.slices.gauges import (
    SliceMetrics,
    SliceMetricsJson,
    slice_metrics,
    slice_tags,
)
from airflow_partitions.cover.slices.summary import SliceKey, slice_lacks
from airflow_partitions.errors import InvalidInput, InvalidRange
from airflow_partitions.periods import TimePartition
from airflow_partitions.timelines import PartitionTimeline

#: Metric names, one prefix so that a dashboard finds all of them.
COVERED_FRACTION: Final = "partitions.coverage.fraction"
MISSING_PARTITIONS: Final = "partitions.coverage.missing"
LATENESS_SECONDS: Final = "partitions.lateness_seconds"
INCOMPLETE_SLICES: Final = "partitions.coverage.incomplete_slices"
WORST_SLICE_MISSING: Final = "partitions.coverage.worst_slice_missing"
SLICE_MISSING: Final = "partitions.coverage.slice_missing"


@dataclass(frozen=True)
class Gauge:
    """One gauge to send: a metric name, its value and its tags."""

    name: str
    value: float
    tags: Mapping[str, str]

    @property
    def flat_name(self) -> str:
        """The name with the tag values in it, for StatsD without tags (Airflow's "legacy
        names" style; a ``.`` inside a value becomes ``__`` to keep the hierarchy).

        >>> Gauge("partitions.lateness_seconds", 1.0, {"fact": "ev", "storage": "a.b"}).flat_name
        'partitions.lateness_seconds.ev.a__b'
        """
        return ".".join([self.name, *(v.replace(".", "__") for v in self.tags.values())])


@dataclass(frozen=True)
class StorageLateness:
    """How far one storage is behind ``now``: ``None`` values when it has no partition."""

    storage: str
    latest_end: dt.datetime | None
    seconds: float | None


class LatenessJson(TypedDict):
    """One storage's lateness: the end of its latest partition and how late it is."""

    storage: str
    latest_end: str | None
    seconds: float | None


class CoverageMetricsJson(TypedDict):
    """:meth:`CoverageMetrics.to_json` (``airflow-partitions metrics --json``): ``slices``
    only for a fact with declared dimensions."""

    fact: str
    start: str
    end: str
    now: str
    covered_fraction: float
    missing_partitions: int
    lateness: list[LatenessJson]
    slices: NotRequired[SliceMetricsJson]


@dataclass(frozen=True)
class CoverageMetrics:
    """The metric values of one fact and range at one instant."""

    fact: str
    start: dt.datetime
    end: dt.datetime
    now: dt.datetime
    covered_fraction: float
    missing_partitions: int
    lateness: tuple[StorageLateness, ...]
    #: The per-slice picture; None for a fact without declared dimensions.
    slices: SliceMetrics | None = None

    def gauges(self) -> list[Gauge]:
        """The gauges to publish: fraction and missing tagged by fact, lateness by fact and
        storage (a storage without partitions has no lateness gauge).

        >>> import pendulum
        >>> t = pendulum.datetime(2024, 1, 1, 6, tz="UTC")
        >>> m = CoverageMetrics("events", t, t, t, 0.5, 3,
        ...                     (StorageLateness("raw", t.subtract(hours=1), 3600.0),))
        >>> [(g.name, g.value, dict(g.tags)) for g in m.gauges()]  # doctest: +NORMALIZE_WHITESPACE
        [('partitions.coverage.fraction', 0.5, {'fact': 'events'}),
         ('partitions.coverage.missing', 3, {'fact': 'events'}),
         ('partitions.lateness_seconds', 3600.0, {'fact': 'events', 'storage': 'raw'})]
        """
        fact = {"fact": self.fact}
        out = [
            Gauge(COVERED_FRACTION, self.covered_fraction, fact),
            Gauge(MISSING_PARTITIONS, self.missing_partitions, fact),
        ]
        out.extend(
            Gauge(LATENESS_SECONDS, late.seconds, {**fact, "storage": late.storage})
            for late in self.lateness
            if late.seconds is not None
        )
        if self.slices is not None:
            out.append(Gauge(INCOMPLETE_SLICES, self.slices.incomplete, fact))
            out.append(Gauge(WORST_SLICE_MISSING, self.slices.worst_missing, fact))
            out.extend(Gauge(SLICE_MISSING, n, {**fact, **slice_tags(s)})
                       for s, n in self.slices.per_slice)
        return out

    def to_json(self) -> CoverageMetricsJson:
        """``{"fact", "start", "end", "now", "covered_fraction", "missing_partitions",
        "lateness": [{"storage", "latest_end", "seconds"}]}`` (instants as ISO text), and
        ``"slices"`` (:meth:`.SliceMetrics.to_json`) for a fact with declared dimensions."""
        out: CoverageMetricsJson = {
            "fact": self.fact,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "now": self.now.isoformat(),
            "covered_fraction": self.covered_fraction,
            "missing_partitions": self.missing_partitions,
            "lateness": [
                {
                    "storage": late.storage,
                    "latest_end": None if late.latest_end is None else late.latest_end.isoformat(),
                    "seconds": late.seconds,
                }
                for late in self.lateness
            ],
        }
        if self.slices is not None:
            out["slices"] = self.slices.to_json()
        return out


def missing_partitions(cover: Cover) -> int:
    """The finest-period partitions that would fill the cover's missing ranges.

    A missing range whose ``needed`` list is empty (no partition fits without overlapping the
    cover) adds nothing: no registration of a partition of the request's periods fills it.
    A range that names slices counts what each slice lacks (its finest lacking period), so
    19 hours lacking in eu and 2 in us are 21, not the 19 time partitions they fall in.
    """
    plain = sum(gap.needed[0].total for gap in cover.missing if gap.needed and not gap.slices)
    return plain + sum(lack.count for lack in slice_lacks(cover.missing))


def latest_end(timelines: Iterable[PartitionTimeline]) -> dt.datetime | None:
    """The end of the latest partition over these timelines (one storage's periods)."""
    ends = [_end(latest) for latest in (t.latest() for t in timelines) if latest is not None]
    return max(ends, default=None)


def _end(partition: TimePartition) -> dt.datetime:
    """A partition's end; the calendar's last one ends at the last instant Python holds
    (its true end lies past the calendar, and ``metrics`` must still answer once
    ``DAILY 9999-12-31`` is registered)."""
    try:
        return partition.end
    except InvalidRange:
        return dt.datetime.max.replace(tzinfo=dt.UTC)


def coverage_metrics(
    cover: Cover,
    timelines: Mapping[str, Iterable[PartitionTimeline]],
    now: dt.datetime,
    required_slices: Sequence[SliceKey] = (),
) -> CoverageMetrics:
    """The metrics of ``cover`` at ``now``; ``timelines`` maps each storage to its timelines of
    the cover's time column (one per period), and gives the lateness rows in its order;
    ``required_slices`` are the slices the request requires (the catalog lists them from the
    declared dimensions: ``watch.request_slices``)."""
    if cover.fact is None:
        raise InvalidInput("coverage metrics need the cover of a fact")
    if now.tzinfo is None:
        raise InvalidInput(f"coverage metrics: now {now.isoformat()} has no UTC offset")
    lateness = []
    for storage, storage_timelines in timelines.items():
        end = latest_end(storage_timelines)
        seconds = None if end is None else (now - end).total_seconds()
        lateness.append(StorageLateness(storage, end, seconds))
    return CoverageMetrics(
        fact=cover.fact,
        start=cover.start,
        end=cover.end,
        now=now,
        covered_fraction=min(max(cover.covered_fraction, 0.0), 1.0),
        missing_partitions=missing_partitions(cover),
        lateness=tuple(lateness),
        slices=slice_metrics(cover.missing, required_slices),
    )
