"""Partition filters on the command line: ``explain`` and ``partition list --filter``.

``register(sub)`` adds ``explain STORAGE --filter "..." [--period P] [--json] [--stats]``; the
``partition`` group calls :func:`add_filter_arguments` on its ``list`` parser and
:func:`filtered_partitions` when ``--filter`` is given.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from airflow_partitions.catalog import explain, get_partitions_by_filter
from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    add_command,
    add_json_flag,
    print_json,
)
from airflow_partitions.filters import QueryStats

if TYPE_CHECKING:
    from airflow_partitions.catalog import Partition

EXAMPLES = [
    "airflow-partitions explain events_raw --filter \"dt >= '2015-01-01' and region = 'us'\"",
    "airflow-partitions explain events_raw --filter \"region like 'us%'\" --period HOURLY --json",
    "airflow-partitions explain events_raw --filter \"upper(region) = 'US'\" --stats",
]


def register(sub: SubParsers) -> None:
    add_filter_commands(sub)


def add_filter_commands(sub: SubParsers) -> argparse.ArgumentParser:
    """Add the ``explain`` command to a subparsers action; returns its parser."""
    parser = add_command(
        sub, "explain",
        help="show how a partition filter is read from the store",
        description="Plan a partition filter: the key-range scans with their server-side "
                    "filters, the point gets, and the residual evaluated on the client. "
                    "See docs/filters.md for the language.",
        examples=EXAMPLES,
        handler=run_explain,
    )
    parser.add_argument("storage", metavar="STORAGE", help="storage table name")
    parser.add_argument("--filter", required=True, metavar="FILTER",
                        help="the filter, e.g. \"dt >= '2015-01-01' and region = 'us'\"")
    parser.add_argument("--period", metavar="PERIOD", help="only this update period")
    parser.add_argument("--allow-unknown", action="store_true",
                        help="treat columns the storage lacks as residual instead of an error")
    parser.add_argument("--stats", action="store_true",
                        help="also run the query and report rows fetched/returned and round "
                             "trips on stderr")
    add_json_flag(parser)
    return parser


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    """``--filter``, ``--max-parts`` and ``--stats`` for ``partition list``."""
    parser.add_argument("--filter", metavar="FILTER", default=None,
                        help="only partitions matching this filter (docs/filters.md)")
    parser.add_argument("--max-parts", metavar="N", type=int, default=None,
                        help="at most N partitions")
    parser.add_argument("--stats", action="store_true",
                        help="report rows fetched/returned and round trips on stderr")


def run_explain(args: argparse.Namespace, ctx: Context) -> int:
    plan = explain(ctx.catalog, args.storage, args.filter, args.period,
                   allow_unknown=args.allow_unknown)
    if args.json:
        print_json(ctx, plan.to_json())
    else:
        ctx.stdout.write(plan.to_text() + "\n")
        ctx.stdout.flush()
    if args.stats:
        stats = QueryStats()
        get_partitions_by_filter(ctx.catalog, args.storage, args.filter, args.period,
                                 stats=stats, allow_unknown=args.allow_unknown)
        report_stats(ctx, stats)
    return 0


def filtered_partitions(args: argparse.Namespace, ctx: Context) -> list[Partition]:
    """What ``partition list --filter`` shows; reports stats on stderr when ``--stats``."""
    stats = QueryStats()
    parts = get_partitions_by_filter(ctx.catalog, args.storage, args.filter,
                                     getattr(args, "period", None),
                                     getattr(args, "max_parts", None), stats=stats)
    if getattr(args, "stats", False):
        report_stats(ctx, stats)
    return parts


def report_stats(ctx: Context, stats: QueryStats) -> None:
    """One JSON line on stderr, so stdout stays one document."""
    ctx.stderr.write("stats: " + json.dumps(stats.to_json()) + "\n")
    ctx.stderr.flush()
