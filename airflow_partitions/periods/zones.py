"""Zones and wall-clock arithmetic: naming zones, resolving local times across DST, and the
phase checks that keep sub-daily partitions consecutive in zones with odd offsets.

Why apart from the periods: every rule about *where* an instant falls (gaps, repeats, offsets)
lives here once; :mod:`.update_period` only counts partitions. The helpers it uses are public
names of this module; the package's ``__init__`` exports only what other packages need.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Final, Protocol

import pendulum

from airflow_partitions.arguments import shown
from airflow_partitions.errors import (
    AmbiguousTime,
    InvalidPartitionValue,
    UnsupportedZone,
)

UTC: Final = dt.UTC
EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_ORDINAL: Final = EPOCH.toordinal()
#: Days in 400 Gregorian years. The calendar (weekdays, ISO weeks) repeats after them, and so
#: do a zone's offsets that far from its recorded history (local mean time before it, the last
#: rule after it): local times near years 1 and 9999 that ``datetime`` cannot hold are computed
#: one cycle nearer and their year moved back.
CYCLE_DAYS: Final = 146_097
_CYCLE: Final = dt.timedelta(days=CYCLE_DAYS)

TzLike = str | dt.tzinfo


class PeriodLike(Protocol):
    """What the phase and wall-time checks need of an update period (``UpdatePeriod``): a
    protocol, so this module does not import the one that builds on it."""

    @property
    def name(self) -> str: ...

    @property
    def approx_seconds(self) -> int: ...

    def ordinal(self, instant: dt.datetime, tz: TzLike | None = None) -> int: ...

    def format_ordinal(self, ordinal: int, tz: TzLike | None = None) -> str: ...


_FIXED_OFFSET = re.compile(r"([+-])(\d{2}):(\d{2})")


@functools.lru_cache(maxsize=256)
def _zone_by_name(name: str) -> dt.tzinfo:
    fixed = _FIXED_OFFSET.fullmatch(name)
    if fixed:
        sign = -1 if fixed.group(1) == "-" else 1
        minutes = int(fixed.group(2)) * 60 + int(fixed.group(3))
        return dt.timezone(dt.timedelta(minutes=sign * minutes)) if minutes else UTC
    try:
        return pendulum.timezone(name)
    except Exception as exc:  # pendulum raises its own InvalidTimezone
        raise InvalidPartitionValue(f"unknown time zone {name!r}") from exc


def zone(tz: TzLike | None) -> dt.tzinfo:
    """Normalise a zone name or tzinfo to a pendulum zone (UTC when ``None``)."""
    if tz is None:
        return _zone_by_name("UTC")
    if isinstance(tz, str):
        return _zone_by_name(tz)
    name = zone_name(tz)
    return _zone_by_name(name) if name else tz


def zone_name(tz: dt.tzinfo) -> str:
    """The IANA name of a zone, ``+HH:MM`` for a fixed offset, or ``""`` if it has neither."""
    if tz is UTC:
        return "UTC"
    name = getattr(tz, "key", None) or getattr(tz, "name", None)
    if isinstance(name, str) and (not isinstance(tz, dt.timezone) or name == "UTC"):
        return name
    if isinstance(tz, dt.timezone):
        offset = tz.utcoffset(None)
        if not offset:
            return "UTC"
        minutes = int(offset.total_seconds()) // 60
        sign = "+" if minutes >= 0 else "-"
        return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return ""


@functools.lru_cache(maxsize=256)
def zone_has_transitions(tz: dt.tzinfo) -> bool:
    """Whether the zone's offset ever changes (cheap fast path for UTC and fixed zones)."""
    name = zone_name(tz)
    if name in ("UTC", "Etc/UTC", "GMT", "Etc/GMT") or isinstance(tz, dt.timezone):
        return False
    return not (name.startswith("Etc/GMT") or name.startswith("+") or name.startswith("-"))


