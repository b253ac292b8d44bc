"""``stale``: which derived partitions were built from inputs that changed since.

Why a command of its own: after restating raw data, a person (or the ``backfill`` command)
needs the exact list of rollups to rebuild, and why each one is on it.
"""

from __future__ import annotations

import argparse

from airflow_partitions.catalog import StalePartition
from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    add_command,
    add_json_flag,
    add_range_arguments,
    plural,
    print_json,
    say,
)
from airflow_partitions.cli.cover import parse_instant


def register(sub: SubParsers) -> None:
    """Add the ``stale`` command."""
    stale = add_command(
        sub, "stale", help="derived partitions whose inputs were restated or dropped",
        description="List the partitions of the fact's storages that recorded their inputs "
                    "(lineage) and whose inputs were restated (a new version), dropped, or are "
                    "stale themselves (transitively), with the inputs that changed. With "
                    "--start/--end, only partitions overlapping [start, end). Exit 0 when "
                    "nothing is stale, 1 when something is (the list is still printed), 2 for "
                    "bad input.",
        examples=["airflow-partitions stale events",
                  "airflow-partitions stale events --start 2015-01-01 --end 2015-02-01 --json"],
        handler=list_stale,
    )
    add_range_arguments(stale, required=False)
    stale.add_argument("--time-column", metavar="COLUMN",
                       help="time column the range applies to (default: the fact's first)")
    add_json_flag(stale)


def list_stale(args: argparse.Namespace, ctx: Context) -> int:
    tz = ctx.catalog.get_fact(args.fact).tz
    start = None if args.start is None else parse_instant(args.start, tz, "start")
    end = None if args.end is None else parse_instant(args.end, tz, "end")
    found = ctx.catalog.stale(args.fact, start, end, time_column=args.time_column)
    if args.json:
        print_json(ctx, {"fact": args.fact,
                         "start": None if start is None else start.isoformat(),
                         "end": None if end is None else end.isoformat(),
                         "stale": [s.to_json() for s in found]})
    else:
        for stale in found:
            say(ctx, _line(stale))
        where = "" if start is None and end is None else " in the range"
        say(ctx, f"{plural(len(found), 'stale partition')} of {args.fact}{where}"
                 if found else f"no stale partitions of {args.fact}{where}")
    return 1 if found else 0


def _line(stale: StalePartition) -> str:
    """``events_daily DAILY 2015-01-02 (version 1): input ... restated (version 1 -> 2)``."""
    p = stale.partition
    changes = []
    for change in stale.changed[:3]:
        text = change.describe()
        if change.reason == "restated":
            text += f" (version {change.input.version} -> {change.current_version})"
        changes.append(text)
    more = f"; and {len(stale.changed) - 3} more" if len(stale.changed) > 3 else ""
    values = " ".join(p.values.values())
    return f"{p.storage} {p.period.name} {values} (version {p.version}): " + "; ".join(
        changes) + more
