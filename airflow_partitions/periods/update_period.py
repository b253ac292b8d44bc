"""``UpdatePeriod``: how often a storage gets a partition, its value format, and ordinals; and
``TimePartition``, one partition of a period (one module: each names the other).

Every partition of a period has an integer *ordinal* (consecutive partitions, consecutive
ordinals). Fixed-length periods count seconds from the epoch (shifted by the zone's phase);
calendar periods count days, weeks, months, quarters or years in the zone.

The calendar runs from year 0001 to 9999 in every zone. The first value of year 10000
(``10000-01-01``, ``10000-W01``, ``10000``) formats and parses as the exclusive *end* of the last
partition, so a range or a timeline can end there, but it names no partition. An instant that
``datetime`` cannot hold (before 0001-01-01T00:00Z or after 9999-12-31T23:59:59.999999Z) is an
:class:`~airflow_partitions.errors.InvalidRange`, never a raw ``OverflowError``.
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import re
from dataclasses import dataclass
from typing import Final

import pendulum

from airflow_partitions.arguments import shown
from airflow_partitions.errors import (
    InvalidInput,
    InvalidPartitionValue,
    InvalidRange,
    MisalignedTime,
    MixedPeriods,
    WrongType,
)
from airflow_partitions.periods.fast_parse import fast_ordinal, fast_value
from airflow_partitions.periods.specs import (
    NESTS_IN,
    REPRESENTABLE,
    SPECS,
    PeriodSpec,
    coarse_ordinal,
)
from airflow_partitions.periods.zones import (
    CYCLE_DAYS,
    EPOCH,
    TzLike,
    check_phase,
    epoch_seconds,
    is_ambiguous,
    local_datetime,
    offset_text,
    require_aware,
    resolve_wall_time,
    same_instant,
    to_pendulum,
    to_zone,
    zone,
    zone_has_transitions,
    zone_name,
    zone_phase,
)


@functools.total_ordering
class UpdatePeriod(enum.Enum):
    """How often a storage table gets a new partition; ordered from finest to coarsest."""

    SECONDLY = "SECONDLY"
    MINUTELY = "MINUTELY"
    HOURLY = "HOURLY"
    DAILY = "DAILY"
    WEEKLY = "WEEKLY"
    MONTHLY = "MONTHLY"
    QUARTERLY = "QUARTERLY"
    YEARLY = "YEARLY"

    #: Members are singletons, so the identity hash (a C slot) is valid; Enum's own ``__hash__``
    #: is a Python call, and periods key most of the cover's dicts (a tenth of a slice cover).
    __hash__ = object.__hash__

    @classmethod
    def of(cls, name: str | UpdatePeriod) -> UpdatePeriod:
        """Look a period up by name, case-insensitively, with a readable error."""
        if isinstance(name, UpdatePeriod):
            return name
        found = _BY_NAME.get(name) if isinstance(name, str) else None
        if found is not None:  # the common case, without building the error's list
            return found
        names = ", ".join(p.name for p in cls)
        if not isinstance(name, str):
            raise WrongType(f"an update period must be one of {names} (a name or an "
                            f"UpdatePeriod), not {shown(name)}")
        try:
            return cls[name.strip().upper()]
        except KeyError:
            raise InvalidPartitionValue(
                f"unknown update period {shown(name)}; expected one of {names}"
            ) from None

    @property
    def spec(self) -> PeriodSpec:
        """Every fact of this period: length, nesting, unit words, Lens's spelling."""
        return SPECS[self._value_]  # the member's value without Enum's descriptor call

    @property
    def approx_seconds(self) -> int:
        """Nominal length, used only to order periods."""
        return self.spec.seconds

    @property
    def format_pattern(self) -> str:
        """The value format in Lens/Java notation, for documentation and errors."""
        return self.spec.pattern

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, UpdatePeriod):
            return NotImplemented
        return self.approx_seconds < other.approx_seconds

    def nests_in(self, other: UpdatePeriod) -> bool:
        """Whether every partition of ``other`` is an exact union of partitions of ``self``."""
        return other.value in NESTS_IN[self.value]

    # -- ordinals: the integer identity of a partition ------------------------------------------

    def ordinal(self, instant: dt.datetime, tz: TzLike | None = None) -> int:
        """The ordinal of the partition containing ``instant`` (in ``tz``, else its own zone)."""
        require_aware(instant, "instant")
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        spec = self.spec
        local, cycles = to_zone(instant, zone_)
        if spec.fixed:
            phase = zone_phase(zone_, self)
            ordinal = (epoch_seconds(instant) + phase) // spec.seconds
            check_phase(local, phase, self)
            return ordinal
        return self.calendar_ordinal(local.date()) + cycles * spec.cycle

    def calendar_ordinal(self, day: dt.date) -> int:
        """The ordinal of the calendar partition (DAILY and coarser) holding local ``day``.

        Pure day arithmetic, no zone: the cover's UTC fast path calls it in loops.

        >>> UpdatePeriod.MONTHLY.calendar_ordinal(dt.date(2015, 2, 14))
        24181
        """
        if self is UpdatePeriod.DAILY:
            return day.toordinal()
        if self is UpdatePeriod.WEEKLY:
            return (day.toordinal() - 1) // 7
        if self is UpdatePeriod.MONTHLY:
            return day.year * 12 + day.month - 1
        if self is UpdatePeriod.QUARTERLY:
            return day.year * 4 + (day.month - 1) // 3
        return day.year

    def start_of(self, ordinal: int, tz: TzLike | None = None) -> pendulum.DateTime:
        """The first instant of the partition with this ordinal, in ``tz``.

        A start ``datetime`` cannot hold (the end of the calendar, ``10000-01-01``, or
        ``0001-01-01`` in a zone east of UTC) is an :class:`InvalidRange`.
        """
        zone_ = zone(tz)
        try:
            return to_pendulum(self._start_utc(ordinal, zone_), zone_)
        except (OverflowError, ValueError) as exc:
            if isinstance(exc, InvalidInput):
                raise
            raise InvalidRange(
                f"{self._describe(ordinal, zone_)} starts outside the instants Python can "
                f"represent ({REPRESENTABLE})"
            ) from None

    def end_ordinal(self, tz: TzLike | None = None) -> int:
        """The ordinal after the last partition of year 9999, whose value is the first of year
        10000: it may end a range, but it is never a partition.

        >>> UpdatePeriod.DAILY.format_ordinal(UpdatePeriod.DAILY.end_ordinal())
        '10000-01-01'
        """
        return _end_ordinal(self, zone(tz))

    def _describe(self, ordinal: int, tz: dt.tzinfo) -> str:
        """``DAILY 2015-01-29`` for messages, or the ordinal when it names no value."""
        try:
            return f"{self.name} {self.format_ordinal(ordinal, tz)}"
        except InvalidRange:
            return f"{self.name} ordinal {ordinal}"

    def _start_utc(self, ordinal: int, tz: dt.tzinfo) -> dt.datetime:
        """The start in UTC; OverflowError or ValueError when ``datetime`` cannot hold it."""
        spec = self.spec
        if spec.fixed:
            phase = zone_phase(tz, self)
            start = EPOCH + dt.timedelta(seconds=ordinal * spec.seconds - phase)
            check_phase(to_zone(start, tz)[0], phase, self)
            return start
        day = dt.date.fromordinal(self.calendar_start_day(ordinal))
        return local_datetime(day.year, day.month, day.day, 0, 0, 0, tz)

    def _local_start(self, ordinal: int, tz: dt.tzinfo) -> tuple[dt.datetime, int]:
        """The local start of fixed-period partition ``ordinal`` and the 400-year cycles to add
        to its year (see :func:`~airflow_partitions.periods.zones._to_zone`)."""
        try:
            return to_zone(self._start_utc(ordinal, tz), tz)
        except OverflowError:
            cycles = 1 if ordinal > 0 else -1
        try:
            local, more = to_zone(self._start_utc(ordinal - cycles * self.spec.cycle, tz), tz)
        except OverflowError:
            raise InvalidRange(f"{self.name} ordinal {ordinal} is outside years "
                               "0001 to 9999") from None
        return local, cycles + more

    def calendar_start_day(self, ordinal: int) -> int:
        """The proleptic day number (``date.toordinal``) on which calendar partition
        ``ordinal`` starts: the inverse of :meth:`calendar_ordinal`.

        >>> day = UpdatePeriod.WEEKLY.calendar_start_day(104_846)
        >>> dt.date.fromordinal(day).isoformat()  # ISO weeks start on Monday
        '2010-05-31'
        """
        if self is UpdatePeriod.DAILY:
            return ordinal
        if self is UpdatePeriod.WEEKLY:
            return ordinal * 7 + 1
        if self is UpdatePeriod.MONTHLY:
            year, month = ordinal // 12, ordinal % 12 + 1
        elif self is UpdatePeriod.QUARTERLY:
            year, month = ordinal // 4, (ordinal % 4) * 3 + 1
        else:
            year, month = ordinal, 1
        cycles = (year - 1) // 400  # any year, 10000 included: the calendar repeats
        return dt.date(year - 400 * cycles, month, 1).toordinal() + cycles * CYCLE_DAYS

    # -- instant arithmetic ------------------------------------------------------------------------

    def truncate(self, instant: dt.datetime, tz: TzLike | None = None) -> pendulum.DateTime:
        """Floor: the start of the partition containing ``instant``."""
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        return self.start_of(self.ordinal(instant, zone_), zone_)

    def ceil(self, instant: dt.datetime, tz: TzLike | None = None) -> pendulum.DateTime:
        """The first partition start at or after ``instant``."""
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        if self.is_aligned(instant, zone_):
            return self.truncate(instant, zone_)
        return self.start_of(self.ordinal(instant, zone_) + 1, zone_)

    def is_aligned(self, instant: dt.datetime, tz: TzLike | None = None) -> bool:
        """Whether ``instant`` starts a partition of this period."""
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        ordinal = self.ordinal(instant, zone_)
        try:
            start = self._start_utc(ordinal, zone_)
        except (OverflowError, ValueError) as exc:  # a start datetime cannot hold
            if isinstance(exc, InvalidInput):
                raise
            return False
        return same_instant(start, instant)

    def add(self, instant: dt.datetime, n: int, tz: TzLike | None = None) -> pendulum.DateTime:
        """The start ``n`` partitions after the (aligned) ``instant``; ``n`` may be negative."""
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        return self.start_of(self._aligned_ordinal(instant, zone_) + n, zone_)

    def next(self, instant: dt.datetime, tz: TzLike | None = None) -> pendulum.DateTime:
        """The start of the partition after the one starting at ``instant``."""
        return self.add(instant, 1, tz)

    def previous(self, instant: dt.datetime, tz: TzLike | None = None) -> pendulum.DateTime:
        """The start of the partition before the one starting at ``instant``."""
        return self.add(instant, -1, tz)

    def _aligned_ordinal(self, instant: dt.datetime, tz: dt.tzinfo) -> int:
        ordinal = self.ordinal(instant, tz)
        if not self.is_aligned(instant, tz):
            try:
                enclosing = f"starts at {self.start_of(ordinal, tz).isoformat()}"
            except InvalidRange:
                enclosing = "starts before 0001-01-01T00:00Z"
            raise MisalignedTime(
                f"{instant.isoformat()} does not start a {self.name} partition in "
                f"{zone_name(tz) or tz}; the enclosing one {enclosing}"
            )
        return ordinal

    # -- values ------------------------------------------------------------------------------------

    def format(self, instant: dt.datetime, tz: TzLike | None = None) -> str:
        """The value string of the partition containing ``instant``."""
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        return self.format_ordinal(self.ordinal(instant, zone_), zone_)

    def format_ordinal(self, ordinal: int, tz: TzLike | None = None) -> str:
        """The value string of the partition with this ordinal (or of the calendar's end,
        ``10000-01-01``); an ordinal outside years 0001 to 9999 is an :class:`InvalidRange`."""
        zone_ = zone(tz)
        if self is UpdatePeriod.MONTHLY:
            year, text = ordinal // 12, f"{ordinal // 12:04d}-{ordinal % 12 + 1:02d}"
        elif self is UpdatePeriod.QUARTERLY:
            year, text = ordinal // 4, f"{ordinal // 4:04d}-Q{ordinal % 4 + 1}"
        elif self is UpdatePeriod.YEARLY:
            year, text = ordinal, f"{ordinal:04d}"
        elif self is UpdatePeriod.DAILY or self is UpdatePeriod.WEEKLY:
            day = ordinal if self is UpdatePeriod.DAILY else ordinal * 7 + 1
            cycles = (day - 1) // CYCLE_DAYS  # 0 unless outside datetime's years
            date = dt.date.fromordinal(day - cycles * CYCLE_DAYS)
            if self is UpdatePeriod.DAILY:
                year, rest = date.year + 400 * cycles, date.isoformat()[4:]
            else:
                iso_year, week, _ = date.isocalendar()
                year, rest = iso_year + 400 * cycles, f"-W{week:02d}"
            text = f"{year:04d}{rest}"
        else:
            fast = fast_value(self._value_, ordinal, zone_)
            if fast is not None:
                return fast
            local, cycles = self._local_start(ordinal, zone_)
            year = local.year + 400 * cycles
            clock = "-%m-%d-%H-%M-%S"[:6 + 3 * self.spec.clock_fields]  # -%m-%d, then H M S
            text = f"{year:04d}" + local.strftime(clock)
            if 1 <= year <= 9999 and zone_has_transitions(zone_) and is_ambiguous(local):
                text += offset_text(local)
        if not 1 <= year <= 9999 and text != self.spec.end_text:
            raise InvalidRange(
                f"{self.name} ordinal {ordinal} ({text}) is outside the calendar: values run "
                f"from year 0001 to 9999"
            )
        return text

    def parse(self, value: str, tz: TzLike | None = None) -> pendulum.DateTime:
        """The start instant of the partition named by ``value`` (strict)."""
        zone_ = zone(tz)
        return self.start_of(self.parse_ordinal(value, zone_), zone_)

    def parse_ordinal(self, value: str, tz: TzLike | None = None) -> int:
        """The ordinal of the partition named by ``value``; strict, typed errors."""
        zone_ = zone(tz)
        fast = fast_ordinal(self._value_, value, zone_)  # same answers, no error wording
        return fast if fast is not None else self.strict_ordinal(value, zone_)

    def strict_ordinal(self, value: str, tz: TzLike | None = None) -> int:
        """:meth:`parse_ordinal` without its fast path (the reference it is tested against)."""
        zone_ = zone(tz)
        if not isinstance(value, str):
            raise InvalidPartitionValue(
                f"{self.name} value must be a string, not {shown(value)}"
            )
        if value == self.spec.end_text:
            return self.end_ordinal(zone_)
        match = self.spec.regex.fullmatch(value)
        if match is None:
            raise InvalidPartitionValue(
                f"{shown(value)} is not a {self.name} value; expected the format "
                f"{self.format_pattern}"
            )
        try:
            ordinal = self._ordinal_from_fields(match, zone_, value)
        except (ValueError, OverflowError) as exc:
            if isinstance(exc, InvalidPartitionValue):
                raise
            raise InvalidPartitionValue(
                f"{shown(value)} is not a valid {self.name} value: {exc}"
            ) from None
        canonical = self.format_ordinal(ordinal, zone_)
        if canonical != value:
            raise InvalidPartitionValue(
                f"{shown(value)} is not a canonical {self.name} value; it names {canonical!r}"
            )
        return ordinal

    def _ordinal_from_fields(self, match: re.Match[str], tz: dt.tzinfo, value: str) -> int:
        groups = match.groups()
        year = int(groups[0])
        if year < 1:
            raise InvalidPartitionValue(f"{value!r}: year 0000 does not exist")
        coarse = coarse_ordinal(self.value, year, groups[1:2], value)
        if coarse is not None:
            return coarse
        day = dt.date(year, int(groups[1]), int(groups[2]))
        if self is UpdatePeriod.DAILY:
            return day.toordinal()
        fields = [int(g) for g in groups[3:-1]] + [0, 0]
        wall = dt.datetime(year, day.month, day.day, fields[0], fields[1], fields[2])
        return self._wall_ordinal(wall, tz, groups[-1], value)

    def _wall_ordinal(self, wall: dt.datetime, tz: dt.tzinfo, offset: str | None,
                      value: str) -> int:
        """The ordinal of the fixed-period partition starting at local ``wall``; one 400-year
        cycle nearer when its UTC instant is outside ``datetime``'s years (9999-12-31-23 in
        New York is 10000-01-01T04:00Z)."""
        try:
            return self.ordinal(resolve_wall_time(wall, tz, offset, value, self), tz)
        except OverflowError:
            cycles = 1 if wall.year > 5000 else -1
        shifted = wall.replace(year=wall.year - 400 * cycles)
        instant = resolve_wall_time(shifted, tz, offset, value, self)
        return self.ordinal(instant, tz) + cycles * self.spec.cycle

    # -- convenience -------------------------------------------------------------------------------

    def partition(self, value: str | dt.datetime, tz: TzLike | None = None) -> TimePartition:
        """A :class:`TimePartition` of this period from a value string or an aligned instant."""
        return TimePartition.of(self, value, tz)


