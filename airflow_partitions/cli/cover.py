"""``cover`` and ``coverage``: the exact partitions of a time range, and a picture of them."""

from __future__ import annotations

import argparse

import pendulum

from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    UsageError,
    add_align_argument,
    add_command,
    add_json_flag,
    add_range_arguments,
    print_json,
    say,
)
from airflow_partitions.cli.coverage_picture import coverage_lanes, plot_coverage, render_bars
from airflow_partitions.cover import Cover, zoned_instant
from airflow_partitions.errors import InvalidInput


def register(sub: SubParsers) -> None:
    """Add the ``cover`` and ``coverage`` commands."""
    cover = add_command(
        sub, "cover", help="the fewest registered partitions covering [start, end)",
        description="Find the exact partitions, drawn from every storage table of the fact, "
                    "whose union is [start, end), coarsest first; or say exactly what is "
                    "missing. Exit 0 if coverable, 1 if not (the answer is still printed; "
                    "also when --where selects no declared slice), 2 for bad input.",
        examples=["airflow-partitions cover events --start 2015-01-29T06:00:00Z "
                  "--end 2015-03-01T06:00:00Z",
                  "airflow-partitions cover events --start 2015-02-01 --end 2015-03-01 "
                  "--periods DAILY,HOURLY --json",
                  "airflow-partitions cover events --start 2015-02-01 --end 2015-03-01 "
                  "--fresh-only",
                  "airflow-partitions cover events --start 2015-02-01 --end 2015-03-01 "
                  "--where \"region = 'eu'\""],
        handler=cover_range,
    )
    add_range_arguments(cover, narrowing=True)
    add_align_argument(cover)
    cover.add_argument("--fresh-only", action="store_true",
                       help="do not use stale partitions (see 'stale'): fall back to fresh "
                            "finer ones, and say which were skipped")
    cover.add_argument("--where", metavar="FILTER",
                       help="which slices of the declared dimensions must be present, e.g. "
                            "\"region IN ('eu','us')\" (default: every value each domain "
                            "requires; see docs/dimensions.md)")
    add_json_flag(cover)

    picture = add_command(
        sub, "coverage", help="draw which partitions exist and which the cover uses",
        description="One lane per (storage, period): registered partitions, holes, and the "
                    "chosen cover; missing ranges in red. Text bars always, a PNG with --plot "
                    "(needs the plot extra: matplotlib).",
        examples=["airflow-partitions coverage events --start 2015-01-29T06:00:00Z "
                  "--end 2015-03-01T06:00:00Z --plot coverage.png"],
        handler=coverage_picture,
    )
    add_range_arguments(picture, narrowing=True)
    picture.add_argument("--plot", metavar="PNG", help="write the picture to this PNG file")
    picture.add_argument("--width", type=int, default=72, help="text bar width (default 72)")


def parse_instant(text: str, tz: str, what: str) -> pendulum.DateTime:
    """An ISO-8601 instant; without an offset it is read in the fact's zone (a usage error,
    exit 2, when it is not one)."""
    try:
        return zoned_instant(text, tz, f"--{what}")
    except InvalidInput as exc:
        raise UsageError(str(exc)) from None


def _compute(ctx: Context, args: argparse.Namespace, align: str | None,
             verify: bool = True) -> Cover:
    tz = ctx.catalog.get_fact(args.fact).tz
    return ctx.catalog.cover(
        args.fact, parse_instant(args.start, tz, "start"), parse_instant(args.end, tz, "end"),
        time_column=args.time_column, periods=args.periods, storages=args.storages, align=align,
        fresh_only=getattr(args, "fresh_only", False), verify=verify,
        where=getattr(args, "where", None),
    )


def cover_range(args: argparse.Namespace, ctx: Context) -> int:
    cover = _compute(ctx, args, args.align)
    if args.json:
        print_json(ctx, cover.to_json())
    else:
        say(ctx, str(cover))
        if ctx.stdout.isatty():
            say(ctx, "\n".join(_bars(ctx, args, cover, width=72)))
    return 0 if cover.coverable else 1


def _bars(ctx: Context, args: argparse.Namespace, cover: Cover, width: int) -> list[str]:
    state = ctx.catalog.fact_state(args.fact)
    column = args.time_column or state.definition.time_columns[0]
    return render_bars(coverage_lanes(state, cover, column), cover, width)


def coverage_picture(args: argparse.Namespace, ctx: Context) -> int:
    # The picture draws the timelines, which are not verified either: checking the cover's
    # rows would make it cost O(partitions) instead of O(ranges) (10M partitions).
    cover = _compute(ctx, args, "outer", verify=False)
    say(ctx, "\n".join(_bars(ctx, args, cover, width=args.width)))
    if args.plot:
        state = ctx.catalog.fact_state(args.fact)
        column = args.time_column or state.definition.time_columns[0]
        path = plot_coverage(coverage_lanes(state, cover, column), cover, args.plot)
        say(ctx, f"coverage picture written to {path}")
    return 0
