"""Update periods, time partitions and ranges of them: the time model of the whole project.

Every partition of a period is identified by an integer *ordinal* (consecutive partitions have
consecutive ordinals), so timelines and the cover work on integers and intervals instead of
date strings. Instants are time-zone aware; calendar periods (DAILY and coarser) follow the
table's zone, so a DAILY partition on a DST day is 23 or 25 hours long.

Value formats follow Apache Lens (``yyyy-MM-dd-HH`` ...) except WEEKLY (ISO week, ``2015-W07``)
and QUARTERLY (``2015-Q1``). Parsing is strict: ``2015-13-45`` is an error, never rolled over.
Sub-daily values whose wall-clock time occurs twice (DST fall-back) carry their UTC offset,
``2015-10-25-02+01:00``, because the plain value would name two partitions.
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import pendulum

from airflow_partitions.errors import (
    AmbiguousTime,
    InvalidPartitionValue,
    InvalidRange,
    MisalignedTime,
    MixedPeriods,
    UnsupportedZone,
)

UTC: Final = dt.UTC
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_ORDINAL: Final = _EPOCH.toordinal()

TzLike = str | dt.tzinfo


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
def _zone_has_transitions(tz: dt.tzinfo) -> bool:
    """Whether the zone's offset ever changes (cheap fast path for UTC and fixed zones)."""
    name = zone_name(tz)
    if name in ("UTC", "Etc/UTC", "GMT", "Etc/GMT") or isinstance(tz, dt.timezone):
        return False
    return not (name.startswith("Etc/GMT") or name.startswith("+") or name.startswith("-"))


def _require_aware(value: dt.datetime, what: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidPartitionValue(f"{what} {value.isoformat()} is naive; pass an aware instant")


def _local(y: int, mo: int, d: int, h: int, mi: int, s: int, tz: dt.tzinfo) -> dt.datetime:
    """First existing instant at or after a local wall time (a DST gap moves it forward)."""
    wall = dt.datetime(y, mo, d, h, mi, s, tzinfo=tz, fold=0)
    return wall.astimezone(UTC).astimezone(tz)


def _to_pendulum(value: dt.datetime, tz: dt.tzinfo) -> pendulum.DateTime:
    local = value.astimezone(tz)
    return pendulum.instance(local, tz=tz)


def _offset_text(value: dt.datetime) -> str:
    offset = value.utcoffset()
    assert offset is not None
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _is_ambiguous(local: dt.datetime) -> bool:
    """Whether this instant's wall time also names a second instant (DST fall-back)."""
    other = local.replace(fold=1 - local.fold)
    if other.utcoffset() == local.utcoffset():
        return False
    return other.astimezone(UTC).astimezone(local.tzinfo).replace(tzinfo=None) == local.replace(
        tzinfo=None, fold=0
    )


@dataclass(frozen=True)
class _Spec:
    seconds: int  # fixed length for sub-daily periods, approximate otherwise
    fixed: bool
    pattern: str
    regex: re.Pattern[str]


_OFFSET = r"(?:([+-]\d{2}:\d{2}))?"
_SPECS: Final[dict[str, _Spec]] = {
    "SECONDLY": _Spec(
        1, True, "yyyy-MM-dd-HH-mm-ss",
        re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})" + _OFFSET),
    ),
    "MINUTELY": _Spec(
        60, True, "yyyy-MM-dd-HH-mm",
        re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})" + _OFFSET),
    ),
    "HOURLY": _Spec(
        3600, True, "yyyy-MM-dd-HH", re.compile(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})" + _OFFSET)
    ),
    "DAILY": _Spec(86400, False, "yyyy-MM-dd", re.compile(r"(\d{4})-(\d{2})-(\d{2})")),
    "WEEKLY": _Spec(7 * 86400, False, "yyyy-'W'ww", re.compile(r"(\d{4})-W(\d{2})")),
    "MONTHLY": _Spec(30 * 86400, False, "yyyy-MM", re.compile(r"(\d{4})-(\d{2})")),
    "QUARTERLY": _Spec(91 * 86400, False, "yyyy-'Q'q", re.compile(r"(\d{4})-Q(\d)")),
    "YEARLY": _Spec(365 * 86400, False, "yyyy", re.compile(r"(\d{4})")),
}

