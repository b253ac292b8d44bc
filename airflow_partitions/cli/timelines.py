"""``timeline show|migrate|import|export`` and ``reconcile``: inspect and maintain the timelines.

``import`` and ``export`` (Lens table parameters) live in :mod:`.timeline_lens`.
"""

from __future__ import annotations

import argparse
from typing import Final, NotRequired, TypedDict

from rich.table import Table

from airflow_partitions.catalog import StorageDef
from airflow_partitions.cli import timeline_lens
from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    UsageError,
    add_command,
    add_group,
    add_json_flag,
    plural,
    print_json,
    say,
)
from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline

#: How many ranges the table shows before "... N more".
SHOWN_RANGES: Final = 4


def register(sub: SubParsers) -> None:
    """Add the ``timeline`` group and the ``reconcile`` command."""
    group = add_group(sub, "timeline",
                      help="show, migrate, import and export partition timelines",
                      examples=["airflow-partitions timeline show events_raw",
                                "airflow-partitions timeline migrate events_raw --period HOURLY "
                                "--to Ranges",
                                "airflow-partitions timeline import events_raw --lens "
                                "events_raw.json"])
    show = add_command(
        group, "show", help="show timelines: count, first, latest and ranges",
        description="Show which partitions exist per (period, time column), as half-open "
                    "ranges. --properties adds the Lens-compatible properties under their full "
                    "key names, whatever the storage layout.",
        examples=["airflow-partitions timeline show events_raw",
                  "airflow-partitions timeline show events_raw --period HOURLY --column dt "
                  "--json --properties"],
        handler=timeline_show,
    )
    show.add_argument("storage", metavar="STORAGE", help="storage table name")
    show.add_argument("--period", metavar="PERIOD", help="only this update period")
    show.add_argument("--column", metavar="COLUMN", help="only this time column")
    show.add_argument("--properties", action="store_true",
                      help="include the raw Lens properties (cube.storagetable.partition...)")
    add_json_flag(show)

    migrate = add_command(
        group, "migrate", help="switch a timeline's implementation, keeping its contents",
        description="Convert one timeline to another implementation (StoreAll, EndsAndHoles, "
                    "Ranges) without reading the partition rows. The contents stay the same.",
        examples=["airflow-partitions timeline migrate events_raw --period HOURLY --column dt "
                  "--to Ranges"],
        handler=timeline_migrate,
    )
    migrate.add_argument("storage", metavar="STORAGE", help="storage table name")
    migrate.add_argument("--period", required=True, metavar="PERIOD")
    migrate.add_argument("--column", metavar="COLUMN",
                         help="the time column (default: the storage's first)")
    migrate.add_argument("--to", required=True, metavar="CLASS",
                         help="StoreAll, EndsAndHoles or Ranges")
    timeline_lens.add_commands(group)

    reconcile = add_command(
        sub, "reconcile", help="check timelines against the partition rows and repair them",
        description="Rebuild a storage's timelines from its partition rows, report what the "
                    "stored timelines got wrong (and repair it), and finish half-done drops. "
                    "Exits 0 when consistent and also after a repair. Partition rows it cannot "
                    "use (damaged) are listed, never counted, and kept unless --drop-corrupt.",
        examples=["airflow-partitions reconcile events_raw",
                  "airflow-partitions reconcile events_raw --json",
                  "airflow-partitions reconcile events_raw --drop-corrupt"],
        handler=reconcile_storage,
    )
    reconcile.add_argument("storage", metavar="STORAGE", help="storage table name")
    reconcile.add_argument("--drop-corrupt", action="store_true",
                           help="delete the damaged partition rows it lists (register them "
                                "again with 'partition add')")
    add_json_flag(reconcile)


def _selected(ctx: Context, args: argparse.Namespace
              ) -> tuple[StorageDef, list[tuple[UpdatePeriod, str, PartitionTimeline]]]:
    sdef = ctx.catalog.get_storage(args.storage)
    period = UpdatePeriod.of(args.period) if args.period else None
    if period is not None and period not in sdef.periods:
        raise UsageError(f"storage {sdef.name!r} has no {period.name} timeline "
                         f"(its periods: {', '.join(p.name for p in sdef.periods)})")
    if args.column is not None and args.column not in sdef.time_columns:
        raise UsageError(f"--column {args.column!r} is not a time column of {sdef.name!r} "
                         f"({', '.join(sdef.time_columns)})")
    timelines = ctx.catalog.timelines(sdef.name)
    chosen = [
        (p, c, timelines[(p, c)])
        for p in sdef.periods for c in sdef.time_columns
        if (period is None or p == period) and (args.column is None or c == args.column)
    ]
    return sdef, chosen


# "class" is a keyword: the functional form.
TimelineJson = TypedDict("TimelineJson", {
    "storage": str,
    "period": str,
    "column": str,
    "class": str,
    "count": int,
    "first": str | None,
    "latest": str | None,
    "ranges": list[list[str]],
    "properties": NotRequired[dict[str, str]],
})
"""One timeline in ``timeline show --json``."""


