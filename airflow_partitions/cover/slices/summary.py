"""What each slice lacks over a whole cover, summed for people: ``19 hours of region=eu``.

Why: a cover of a storage with declared dimensions names, per missing range, the partitions
each slice lacks (``no HOURLY 2015-01-01-05..23 (19) for region=eu``; docs/dimensions.md).
With many slices or many ranges that list is long; a person waiting on a sensor wants to know
which slices are late and by how much. This module adds the per-slice entries of every missing
range up into one count per slice, worst first; the cover's JSON keeps every entry.

Pure and cheap: O(entries) over the missing ranges, no instants built.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from airflow_partitions.cover.missing import SLICES_SHOWN, MissingRange
from airflow_partitions.periods import UpdatePeriod

#: A slice as the missing ranges name it: ``(("region", "eu"),)``.
SliceKey = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class SliceLack:
    """How many partitions of its finest lacking period one slice lacks in a cover."""

    slice: SliceKey
    period: UpdatePeriod
    count: int

    @property
    def approx_seconds(self) -> int:
        """The lacking length, roughly (months as 30 days): what worst-first sorts by."""
        return self.count * self.period.approx_seconds

    def text(self) -> str:
        """``19 hours of region=eu``, ``1 day of region=eu,source=web``."""
        of = ",".join(f"{c}={v}" for c, v in self.slice)
        return f"{self.count} {self.period.spec.unit_word(self.count)} of {of}"


def slice_lacks(missing: Iterable[MissingRange]) -> list[SliceLack]:
    """One entry per slice that lacks something, worst first (then by slice).

    Per slice, the finest period it lacks is counted (registering those fills the gap), summed
    over the missing ranges. An entry repeated word for word in two ranges (a DAILY partition
    lacking under two gaps of one day) counts once.

    >>> from airflow_partitions.cover.missing import NeededPartitions, ValueRun
    >>> import pendulum
    >>> t = pendulum.datetime(2015, 1, 1, 5, tz="UTC")
    >>> eu = NeededPartitions(UpdatePeriod.HOURLY, (ValueRun("2015-01-01-05", "2015-01-01-23",
    ...                       19),), 19, (("region", "eu"),))
    >>> us = NeededPartitions(UpdatePeriod.HOURLY, (ValueRun("2015-01-01-05", "2015-01-01-05",
    ...                       1),), 1, (("region", "us"),))
    >>> [s.text() for s in slice_lacks([MissingRange(t, t.add(hours=19), (us, eu))])]
    ['19 hours of region=eu', '1 hour of region=us']
    """
    seen: set[tuple[SliceKey, UpdatePeriod, int, tuple[object, ...]]] = set()
    counts: dict[SliceKey, dict[UpdatePeriod, int]] = {}
    for gap in missing:
        for needed in gap.needed:
            if not needed.dimensions:
                continue
            key = (needed.dimensions, needed.period, needed.total, needed.runs)
            if key in seen:
                continue
            seen.add(key)
            per_period = counts.setdefault(needed.dimensions, {})
            per_period[needed.period] = per_period.get(needed.period, 0) + needed.total
    lacks = []
    for slice_, per_period in counts.items():
        finest = min(per_period)
        lacks.append(SliceLack(slice_, finest, per_period[finest]))
    lacks.sort(key=lambda lack: (-lack.approx_seconds, lack.slice))
    return lacks


def lacking_text(lacks: list[SliceLack], shown: int = SLICES_SHOWN) -> str:
    """``19 hours of region=eu, 2 hours of region=us and 3 more slices`` ("" for none)."""
    if not lacks:
        return ""
    text = ", ".join(lack.text() for lack in lacks[:shown])
    hidden = len(lacks) - shown
    if hidden > 0:
        text += f" and {hidden} more slice{'s' if hidden != 1 else ''}"
    return text


__all__ = ["SliceKey", "SliceLack", "lacking_text", "slice_lacks"]
