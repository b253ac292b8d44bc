"""Apache Lens table parameters in and out: every timeline of one storage table at once.

Lens keeps a storage table's timelines in its Hive table parameters: the keys of each
(period, column) timeline under ``cube.storagetable.partition.timeline.cache.<PERIOD>.<col>.``
(written by :meth:`PartitionTimeline.to_properties` exactly as Lens writes them), plus
``cube.storagetable.partition.timeline.cache.present = true``, without which Lens ignores them
and rebuilds every timeline from the table's partitions.

Two value spellings differ on purpose: Lens writes a QUARTERLY partition as the
``yyyy-MM`` of its first month (``2015-04``), this project as ``2015-Q2``; the two are
translated here, both ways. Lens's WEEKLY values (``yyyy-'W'ww`` in the JVM's locale, often
Sunday-start weeks numbered inside the calendar year) name other weeks than the ISO weeks this
project uses, with the same text, so WEEKLY timelines never cross: they are skipped on the way
in and left out on the way out (and ``present`` with them, so Lens rebuilds its own).

Sub-daily values in a DST fall-back are written without their offsets wherever a form Lens
reads exactly exists (:mod:`.lens_dst`); where none does, the export says so.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from airflow_partitions.errors import CorruptTimeline, InvalidInput
from airflow_partitions.periods import TzLike, UpdatePeriod, zone, zone_name
from airflow_partitions.timelines.base import PartitionTimeline
from airflow_partitions.timelines.factory import UnknownTimelineClass, timeline_class
from airflow_partitions.timelines.lens_dst import lens_form
from airflow_partitions.timelines.properties import (
    KEY_ROOT,
    PRESENT_KEY,
    CorruptProperty,
    storage_class_key,
    timeline_prefix,
)

TimelineId = tuple[UpdatePeriod, str]

#: The relative keys each implementation reads (``holes`` alone: older Lens, unchunked).
_OWN_KEYS: Final = {
    "StoreAll": re.compile(r"partitions(\.size|[0-9]+)?"),
    "EndsAndHoles": re.compile(r"first|latest|holes(\.size|[0-9]+)?"),
    "Ranges": re.compile(r"ranges(\.size|[0-9]+)?"),
}
_VALUE_KEYS: Final = re.compile(r"first|latest|(partitions|holes|ranges)[0-9]*")
_OUR_QUARTER: Final = re.compile(r"(?<![0-9])([0-9]{4})-Q([1-4])(?![0-9])")
_LENS_QUARTER: Final = re.compile(r"(?<![0-9])([0-9]{4})-([0-9]{2})(?![0-9])")
WEEKLY_REASON: Final = (
    "Lens's WEEKLY values (yyyy-'W'ww in its JVM's locale) name other weeks than the ISO "
    "weeks used here, with the same text"
)


class LensParameterError(InvalidInput):
    """A Lens table parameter is missing or wrong; ``key`` names it."""

    def __init__(self, key: str, reason: str):
        self.key, self.reason = key, reason
        super().__init__(f"{key}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.key, self.reason)


@dataclass(frozen=True)
class LensTable:
    """The timelines read from one table's parameters, and what was left aside."""

    timelines: dict[TimelineId, PartitionTimeline]
    skipped: tuple[TimelineId, ...]  # WEEKLY timelines: never read (see the module doc)
    ignored: tuple[str, ...]  # keys of implementations not selected, ignored as Lens does
    others: int  # parameters outside the timeline cache (Hive's own, Lens's other keys)
    ambiguous: tuple[str, ...] = ()  # fall-back values and how they were read


def to_lens_value(period: UpdatePeriod, text: str) -> str:
    """A value (or a property holding values) in Lens's spelling.

    >>> to_lens_value(UpdatePeriod.QUARTERLY, "[2015-Q2, 2016-Q1),")
    '[2015-04, 2016-01),'
    >>> to_lens_value(UpdatePeriod.DAILY, "2015-04-01")
    '2015-04-01'
    """
    if period is not UpdatePeriod.QUARTERLY:
        return text
    return _OUR_QUARTER.sub(lambda m: f"{m[1]}-{3 * int(m[2]) - 2:02d}", text)


