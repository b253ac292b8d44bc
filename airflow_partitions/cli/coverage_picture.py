"""Pictures of coverage: one lane per (storage, period) with its data, the chosen cover, the gaps.

People would rather look at this than read it. ``render_bars`` draws text bars for a terminal;
``plot_coverage`` draws a PNG with matplotlib (the optional ``plot`` extra).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_partitions.catalog import FactState
from airflow_partitions.cover import Cover
from airflow_partitions.errors import InvalidInput, InvalidRange, PartitionsError
from airflow_partitions.periods import UpdatePeriod

Span = tuple[dt.datetime, dt.datetime]


class PlotUnavailable(PartitionsError):
    """matplotlib is not installed."""


@dataclass
class Lane:
    """What one storage holds in one period, and which of it the cover chose."""

    storage: str
    period: UpdatePeriod
    present: list[Span] = field(default_factory=list)
    chosen: list[Span] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.storage} {self.period.name}"


def coverage_lanes(state: FactState, cover: Cover, column: str) -> list[Lane]:
    """Lanes for every (storage, period) of the fact, coarsest first, clipped to the cover."""
    tz = state.definition.tz
    lanes: list[Lane] = []
    for name, storage in sorted(state.storages.items()):
        if column not in storage.definition.time_columns:
            continue
        for period in sorted(storage.definition.periods, reverse=True):
            lo = period.ordinal(cover.start, tz)
            hi = period.ordinal(cover.end, tz) + 1
            timeline = storage.timelines[(period, column)]
            lane = Lane(name, period)
            for begin, end in timeline.ordinal_ranges(lo, hi):
                lane.present.append(_clip(period.start_of(begin, tz),
                                          _start_or(period, end, tz, cover.end), cover))
            lanes.append(lane)
    by_key = {(lane.storage, lane.period): lane for lane in lanes}
    for run in cover.runs:
        chosen = by_key.get((run.storage, run.period))
        if chosen is not None:
            chosen.chosen.append((run.period.start_of(run.first, tz),
                                run.period.start_of(run.end, tz)))
    return lanes


def _start_or(period: UpdatePeriod, ordinal: int, tz: str, past: dt.datetime) -> dt.datetime:
    """The start of ``ordinal``, or ``past`` (the clip bound) when no instant holds it: the
    calendar's end, after ``DAILY 9999-12-31``."""
    try:
        return period.start_of(ordinal, tz)
    except InvalidRange:
        return past


def _clip(start: dt.datetime, end: dt.datetime, cover: Cover) -> Span:
    return max(start, cover.start), min(end, cover.end)


def _cell_char(
    spans: Sequence[Span], lo: dt.datetime, hi: dt.datetime, full: str, part: str
) -> str:
    covered = sum(
        max(0.0, (min(e, hi) - max(s, lo)).total_seconds()) for s, e in spans
    )
    width = (hi - lo).total_seconds()
    if width <= 0 or covered <= 0:
        return " "
    return full if covered >= width else part


def render_bars(lanes: list[Lane], cover: Cover, width: int = 60) -> list[str]:
    """One text line per lane (█ data, ▒ some data) plus the cover and its gaps (! missing)."""
    width = max(width, 10)
    total = cover.end - cover.start
    cells = [(cover.start + total * i / width, cover.start + total * (i + 1) / width)
             for i in range(width)]
    label_width = max([len(lane.label) for lane in lanes] + [len("cover")])
    lines = [
        f"{lane.label:<{label_width}} |"
        + "".join(_cell_char(lane.present, lo, hi, "█", "▒") for lo, hi in cells) + "|"
        for lane in lanes
    ]
    missing = [(m.start, m.end) for m in cover.missing]
    cover_line = "".join(
        "!" if _cell_char(missing, lo, hi, "!", "!") == "!" else "="
        for lo, hi in cells
    )
    lines.append(f"{'cover':<{label_width}} |{cover_line}|")
    lines.append(f"{'':<{label_width}}  {cover.start.isoformat()}  →  {cover.end.isoformat()}")
    return lines


class PlotDirectoryMissing(InvalidInput):
    """``--plot`` names a file in a directory that does not exist."""


def plot_coverage(lanes: list[Lane], cover: Cover, path: str | Path,
                  title: str | None = None) -> Path:
    """Draw the lanes, the chosen cover and the missing ranges into a PNG file."""
    out = Path(path)
    if not out.parent.is_dir():  # a typo must not create a directory tree
        raise PlotDirectoryMissing(
            f"--plot {str(out)!r}: the directory {str(out.parent)!r} does not exist; "
            "create it first")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import dates
    except ImportError as exc:
        raise PlotUnavailable(
            "plotting needs matplotlib: pip install 'airflow-partitions[plot]'"
        ) from exc
    num: Any = dates.date2num  # matplotlib's stubs leave it untyped
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.6 * max(len(lanes), 1)))
    for row, lane in enumerate(reversed(lanes)):
        for spans, color, height in ((lane.present, "#c6dbef", 0.7), (lane.chosen, "#2171b5",
                                                                       0.4)):
            bars = [(num(s), num(e) - num(s))
                    for s, e in spans]
            ax.broken_barh(bars, (row - height / 2, height), facecolors=color)
    for gap in cover.missing:
        start = num(gap.start)
        ax.axvspan(start, num(gap.end), color="#de2d26", alpha=0.35)
    ax.set_yticks(range(len(lanes)), [lane.label for lane in reversed(lanes)])
    ax.set_xlim(num(cover.start), num(cover.end))
    ax.xaxis_date()
    fig.autofmt_xdate()
    status = "coverable" if cover.coverable else f"{len(cover.missing)} missing range(s)"
    count = sum(run.count for run in cover.runs) if cover.runs else len(cover.partitions)
    ax.set_title(title or f"{cover.fact or ''} {cover.start:%Y-%m-%d %H:%M} → "
                 f"{cover.end:%Y-%m-%d %H:%M}: {count} partitions, {status}")
    ax.set_xlabel("light: registered   dark: chosen cover   red: missing")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