@functools.lru_cache(maxsize=256)
def _end_ordinal(period: UpdatePeriod, tz: dt.tzinfo) -> int:
    """The ordinal of the first partition of year 10000 (see :meth:`UpdatePeriod.end_ordinal`)."""
    first_day = UpdatePeriod.YEARLY.calendar_start_day(10000)
    if period is UpdatePeriod.WEEKLY:  # the first ISO week starting in 10000 (its 3 January)
        return -(-(first_day - 1) // 7)
    if not period.spec.fixed:
        return period.calendar_ordinal(dt.date(9999, 12, 31)) + 1
    return period._wall_ordinal(dt.datetime(10000 - 400, 1, 1), tz, None,
                                period.spec.end_text) + period.spec.cycle


#: Exact names, the fast path of :meth:`UpdatePeriod.of`.
_BY_NAME: Final[dict[str, UpdatePeriod]] = {p.name: p for p in UpdatePeriod}


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

    def check_comparable(self, other: TimePartition) -> None:
        """Raise :class:`MixedPeriods` unless ``other`` has this period and zone."""
        if other.period is not self.period or other.tz != self.tz:
            raise MixedPeriods(
                f"cannot compare {self.period.name} {self.value} ({self.tz}) with "
                f"{other.period.name} {other.value} ({other.tz})"
            )

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, TimePartition):
            return NotImplemented
        self.check_comparable(other)
        return self.ordinal < other.ordinal

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"TimePartition({self.period.name}, {self.value!r}, tz={self.tz!r})"
