"""The cover question as one value: which fact, which range, which sources may answer.

Why one value: the question travels from a DAG's rendered arguments through the sensor, the
trigger's JSON, the catalog and the cover computation. Spelling its seven parts as keyword
arguments at every layer let them drift; a frozen :class:`CoverRequest` carries them instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, NotRequired, TypedDict, cast

import pendulum

from airflow_partitions.arguments import shown
from airflow_partitions.errors import InvalidInput, InvalidRange, WrongType
from airflow_partitions.periods import UpdatePeriod, zone

#: How a cover treats bounds that do not start a partition of the finest usable period:
#: refuse them (``None``), widen them (``"outer"``) or narrow them (``"inner"``).
ALIGN_MODES: Final = (None, "outer", "inner")


#: Requests recently made by :meth:`CoverRequest.of`, by their loose input
#: (:func:`_loose_key`): a sensor asks the same question every poke, and validating it again
#: costs more than the rest of an unchanged poke.
_RECENT: dict[tuple[object, ...], CoverRequest] = {}
_RECENT_MAX: Final = 256
#: Input types whose equal values make equal requests: a list is not hashable, and another
#: type's equality could say equal where :meth:`CoverRequest.of` reads them apart.
_PLAIN: Final = frozenset((str, bool, int, type(None)))
#: The datetime types a request's bounds usually come as (any other is keyed value by value).
_TIMES: Final = frozenset((dt.datetime, pendulum.DateTime))


def forget_requests() -> None:
    """Forget the requests :meth:`CoverRequest.of` kept: the next call validates its input
    again (tests compare with and without them; a process may want the memory back)."""
    _RECENT.clear()


def _loose_key(start: object, end: object, *rest: object) -> tuple[object, ...] | None:
    """A key equal only for inputs :meth:`CoverRequest.of` turns into equal requests, or None.

    Aware datetimes that are the same instant compare equal in any zone and type, so each
    datetime's type, zone and fold are part of the key; strings, flags and None stand for
    themselves, and a list or tuple of strings for the names it holds when asked. Anything
    else (a naive datetime that must be refused, a set, a generator) has no key and is
    validated afresh. Cost: a sensor's usual question (aware bounds, the rest names, flags
    and None) is keyed by the rest's types and values at once; other input value by value."""
    kinds = tuple(map(type, rest))
    if type(start) in _TIMES and type(end) in _TIMES and _PLAIN.issuperset(kinds):
        first: dt.datetime = start  # type: ignore[assignment]  # its type was just checked
        last: dt.datetime = end  # type: ignore[assignment]
        if first.tzinfo is not None and last.tzinfo is not None:
            return (_TIMES, kinds, rest, first, type(first), first.tzinfo, first.fold,
                    last, type(last), last.tzinfo, last.fold)
    key: list[object] = []
    for value in (start, end, *rest):
        kind = type(value)
        if kind in _PLAIN:  # first: most of a request's inputs are names, flags and None
            key.append((kind, value))
        elif isinstance(value, dt.datetime):
            if value.tzinfo is None:
                return None
            key += (value, kind, value.tzinfo, value.fold)
        elif isinstance(value, tuple | list) and all(type(v) is str for v in value):
            key.append((tuple, tuple(value)))  # its names as they are now
        else:
            return None
    return tuple(key)


class NaiveInstant(InvalidInput):
    """A cover bound has no time zone; covers need aware instants."""


