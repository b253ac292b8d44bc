"""``metrics``: a fact's coverage metrics over a range, printed and sent to Airflow's metrics.

Run from cron (or a DAG) it keeps the lateness gauges current between sensor pokes. Airflow is
imported only when the command runs: every other command starts without it.
"""

from __future__ import annotations

import argparse

import pendulum

from airflow_partitions.cli.base import (
    Context,
    SubParsers,
    add_align_argument,
    add_command,
    add_json_flag,
    add_range_arguments,
    print_json,
    say,
)
from airflow_partitions.cli.cover import parse_instant
from airflow_partitions.cover import CoverageMetrics, CoverRequest, slice_label


def register(sub: SubParsers) -> None:
    """Add the ``metrics`` command."""
    p = add_command(
        sub, "metrics", help="coverage metrics of [start, end): print and publish them",
        description="Compute FACT's covered fraction and missing partitions over [start, end) "
                    "(the verified cover) and each storage's lateness (now minus the end of "
                    "its latest partition), with declared dimensions the incomplete slices and "
                    "the worst one, print them, and publish them as gauges through "
                    "Airflow's metrics ([metrics] statsd_on, ...) when those are on; with "
                    "Airflow's metrics off nothing is sent. Exit 0; 1 when --where selects no "
                    "declared slice (nothing is measured or sent); 2 for bad input.",
        examples=["airflow-partitions metrics events --start 2024-01-01 --end 2024-01-02",
                  "AIRFLOW__METRICS__STATSD_ON=True airflow-partitions metrics events "
                  "--start 2024-01-01 --end 2024-02-01 --json"],
        handler=metrics,
    )
    add_range_arguments(p, narrowing=True)
    add_align_argument(p)
    p.add_argument("--where", metavar="FILTER",
                   help="which slices of the declared dimensions are required, e.g. "
                        "\"region IN ('eu','us')\" (default: every value each domain requires)")
    add_json_flag(p)


def metrics(args: argparse.Namespace, ctx: Context) -> int:
    from airflow_partitions.hooks.stats import metrics_enabled, metrics_target, send
    from airflow_partitions.watch import measure

    tz = ctx.catalog.get_fact(args.fact).tz
    request = CoverRequest.of(
        args.fact, parse_instant(args.start, tz, "start"), parse_instant(args.end, tz, "end"),
        time_column=args.time_column, periods=args.periods, storages=args.storages,
        align=args.align, where=args.where,
    )
    cover = ctx.catalog.cover_with_partitions(request).cover
    if cover.unselected is not None:  # a typo in --where: gauges of nothing would mislead
        if args.json:
            print_json(ctx, {"fact": args.fact, "notes": list(cover.notes), "published": False})
        else:
            say(ctx, f"{args.fact}: {cover.unselected}; nothing measured or published")
        return 1
    values = measure(ctx.catalog, request, cover, pendulum.now("UTC"))
    sent = send(values)
    if args.json:
        print_json(ctx, {**values.to_json(), "published": sent})
    else:
        say(ctx, "\n".join(_lines(values)))
        say(ctx, f"published to {metrics_target()}" if sent
            else "not published: Airflow metrics are off ([metrics] statsd_on is False)"
            if not metrics_enabled() else "not published: sending failed (see the warning)")
    return 0


def _lines(values: CoverageMetrics) -> list[str]:
    """The values as text, one per gauge."""
    lines = [
        f"{values.fact} [{values.start.isoformat()}, {values.end.isoformat()}) "
        f"at {values.now.isoformat()}",
        f"  covered fraction    {values.covered_fraction:.6g}",
        f"  missing partitions  {values.missing_partitions}",
    ]
    for late in values.lateness:
        if late.seconds is None or late.latest_end is None:
            lines.append(f"  lateness {late.storage}: no partition registered")
        else:
            lines.append(f"  lateness {late.storage}: {late.seconds:.0f} s "
                         f"(latest partition ends {late.latest_end.isoformat()})")
    slices = values.slices
    if slices is not None:
        lines.append(f"  incomplete slices   {slices.incomplete} of {slices.required}")
        if slices.worst is not None:
            lines.append(f"  worst slice         {slice_label(slices.worst)}: "
                         f"{slices.worst_missing} partition(s) missing")
    return lines
