"""``TimePartitionRange``: half-open runs of partitions of one period, as values a person can
read (``[2015-01-29-06, 2015-01-30-00)``) and the code can count (ordinals).

One partition, :class:`TimePartition`, lives with :class:`UpdatePeriod` in ``update_period.py``
(each names the other: ``UpdatePeriod.partition()`` builds one); it is re-exported here, so
``airflow_partitions.periods.partition.TimePartition`` keeps working.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

import pendulum

from airflow_partitions.arguments import shown
from airflow_partitions.errors import InvalidRange
from airflow_partitions.periods.update_period import TimePartition, UpdatePeriod
from airflow_partitions.periods.zones import TzLike

__all__ = ["TimePartition", "TimePartitionRange", "ordinal_values"]

_RANGE_TEXT: Final = re.compile(r"\s*([\[(])\s*([^,\s]+)\s*,\s*([^,\s]+)\s*([\])])\s*")


@dataclass(frozen=True)
class TimePartitionRange:
    """The half-open range ``[begin, end)`` of partitions of one period."""

    begin: TimePartition
    end: TimePartition

    def __post_init__(self) -> None:
        self.begin.check_comparable(self.end)
        if self.end.ordinal < self.begin.ordinal:
            raise InvalidRange(
                f"range [{self.begin.value}, {self.end.value}) is reversed: its end is before "
                "its begin"
            )

    @classmethod
    def of(
        cls,
        period: UpdatePeriod | str,
        begin: str | dt.datetime,
        end: str | dt.datetime,
        tz: TzLike | None = None,
    ) -> TimePartitionRange:
        """``[begin, end)`` from two values or aligned instants."""
        return cls(TimePartition.of(period, begin, tz), TimePartition.of(period, end, tz))

    @classmethod
    def parse(
        cls, text: str, period: UpdatePeriod | str, tz: TzLike | None = None
    ) -> TimePartitionRange:
        """Parse ``[a, b)``, ``[a, b]``, ``(a, b]`` or ``(a, b)`` into a half-open range."""
        match = _RANGE_TEXT.fullmatch(text)
        if match is None:
            raise InvalidRange(
                f"{shown(text)} is not a range; write [a, b), [a, b], (a, b] or (a, b)"
            )
        left, a, b, right = match.groups()
        begin = TimePartition.of(period, a, tz)
        end = TimePartition.of(period, b, tz)
        if left == "(":
            begin = begin.next()
        if right == "]":
            end = end.next()
        if end.ordinal < begin.ordinal:
            raise InvalidRange(f"range {shown(text)} is reversed: its end is before its begin")
        return cls(begin, end)

    @property
    def period(self) -> UpdatePeriod:
        """The period of every partition in the range."""
        return self.begin.period

    @property
    def start_time(self) -> pendulum.DateTime:
        """The first instant covered."""
        return self.begin.start

    @property
    def end_time(self) -> pendulum.DateTime:
        """The first instant after the range."""
        return self.end.start

    def is_empty(self) -> bool:
        """Whether the range holds no partition."""
        return self.begin.ordinal == self.end.ordinal

    def __len__(self) -> int:
        return self.end.ordinal - self.begin.ordinal

    def __iter__(self) -> Iterator[TimePartition]:
        for ordinal in range(self.begin.ordinal, self.end.ordinal):
            yield TimePartition(self.begin.period, ordinal, self.begin.tz)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, TimePartition):
            self.begin.check_comparable(item)
            return self.begin.ordinal <= item.ordinal < self.end.ordinal
        if isinstance(item, dt.datetime):
            return bool(self.start_time <= item < self.end_time)
        return False

    def __str__(self) -> str:
        return f"[{self.begin.value}, {self.end.value})"

    def __repr__(self) -> str:
        return f"TimePartitionRange({self.period.name}, {self}, tz={self.begin.tz!r})"


def ordinal_values(period: UpdatePeriod, tz: str, ranges: Iterable[tuple[int, int]],
                   limit: int | None = None) -> list[str]:
    """The values of half-open ordinal ``ranges``, in order, at most ``limit`` of them: what a
    report lists of a difference it keeps as ranges. Cost: O(values listed).

    >>> ordinal_values(UpdatePeriod.HOURLY, "UTC", [(0, 2), (5, 9)], limit=3)
    ['1970-01-01-00', '1970-01-01-01', '1970-01-01-05']
    """
    out: list[str] = []
    for b, e in ranges:
        stop = e if limit is None else min(e, b + limit - len(out))
        out.extend(period.format_ordinal(o, tz) for o in range(b, stop))
        if limit is not None and len(out) >= limit:
            break
    return out