# Which periods a period's partitions fit into exactly (calendar nesting, not durations).
_NESTS_IN: Final[dict[str, frozenset[str]]] = {
    "SECONDLY": frozenset(_SPECS),
    "MINUTELY": frozenset(_SPECS) - {"SECONDLY"},
    "HOURLY": frozenset({"HOURLY", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}),
    "DAILY": frozenset({"DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}),
    "WEEKLY": frozenset({"WEEKLY"}),
    "MONTHLY": frozenset({"MONTHLY", "QUARTERLY", "YEARLY"}),
    "QUARTERLY": frozenset({"QUARTERLY", "YEARLY"}),
    "YEARLY": frozenset({"YEARLY"}),
}


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

    @classmethod
    def of(cls, name: str | UpdatePeriod) -> UpdatePeriod:
        """Look a period up by name, case-insensitively, with a readable error."""
        if isinstance(name, UpdatePeriod):
            return name
        try:
            return cls[name.strip().upper()]
        except KeyError:
            names = ", ".join(p.name for p in cls)
            raise InvalidPartitionValue(
                f"unknown update period {name!r}; expected one of {names}"
            ) from None

    @property
    def _spec(self) -> _Spec:
        return _SPECS[self.value]

    @property
    def approx_seconds(self) -> int:
        """Nominal length, used only to order periods."""
        return self._spec.seconds

    @property
    def format_pattern(self) -> str:
        """The value format in Lens/Java notation, for documentation and errors."""
        return self._spec.pattern

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, UpdatePeriod):
            return NotImplemented
        return self.approx_seconds < other.approx_seconds

    def nests_in(self, other: UpdatePeriod) -> bool:
        """Whether every partition of ``other`` is an exact union of partitions of ``self``."""
        return other.value in _NESTS_IN[self.value]

    # -- ordinals: the integer identity of a partition ------------------------------------------

    def ordinal(self, instant: dt.datetime, tz: TzLike | None = None) -> int:
        """The ordinal of the partition containing ``instant`` (in ``tz``, else its own zone)."""
        _require_aware(instant, "instant")
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        spec = self._spec
        if spec.fixed:
            phase = _zone_phase(zone_, self)
            ordinal = (_epoch_seconds(instant) + phase) // spec.seconds
            _check_phase(instant.astimezone(zone_), phase, self)
            return ordinal
        local = instant.astimezone(zone_)
        return self._calendar_ordinal(local.date())

    def _calendar_ordinal(self, day: dt.date) -> int:
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
        """The first instant of the partition with this ordinal, in ``tz``."""
        zone_ = zone(tz)
        try:
            return _to_pendulum(self._start_utc(ordinal, zone_), zone_)
        except (OverflowError, ValueError) as exc:
            raise InvalidRange(f"{self.name} ordinal {ordinal} is outside years 1..9999") from exc

    def _start_utc(self, ordinal: int, tz: dt.tzinfo) -> dt.datetime:
        spec = self._spec
        if spec.fixed:
            phase = _zone_phase(tz, self)
            start = _EPOCH + dt.timedelta(seconds=ordinal * spec.seconds - phase)
            _check_phase(start.astimezone(tz), phase, self)
            return start
        if self is UpdatePeriod.DAILY:
            day = dt.date.fromordinal(ordinal)
        elif self is UpdatePeriod.WEEKLY:
            day = dt.date.fromordinal(ordinal * 7 + 1)
        elif self is UpdatePeriod.MONTHLY:
            day = dt.date(ordinal // 12, ordinal % 12 + 1, 1)
        elif self is UpdatePeriod.QUARTERLY:
            day = dt.date(ordinal // 4, (ordinal % 4) * 3 + 1, 1)
        else:
            day = dt.date(ordinal, 1, 1)
        return _local(day.year, day.month, day.day, 0, 0, 0, tz)

    # -- instant arithmetic ------------------------------------------------------------------------

    def truncate(self, instant: dt.datetime, tz: TzLike | None = None) -> pendulum.DateTime:
        """Floor: the start of the partition containing ``instant``."""
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        return self.start_of(self.ordinal(instant, zone_), zone_)

    def ceil(self, instant: dt.datetime, tz: TzLike | None = None) -> pendulum.DateTime:
        """The first partition start at or after ``instant``."""
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        floor = self.truncate(instant, zone_)
        if _same_instant(floor, instant):
            return floor
        return self.start_of(self.ordinal(instant, zone_) + 1, zone_)

    def is_aligned(self, instant: dt.datetime, tz: TzLike | None = None) -> bool:
        """Whether ``instant`` starts a partition of this period."""
        return _same_instant(self.truncate(instant, tz), instant)

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
        if not _same_instant(self._start_utc(ordinal, tz), instant):
            raise MisalignedTime(
                f"{instant.isoformat()} does not start a {self.name} partition in "
                f"{zone_name(tz) or tz}; the enclosing one starts at "
                f"{self.start_of(ordinal, tz).isoformat()}"
            )
        return ordinal

    # -- values ------------------------------------------------------------------------------------

    def format(self, instant: dt.datetime, tz: TzLike | None = None) -> str:
        """The value string of the partition containing ``instant``."""
        zone_ = zone(tz if tz is not None else instant.tzinfo)
        return self.format_ordinal(self.ordinal(instant, zone_), zone_)

    def format_ordinal(self, ordinal: int, tz: TzLike | None = None) -> str:
        """The value string of the partition with this ordinal."""
        zone_ = zone(tz)
        if self is UpdatePeriod.MONTHLY:
            return f"{ordinal // 12:04d}-{ordinal % 12 + 1:02d}"
        if self is UpdatePeriod.QUARTERLY:
            return f"{ordinal // 4:04d}-Q{ordinal % 4 + 1}"
        if self is UpdatePeriod.YEARLY:
            return f"{ordinal:04d}"
        if self is UpdatePeriod.DAILY:
            return dt.date.fromordinal(ordinal).isoformat()
        if self is UpdatePeriod.WEEKLY:
            year, week, _ = dt.date.fromordinal(ordinal * 7 + 1).isocalendar()
            return f"{year:04d}-W{week:02d}"
        local = self._start_utc(ordinal, zone_).astimezone(zone_)
        text = local.strftime(
            {"HOURLY": "%Y-%m-%d-%H", "MINUTELY": "%Y-%m-%d-%H-%M"}.get(
                self.value, "%Y-%m-%d-%H-%M-%S"
            )
        )
        if local.year < 1000:
            text = f"{local.year:04d}" + text[text.index("-") :]
        if _zone_has_transitions(zone_) and _is_ambiguous(local):
            text += _offset_text(local)
        return text

    def parse(self, value: str, tz: TzLike | None = None) -> pendulum.DateTime:
        """The start instant of the partition named by ``value`` (strict)."""
        zone_ = zone(tz)
        return self.start_of(self.parse_ordinal(value, zone_), zone_)

    def parse_ordinal(self, value: str, tz: TzLike | None = None) -> int:
        """The ordinal of the partition named by ``value``; strict, typed errors."""
        zone_ = zone(tz)
        if not isinstance(value, str):
            raise InvalidPartitionValue(f"{self.name} value must be a string, not {value!r}")
        match = self._spec.regex.fullmatch(value)
        if match is None:
            raise InvalidPartitionValue(
                f"{value!r} is not a {self.name} value; expected the format {self.format_pattern}"
            )
        try:
            ordinal = self._ordinal_from_fields(match, zone_, value)
        except ValueError as exc:
            if isinstance(exc, InvalidPartitionValue):
                raise
            raise InvalidPartitionValue(
                f"{value!r} is not a valid {self.name} value: {exc}"
            ) from None
        canonical = self.format_ordinal(ordinal, zone_)
        if canonical != value:
            raise InvalidPartitionValue(
                f"{value!r} is not a canonical {self.name} value; it names {canonical!r}"
            )
        return ordinal

    def _ordinal_from_fields(self, match: re.Match[str], tz: dt.tzinfo, value: str) -> int:
        groups = match.groups()
        year = int(groups[0])
        if year < 1:
            raise InvalidPartitionValue(f"{value!r}: year 0000 does not exist")
        if self is UpdatePeriod.YEARLY:
            return year
        if self is UpdatePeriod.QUARTERLY:
            quarter = int(groups[1])
            if not 1 <= quarter <= 4:
                raise InvalidPartitionValue(f"{value!r}: quarter must be 1..4")
            return year * 4 + quarter - 1
        if self is UpdatePeriod.MONTHLY:
            month = int(groups[1])
            if not 1 <= month <= 12:
                raise InvalidPartitionValue(f"{value!r}: month must be 01..12")
            return year * 12 + month - 1
        if self is UpdatePeriod.WEEKLY:
            monday = dt.date.fromisocalendar(year, int(groups[1]), 1)
            return (monday.toordinal() - 1) // 7
        day = dt.date(year, int(groups[1]), int(groups[2]))
        if self is UpdatePeriod.DAILY:
            return day.toordinal()
        fields = [int(g) for g in groups[3:-1]] + [0, 0]
        wall = dt.datetime(year, day.month, day.day, fields[0], fields[1], fields[2])
        instant = _resolve_wall_time(wall, tz, groups[-1], value, self)
        return self.ordinal(instant, tz)

    # -- convenience -------------------------------------------------------------------------------

    def partition(self, value: str | dt.datetime, tz: TzLike | None = None) -> TimePartition:
        """A :class:`TimePartition` of this period from a value string or an aligned instant."""
        return TimePartition.of(self, value, tz)


def _epoch_seconds(instant: dt.datetime) -> int:
    """Whole seconds since the Unix epoch, floored, without float rounding."""
    utc = instant.astimezone(UTC)
    days = utc.toordinal() - _EPOCH_ORDINAL
    return days * 86400 + utc.hour * 3600 + utc.minute * 60 + utc.second


def _same_instant(a: dt.datetime, b: dt.datetime) -> bool:
    """Instant equality: ``==`` across zones is False inside a DST-repeated hour (PEP 495)."""
    return a.astimezone(UTC) == b.astimezone(UTC)


def _phase(local: dt.datetime, step_seconds: int) -> int:
    """Offset of local boundaries from UTC boundaries (e.g. 1800 s for hours in +05:30)."""
    offset = local.utcoffset()
    return int(offset.total_seconds()) % step_seconds if offset else 0


@functools.lru_cache(maxsize=256)
def _zone_phase(tz: dt.tzinfo, period: UpdatePeriod) -> int:
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


def _check_phase(local: dt.datetime, phase: int, period: UpdatePeriod) -> None:
    """Refuse instants from eras when the zone's offset was not aligned (e.g. before 1906)."""
    if _phase(local, period.approx_seconds) != phase:
        raise UnsupportedZone(
            f"{period.name} partitions in {zone_name(local.tzinfo) if local.tzinfo else ''} "
            f"are not defined at {local.isoformat()}: the zone's offset then "
            f"({_offset_text(local)}) was not a whole number of {period.name.lower()} steps "
            "away from its modern one"
        )


def _resolve_wall_time(
    wall: dt.datetime, tz: dt.tzinfo, offset: str | None, value: str, period: UpdatePeriod
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
            f"{value!r} does not exist in {zone_name(tz)}: the clocks skip it (DST gap)"
        )
    if offset is not None:
        chosen = [c for c in candidates if _offset_text(c) == offset]
        if not chosen:
            raise InvalidPartitionValue(
                f"{value!r}: {zone_name(tz)} is never at offset {offset} at that time"
            )
        return chosen[0]
    if len(candidates) > 1:
        options = ", ".join(period.format_ordinal(period.ordinal(c, tz), tz) for c in candidates)
        raise AmbiguousTime(
            f"{value!r} occurs twice in {zone_name(tz)} (DST fall-back); write one of {options}"
        )
    return candidates[0]


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

    def _check_comparable(self, other: TimePartition) -> None:
        if other.period is not self.period or other.tz != self.tz:
            raise MixedPeriods(
                f"cannot compare {self.period.name} {self.value} ({self.tz}) with "
                f"{other.period.name} {other.value} ({other.tz})"
            )

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, TimePartition):
            return NotImplemented
        self._check_comparable(other)
        return self.ordinal < other.ordinal

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"TimePartition({self.period.name}, {self.value!r}, tz={self.tz!r})"


_RANGE_TEXT: Final = re.compile(r"\s*([\[(])\s*([^,\s]+)\s*,\s*([^,\s]+)\s*([\])])\s*")


@dataclass(frozen=True)
class TimePartitionRange:
    """The half-open range ``[begin, end)`` of partitions of one period."""

    begin: TimePartition
    end: TimePartition

    def __post_init__(self) -> None:
        self.begin._check_comparable(self.end)
        if self.end.ordinal < self.begin.ordinal:
            raise InvalidRange(
                f"range [{self.begin.value}, {self.end.value}) is reversed: its end is before "
                "its begin"
            )

    @classmethod
    def of(
        cls,
        period: UpdatePeriod | str,
        begin: str | dt.datetime,
        end: str | dt.datetime,
        tz: TzLike | None = None,
    ) -> TimePartitionRange:
        """``[begin, end)`` from two values or aligned instants."""
        return cls(TimePartition.of(period, begin, tz), TimePartition.of(period, end, tz))

    @classmethod
    def parse(
        cls, text: str, period: UpdatePeriod | str, tz: TzLike | None = None
    ) -> TimePartitionRange:
        """Parse ``[a, b)``, ``[a, b]``, ``(a, b]`` or ``(a, b)`` into a half-open range."""
        match = _RANGE_TEXT.fullmatch(text)
        if match is None:
            raise InvalidRange(
                f"{text!r} is not a range; write [a, b), [a, b], (a, b] or (a, b)"
            )
        left, a, b, right = match.groups()
        begin = TimePartition.of(period, a, tz)
        end = TimePartition.of(period, b, tz)
        if left == "(":
            begin = begin.next()
        if right == "]":
            end = end.next()
        if end.ordinal < begin.ordinal:
            raise InvalidRange(f"range {text!r} is reversed: its end is before its begin")
        return cls(begin, end)

    @property
    def period(self) -> UpdatePeriod:
        """The period of every partition in the range."""
        return self.begin.period

    @property
    def start_time(self) -> pendulum.DateTime:
        """The first instant covered."""
        return self.begin.start

    @property
    def end_time(self) -> pendulum.DateTime:
        """The first instant after the range."""
        return self.end.start

    def is_empty(self) -> bool:
        """Whether the range holds no partition."""
        return self.begin.ordinal == self.end.ordinal

    def __len__(self) -> int:
        return self.end.ordinal - self.begin.ordinal

    def __iter__(self) -> Iterator[TimePartition]:
        for ordinal in range(self.begin.ordinal, self.end.ordinal):
            yield TimePartition(self.begin.period, ordinal, self.begin.tz)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, TimePartition):
            self.begin._check_comparable(item)
            return self.begin.ordinal <= item.ordinal < self.end.ordinal
        if isinstance(item, dt.datetime):
            return bool(self.start_time <= item < self.end_time)
        return False

    def __str__(self) -> str:
        return f"[{self.begin.value}, {self.end.value})"

    def __repr__(self) -> str:
        return f"TimePartitionRange({self.period.name}, {self}, tz={self.begin.tz!r})"
