"""Cover text a person reads: the one-line status of a cover and its list of missing ranges.

The sensor's poke log, the trigger's events, the operator's errors and the demo all print the
same line, so a user who learns it once can read every log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from airflow_partitions.cover.instant_text import format_instant
from airflow_partitions.cover.skipped import skipped_text

if TYPE_CHECKING:
    from airflow_partitions.cover.model import Cover

#: How many missing ranges a status line shows.
MISSING_SHOWN: Final = 3


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