def timeline_json(sdef: StorageDef, period: UpdatePeriod, column: str,
                  timeline: PartitionTimeline) -> TimelineJson:
    first, latest = timeline.first(), timeline.latest()
    return {
        "storage": sdef.name,
        "period": period.name,
        "column": column,
        "class": timeline.kind,
        "count": len(timeline),
        "first": first.value if first else None,
        "latest": latest.value if latest else None,
        "ranges": [[r.begin.value, r.end.value] for r in timeline.ranges()],
    }


def ranges_text(timeline: PartitionTimeline, shown: int = SHOWN_RANGES) -> str:
    """Ranges joined by a union sign, cut after ``shown`` with "... N more", to fit a cell."""
    ranges = timeline.ranges()
    text = " ∪ ".join(str(r) for r in ranges[:shown]) or "(empty)"
    if len(ranges) > shown:
        text += f" ∪ ... {len(ranges) - shown} more"
    return text


def timeline_show(args: argparse.Namespace, ctx: Context) -> int:
    sdef, chosen = _selected(ctx, args)
    if args.json:
        docs = []
        for period, column, timeline in chosen:
            doc = timeline_json(sdef, period, column, timeline)
            if args.properties:
                doc["properties"] = ctx.catalog.timeline_properties(sdef.name, period, column)
            docs.append(doc)
        print_json(ctx, docs)
        return 0
    table = Table("period", "column", "class", "count", "first", "latest", "ranges",
                  title=f"timelines of {sdef.name} (zone {sdef.tz})")
    for period, column, timeline in chosen:
        first, latest = timeline.first(), timeline.latest()
        table.add_row(period.name, column, timeline.kind, str(len(timeline)),
                      first.value if first else "-", latest.value if latest else "-",
                      ranges_text(timeline))
    console = ctx.console()
    console.print(table)
    if args.properties:
        for period, column, _ in chosen:
            props = ctx.catalog.timeline_properties(sdef.name, period, column)
            console.print(f"\n{period.name} {column} properties:")
            for key, value in sorted(props.items()):
                console.print(f"  {key} = {value}", markup=False)
    return 0


def timeline_migrate(args: argparse.Namespace, ctx: Context) -> int:
    sdef = ctx.catalog.get_storage(args.storage)
    column = args.column or sdef.time_columns[0]
    before = ctx.catalog.timeline(sdef.name, args.period, column)
    old_kind = before.kind
    after = ctx.catalog.migrate_timeline(sdef.name, args.period, column, args.to)
    if after != before:  # equal across implementations means the same partitions
        raise CorruptTimeline(
            f"migrating the {before.period.name} {column} timeline of {sdef.name!r} changed its "
            f"contents ({ranges_text(before)} became {ranges_text(after)}); run reconcile"
        )
    say(ctx, f"migrated the {after.period.name} {column} timeline of {sdef.name} from "
             f"{old_kind} to {after.kind}; {plural(len(after), 'partition')} kept: "
             f"{ranges_text(after)}")
    return 0


def reconcile_storage(args: argparse.Namespace, ctx: Context) -> int:
    report = ctx.catalog.reconcile(args.storage, drop_corrupt=args.drop_corrupt)
    if args.json:
        print_json(ctx, report.to_json())
    lines = []
    for diff in report.diffs:
        if diff.consistent:
            continue
        if diff.corruption is not None:
            lines.append(f"replaced the corrupt {diff.period.name} {diff.column} timeline "
                         f"({diff.corruption}); rebuilt it from the partition rows")
            continue
        lines.append(
            f"repaired the {diff.period.name} {diff.column} timeline: "
            f"{diff.under_count} under-reported"
            f"{_sample(diff.values(diff.under_ranges, 5), diff.under_count)}, "
            f"{diff.over_count} over-reported"
            f"{_sample(diff.values(diff.over_ranges, 5), diff.over_count)}"
        )
    lines.extend(repaired.text() for repaired in report.slice_repairs)
    if report.finished_drops:
        lines.append(f"finished {plural(report.finished_drops, 'half-done drop')}")
    for row in report.corrupt_rows:
        shown = ", ".join(f"{c}={v}" for c, v in row.values.items())
        if row.dropped:
            lines.append(f"deleted a damaged {row.period.name} partition row ({shown}): "
                         f"{row.reason}; register it again with 'partition add'")
            continue
        lines.append(f"kept a {row.period.name} partition row it cannot read ({shown}): "
                     f"{row.reason}; it is not advertised (--drop-corrupt deletes it)")
    if report.consistent:
        lines.append(f"{report.storage}: {plural(len(report.diffs), 'timeline')} consistent "
                     "with the partition rows")
    elif report.corrupt_rows:
        lines.append(f"{report.storage}: repaired the timelines; "
                     f"{plural(len(report.corrupt_rows), 'unreadable row')} left untouched")
    else:
        lines.append(f"{report.storage}: repaired; the timelines now match the partition rows")
    for line in lines:
        say(ctx, line, json_mode=args.json)
    return 0


def _sample(values: list[str], count: int, shown: int = 5) -> str:
    """The first values of a difference and how many more (the values are cut already)."""
    if not values:
        return ""
    more = f", ... {count - shown} more" if count > shown else ""
    return " (" + ", ".join(values[:shown]) + more + ")"
