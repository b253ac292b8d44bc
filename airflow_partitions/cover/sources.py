"""Validated input of a cover: the usable sources ranked by preference, and the aligned bounds.

Shared by :func:`.compute_cover` and the Lens-style test oracle, so
that both answer exactly the same question.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pendulum

from airflow_partitions.cover.clock import MAX_US, MIN_US, Clock, clock_for, from_us, to_us
from airflow_partitions.cover.request import CoverRequest
from airflow_partitions.errors import InvalidInput, InvalidRange, MisalignedTime
from airflow_partitions.periods import UpdatePeriod, zone, zone_name
from airflow_partitions.timelines import PartitionTimeline


class MisalignedBound(MisalignedTime):
    """A cover bound does not start a partition of the finest period available."""


@dataclass(frozen=True)
class CoverSource:
    """One (storage table, period) a fact can be read from.

    ``priority``: larger numbers are preferred when two storages hold the same partition.
    """

    storage: str
    priority: int
    period: UpdatePeriod
    timeline: PartitionTimeline


@dataclass(frozen=True)
class PreparedCover:
    """A :class:`CoverRequest` made ready to solve: aligned bounds in microseconds, and per
    period the usable timelines by storage rank."""

    tz: str
    start: pendulum.DateTime
    end: pendulum.DateTime
    start_us: int
    end_us: int
    #: Storage names by rank: index 0 is the most preferred (highest priority, then name).
    storages: tuple[str, ...]
    #: period -> [(rank, timeline)] in rank order.
    by_period: dict[UpdatePeriod, list[tuple[int, PartitionTimeline]]]
    fact: str | None = None

    @property
    def finest(self) -> UpdatePeriod | None:
        """The finest period among the usable sources."""
        return min(self.by_period) if self.by_period else None


def prepare(
    sources: Sequence[CoverSource], request: CoverRequest, *, tz: str
) -> PreparedCover:
    """Keep the sources the request allows, rank storages, align or check the bounds."""
    tz_name = zone_name(zone(tz)) or str(tz)
    start, end, align = request.start, request.end, request.align
    chosen = _select(sources, tz_name, request.period_set, request.storages)
    ranks = _rank(chosen)
    by_period: dict[UpdatePeriod, list[tuple[int, PartitionTimeline]]] = {}
    for source in sorted(chosen, key=lambda s: ranks[s.storage]):
        by_period.setdefault(source.period, []).append((ranks[source.storage], source.timeline))
    storage_names = tuple(sorted(ranks, key=ranks.__getitem__))
    start_us, end_us = to_us(start), to_us(end)
    if by_period and start_us != end_us:
        start_us, end_us = align_bounds(clock_for(tz_name), min(by_period), start_us, end_us, align)
    return PreparedCover(
        tz_name,
        _instant(start, start_us, tz_name),
        _instant(end, end_us, tz_name),
        start_us,
        end_us,
        storage_names,
        by_period,
        request.fact,
    )


def _instant(given: pendulum.DateTime, us: int, tz_name: str) -> pendulum.DateTime:
    """The bound as an instant in the fact's zone: the request's own when alignment kept it
    and it is already in that zone (most requests), else a new one."""
    if given.tzinfo is not None and getattr(given.tzinfo, "name", None) == tz_name and (
            to_us(given) == us):
        return given
    return from_us(us, tz_name)


def _select(
    sources: Sequence[CoverSource],
    tz_name: str,
    allowed_periods: frozenset[UpdatePeriod] | None,
    storages: Iterable[str] | None,
) -> list[CoverSource]:
    """The sources allowed by ``periods`` and ``storages``, each checked for consistency."""
    allowed_storages = None if storages is None else set(storages)
    known = {s.storage for s in sources}
    if allowed_storages is not None and not allowed_storages <= known:
        unknown = ", ".join(sorted(allowed_storages - known))
        raise InvalidInput(f"unknown storage(s) {unknown}; the fact has {sorted(known)}")
    chosen = []
    for source in sources:
        if not isinstance(source, CoverSource):
            raise InvalidInput(f"cover sources must be CoverSource, not {source!r}")
        if source.timeline.period is not source.period:
            raise InvalidInput(
                f"source {source.storage} {source.period.name} has a "
                f"{source.timeline.period.name} timeline"
            )
        if source.timeline.tz != tz_name:
            raise InvalidInput(
                f"source {source.storage} {source.period.name} is in {source.timeline.tz}, "
                f"but the cover is in {tz_name}: all sources of a cover share the fact's zone"
            )
        if allowed_periods is not None and source.period not in allowed_periods:
            continue
        if allowed_storages is not None and source.storage not in allowed_storages:
            continue
        chosen.append(source)
    return chosen


def _rank(sources: Iterable[CoverSource]) -> dict[str, int]:
    """Storage -> rank: higher priority first, then storage name order."""
    priority: dict[str, int] = {}
    for source in sources:
        known = priority.setdefault(source.storage, source.priority)
        if known != source.priority:
            raise InvalidInput(
                f"storage {source.storage} is given priorities {known} and {source.priority}"
            )
    ordered = sorted(priority, key=lambda name: (-priority[name], name))
    return {name: i for i, name in enumerate(ordered)}


def align_bounds(
    clock: Clock, finest: UpdatePeriod, start_us: int, end_us: int, align: str | None
) -> tuple[int, int]:
    """Widen (``outer``), narrow (``inner``) or check the bounds against ``finest``: the
    cover's rule, and what the Partitions view snaps a selection with.

    Near years 1 and 9999 a boundary may lie where ``datetime`` cannot go: widening to it is an
    :class:`InvalidRange`, narrowing stops short of it.
    """
    if align == "outer":
        lo = _boundary(clock, finest, clock.floor(finest, start_us))
        hi = _boundary(clock, finest, clock.ceil(finest, end_us))
        if lo is None or hi is None:
            name, us = ("start", start_us) if lo is None else ("end", end_us)
            raise InvalidRange(
                f"cover {name} {from_us(us, clock.tz).isoformat()} cannot be widened to a "
                f"{finest.name} boundary in {clock.tz}: the nearest one is "
                f"{_beyond(us)}, which Python cannot represent; use align='inner'"
            )
        return lo, hi
    if align == "inner":
        lo = _boundary(clock, finest, clock.ceil(finest, start_us))
        hi = _boundary(clock, finest, clock.floor(finest, end_us))
        if lo is not None and hi is not None and lo <= hi:
            return lo, hi
        empty = end_us if lo is None else lo  # no whole partition inside
        return empty, empty
    for name, us in (("start", start_us), ("end", end_us)):
        if not clock.is_aligned(finest, us):
            near = [_boundary(clock, finest, clock.floor(finest, us)),
                    _boundary(clock, finest, clock.ceil(finest, us))]
            floor, ceil = (
                from_us(b, clock.tz).isoformat() if b is not None else _beyond(us) for b in near
            )
            raise MisalignedBound(
                f"cover {name} {from_us(us, clock.tz).isoformat()} is not aligned to "
                f"{finest.name}, the finest period available, in {clock.tz}: the nearest "
                f"boundaries are {floor} and {ceil}; pass align='outer' or align='inner'"
            )
    return start_us, end_us


def _boundary(clock: Clock, period: UpdatePeriod, ordinal: int) -> int | None:
    """Where partition ``ordinal`` starts, or None if ``datetime`` cannot hold that instant."""
    try:
        us = clock.start(period, ordinal)
        from_us(us, clock.tz)  # the local time too (10000-01-01T00:00 in Tokyo is in UTC 9999)
    except InvalidRange:
        return None
    return us if MIN_US <= us <= MAX_US else None


def _beyond(us: int) -> str:
    """Which end of the representable instants a boundary near ``us`` falls beyond."""
    return "after 9999-12-31T23:59:59.999999Z" if us > 0 else "before 0001-01-01T00:00Z"
