"""``plan``: which producer DAG runs would make a range of a fact coverable (docs/backfill.md)."""

from __future__ import annotations

import argparse

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
from airflow_partitions.planning import Plan, plan, slices_text


def register(sub: SubParsers) -> None:
    """Add the ``plan`` command."""
    p = add_command(
        sub, "plan", help="the producer DAG runs that would make [start, end) coverable",
        description="Plan the DAG runs (from the storages' producers) that would make "
                    "[start, end) of FACT coverable with the fewest partitions, preferring "
                    "rollups whose inputs exist or are planned; list them in dependency order "
                    "with why each is needed, what no producer can fill, and the cover after. "
                    "For a storage with declared dimensions a run names the slices it must "
                    "produce (for region=eu) and the run conf that carries them. "
                    "Nothing is run. Exit 0 even when the range stays uncoverable (it says so), "
                    "2 for bad input.",
        examples=["airflow-partitions plan events --start 2015-01-01T00:00:00Z "
                  "--end 2015-02-01T00:00:00Z",
                  "airflow-partitions plan events --start 2015-01-01 --end 2015-04-01 --json",
                  "airflow-partitions plan events --start 2015-01-31 --end 2015-02-01 "
                  "--where \"region = 'eu'\""],
        handler=plan_range,
    )
    add_range_arguments(p)
    p.add_argument("--where", metavar="FILTER",
                   help="only these slices of the declared dimensions (\"region IN ('eu')\"; "
                        "default: every required one)")
    add_json_flag(p)


def plan_range(args: argparse.Namespace, ctx: Context) -> int:
    tz = ctx.catalog.get_fact(args.fact).tz
    result = plan(ctx.catalog, args.fact, parse_instant(args.start, tz, "start"),
                  parse_instant(args.end, tz, "end"), where=args.where)
    if args.json:
        print_json(ctx, result.to_json())
    else:
        say(ctx, "\n".join(describe(result)))
    return 0


def describe(result: Plan) -> list[str]:
    """The human text: a header, one line per run, unfillable spans, the cover after."""
    counts = result.counts()
    lines = [f"plan for {result.fact} [{result.start.isoformat()}, {result.end.isoformat()}): "
             f"{plural(len(result.runs), 'run')} ({counts['gap']} gap, {counts['input']} input, "
             f"{counts['restate']} restate) in {plural(len(result.by_dag()), 'DAG')}"]
    for i, run in enumerate(result.runs, 1):
        made = f" for {slices_text(run.slices)}" if run.slices else ""
        lines.append(f"  {i:>4}. {run.dag_id} @ {run.logical_date.isoformat()}  {run.storage} "
                     f"{run.period.name} {run.value}{made}  [{run.kind}] {run.reason}")
    for t0, t1, why in result.unfillable:
        lines.append(f"  unfillable [{t0.isoformat()}, {t1.isoformat()}): {why}")
    state = "coverable" if result.coverable_after() else "NOT coverable"
    lines.append(f"after these runs the range is {state}: the cover has "
                 f"{plural(len(result.cover_after), 'partition')}")
    return lines