def from_lens_value(period: UpdatePeriod, text: str, key: str) -> str:
    """A value (or a property holding values) in this project's spelling.

    >>> from_lens_value(UpdatePeriod.QUARTERLY, "2015-10,2016-01", "x.holes0")
    '2015-Q4,2016-Q1'
    """
    if period is not UpdatePeriod.QUARTERLY:
        return text

    def quarter(match: re.Match[str]) -> str:
        month = int(match[2])
        if month not in (1, 4, 7, 10):
            raise LensParameterError(
                key, f"{match[0]!r} is not a quarter: Lens writes a QUARTERLY partition as "
                     "the yyyy-MM of its first month (01, 04, 07 or 10)")
        return f"{match[1]}-Q{(month + 2) // 3}"

    return _LENS_QUARTER.sub(quarter, text)


def lens_properties(timeline: PartitionTimeline) -> dict[str, str]:
    """One timeline's properties exactly as Lens writes them (its QUARTERLY spelling too).

    A fall-back value keeps its offset here; the table export
    (:func:`lens_table_parameters`) writes the form Lens reads back exactly (:mod:`.lens_dst`).
    Raises :class:`LensParameterError` for a WEEKLY timeline (see the module doc).
    """
    _refuse_weekly(timeline)
    return {k: to_lens_value(timeline.period, v) for k, v in timeline.to_properties().items()}


def _refuse_weekly(timeline: PartitionTimeline) -> None:
    if timeline.period is UpdatePeriod.WEEKLY:
        raise LensParameterError(storage_class_key(timeline.period.name, timeline.column),
                                 f"a WEEKLY timeline cannot be written for Lens: {WEEKLY_REASON}")


def _lens_export_properties(timeline: PartitionTimeline,
                            warnings: list[str] | None) -> dict[str, str]:
    """The form Lens reads back as exactly the timeline's partitions (:mod:`.lens_dst`): a
    timeline whose values carry DST offsets may be written as Ranges or with its ``latest``
    unsuffixed; when some value must keep its offset, the reason goes to ``warnings``."""
    _refuse_weekly(timeline)
    form = lens_form(timeline)
    if form.warning is not None and warnings is not None:
        warnings.append(form.warning)
    return {k: to_lens_value(timeline.period, v) for k, v in form.properties.items()}


def lens_table_parameters(
    timelines: Mapping[TimelineId, PartitionTimeline], warnings: list[str] | None = None,
) -> tuple[dict[str, str], list[TimelineId]]:
    """The table parameters Lens would hold for these timelines, and the WEEKLY ones left out.

    ``present`` is ``true`` only when nothing was left out: otherwise Lens would trust an
    incomplete set, so it is omitted and Lens rebuilds every timeline from its partitions.
    A timeline that must keep DST offsets (no form without them names exactly its partitions
    for Lens) is written with them, and ``warnings`` gets one line for it: Lens cannot parse
    them and rebuilds the table's timelines from its partitions, while this project's import
    reads them exactly.
    """
    out: dict[str, str] = {}
    skipped: list[TimelineId] = []
    for key in sorted(timelines, key=lambda k: (k[0], k[1])):
        if key[0] is UpdatePeriod.WEEKLY:
            skipped.append(key)
            continue
        out.update(_lens_export_properties(timelines[key], warnings))
    if not skipped:
        out[PRESENT_KEY] = "true"
    return dict(sorted(out.items())), skipped


