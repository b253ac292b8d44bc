"""A timeline's form for Lens across DST: no value with an offset wherever Lens can be told exactly.

Why: Lens parses a value with ``SimpleDateFormat`` of its period's pattern in the JVM's zone.
A value with this project's DST offset (``2015-10-25-02+01:00``) does not have the pattern's
length, so Lens refuses the table's timelines and rebuilds them from its partitions; a repeated
wall time without offset (``2015-10-25-02`` in Europe/Berlin) is parsed as its later, standard
time occurrence, while the same text written by Lens may mean either (Lens formats both hours
alike, and :func:`airflow_partitions.timelines.read_lens_table` reads it by where it stands).
Values whose wall time happens once mean the same to every reader; a repeated one means the same
to both only as EndsAndHoles' ``latest`` (both take the later). So the form written for Lens is
the first of these that exists:

- the timeline's own properties, when none of their values carries an offset;
- EndsAndHoles whose ``latest`` alone is repeated, as its later occurrence, without offset:
  the one place both readers take a repeated wall time the same way (the later);
- otherwise Ranges, each repeated bound moved to its neighbour with Lens's other bracket:
  ``[b`` becomes ``(b-1`` and ``e)`` becomes ``e-1]``. Lens's ``TimePartitionRange.parseFrom``
  reads both, and ``TimePartition.next`` adds milliseconds, so the partition after the
  neighbour is the repeated one itself (``(2015-10-25-01`` begins at ``02+02:00``).

Any other place reads a repeated wall time differently in the two readers (the import takes
``first``, a range bound or a value listed once as the earlier). A form of once-only values in
StoreAll or EndsAndHoles has one in Ranges too: a range whose begin and the partition before it
both repeat, or whose end and last partition both do, makes StoreAll list a repeated partition
and EndsAndHoles a repeated end or hole. So when neither of the last two forms exists, none
does: the properties keep their offsets, and the form says so in its ``warning``. Cost: one
regex pass over the written values; two formats per range when a value carries an offset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import zone
from airflow_partitions.timelines.base import PartitionTimeline
from airflow_partitions.timelines.ends_and_holes import EndsAndHolesTimeline
from airflow_partitions.timelines.factory import convert
from airflow_partitions.timelines.properties import (
    encode_chunks,
    storage_class_key,
    timeline_prefix,
)
from airflow_partitions.timelines.ranges import RangesTimeline

#: A value's DST offset: ``2015-10-25-02+01:00``, ``2015-11-01-01-05:00``.
OFFSET: Final = re.compile(r"[0-9][+-][0-9]{2}:[0-9]{2}(?![0-9])")


@dataclass(frozen=True)
class LensForm:
    """One timeline's properties as written for Lens, the implementation they name, and why
    a value keeps its DST offset (``None`` when none does)."""

    properties: dict[str, str]  # full keys; this project's QUARTERLY spelling
    kind: str
    warning: str | None = None


def lens_form(timeline: PartitionTimeline) -> LensForm:
    """The properties Lens reads as exactly this timeline's partitions, without DST offsets
    when any form allows it (see the module doc)."""
    own = timeline.to_properties()
    if not any(OFFSET.search(value) for value in own.values()):
        return LensForm(own, timeline.kind)
    ends = _ends_later_latest(timeline, own)
    if ends is not None and timeline.kind == EndsAndHolesTimeline.kind:
        return LensForm(ends, EndsAndHolesTimeline.kind)
    items: list[str] = []
    for begin, end in timeline.ordinal_ranges():
        first = _once(timeline, begin, begin - 1)
        last = _once(timeline, end, end - 1)
        if first is None or last is None:
            if ends is not None:
                return LensForm(ends, EndsAndHolesTimeline.kind)
            return LensForm(own, timeline.kind, _warning(timeline, begin, end, first is None))
        items.append(f"{'[' if first[0] == begin else '('}{first[1]}, "
                     f"{last[1]}{')' if last[0] == end else ']'}")
    prefix = timeline_prefix(timeline.period.name, timeline.column)
    out = {prefix + key: value for key, value in encode_chunks("ranges", items).items()}
    out[storage_class_key(timeline.period.name, timeline.column)] = RangesTimeline.lens_class
    return LensForm(out, RangesTimeline.kind)


def _ends_later_latest(timeline: PartitionTimeline,
                       own: dict[str, str]) -> dict[str, str] | None:
    """EndsAndHoles with ``latest`` written without its offset, when that is the one offset
    and ``latest`` is the later occurrence of its wall time; else ``None``."""
    latest = timeline.latest_ordinal()
    if latest is None:
        return None
    text = timeline.format(latest)
    instant = timeline.period.start_of(latest, timeline.tz)
    if not OFFSET.search(text) or instant.astimezone(zone(timeline.tz)).fold != 1:
        return None
    ends = own if timeline.kind == EndsAndHolesTimeline.kind else convert(
        timeline, EndsAndHolesTimeline.kind).to_properties()
    latest_key = timeline_prefix(timeline.period.name, timeline.column) + "latest"
    out = {**ends, latest_key: OFFSET.sub(lambda m: m[0][0], text)}
    return None if any(OFFSET.search(value) for value in out.values()) else out


def _once(timeline: PartitionTimeline, *ordinals: int) -> tuple[int, str] | None:
    """The first of ``ordinals`` whose value carries no offset, with that value."""
    for ordinal in ordinals:
        try:
            text = timeline.format(ordinal)
        except InvalidInput:  # past the calendar: names nothing
            continue
        if not OFFSET.search(text):
            return ordinal, text
    return None


def _warning(timeline: PartitionTimeline, begin: int, end: int, at_begin: bool) -> str:
    """Which range has no bound without an offset, and what Lens does with the offsets."""
    pair = (begin - 1, begin) if at_begin else (end - 1, end)
    values = " and ".join(timeline.format(o) for o in pair)
    return (f"{timeline.period.name} {timeline.column}: kept DST offsets, which Lens cannot "
            f"parse (it rebuilds this table's timelines from its partitions): the range "
            f"[{timeline.format(begin)}, {timeline.format(end)}) "
            f"{'begins' if at_begin else 'ends'} between {values}, both wall times that "
            f"{timeline.tz} repeats, and no form without offsets names exactly these "
            "partitions for Lens (it reads a repeated wall time as the later one)")