def to_instant(value: object, what: str) -> pendulum.DateTime:
    """An aware instant from a datetime or ISO-8601 text with an offset (a rendered template).

    ``{{ data_interval_start }}`` renders as ``2024-01-01 00:00:00+00:00``, which parses here.
    A naive value is refused: every instant in the API is time-zone aware.

    >>> to_instant("2024-01-01 00:00:00+00:00", "start").isoformat()
    '2024-01-01T00:00:00+00:00'
    """
    if isinstance(value, str):
        text = value.strip()
        if text in ("", "None"):
            raise InvalidInput(f"{what} is empty (the run has no data interval?): pass it")
        try:
            parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"{what} {shown(value)} is not an ISO-8601 instant") from None
    elif isinstance(value, pendulum.DateTime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise NaiveInstant(f"{what} {shown(value)} has no UTC offset; give one (e.g. +00:00)")
        return value  # immutable already: nothing to convert
    elif isinstance(value, dt.datetime):
        parsed = value
        if parsed.tzinfo is dt.UTC:  # the common aware datetime: built directly, 4x cheaper
            return pendulum.DateTime(parsed.year, parsed.month, parsed.day, parsed.hour,
                                     parsed.minute, parsed.second, parsed.microsecond,
                                     tzinfo=pendulum.UTC, fold=parsed.fold)
    else:
        raise InvalidInput(f"{what} must be a datetime or ISO-8601 text, not {shown(value)}")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise NaiveInstant(f"{what} {shown(value)} has no UTC offset; give one (e.g. +00:00)")
    return pendulum.instance(parsed)


def _utc(value: dt.datetime) -> dt.datetime:
    """Compare instants, not wall clocks: two datetimes in one zone compare by wall time and
    ignore ``fold``, so 01:30 (second, after a DST fall-back) would not be after 01:45 (first)."""
    return value.astimezone(dt.UTC)


def _names(what: str, values: Iterable[Any] | str | None) -> tuple[str, ...] | None:
    """``"a, b"`` or ``["a", "b"]`` -> ``("a", "b")``; None stays None (no restriction)."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    if not isinstance(values, Iterable):
        raise WrongType(f"{what} must be a list of names or one comma-separated string, not "
                        f"{shown(values)}")
    names = []
    for value in values:
        name = value.name if isinstance(value, UpdatePeriod) else value
        if not isinstance(name, str):
            raise WrongType(f"each of {what} must be a name, not {shown(value)}")
        names.append(name.strip())
    return tuple(names)


def zoned_instant(text: str, tz: str, what: str) -> pendulum.DateTime:
    """An ISO-8601 instant typed by a person (the CLI, the view's forms); without an offset it
    is read in the fact's zone ``tz``. ``what`` names the field in the error.

    >>> zoned_instant("2015-01-29T06:00", "UTC", "start").isoformat()
    '2015-01-29T06:00:00+00:00'
    """
    try:
        value = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"{what} {shown(text)} is not an ISO-8601 instant "
                           "(e.g. 2015-01-29T06:00:00Z)") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=zone(tz))
    return pendulum.instance(value)


class CoverRequestJson(TypedDict):
    """:meth:`CoverRequest.to_json`: ``where`` only when the request names slices."""

    fact: str | None
    start: str
    end: str
    time_column: str | None
    periods: list[str] | None
    storages: list[str] | None
    align: str | None
    fresh_only: bool
    where: NotRequired[str]


@dataclass(frozen=True)
class CoverRequest:
    """``[start, end)`` of ``fact``, read from the given periods and storages (None: all).

    ``fact`` may be None for a cover of bare sources (:func:`~.
    compute_cover` needs no fact; the catalog does). Build one from loose input with :meth:`of`.
    """

    fact: str | None
    start: pendulum.DateTime
    end: pendulum.DateTime
    time_column: str | None = None
    #: Canonical period names (``"HOURLY"``), so the request is plain JSON as it is.
    periods: tuple[str, ...] | None = None
    storages: tuple[str, ...] | None = None
    align: str | None = None
    #: Leave out stale partitions (the catalog's ``stale``); the cover falls back to fresh ones.
    fresh_only: bool = False
    #: Which slices of the declared dimensions are required, as a filter over dimension
    #: columns (``region IN ('eu','us')``); None: every value each domain requires
    #: (docs/dimensions.md).
    where: str | None = None

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if not isinstance(value, dt.datetime):
                raise InvalidInput(f"cover {name} must be a datetime, not {value!r}")
            if value.tzinfo is None or value.utcoffset() is None:
                raise NaiveInstant(
                    f"cover {name} {value.isoformat()} is naive; pass an aware instant"
                )
        if _utc(self.start) > _utc(self.end):
            raise InvalidRange(
                f"cover range [{self.start.isoformat()}, {self.end.isoformat()}) is reversed: "
                "end before start"
            )
        if self.align not in ALIGN_MODES:
            raise InvalidInput(f"align must be None, 'outer' or 'inner', not {self.align!r}")
        if not isinstance(self.fresh_only, bool):
            raise WrongType(f"fresh_only must be True or False, not {shown(self.fresh_only)}")
        if self.where is not None and not isinstance(self.where, str):
            raise WrongType(f"where must be filter text or None, not {shown(self.where)}")

    @classmethod
    def of(
        cls,
        fact: str | None,
        start: object,
        end: object,
        *,
        time_column: str | None = None,
        periods: Iterable[UpdatePeriod | str] | str | None = None,
        storages: Iterable[str] | str | None = None,
        align: str | None = None,
        allow_empty: bool = True,
        fresh_only: bool = False,
        where: str | None = None,
    ) -> CoverRequest:
        """Validate loose input: datetimes or ISO text, names as lists or comma-separated text.

        ``allow_empty=False`` refuses ``start == end`` with a hint, for DAG runs whose data
        interval is often empty when triggered by hand.

        >>> r = CoverRequest.of("events", "2015-01-01T00:00Z", "2015-01-02T00:00Z",
        ...                     periods="daily, HOURLY")
        >>> r.periods
        ('DAILY', 'HOURLY')
        """
        key = _loose_key(start, end, fact, time_column, periods, storages, align, allow_empty,
                         fresh_only, where)
        if key is not None:
            key = (cls, *key)
        known = _RECENT.get(key) if key is not None else None
        if known is not None:
            return known
        if fact is not None and (not isinstance(fact, str) or not fact.strip()):
            raise InvalidInput(f"fact must be a non-empty string, not {fact!r}")
        start_, end_ = to_instant(start, "start"), to_instant(end, "end")
        if not allow_empty and _utc(end_) <= _utc(start_):
            raise InvalidInput(
                f"the range [{start_.isoformat()}, {end_.isoformat()}) is empty or reversed; a "
                "manual run's data interval is often empty: pass start= and end="
            )
        period_names = _names("periods", periods)
        request = cls(
            fact=fact.strip() if fact is not None else None,
            start=start_,
            end=end_,
            time_column=time_column or None,
            periods=tuple(UpdatePeriod.of(p).name for p in period_names)
            if period_names is not None else None,
            storages=_names("storages", storages),
            align=align or None,
            fresh_only=fresh_only,
            where=where.strip() or None if isinstance(where, str) else where,
        )
        if key is not None:
            if len(_RECENT) >= _RECENT_MAX:
                _RECENT.clear()
            _RECENT[key] = request
        return request

    def require_fact(self) -> str:
        """The fact, for callers that read a catalog (a bare-sources request has none)."""
        if self.fact is None:
            raise InvalidInput("this cover request names no fact; the catalog needs one")
        return self.fact

    @property
    def period_set(self) -> frozenset[UpdatePeriod] | None:
        """The allowed periods as members (None: every period)."""
        return None if self.periods is None else frozenset(map(UpdatePeriod.of, self.periods))

    def to_json(self) -> CoverRequestJson:
        """Plain JSON (the trigger's serialised kwargs carry it)."""
        out: CoverRequestJson = {
            "fact": self.fact,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "time_column": self.time_column,
            "periods": list(self.periods) if self.periods is not None else None,
            "storages": list(self.storages) if self.storages is not None else None,
            "align": self.align,
            "fresh_only": self.fresh_only,
        }
        if self.where is not None:
            out["where"] = self.where
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> CoverRequest:
        """Read :meth:`to_json` back, validating it like any other input."""
        if not isinstance(data, Mapping) or "start" not in data or "end" not in data:
            raise InvalidInput(f"a cover request needs 'start' and 'end', not {data!r}")
        return cls.of(
            # the JSON's values as they are: ``of`` validates each (casts name what it takes)
            cast("str | None", data.get("fact")), data["start"], data["end"],
            time_column=cast("str | None", data.get("time_column")),
            periods=cast("Iterable[str] | str | None", data.get("periods")),
            storages=cast("Iterable[str] | str | None", data.get("storages")),
            align=cast("str | None", data.get("align")),
            fresh_only=cast(bool, data.get("fresh_only", False)),
            where=cast("str | None", data.get("where")),
        )