def read_lens_table(
    params: Mapping[str, object], timelines: Iterable[TimelineId], tz: TzLike = "UTC"
) -> LensTable:
    """Every wanted timeline from a table's parameters, checked as a whole before use.

    Refused with :class:`LensParameterError` naming the key: ``present`` missing or not
    ``true``; a timeline key of a (period, column) not wanted, or that no implementation
    writes; a non-string value; a wanted timeline without any key; and every corruption the
    loaders report (a missing chunk, a bad value, ...). Keys outside the timeline cache are
    counted and ignored.
    """
    wanted = {timeline_prefix(p.name, c): (p, c) for p, c in timelines}
    present = params.get(PRESENT_KEY)
    if present is None:
        raise LensParameterError(PRESENT_KEY, "missing: Lens writes it as 'true' once the "
                                 "timelines are stored, and ignores them without it")
    if not isinstance(present, str) or present.strip().lower() != "true":
        raise LensParameterError(PRESENT_KEY, f"is {present!r}, not 'true': Lens itself does "
                                 "not trust these timelines and rebuilds them from partitions")
    grouped: dict[TimelineId, dict[str, str]] = {key: {} for key in wanted.values()}
    others = 0
    for key in sorted(params):
        if key == PRESENT_KEY:
            continue
        if not key.startswith(KEY_ROOT + "."):
            others += 1
            continue
        prefix = _prefix_of(key)
        if prefix not in wanted:
            have = ", ".join(f"{p.name}.{c}" for p, c in wanted.values()) or "none"
            raise LensParameterError(key, f"names a timeline this storage does not have "
                                          f"(it has: {have})")
        value = params[key]
        if not isinstance(value, str):
            raise LensParameterError(key, f"is {value!r}: table parameters are strings")
        grouped[wanted[prefix]][key[len(prefix):]] = value
    loaded: dict[TimelineId, PartitionTimeline] = {}
    skipped: list[TimelineId] = []
    ignored: list[str] = []
    ambiguous: list[str] = []
    for (period, column), relative in grouped.items():
        if period is UpdatePeriod.WEEKLY:
            skipped.append((period, column))
            continue
        if period.spec.fixed:  # only sub-daily wall times repeat at a DST fall-back
            relative = _fall_back(period, column, relative, tz, ambiguous)
        timeline, extra = _load(period, column, relative, tz)
        _check_calendar(timeline, tz)
        loaded[(period, column)] = timeline
        ignored.extend(extra)
    return LensTable(loaded, tuple(skipped), tuple(sorted(ignored)), others, tuple(ambiguous))


#: A sub-daily value as Lens writes it: no offset after it.
_WALL: Final = re.compile(r"(?<![0-9])[0-9]{4}(?:-[0-9]{2}){3,5}(?![0-9+:]|-[0-9]{2}:)")


def _fall_back(period: UpdatePeriod, column: str, relative: Mapping[str, str], tz: TzLike,
               notes: list[str]) -> dict[str, str]:
    """Lens's values of the repeated fall-back wall time, spelled with their offsets.

    Why: Lens formats each partition in the JVM's zone, so the two hours of a DST fall-back
    (``2015-10-25-02`` in Europe/Berlin) are written with the same text, twice; this project
    spells them ``2015-10-25-02+02:00`` and ``+01:00``. As Lens meant them: a value a list
    (``partitions``, ``holes``) holds twice is both, earlier first; ``first`` and a range's
    bounds are the earlier, ``latest`` the later; a value a list holds once is the earlier
    partition, and a hole held once is both (a hole is never read as data). Each one is
    said in ``notes``. Cost: one regex pass over the values.
    """
    fmt = period.spec.lens_strftime
    assert fmt is not None  # every fixed period's Lens value has a strftime spelling
    counts: dict[str, int] = {}
    for name, text in relative.items():
        if name.startswith(("partitions", "holes")) and name[-5:] != ".size":
            for token in _WALL.findall(text):
                counts[token] = counts.get(token, 0) + 1
    seen: dict[str, int] = {}
    out = dict(relative)
    for name, text in relative.items():
        if not _VALUE_KEYS.fullmatch(name):
            continue

        def spell(match: re.Match[str], name: str = name) -> str:
            token = match[0]
            try:
                wall = dt.datetime.strptime(token, fmt)
            except ValueError:
                return token  # the loader names what is wrong with it
            zone_ = zone(tz)
            both = [period.format_ordinal(period.ordinal(wall.replace(tzinfo=zone_, fold=f),
                                                         zone_), zone_) for f in (0, 1)]
            if both[0] == both[1]:
                return token  # not a repeated wall time
            many = counts.get(token, 0)
            if name == "latest":
                chosen, said = both[1], f"the later {both[1]}"
            elif name.startswith("holes") and many < 2:
                chosen, said = ",".join(both), f"both {both[0]} and {both[1]} (a hole)"
            elif name.startswith(("partitions", "holes")) and many >= 2:
                index = min(seen.get(token, 0), 1)
                seen[token] = seen.get(token, 0) + 1
                chosen, said = both[index], f"{both[0]} and {both[1]} (listed twice)"
            else:
                chosen, said = both[0], f"the earlier {both[0]}"
            note = (f"{period.name}.{column}.{name.rstrip('0123456789') or name}: "
                    f"{token!r} occurs twice in {zone_name(zone_)}; read as {said}")
            if note not in notes:
                notes.append(note)
            return chosen

        out[name] = _WALL.sub(spell, text)
    return out


