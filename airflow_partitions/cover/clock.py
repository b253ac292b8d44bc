"""Integer instants for the cover: microseconds since the epoch, and period ordinals around them.

Why: the cover compares and adds many instants; integers are exact and cheap. Conversions go
through :mod:`airflow_partitions.periods` (the single source of truth), with an arithmetic fast
path for UTC, where every period boundary is a plain multiple of its length or a calendar date.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

import pendulum

from airflow_partitions.errors import InvalidRange
from airflow_partitions.periods import UpdatePeriod, zone, zone_name

US: Final = 1_000_000
DAY_US: Final = 86_400 * US
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DAY: Final = _EPOCH.toordinal()
_ONE_US: Final = dt.timedelta(microseconds=1)
_SUB: Final = dt.datetime.__sub__
#: Each fixed period's length in microseconds (the UTC fast path divides by it).
FIXED_US: Final[dict[UpdatePeriod, int]] = {
    p: p.spec.seconds * US for p in UpdatePeriod if p.spec.fixed
}
_UTC_NAMES: Final = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/Universal", "Universal"})


def to_us(instant: dt.datetime) -> int:
    """Microseconds since 1970-01-01T00:00Z of an aware instant (exact integer arithmetic)."""
    # datetime's own subtraction (C, exact): pendulum overrides ``-`` with a slower Interval.
    return _SUB(instant, _EPOCH) // _ONE_US


#: The first and last instants ``datetime`` can hold, in microseconds since the epoch.
MIN_US: Final = to_us(dt.datetime.min.replace(tzinfo=dt.UTC))
MAX_US: Final = to_us(dt.datetime.max.replace(tzinfo=dt.UTC))


def from_us(us: int, tz: str) -> pendulum.DateTime:
    """The pendulum instant ``us`` microseconds after the epoch, in zone ``tz``; one that
    ``datetime`` cannot hold (before year 1 or after 9999, in UTC or in ``tz``) is an
    :class:`InvalidRange`."""
    zone_ = zone(tz)
    try:
        utc = _EPOCH + dt.timedelta(microseconds=us)
        if zone_ is pendulum.UTC:  # the common zone: the fields as they are, 4x cheaper
            return pendulum.DateTime(utc.year, utc.month, utc.day, utc.hour, utc.minute,
                                     utc.second, utc.microsecond, tzinfo=zone_)
        return pendulum.instance(utc.astimezone(zone_), tz=zone_)
    except OverflowError:
        side = "after 9999-12-31T23:59:59.999999Z" if us > 0 else "before 0001-01-01T00:00Z"
        raise InvalidRange(f"an instant {side} cannot be represented (in {tz})") from None


def clock_for(tz: str) -> Clock:
    """The shared :class:`Clock` of zone ``tz`` (its start cache is a pure function of the
    zone, so every cover in the process may share it): O(1) after the first call."""
    found = _CLOCKS.get(tz)
    if found is None:
        found = _CLOCKS[tz] = Clock(tz)
    return found


class Clock:
    """Ordinal <-> instant conversions of every period in one zone."""

    def __init__(self, tz: str, *, cache: bool = True) -> None:
        self.tz = tz
        self.zone = zone(tz)
        self.fast = zone_name(self.zone) in _UTC_NAMES
        self._cache: dict[tuple[UpdatePeriod, int], int] | None = {} if cache else None

    def floor(self, period: UpdatePeriod, us: int) -> int:
        """The ordinal of the partition containing instant ``us``."""
        if self.fast:
            step = FIXED_US.get(period)
            if step is not None:
                return us // step
            return period.calendar_ordinal(dt.date.fromordinal(us // DAY_US + _EPOCH_DAY))
        instant = _EPOCH + dt.timedelta(microseconds=us)
        return period.ordinal(instant, self.zone)

    def ceil(self, period: UpdatePeriod, us: int) -> int:
        """The ordinal of the first partition starting at or after ``us``."""
        return self.floor(period, us) + (not self.is_aligned(period, us))

    def start(self, period: UpdatePeriod, ordinal: int) -> int:
        """The first instant (microseconds) of partition ``ordinal``."""
        if self.fast:
            step = FIXED_US.get(period)
            if step is not None:
                return ordinal * step
            return (period.calendar_start_day(ordinal) - _EPOCH_DAY) * DAY_US
        if self._cache is None:
            return to_us(period.start_of(ordinal, self.zone))
        key = (period, ordinal)
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) >= _CACHE_MAX:  # a shared clock lives as long as the process
                self._cache.clear()
            found = self._cache[key] = to_us(period.start_of(ordinal, self.zone))
        return found

    def is_aligned(self, period: UpdatePeriod, us: int) -> bool:
        """Whether ``us`` starts a partition of ``period``."""
        try:
            return self.start(period, self.floor(period, us)) == us
        except InvalidRange:  # that partition starts before 0001-01-01T00:00Z: not at ``us``
            return False


_CLOCKS: dict[str, Clock] = {}
#: Partition starts a clock remembers before it starts again (about 10 MB).
_CACHE_MAX: Final = 100_000