def require_aware(value: dt.datetime, what: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidPartitionValue(f"{what} {value.isoformat()} is naive; pass an aware instant")


def local_datetime(y: int, mo: int, d: int, h: int, mi: int, s: int, tz: dt.tzinfo) -> dt.datetime:
    """First existing instant at or after a local wall time (a DST gap moves it forward)."""
    wall = dt.datetime(y, mo, d, h, mi, s, tzinfo=tz, fold=0)
    return wall.astimezone(UTC).astimezone(tz)


def to_zone(instant: dt.datetime, tz: dt.tzinfo) -> tuple[dt.datetime, int]:
    """``instant`` in ``tz``, and the 400-year cycles to add to that local time's year.

    The cycles are 0 unless the local time falls outside ``datetime``'s years (9999-12-31T23:00Z
    is 10000-01-01 in Tokyo); then the local time returned is one cycle nearer.
    """
    try:
        return instant.astimezone(tz), 0
    except OverflowError:
        cycles = 1 if instant.year > 5000 else -1
        return (instant - cycles * _CYCLE).astimezone(tz), cycles


def to_pendulum(value: dt.datetime, tz: dt.tzinfo) -> pendulum.DateTime:
    local = value.astimezone(tz)
    return pendulum.instance(local, tz=tz)


def offset_text(value: dt.datetime) -> str:
    offset = value.utcoffset()
    assert offset is not None
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def is_ambiguous(local: dt.datetime) -> bool:
    """Whether this instant's wall time also names a second instant (DST fall-back)."""
    other = local.replace(fold=1 - local.fold)
    if other.utcoffset() == local.utcoffset():
        return False
    return other.astimezone(UTC).astimezone(local.tzinfo).replace(tzinfo=None) == local.replace(
        tzinfo=None, fold=0
    )


def epoch_seconds(instant: dt.datetime) -> int:
    """Whole seconds since the Unix epoch, floored, without float rounding."""
    utc = instant.astimezone(UTC)
    days = utc.toordinal() - EPOCH_ORDINAL
    return days * 86400 + utc.hour * 3600 + utc.minute * 60 + utc.second


def same_instant(a: dt.datetime, b: dt.datetime) -> bool:
    """Instant equality: ``==`` across zones is False inside a DST-repeated hour (PEP 495)."""
    return a.astimezone(UTC) == b.astimezone(UTC)


def _phase(local: dt.datetime, step_seconds: int) -> int:
    """Offset of local boundaries from UTC boundaries (e.g. 1800 s for hours in +05:30)."""
    offset = local.utcoffset()
    return int(offset.total_seconds()) % step_seconds if offset else 0


@functools.lru_cache(maxsize=256)
def zone_phase(tz: dt.tzinfo, period: PeriodLike) -> int:
    """The one phase a zone's sub-daily boundaries keep; zones whose DST shift breaks it fail.

    Fixed-length partitions are consecutive only if the zone's offset changes by whole
    periods (Berlin's one-hour DST keeps hours aligned; Lord Howe's 30 minutes does not).
    """
    step = period.approx_seconds
    phases = {
        _phase(dt.datetime(year, month, 1, tzinfo=UTC).astimezone(tz), step)
        for year in range(1970, 2101, 5)
        for month in (1, 4, 7, 10)
    }
    if len(phases) > 1:
        raise UnsupportedZone(
            f"{period.name} partitions cannot be used in {zone_name(tz) or tz}: its UTC offset "
            f"changes by a fraction of {period.name.lower()[:-2] or 'a period'}s (DST); use a "
            "zone whose offsets differ by whole hours, or UTC"
        )
    return phases.pop()


def check_phase(local: dt.datetime, phase: int, period: PeriodLike) -> None:
    """Refuse instants from eras when the zone's offset was not aligned (e.g. before 1906)."""
    if _phase(local, period.approx_seconds) != phase:
        raise UnsupportedZone(
            f"{period.name} partitions in {zone_name(local.tzinfo) if local.tzinfo else ''} "
            f"are not defined at {local.isoformat()}: the zone's offset then "
            f"({offset_text(local)}) was not a whole number of {period.name.lower()} steps "
            "away from its modern one"
        )


def resolve_wall_time(
    wall: dt.datetime, tz: dt.tzinfo, offset: str | None, value: str, period: PeriodLike
) -> dt.datetime:
    """The instant a local wall time names, refusing DST gaps and unmarked DST repeats."""
    candidates: list[dt.datetime] = []
    for fold in (0, 1):
        local = wall.replace(tzinfo=tz, fold=fold)
        back = local.astimezone(UTC).astimezone(tz)
        if back.replace(tzinfo=None, fold=0) == wall and all(
            c.utcoffset() != back.utcoffset() for c in candidates
        ):
            candidates.append(back)
    if not candidates:
        raise InvalidPartitionValue(
            f"{shown(value)} does not exist in {zone_name(tz)}: the clocks skip it (DST gap)"
        )
    if offset is not None:
        chosen = [c for c in candidates if offset_text(c) == offset]
        if not chosen:
            raise InvalidPartitionValue(
                f"{shown(value)}: {zone_name(tz)} is never at offset {offset} at that time"
            )
        return chosen[0]
    if len(candidates) > 1:
        options = ", ".join(period.format_ordinal(period.ordinal(c, tz), tz) for c in candidates)
        raise AmbiguousTime(
            f"{shown(value)} occurs twice in {zone_name(tz)} (DST fall-back); write one of "
            f"{options}"
        )
    return candidates[0]
