"""A fast path for parsing and formatting the commonest partition values, identical to the
strict parser and formatter.

Why: a bulk registration of a million hours parsed each value through the general path (wall
time resolved in the zone, the value formatted back to prove it canonical), about 35 µs a
value, most of a registration's cost. In UTC, and for calendar periods (DAILY, MONTHLY,
QUARTERLY, YEARLY: their ordinals do not depend on the zone), a value whose fields have fixed
widths and valid ranges is canonical by construction and its ordinal is plain arithmetic.

:func:`fast_ordinal` answers only when it is sure, else None and the strict parser decides
(and words the error). Tests hold the two equal on random values, valid and not.

:func:`fast_value` is the way back for fixed periods in UTC: the general formatter converts
each start to the zone and checks its phase (about 40 µs a value), which made decoding a
ten-year EndsAndHoles timeline (87,000 holes) take seconds; here it is integer arithmetic and
one ``date`` per day, about 1 µs.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Final

from airflow_partitions.periods.specs import OFFSET, SPECS
from airflow_partitions.periods.zones import EPOCH_ORDINAL, UTC

#: Per fixed period: its value pattern without an offset (UTC repeats no wall time), its
#: length in seconds, and how many of hour, minute and second its value prints.
_FIXED: Final[dict[str, tuple[re.Pattern[str], int, int]]] = {
    name: (re.compile(spec.regex.pattern.removesuffix(OFFSET)), spec.seconds, spec.clock_fields)
    for name, spec in SPECS.items() if spec.fixed
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
        days = _days(value[:10])
        if days is None:
            return None
        fields = match.groups()  # the date's three, then the hour, minute and second printed
        hour = int(fields[3])
        minute = int(fields[4]) if len(fields) > 4 else 0
        second = int(fields[5]) if len(fields) > 5 else 0
        if hour > 23 or minute > 59 or second > 59:
            return None
        return (days * 86400 + hour * 3600 + minute * 60 + second) // fixed[1]
    return _calendar_ordinal(period, value)


def fast_ordinal_near(period: str, value: str, known: str, ordinal: int) -> int | None:
    """The ordinal of ``value`` when it is ``known``, the UTC value of ``ordinal``, with only
    its last clock field changed (the next hour of a day, as a producer appends); else None,
    and :func:`fast_ordinal` decides. The caller vouches for ``known`` and ``ordinal``.

    Why: a reader proving an answer after each registration elsewhere parses the timeline's
    new ``latest``, which mostly differs from the one it knew in its hour: two slices and two
    integers instead of a pattern match and a date. Cost: O(1).

    >>> fast_ordinal_near("HOURLY", "2015-01-01-07", "2015-01-01-05", 394469)
    394471
    >>> fast_ordinal_near("HOURLY", "2015-01-02-00", "2015-01-01-05", 394469) is None
    True
    >>> fast_ordinal_near("HOURLY", "2015-01-01-24", "2015-01-01-05", 394469) is None
    True
    """
    fixed = _FIXED.get(period)
    if fixed is None or type(value) is not str or len(value) != len(known) \
            or value[:-2] != known[:-2]:
        return None
    field = value[-2:]
    if not (field.isascii() and field.isdigit()) or int(field) > (23 if fixed[2] == 1 else 59):
        return None
    return ordinal + int(field) - int(known[-2:])


#: ``YYYY-MM-DD`` -> days since the epoch, or None for an invalid date. Why: a bulk register
#: of hours asks for each day 24 times; the memo is cleared when it grows past its bound.
_DAY_MEMO: Final[dict[str, int | None]] = {}
_DAY_MEMO_MAX: Final = 4096


def _days(text: str) -> int | None:
    """Days since the epoch of an ASCII ``YYYY-MM-DD`` already matched as digits.

    >>> _days("1970-01-02"), _days("2015-02-29"), _days("0000-01-01")
    (1, None, None)
    """
    if text in _DAY_MEMO:
        return _DAY_MEMO[text]
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
    days: int | None = None
    if year >= 1 and 1 <= month <= 12:
        try:
            days = dt.date(year, month, day).toordinal() - EPOCH_ORDINAL
        except ValueError:
            days = None
    if len(_DAY_MEMO) >= _DAY_MEMO_MAX:
        _DAY_MEMO.clear()
    _DAY_MEMO[text] = days
    return days


def fast_ordinals(period: str, values: Sequence[str], tz: dt.tzinfo) -> list[int] | None:
    """:func:`fast_ordinal` of every value, or None as soon as one needs the strict parser.

    Why: a bulk register validates a million values of one period; one loop with the pattern,
    the zone check and the day memo hoisted out costs about half the per-value calls.

    >>> from airflow_partitions.periods.zones import UTC
    >>> fast_ordinals("HOURLY", ["1970-01-01-01", "1970-01-02-00"], UTC)
    [1, 24]
    >>> fast_ordinals("HOURLY", ["1970-01-01-24"], UTC) is None
    True
    """
    fixed = _FIXED.get(period)
    if fixed is None or (tz is not UTC and getattr(tz, "name", None) != "UTC"):
        found = [fast_ordinal(period, value, tz) for value in values]
        return None if None in found else found  # type: ignore[return-value]
    pattern, step, fields = fixed  # fields: hour; hour and minute; hour, minute and second
    fullmatch = pattern.fullmatch
    memo = _DAY_MEMO
    out: list[int] = []
    for value in values:
        if type(value) is not str or not value.isascii() or fullmatch(value) is None:
            return None
        day = value[:10]
        days = memo[day] if day in memo else _days(day)
        hour = int(value[11:13])
        if days is None or hour > 23:
            return None
        seconds = days * 86400 + hour * 3600
        if fields > 1:
            minute = int(value[14:16])
            second = int(value[17:19]) if fields > 2 else 0
            if minute > 59 or second > 59:
                return None
            seconds += minute * 60 + second
        out.append(seconds // step)
    return out


#: days since the epoch -> ``YYYY-MM-DD``; cleared like :data:`_DAY_MEMO`.
_DAY_TEXT: Final[dict[int, str]] = {}
_LAST_DAY: Final = dt.date.max.toordinal() - EPOCH_ORDINAL


def fast_value(period: str, ordinal: int, tz: dt.tzinfo) -> str | None:
    """The value of fixed-period partition ``ordinal`` in UTC, or None when the general
    formatter must answer (another zone, a calendar period, a day outside years 1 to 9999).

    >>> fast_value("HOURLY", 24, UTC), fast_value("MINUTELY", -1, UTC)
    ('1970-01-02-00', '1969-12-31-23-59')
    >>> fast_value("DAILY", 1, UTC) is None
    True
    """
    fixed = _FIXED.get(period)
    if fixed is None or type(ordinal) is not int or (
            tz is not UTC and getattr(tz, "name", None) != "UTC"):
        return None
    days, rest = divmod(ordinal * fixed[1], 86400)
    day = _DAY_TEXT.get(days)
    if day is None:
        if not -EPOCH_ORDINAL < days <= _LAST_DAY:
            return None
        if len(_DAY_TEXT) >= _DAY_MEMO_MAX:
            _DAY_TEXT.clear()
        day = _DAY_TEXT[days] = dt.date.fromordinal(days + EPOCH_ORDINAL).isoformat()
    hour, rest = divmod(rest, 3600)
    if fixed[2] == 1:
        return f"{day}-{hour:02d}"
    if fixed[2] == 2:
        return f"{day}-{hour:02d}-{rest // 60:02d}"
    return f"{day}-{hour:02d}-{rest // 60:02d}-{rest % 60:02d}"


#: step seconds -> the within-day suffixes of a fixed period (``b"-00"`` .. ``b"-23"`` for
#: hours), built on first use.
_SUFFIXES: Final[dict[int, list[bytes]]] = {}


def fast_value_bytes(period: str, first: int, end: int, tz: dt.tzinfo) -> list[bytes] | None:
    """The values of fixed-period ordinals ``[first, end)`` in UTC as ASCII bytes, in order
    (what the store's value cells hold), or None when :func:`fast_value` would answer None
    for one of them.

    Why: checking a ten-year run of hours against its rows compares 87,000 values; joining
    each day's bytes with precomputed suffixes costs about 0.1 µs a value, against 1 µs for
    :func:`fast_value` one by one.

    >>> fast_value_bytes("HOURLY", 22, 25, UTC)
    [b'1970-01-01-22', b'1970-01-01-23', b'1970-01-02-00']
    """
    fixed = _FIXED.get(period)
    if fixed is None or (tz is not UTC and getattr(tz, "name", None) != "UTC"):
        return None
    if end <= first:
        return []
    step = fixed[1]
    per_day = 86400 // step
    suffixes = _SUFFIXES.get(step)
    if suffixes is None:
        suffixes = _SUFFIXES[step] = [
            str(fast_value(period, n, UTC))[10:].encode() for n in range(per_day)]
    first_day, at = divmod(first, per_day)
    last_day, stop = divmod(end - 1, per_day)
    if not (-EPOCH_ORDINAL < first_day and last_day <= _LAST_DAY):
        return None  # a day outside years 1 to 9999: the general formatter words it
    out: list[bytes] = []
    fromordinal = dt.date.fromordinal
    for day in range(first_day + EPOCH_ORDINAL, last_day + EPOCH_ORDINAL + 1):
        prefix = fromordinal(day).isoformat().encode()
        out += [prefix + suffix for suffix in suffixes[at:]]
        at = 0
    del out[len(out) - (per_day - 1 - stop):]
    return out


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