def _check_calendar(timeline: PartitionTimeline, tz: TzLike) -> None:
    """Refuse a timeline reaching past the calendar (years 0001 to 9999), before any write.

    Why: ``latest = 10000-01-01-00`` parses (it is the calendar's exclusive end), but a
    timeline holding it fails when its next cell is formatted, so an import that stored it
    would leave a cell every later read fails on. Cost: two formats per timeline.
    """
    ranges = timeline.ordinal_ranges()
    if not ranges:
        return
    period = timeline.period
    for ordinal, which in ((ranges[0][0], "first"), (ranges[-1][1] - 1, "latest")):
        try:
            text = period.format_ordinal(ordinal, tz)
        except InvalidInput:
            text = ""
        if len(text.split("-", 1)[0]) != 4:  # 10000-01-01-00 ends the calendar, names nothing
            raise LensParameterError(
                timeline_prefix(period.name, timeline.column) + which,
                f"reaches {text or 'past the calendar'}: partition values run from year 0001 "
                "to 9999; nothing was imported")


def _prefix_of(key: str) -> str:
    """``<root>.<PERIOD>.<col>.`` of a timeline key (the rest names the property)."""
    parts = key[len(KEY_ROOT) + 1:].split(".", 2)
    return f"{KEY_ROOT}.{'.'.join(parts[:2])}." if len(parts) == 3 else key


def _load(period: UpdatePeriod, column: str, relative: Mapping[str, str],
          tz: TzLike) -> tuple[PartitionTimeline, list[str]]:
    """One timeline from its relative keys, and the keys of other implementations."""
    prefix = timeline_prefix(period.name, column)
    class_key = storage_class_key(period.name, column)
    if not relative:
        raise LensParameterError(class_key, f"missing: the parameters hold no key of the "
                                            f"{period.name} {column} timeline")
    try:
        cls = timeline_class(relative.get("storage.class"))
    except UnknownTimelineClass as exc:
        raise LensParameterError(class_key, str(exc)) from None
    own, ignored = {}, []
    for name, value in relative.items():
        if name == "storage.class" or _OWN_KEYS[cls.kind].fullmatch(name):
            own[prefix + name] = (from_lens_value(period, value, prefix + name)
                                  if _VALUE_KEYS.fullmatch(name) else value)
        elif any(pattern.fullmatch(name) for pattern in _OWN_KEYS.values()):
            ignored.append(prefix + name)
        else:
            raise LensParameterError(prefix + name, "is not a timeline property Lens writes "
                                     "(storage.class, first, latest, holes*, ranges*, "
                                     "partitions*)")
    try:
        return cls.from_properties(own, period, column, tz), ignored
    except CorruptProperty as exc:
        raise LensParameterError(exc.key, exc.message) from None
    except CorruptTimeline as exc:
        raise LensParameterError(prefix + "*", str(exc)) from None
