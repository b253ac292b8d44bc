"""Partitions a cover left out on purpose, and why: what ``fresh_only`` reports.

Why its own record: without it a stale partition left out would read as absent ("no DAILY
2015-01-02"), and a person would register what is already there instead of rebuilding it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypedDict, cast

from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod

#: How many skipped partitions a status line names (the rest are counted).
SKIPPED_SHOWN: Final = 3


class SkippedJson(TypedDict):
    """:meth:`SkippedPartition.to_json`."""

    storage: str
    period: str
    value: str
    reason: str


@dataclass(frozen=True)
class SkippedPartition:
    """A partition (one time value of a storage and period) the cover did not use.

    >>> SkippedPartition("daily", UpdatePeriod.DAILY, "2015-01-02",
    ...     "input raw HOURLY 2015-01-02-05 restated").describe()
    'DAILY 2015-01-02 of daily skipped: stale (input raw HOURLY 2015-01-02-05 restated)'
    """

    storage: str
    period: UpdatePeriod
    value: str
    reason: str

    def describe(self) -> str:
        return (f"{self.period.name} {self.value} of {self.storage} skipped: stale "
                f"({self.reason})")

    def to_json(self) -> SkippedJson:
        return {"storage": self.storage, "period": self.period.name, "value": self.value,
                "reason": self.reason}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SkippedPartition:
        try:
            return cls(str(data["storage"]), UpdatePeriod.of(cast(str, data["period"])),
                       str(data["value"]), str(data["reason"]))
        except (KeyError, TypeError) as exc:
            raise InvalidInput(f"cover JSON: bad skipped entry {data!r} ({exc})") from None


def skipped_text(skipped: tuple[SkippedPartition, ...], shown: int = SKIPPED_SHOWN) -> str:
    """``DAILY 2015-01-02 of d skipped: stale (...); ... (+4 more skipped as stale)``."""
    text = "; ".join(s.describe() for s in skipped[:shown])
    if len(skipped) > shown:
        text += f"; ... (+{len(skipped) - shown} more skipped as stale)"
    return text
