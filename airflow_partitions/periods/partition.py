"""``TimePartition`` and ``TimePartitionRange``: one partition of a period, and half-open runs
of them, as values a person can read (``2015-01-29-06``) and the code can count (ordinals).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import pendulum

from airflow_partitions.arguments import shown
from airflow_partitions.errors import (
    InvalidRange,
    MixedPeriods,
)
from airflow_partitions.periods.update_period import UpdatePeriod
from airflow_partitions.periods.zones import (
    TzLike,
    zone,
    zone_name,
)


@functools.total_ordering
@dataclass(frozen=True)
class TimePartition:
    """One partition of one period: ``[start, end)`` in a zone, named by its value string."""

    period: UpdatePeriod
    ordinal: int
    tz: str = "UTC"

    @classmethod
    def of(
        cls, period: UpdatePeriod | str, value: str | dt.datetime, tz: TzLike | None = None
    ) -> TimePartition:
        """From a value string, or from an instant that already starts a partition."""
        period = UpdatePeriod.of(period)
        if isinstance(value, dt.datetime):
            zone_ = zone(tz if tz is not None else value.tzinfo)
            ordinal = period._aligned_ordinal(value, zone_)
        else:
            zone_ = zone(tz)
            ordinal = period.parse_ordinal(value, zone_)
        return cls(period, ordinal, zone_name(zone_) or "UTC")

    @property
    def zone(self) -> dt.tzinfo:
        """The partition's zone as a tzinfo."""
        return zone(self.tz)

    @property
    def start(self) -> pendulum.DateTime:
        """The first instant of the partition."""
        return self.period.start_of(self.ordinal, self.tz)

    @property
    def end(self) -> pendulum.DateTime:
        """The first instant after the partition (exclusive)."""
        return self.period.start_of(self.ordinal + 1, self.tz)

    @property
    def value(self) -> str:
        """The partition value in the period's format."""
        return self.period.format_ordinal(self.ordinal, self.tz)

    def next(self) -> TimePartition:
        """The following partition of the same period."""
        return self.add(1)

    def previous(self) -> TimePartition:
        """The preceding partition of the same period."""
        return self.add(-1)

    def add(self, n: int) -> TimePartition:
        """The partition ``n`` steps away."""
        return TimePartition(self.period, self.ordinal + n, self.tz)

    def _check_comparable(self, other: TimePartition) -> None:
        if other.period is not self.period or other.tz != self.tz:
            raise MixedPeriods(
                f"cannot compare {self.period.name} {self.value} ({self.tz}) with "
                f"{other.period.name} {other.value} ({other.tz})"
            )

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, TimePartition):
            return NotImplemented
        self._check_comparable(other)
        return self.ordinal < other.ordinal

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"TimePartition({self.period.name}, {self.value!r}, tz={self.tz!r})"


_RANGE_TEXT: Final = re.compile(r"\s*([\[(])\s*([^,\s]+)\s*,\s*([^,\s]+)\s*([\])])\s*")


@dataclass(frozen=True)
class TimePartitionRange:
    """The half-open range ``[begin, end)`` of partitions of one period."""

    begin: TimePartition
    end: TimePartition

    def __post_init__(self) -> None:
        self.begin._check_comparable(self.end)
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
            self.begin._check_comparable(item)
            return self.begin.ordinal <= item.ordinal < self.end.ordinal
        if isinstance(item, dt.datetime):
            return bool(self.start_time <= item < self.end_time)
        return False

    def __str__(self) -> str:
        return f"[{self.begin.value}, {self.end.value})"

    def __repr__(self) -> str:
        return f"TimePartitionRange({self.period.name}, {self}, tz={self.begin.tz!r})"
