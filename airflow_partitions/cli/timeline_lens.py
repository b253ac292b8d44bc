"""``timeline import|export --lens``: a Lens storage table's timeline parameters in and out."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from airflow_partitions.catalog import ImportedTimeline, parse_parameters
from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    UsageError,
    add_command,
    add_json_flag,
    plural,
    print_json,
    say,
)
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import WEEKLY_REASON, LensParameterError, OrdinalRange

#: How many ranges a line shows before "... N more".
SHOWN_RANGES = 3


def add_commands(group: SubParsers) -> None:
    """Add ``import`` and ``export`` to the ``timeline`` group."""
    imported = add_command(
        group, "import", help="store a Lens table's timelines, from its table parameters",
        description="Read a JSON object of a Lens storage table's Hive parameters (its "
                    "cube.storagetable.partition.timeline.cache.* keys, present=true among "
                    "them) and store every timeline it holds, in the implementation Lens named, "
                    "together with the partitions registered here. Everything is checked "
                    "first: on any error nothing is written and the message names the wrong "
                    "key. Imported partitions without a registered row are reported: covers "
                    "and reconcile withdraw them until they are registered.",
        examples=["airflow-partitions timeline import events_raw --lens events_raw.json",
                  "airflow-partitions timeline import events_raw --lens - --dry-run --json "
                  "< events_raw.json"],
        handler=timeline_import,
    )
    imported.add_argument("storage", metavar="STORAGE", help="storage table name")
    imported.add_argument("--lens", required=True, metavar="FILE",
                          help="a JSON object of the Lens table's parameters ('-': stdin)")
    imported.add_argument("--dry-run", action="store_true",
                          help="check and report, write nothing")
    add_json_flag(imported)

    exported = add_command(
        group, "export", help="print a storage's timelines as Lens table parameters",
        description="Print one JSON object: the Hive table parameters Lens would hold for this "
                    "storage's timelines, present=true included, ready to set on the Lens "
                    "storage table. WEEKLY timelines are left out (Lens's weeks are not ISO "
                    "weeks), and then present too, so Lens rebuilds from its partitions.",
        examples=["airflow-partitions timeline export events_raw --lens > events_raw.json"],
        handler=timeline_export,
    )
    exported.add_argument("storage", metavar="STORAGE", help="storage table name")
    exported.add_argument("--lens", required=True, action="store_true",
                          help="as Lens table parameters (the one format so far)")


def _read(path: str) -> tuple[str, str]:
    """The text of ``--lens`` and how to name it in messages."""
    if path == "-":
        return sys.stdin.read(), "stdin"
    try:
        return Path(path).read_text(encoding="utf-8"), path
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read --lens {path}: {exc}") from None


def timeline_import(args: argparse.Namespace, ctx: Context) -> int:
    text, source = _read(args.lens)
    params = parse_parameters(text, source)
    try:
        report = ctx.catalog.import_lens_timelines(args.storage, params, dry_run=args.dry_run)
    except LensParameterError as exc:
        raise LensParameterError(
            exc.key, f"{exc.reason} (in {source}); nothing was imported") from None
    if args.json:
        print_json(ctx, report.to_json())
    verb = "would import" if report.dry_run else "imported"
    lines = []
    for timeline in report.timelines:
        lines.append(f"{verb} the {timeline.period.name} {timeline.column} timeline of "
                     f"{report.storage}: {timeline.lens.kind}, "
                     f"{plural(len(timeline.lens), 'partition')}: {_ranges(timeline)}")
        if timeline.without_rows:
            count = sum(e - b for b, e in timeline.without_rows)
            lines.append(f"  {count} without a registered partition row: "
                         f"{_ranges(timeline, timeline.without_rows)}")
        if timeline.rows_not_in_lens:
            count = sum(e - b for b, e in timeline.rows_not_in_lens)
            lines.append(f"  kept {plural(count, 'registered partition')} Lens does not list: "
                         f"{_ranges(timeline, timeline.rows_not_in_lens)}")
    for period, column in report.skipped:
        lines.append(f"kept the {period.name} {column} timeline as the partition rows say, "
                     f"not imported: {WEEKLY_REASON}")
    for note in report.ambiguous:
        lines.append(f"ambiguous in Lens: {note}")
    if report.ignored:
        lines.append(f"ignored {plural(len(report.ignored), 'key')} of implementations "
                     f"storage.class does not name, as Lens does (e.g. {report.ignored[0]})")
    if report.without_rows:
        lines.append(f"{report.storage}: {report.without_rows} imported partition(s) have no "
                     "registered row; covers and 'reconcile' withdraw them until they are "
                     "registered ('partition add ... --file')")
    if report.dry_run:
        lines.append(f"{report.storage}: dry run, nothing written")
    for line in lines:
        say(ctx, line, json_mode=args.json)
    return 0


def _ranges(timeline: ImportedTimeline, ranges: list[OrdinalRange] | None = None) -> str:
    """Half-open ranges joined by a union sign, cut after a few with "... N more"."""
    shown = timeline.lens.ordinal_ranges() if ranges is None else ranges
    texts = [f"[{_value(timeline, b)}, {_value(timeline, e)})" for b, e in shown[:SHOWN_RANGES]]
    text = " ∪ ".join(texts) or "(empty)"
    if len(shown) > SHOWN_RANGES:
        text += f" ∪ ... {len(shown) - SHOWN_RANGES} more"
    return text


def _value(timeline: ImportedTimeline, ordinal: int) -> str:
    return timeline.period.format_ordinal(ordinal, timeline.tz)


def timeline_export(args: argparse.Namespace, ctx: Context) -> int:
    offsets: list[str] = []
    params, skipped = ctx.catalog.lens_parameters(args.storage, offsets)
    print_json(ctx, params)
    for line in offsets:
        say(ctx, f"{args.storage}: {line}", json_mode=True)
    for period, column in skipped:
        say(ctx, f"left out the {UpdatePeriod.of(period).name} {column} timeline "
                 f"({WEEKLY_REASON}), and so cube.storagetable.partition.timeline.cache."
                 "present: Lens rebuilds this table's timelines from its partitions",
            json_mode=True)
    return 0
