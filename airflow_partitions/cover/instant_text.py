"""Compact text of instants and value runs: what every cover line is made of.

Its own module because :mod:`.result` (a run's and a missing range's ``describe``) and
:mod:`.text` (the status line, which reads a :class:`~.result.Cover`) both need it: kept in
``text`` it made the two import each other.
"""

from __future__ import annotations

import datetime as dt


def abbreviate(first: str, last: str) -> str:
    """``first..last`` with the part ``last`` shares with ``first`` dropped at a ``-`` boundary.

    Why: runs print as ``2015-01-29-06..23`` instead of repeating the day.
    """
    if first == last:
        return first
    cut = 0
    for i, ch in enumerate(last):
        if i >= len(first) or first[i] != ch:
            break
        if ch == "-":
            cut = i + 1
    return f"{first}..{last[cut:]}"


def format_instant(value: dt.datetime, since: dt.datetime | None = None) -> str:
    """Compact ISO text: minutes always, seconds when set, the offset unless it is UTC.

    With ``since`` on the same local date and offset, only the time is printed (``12:00/13:00``).
    """
    offset = value.utcoffset() or dt.timedelta(0)
    text = value.strftime("%H:%M")
    if value.second or value.microsecond:
        text += value.strftime(":%S")
        if value.microsecond:
            text += f".{value.microsecond:06d}"
    same_day = (
        since is not None
        and since.date() == value.date()
        and (since.utcoffset() or dt.timedelta(0)) == offset
    )
    if not same_day:
        # Not strftime("%Y"): glibc prints year 1 as "1", not "0001".
        text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T" + text
        if offset:
            text += value.strftime("%z")[:3] + ":" + value.strftime("%z")[3:]
    return text


__all__ = ["abbreviate", "format_instant"]
