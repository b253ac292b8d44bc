"""Cover text a person reads: the one-line status of a cover and its list of missing ranges.

The sensor's poke log, the trigger's events, the operator's errors and the demo all print the
same line, so a user who learns it once can read every log.

Over declared dimensions (docs/dimensions.md) the line stays people-sized however many slices
lack something: up to :data:`~.missing.SLICES_SHOWN` lacking slices, each missing range is
described with its per-slice entries (``no HOURLY 2015-01-01-05..23 (19) for region=eu``);
beyond that the line sums what each slice lacks, worst first (``missing 19 hours of region=eu,
19 hours of region=us, ... and 997 more slices, in 2015-01-01T05:00/2015-01-02T00:00``). The
cover's JSON always lists every entry. The cover's :attr:`~.result.Cover.notes`
(``region: not a dimension, any value counts``) end every line, coverable or not, so the old
meaning of an undeclared column is never silent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from airflow_partitions.cover.instant_text import format_instant
from airflow_partitions.cover.missing import SLICES_SHOWN
from airflow_partitions.cover.skipped import skipped_text
from airflow_partitions.cover.slices.summary import lacking_text, slice_lacks

if TYPE_CHECKING:
    from airflow_partitions.cover.result import Cover

#: How many missing ranges a status line shows.
MISSING_SHOWN: Final = 3


def missing_list(cover: Cover | None, shown: int = 20) -> list[str]:
    """The first ``shown`` missing ranges as short strings, then a count of the rest (each
    range names at most ``SLICES_SHOWN`` lacking slices: see
    :meth:`~.missing.MissingRange.describe`)."""
    if cover is None:
        return []
    out = [m.describe() for m in cover.missing[:shown]]
    if len(cover.missing) > shown:
        out.append(f"... (+{len(cover.missing) - shown} more missing ranges)")
    return out


def status_line(cover: Cover) -> str:
    """One compact line: the fact and range, the fraction covered, what is missing, the notes.

    Cost: O(missing ranges + their entries); no partition object is built.
    """
    head = (
        f"{cover.fact} [{format_instant(cover.start)}, {format_instant(cover.end, cover.start)}): "
        f"{cover.covered_fraction:.1%} covered by {len(cover)} partition(s)"
    )
    tail = (f"; {skipped_text(cover.skipped)}" if cover.skipped else "") + "".join(
        f"; {note}" for note in cover.notes)
    if cover.coverable:
        return head + ", coverable" + tail
    if cover.unselected is not None:  # the note, in the tail, says why
        return head + ", NOT coverable" + tail
    lacks = slice_lacks(cover.missing)
    if len(lacks) > SLICES_SHOWN:  # a long per-slice list: summed per slice for people
        return f"{head}; missing {lacking_text(lacks)}, in {_spans(cover)}{tail}"
    return f"{head}; " + "; ".join(missing_list(cover, MISSING_SHOWN)) + tail


def _spans(cover: Cover) -> str:
    """``2015-01-01T05:00/2015-01-02T00:00, ... (+N more missing ranges)``."""
    spans = [f"{format_instant(m.start)}/{format_instant(m.end, m.start)}"
             for m in cover.missing[:MISSING_SHOWN]]
    hidden = len(cover.missing) - MISSING_SHOWN
    more = f" (+{hidden} more missing ranges)" if hidden > 0 else ""
    return ", ".join(spans) + more
