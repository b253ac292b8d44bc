"""Cover text a person reads: compact instants, value runs, the one-line status of a cover.

The sensor's poke log, the trigger's events, the operator's errors and the demo all print the
same line, so a user who learns it once can read every log.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Final

from airflow_partitions.cover.skipped import skipped_text

if TYPE_CHECKING:
    from airflow_partitions.cover.model import Cover

#: How many missing ranges a status line shows.
MISSING_SHOWN: Final = 3


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
        # Not strftime("%Y"): glibc prints year 1 as "1", not "0001" (issue 29).
        text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T" + text
        if offset:
            text += value.strftime("%z")[:3] + ":" + value.strftime("%z")[3:]
    return text


def missing_list(cover: Cover | None, shown: int = 20) -> list[str]:
    """The first ``shown`` missing ranges as short strings, then a count of the rest."""
    if cover is None:
        return []
    out = [m.describe() for m in cover.missing[:shown]]
    if len(cover.missing) > shown:
        out.append(f"... (+{len(cover.missing) - shown} more missing ranges)")
    return out


def status_line(cover: Cover) -> str:
    """One compact line: the fact and range, the fraction covered, what is missing."""
    head = (
        f"{cover.fact} [{format_instant(cover.start)}, {format_instant(cover.end, cover.start)}): "
        f"{cover.covered_fraction:.1%} covered by {len(cover)} partition(s)"
    )
    skipped = f"; {skipped_text(cover.skipped)}" if cover.skipped else ""
    if cover.coverable:
        return head + ", coverable" + skipped
    return f"{head}; " + "; ".join(missing_list(cover, MISSING_SHOWN)) + skipped
