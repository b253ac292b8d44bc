"""A fast path for parsing the commonest partition values, identical to the strict parser.

Why: a bulk registration of a million hours parsed each value through the general path (wall
time resolved in the zone, the value formatted back to prove it canonical), about 35 µs a
value, most of a registration's cost. In UTC, and for calendar periods (DAILY, MONTHLY,
QUARTERLY, YEARLY: their ordinals do not depend on the zone), a value whose fields have fixed
widths and valid ranges is canonical by construction and its ordinal is plain arithmetic.

:func:`fast_ordinal` answers only when it is sure, else None and the strict parser decides
(and words the error). Tests hold the two equal on random values, valid and not.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

from airflow_partitions.periods.zones import _EPOCH_ORDINAL, UTC

_FIXED: Final[dict[str, tuple[re.Pattern[str], int]]] = {
    "SECONDLY": (re.compile(r"(\d{4})-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)"), 1),
    "MINUTELY": (re.compile(r"(\d{4})-(\d\d)-(\d\d)-(\d\d)-(\d\d)"), 60),
    "HOURLY": (re.compile(r"(\d{4})-(\d\d)-(\d\d)-(\d\d)"), 3600),
}
_DAY: Final = re.compile(r"(\d{4})-(\d\d)-(\d\d)")
_MONTH: Final = re.compile(r"(\d{4})-(\d\d)")
_QUARTER: Final = re.compile(r"(\d{4})-Q(\d)")
_YEAR: Final = re.compile(r"\d{4}")


def fast_ordinal(period: str, value: str, tz: dt.tzinfo) -> int | None:
    """The ordinal of ``value`` (a period's name), or None when the strict parser must decide."""
    if not isinstance(value, str) or not value.isascii():
        return None
    fixed = _FIXED.get(period)
    if fixed is not None:
        if tz is not UTC and getattr(tz, "name", None) != "UTC":
            return None
        match = fixed[0].fullmatch(value)
        if match is None:
            return None
        year, month, day, *rest = (int(g) for g in match.groups())
        if year < 1 or not 1 <= month <= 12:
            return None
        try:
            days = dt.date(year, month, day).toordinal() - _EPOCH_ORDINAL
        except ValueError:
            return None
        hms = [*rest, 0, 0][:3]
        if hms[0] > 23 or hms[1] > 59 or hms[2] > 59:
            return None
        return (days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2]) // fixed[1]
    return _calendar_ordinal(period, value)


def _calendar_ordinal(period: str, value: str) -> int | None:
    if period == "DAILY":
        match = _DAY.fullmatch(value)
        if match is None or int(match[1]) < 1:
            return None
        try:
            return dt.date(int(match[1]), int(match[2]), int(match[3])).toordinal()
        except ValueError:
            return None
    if period == "MONTHLY":
        match = _MONTH.fullmatch(value)
        if match is None or int(match[1]) < 1 or not 1 <= int(match[2]) <= 12:
            return None
        return int(match[1]) * 12 + int(match[2]) - 1
    if period == "QUARTERLY":
        match = _QUARTER.fullmatch(value)
        if match is None or int(match[1]) < 1 or not 1 <= int(match[2]) <= 4:
            return None
        return int(match[1]) * 4 + int(match[2]) - 1
    if period == "YEARLY" and _YEAR.fullmatch(value) and int(value) >= 1:
        return int(value)
    return None
