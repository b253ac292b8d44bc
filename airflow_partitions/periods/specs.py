"""Everything the package knows about each update period, in one table keyed by period name
(so this module needs no ``UpdatePeriod``): value format, length, nesting, unit words and
Lens's spelling. Every other per-period table is derived from :data:`SPECS` at import.

Why one table: a period's facts were spread over a dozen modules, each with its own dict, and
a new period had to find them all. The cost: a calendar period still brings its ordinal
arithmetic (``update_period.py``, :func:`coarse_ordinal`, ``fast_parse.py``), which no table
can state.
"""

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
    """One period's facts. A *fixed* period (sub-daily) has partitions of one exact length,
    counted from the epoch; any other is a *calendar* period, counted in the zone's local
    days, weeks, months, quarters or years, so its length varies."""

    seconds: int  # exact length of a fixed period; a calendar period's nominal one (ordering)
    fixed: bool
    pattern: str  # value format, Lens/Java notation
    regex: re.Pattern[str]
    end_text: str  # the first value of year 10000: the end of the calendar, not a partition
    cycle: int  # partitions in 400 Gregorian years (the calendar's period)
    within: tuple[str, ...]  # the next coarser periods its partitions fit into exactly
    unit: str  # what one partition is called in text: "hour"
    units: str  # and several: "hours"
    lens_pattern: str  # how Apache Lens spells a value (Java notation)
    lens_strftime: str | None  # the same for strftime; None when strftime cannot spell it

    @property
    def fixed_seconds(self) -> int | None:
        """The exact length of a fixed period; None for a calendar period."""
        return self.seconds if self.fixed else None

    @property
    def calendar(self) -> bool:
        """Whether partitions follow the zone's calendar (DAILY and coarser)."""
        return not self.fixed

    @property
    def clock_fields(self) -> int:
        """How many of (hour, minute, second) a value prints after its date: 0 for calendar
        periods, 1 for ``yyyy-MM-dd-HH``, up to 3."""
        return self.pattern.count("-") - 2 if self.fixed else 0

    def unit_word(self, count: int) -> str:
        """``hour`` for one partition, ``hours`` for any other count."""
        return self.unit if count == 1 else self.units


#: The UTC offset a fixed period's value carries when its wall time occurs twice.
OFFSET: Final = r"(?:([+-]\d{2}:\d{2}))?"
#: Per period name, finest first.
SPECS: Final[dict[str, PeriodSpec]] = {
    "SECONDLY": PeriodSpec(
        1, True, "yyyy-MM-dd-HH-mm-ss",
        re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})" + OFFSET),
        "10000-01-01-00-00-00", CYCLE_DAYS * 86400, ("MINUTELY",), "second", "seconds",
        "yyyy-MM-dd-HH-mm-ss", "%Y-%m-%d-%H-%M-%S",
    ),
    "MINUTELY": PeriodSpec(
        60, True, "yyyy-MM-dd-HH-mm",
        re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})" + OFFSET),
        "10000-01-01-00-00", CYCLE_DAYS * 1440, ("HOURLY",), "minute", "minutes",
        "yyyy-MM-dd-HH-mm", "%Y-%m-%d-%H-%M",
    ),
    "HOURLY": PeriodSpec(
        3600, True, "yyyy-MM-dd-HH",
        re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})" + OFFSET),
        "10000-01-01-00", CYCLE_DAYS * 24, ("DAILY",), "hour", "hours",
        "yyyy-MM-dd-HH", "%Y-%m-%d-%H",
    ),
    "DAILY": PeriodSpec(
        86400, False, "yyyy-MM-dd", re.compile(r"(\d{4})-(\d{2})-(\d{2})"),
        "10000-01-01", CYCLE_DAYS, ("WEEKLY", "MONTHLY"), "day", "days",
        "yyyy-MM-dd", "%Y-%m-%d",
    ),
    # Lens's weeks follow its JVM's locale (often Sunday-start, numbered in the calendar
    # year): the same text as an ISO week here, another week, and no strftime spelling.
    "WEEKLY": PeriodSpec(
        7 * 86400, False, "yyyy-'W'ww", re.compile(r"(\d{4})-W(\d{2})"),
        "10000-W01", CYCLE_DAYS // 7, (), "week", "weeks",
        "yyyy-'W'ww", None,
    ),
    "MONTHLY": PeriodSpec(
        30 * 86400, False, "yyyy-MM", re.compile(r"(\d{4})-(\d{2})"),
        "10000-01", 4800, ("QUARTERLY",), "month", "months",
        "yyyy-MM", "%Y-%m",
    ),
    # Lens names a quarter by its first month (2015-04), this project 2015-Q2.
    "QUARTERLY": PeriodSpec(
        91 * 86400, False, "yyyy-'Q'q", re.compile(r"(\d{4})-Q(\d)"),
        "10000-Q1", 1600, ("YEARLY",), "quarter", "quarters",
        "yyyy-MM", "%Y-%m",
    ),
    "YEARLY": PeriodSpec(
        365 * 86400, False, "yyyy", re.compile(r"(\d{4})"),
        "10000", 400, (), "year", "years",
        "yyyy", "%Y",
    ),
}
#: What a message says about instants ``datetime`` cannot hold.
REPRESENTABLE: Final = "0001-01-01T00:00Z to 9999-12-31T23:59:59.999999Z"


def _nests_in(name: str) -> frozenset[str]:
    """``name`` and every period reachable through ``within``: nesting is transitive."""
    found, todo = {name}, [name]
    while todo:
        for coarser in SPECS[todo.pop()].within:
            if coarser not in found:
                found.add(coarser)
                todo.append(coarser)
    return frozenset(found)


#: Which periods a period's partitions fit into exactly (calendar nesting, not durations):
#: the reflexive, transitive closure of each period's ``within``.
NESTS_IN: Final[dict[str, frozenset[str]]] = {name: _nests_in(name) for name in SPECS}


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
