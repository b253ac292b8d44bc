"""``partition add|drop|list``: register, drop and list partitions of a storage table."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Final

from rich.table import Table

from airflow_partitions.catalog import Partition, PartitionConflict, StorageDef
from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    UsageError,
    add_command,
    add_group,
    add_json_flag,
    plural,
    positive_int,
    print_json,
    progress,
    say,
)
from airflow_partitions.cli.filters import add_filter_arguments, filtered_partitions
from airflow_partitions.cli.partition_input import (
    Item,
    Selection,
    conflicts,
    items_from_lines,
    listed_selection,
    parse_pairs,
    range_selection,
    read_lines,
    validate,
)
from airflow_partitions.defaults import MAX_RANGE_PARTITIONS, RANGE_BATCH
from airflow_partitions.periods import UpdatePeriod

#: Partitions per catalog call in a bulk add or drop, so a progress bar moves.
CHUNK: Final = 1000

FILE_HELP: Final = (
    "one partition per line as shell-quoted COLUMN=VALUE words (region='a b' works); blank "
    "lines and # comments are skipped; - reads stdin. Every line is validated before anything "
    "is written."
)


def register(sub: SubParsers) -> None:
    """Add the ``partition`` command group."""
    group = add_group(sub, "partition", help="add, drop and list partitions",
                      examples=["airflow-partitions partition add events_raw --period HOURLY "
                                "dt=2015-01-30-00 region=us",
                                "airflow-partitions partition list events_raw --json"])
    add = add_command(
        group, "add", help="register partitions",
        description="Register one partition (COLUMN=VALUE for every partition column), every "
                    "partition of a range, or one per line of a file. Registering is idempotent; "
                    "--restate registers them again with a new version (their data changed), "
                    "so partitions built from them show as stale (see 'stale').",
        examples=[
            "airflow-partitions partition add events_raw --period HOURLY "
            "dt=2015-01-30-00 region=us",
            "airflow-partitions partition add events_raw --period HOURLY "
            "--range 2015-01-29-06 2015-01-30-00 region=us",
            "airflow-partitions partition add events_raw --period DAILY --file days.txt",
            "airflow-partitions partition add events_raw --period HOURLY "
            "dt=2015-01-30-00 region=us --restate",
            "printf 'dt=2015-01-30 region=us\\n' | "
            "airflow-partitions partition add events_raw --period DAILY --file -",
        ],
        handler=partition_add,
    )
    _add_selection_arguments(add)
    add.add_argument("--location", metavar="PATH",
                     help="explicit location of a single partition (default: the template)")
    add.add_argument("--overwrite", action="store_true",
                     help="move partitions already registered at another location (a new "
                          "version)")
    add.add_argument("--restate", action="store_true",
                     help="their data changed: bump the version of those already registered, "
                          "so partitions built from them show as stale")

    drop = add_command(
        group, "drop", help="drop partitions",
        description="Drop one partition, every partition of a range, or one per line of a file. "
                    "Dropping a partition that is not registered is a no-op.",
        examples=[
            "airflow-partitions partition drop events_raw --period HOURLY "
            "dt=2015-01-30-00 region=us",
            "airflow-partitions partition drop events_raw --period HOURLY "
            "--range 2015-01-29-06 2015-01-29-12 region=us",
            "airflow-partitions partition drop events_raw --period DAILY --file - < days.txt",
        ],
        handler=partition_drop,
    )
    _add_selection_arguments(drop)

    listing = add_command(
        group, "list", help="list registered partitions",
        description="List the registered partitions of a storage table in key order, or those "
                    "matching --filter (planned as key-range scans, gets and server-side "
                    "filters; see docs/filters.md).",
        examples=["airflow-partitions partition list events_raw",
                  "airflow-partitions partition list events_raw --period DAILY --json",
                  "airflow-partitions partition list events_raw --filter "
                  "\"dt >= '2015-01-30' and region like 'us%'\" --stats"],
        handler=partition_list,
    )
    listing.add_argument("storage", metavar="STORAGE", help="storage table name")
    listing.add_argument("--period", metavar="PERIOD", help="only this update period")
    add_json_flag(listing)
    add_filter_arguments(listing)


def _add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("storage", metavar="STORAGE", help="storage table name")
    parser.add_argument("values", nargs="*", metavar="COLUMN=VALUE",
                        help="partition values; with --range, the non-range columns")
    parser.add_argument("--period", required=True, metavar="PERIOD",
                        help="update period: HOURLY, DAILY, ...")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--range", nargs=2, metavar=("BEGIN", "END"),
                        help="every partition of PERIOD in [BEGIN, END)")
    source.add_argument("--file", metavar="FILE", help=FILE_HELP)
    parser.add_argument("--column", metavar="COLUMN",
                        help="the time column --range applies to (default: the first)")
    parser.add_argument("--max-partitions", type=positive_int, metavar="N",
                        help=f"refuse a --range holding more than N partitions (default "
                             f"{MAX_RANGE_PARTITIONS:,}); the range is written in batches of "
                             f"{RANGE_BATCH:,} with progress on stderr")


def _requested(args: argparse.Namespace, ctx: Context, *, adding: bool
               ) -> tuple[StorageDef, UpdatePeriod, Selection]:
    """Parse and validate everything the command asks for before any write; a range is counted
    (and refused above ``--max-partitions``) and then listed batch by batch as it is written."""
    sdef = ctx.catalog.get_storage(args.storage)
    period = UpdatePeriod.of(args.period)
    if period not in sdef.periods:
        raise UsageError(f"storage {sdef.name!r} has no {period.name} partitions "
                         f"(its periods: {', '.join(p.name for p in sdef.periods)})")
    if args.column is not None and args.range is None:
        raise UsageError("--column only applies to --range")
    if args.max_partitions is not None and args.range is None:
        raise UsageError("--max-partitions only applies to --range")
    locations = adding and not getattr(args, "location", None)
    if args.range is not None:
        limit = MAX_RANGE_PARTITIONS if args.max_partitions is None else args.max_partitions
        return sdef, period, range_selection(
            ctx.catalog, sdef, period, tuple(args.range), args.column, parse_pairs(args.values),
            limit=limit, locations=locations)
    items: list[Item]
    if args.file is not None:
        if args.values:
            raise UsageError(f"--file gives every value; do not also give {args.values[0]!r}")
        items = items_from_lines(read_lines(args.file))
    elif args.values:
        items = [Item(parse_pairs(args.values), "")]
    else:
        raise UsageError(f"name the partitions: {'=... '.join(sdef.column_names)}=..., "
                         "--range BEGIN END or --file FILE")
    batch = validate(ctx.catalog, sdef, period, items, locations=locations)
    unique: dict[tuple[str, ...], dict[str, str]] = {}
    for values in batch:
        unique.setdefault(tuple(values[c] for c in sdef.column_names), values)
    return sdef, period, listed_selection(list(unique.values()), sdef)


def _chunks(selection: Selection) -> Iterator[list[dict[str, str]]]:
    """The selection in catalog calls of at most CHUNK partitions."""
    for batch in selection.batches(RANGE_BATCH):
        for i in range(0, len(batch), CHUNK):
            yield batch[i : i + CHUNK]


def partition_add(args: argparse.Namespace, ctx: Context) -> int:
    sdef, period, selection = _requested(args, ctx, adding=True)
    if args.location is not None and selection.total != 1:
        raise UsageError(f"--location names one partition's place, but {selection.total} are "
                         "given")
    if selection.total > CHUNK and not args.overwrite:
        clash = conflicts(ctx.catalog, sdef, period, selection)
        if clash:
            raise PartitionConflict(f"a partition of {sdef.name!r} is registered elsewhere: "
                                    f"{clash}; pass --overwrite to move it")
    changed = unchanged = restated = 0
    with progress(ctx, selection.total, f"adding to {sdef.name}") as advance:
        for chunk in _chunks(selection):
            result = ctx.catalog.register(sdef.name, period, chunk, location=args.location,
                                          overwrite=args.overwrite, restate=args.restate)
            changed, unchanged = changed + result.changed, unchanged + result.unchanged
            restated += len(result.restated)
            advance(len(chunk))
    already = "was" if unchanged == 1 else "were"
    bumped = f" ({restated} of them restated with a new version)" if restated else ""
    say(ctx, f"registered {plural(changed, 'partition')} of {sdef.name} ({period.name}){bumped}; "
             f"{unchanged} {already} already registered")
    return 0


def partition_drop(args: argparse.Namespace, ctx: Context) -> int:
    sdef, period, selection = _requested(args, ctx, adding=False)
    changed = unchanged = 0
    with progress(ctx, selection.total, f"dropping from {sdef.name}") as advance:
        for chunk in _chunks(selection):
            result = ctx.catalog.drop(sdef.name, period, chunk)
            changed, unchanged = changed + result.changed, unchanged + result.unchanged
            advance(len(chunk))
    absent = "was" if unchanged == 1 else "were"
    say(ctx, f"dropped {plural(changed, 'partition')} of {sdef.name} ({period.name}); "
             f"{unchanged} {absent} not registered")
    return 0


def selected_partitions(args: argparse.Namespace, ctx: Context) -> Iterator[Partition]:
    """The partitions ``partition list`` shows, narrowed by ``--filter`` when given."""
    sdef = ctx.catalog.get_storage(args.storage)
    period = UpdatePeriod.of(args.period) if args.period is not None else None
    if period is not None and period not in sdef.periods:
        raise UsageError(f"storage {sdef.name!r} has no {period.name} partitions "
                         f"(its periods: {', '.join(p.name for p in sdef.periods)})")
    if args.filter is not None:
        return iter(filtered_partitions(args, ctx))
    return ctx.catalog.list_partitions(sdef.name, period)


def partition_list(args: argparse.Namespace, ctx: Context) -> int:
    partitions = list(selected_partitions(args, ctx))
    if args.json:
        print_json(ctx, [p.to_json() for p in partitions])
        return 0
    if not partitions:
        say(ctx, f"no partitions in {args.storage}")
        return 0
    table = Table("storage", "period", "values", "version", "location")
    for p in partitions:
        values = " ".join(f"{c}={v}" for c, v in p.values.items())
        table.add_row(p.storage, p.period.name, values, str(p.version), p.location)
    ctx.console().print(table)
    say(ctx, plural(len(partitions), "partition"))
    return 0
