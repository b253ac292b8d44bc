"""Each update period's value format, its length and the periods it nests in: the table
``UpdatePeriod`` reads, keyed by period name (so this module needs no ``UpdatePeriod``)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from airflow_partitions.errors import InvalidPartitionValue
from airflow_partitions.periods.zones import CYCLE_DAYS


@dataclass(frozen=True)
class PeriodSpec:
    """What a period's values look like and how long its partitions are."""

    seconds: int  # fixed length for sub-daily periods, approximate otherwise
    fixed: bool
    pattern: str
    regex: re.Pattern[str]
    end_text: str  # the first value of year 10000: the end of the calendar, not a partition
    cycle: int  # partitions in 400 Gregorian years (the calendar's period)


_OFFSET = r"(?:([+-]\d{2}:\d{2}))?"
#: Per period name.
SPECS: Final[dict[str, PeriodSpec]] = {
    "SECONDLY": PeriodSpec(
        1, True, "yyyy-MM-dd-HH-mm-ss",
        re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})" + _OFFSET),
        "10000-01-01-00-00-00", CYCLE_DAYS * 86400,
    ),
    "MINUTELY": PeriodSpec(
        60, True, "yyyy-MM-dd-HH-mm",
        re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})" + _OFFSET),
        "10000-01-01-00-00", CYCLE_DAYS * 1440,
    ),
    "HOURLY": PeriodSpec(
        3600, True, "yyyy-MM-dd-HH", re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})" + _OFFSET),
        "10000-01-01-00", CYCLE_DAYS * 24,
    ),
    "DAILY": PeriodSpec(86400, False, "yyyy-MM-dd", re.compile(r"(\d{4})-(\d{2})-(\d{2})"),
                   "10000-01-01", CYCLE_DAYS),
    "WEEKLY": PeriodSpec(7 * 86400, False, "yyyy-'W'ww", re.compile(r"(\d{4})-W(\d{2})"),
                    "10000-W01", CYCLE_DAYS // 7),
    "MONTHLY": PeriodSpec(30 * 86400, False, "yyyy-MM", re.compile(r"(\d{4})-(\d{2})"),
                     "10000-01", 4800),
    "QUARTERLY": PeriodSpec(91 * 86400, False, "yyyy-'Q'q", re.compile(r"(\d{4})-Q(\d)"),
                       "10000-Q1", 1600),
    "YEARLY": PeriodSpec(365 * 86400, False, "yyyy", re.compile(r"(\d{4})"), "10000", 400),
}
#: What a message says about instants ``datetime`` cannot hold.
REPRESENTABLE: Final = "0001-01-01T00:00Z to 9999-12-31T23:59:59.999999Z"

#: Which periods a period's partitions fit into exactly (calendar nesting, not durations).
NESTS_IN: Final[dict[str, frozenset[str]]] = {
    "SECONDLY": frozenset(SPECS),
    "MINUTELY": frozenset(SPECS) - {"SECONDLY"},
    "HOURLY": frozenset({"HOURLY", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}),
    "DAILY": frozenset({"DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}),
    "WEEKLY": frozenset({"WEEKLY"}),
    "MONTHLY": frozenset({"MONTHLY", "QUARTERLY", "YEARLY"}),
    "QUARTERLY": frozenset({"QUARTERLY", "YEARLY"}),
    "YEARLY": frozenset({"YEARLY"}),
}


def coarse_ordinal(period: str, year: int, fields: Sequence[str], value: str) -> int | None:
    """The ordinal of a YEARLY, QUARTERLY, MONTHLY or WEEKLY ``value`` from its matched fields
    after the year (the quarter, month or ISO week); None for the other periods."""
    if period == "YEARLY":
        return year
    if period == "QUARTERLY":
        quarter = int(fields[0])
        if not 1 <= quarter <= 4:
            raise InvalidPartitionValue(f"{value!r}: quarter must be 1..4")
        return year * 4 + quarter - 1
    if period == "MONTHLY":
        month = int(fields[0])
        if not 1 <= month <= 12:
            raise InvalidPartitionValue(f"{value!r}: month must be 01..12")
        return year * 12 + month - 1
    if period == "WEEKLY":
        monday = dt.date.fromisocalendar(year, int(fields[0]), 1)
        return (monday.toordinal() - 1) // 7
    return None
