"""``backfill``: run the plan's producer runs as Airflow backfills until the range is coverable.

Airflow is imported only when the command runs: every other command starts without it.
"""

from __future__ import annotations

import argparse
import datetime as dt

from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    add_command,
    add_json_flag,
    add_range_arguments,
    positive_int,
    positive_seconds,
    print_json,
    say,
)
from airflow_partitions.cli.cover import parse_instant


def register(sub: SubParsers) -> None:
    """Add the ``backfill`` command."""
    p = add_command(
        sub, "backfill", help="make [start, end) coverable by running its producers in Airflow",
        description="Plan the producer runs that make [start, end) of FACT coverable (see "
                    "'plan'), then create Airflow backfills for them, finer periods first (the "
                    "hourly ingest before the daily rollup that reads it), one backfill per DAG "
                    "at a time, and report progress until the range is coverable or a run "
                    "fails. Refuses, before creating anything, where Airflow would silently do "
                    "nothing: a paused DAG (unless --unpause), a backfill already running for "
                    "a DAG, a date off a DAG's schedule, a run conf the DAG's params reject. "
                    "For a storage with declared dimensions each run gets the slices it must "
                    "produce in its run conf (dag_run_conf). Needs the scheduler running and the "
                    "same AIRFLOW_HOME (metadata DB) as Airflow; a metadata DB that is briefly "
                    "unreachable (a restart) is waited for, up to two minutes at a time, each "
                    "pause a progress line. Exit 0 once coverable, 1 if "
                    "a run failed or the range is still not coverable, 2 for bad input or a "
                    "refusal.",
        examples=["airflow-partitions backfill events --start 2015-01-01 --end 2015-01-03 "
                  "--dry-run",
                  "airflow-partitions backfill events --start 2015-01-01 --end 2015-02-01 "
                  "--max-active-runs 4",
                  "airflow-partitions backfill events --start 2015-01-01 --end 2015-02-01 "
                  "--restate"],
        handler=backfill,
    )
    add_range_arguments(p)
    p.add_argument("--dry-run", action="store_true",
                   help="check and print the backfills; create nothing")
    p.add_argument("--max-active-runs", type=positive_int, default=10, metavar="N",
                   help="runs of one backfill at a time (default 10)")
    p.add_argument("--restate", action="store_true",
                   help="also re-run the producers of stale partitions (see 'stale'), and "
                        "count only fresh partitions as done")
    p.add_argument("--unpause", action="store_true",
                   help="unpause paused producer DAGs instead of refusing")
    p.add_argument("--where", metavar="FILTER",
                   help="only these slices of the declared dimensions (\"region = 'eu'\"; "
                        "default: every required one)")
    p.add_argument("--poll-interval", type=positive_seconds, default=10.0, metavar="SECONDS",
                   help="seconds between progress checks (default 10)")
    add_json_flag(p)


def backfill(args: argparse.Namespace, ctx: Context) -> int:
    from airflow_partitions.backfill.airflow_db import AirflowBackfills
    from airflow_partitions.backfill.runner import BackfillOptions, BackfillRunner

    tz = ctx.catalog.get_fact(args.fact).tz
    start = parse_instant(args.start, tz, "start")
    end = parse_instant(args.end, tz, "end")
    if args.poll_interval <= 0:
        from airflow_partitions.cli.base import UsageError

        raise UsageError("backfill: --poll-interval must be above 0 seconds")
    options = BackfillOptions(max_active_runs=args.max_active_runs, restate=args.restate,
                              unpause=args.unpause, dry_run=args.dry_run,
                              poll_interval=args.poll_interval, where=args.where)

    def progress(line: str) -> None:
        stamp = dt.datetime.now().strftime("%H:%M:%S")
        say(ctx, f"[{stamp}] {line}", json_mode=args.json)

    # a metadata DB briefly unreachable is ridden out, each pause a progress line
    runner = BackfillRunner(ctx.catalog, AirflowBackfills(say=progress), progress)
    report = runner.run(args.fact, start, end, options)
    if args.json:
        print_json(ctx, report.to_json())
    elif report.failures:
        for failure in report.failures:
            say(ctx, f"failed: {failure}")
    if options.dry_run:
        return 0
    return 0 if report.ok else 1
