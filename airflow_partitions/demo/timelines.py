"""``make demo``: the partition timelines of a small built-in example, printed for a person.

The example is the Apache Lens note's scenario: an ``events`` fact with HOURLY, DAILY and MONTHLY
partitions around ``[2015-01-29T06:00Z, 2015-03-01T06:00Z)``, with one DAILY rollup missing.
It shows each timeline's ranges, what each implementation stores, and a lossless migration.
(The end-to-end Spark and Airflow demo replaces this once the pipeline layer lands.)
"""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from airflow_partitions.periods import TimePartitionRange, UpdatePeriod
from airflow_partitions.timelines import (
    IMPLEMENTATIONS,
    PartitionTimeline,
    convert,
    new_timeline,
    timeline_from_properties,
)


def example_timelines() -> dict[UpdatePeriod, PartitionTimeline]:
    """The Lens scenario: hourly edges, daily rollups but one, a February monthly rollup."""
    hourly = new_timeline("EndsAndHoles", UpdatePeriod.HOURLY)
    hourly.add_all(TimePartitionRange.parse("[2015-01-29-06, 2015-01-30-00)", "HOURLY"))
    hourly.add_all(TimePartitionRange.parse("[2015-02-10-00, 2015-02-11-00)", "HOURLY"))
    hourly.add_all(TimePartitionRange.parse("[2015-03-01-00, 2015-03-01-06)", "HOURLY"))
    daily = new_timeline("EndsAndHoles", UpdatePeriod.DAILY)
    daily.add_all(TimePartitionRange.parse("[2015-01-30, 2015-03-01)", "DAILY"))
    daily.drop(UpdatePeriod.DAILY.partition("2015-02-10"))
    monthly = new_timeline("EndsAndHoles", UpdatePeriod.MONTHLY)
    monthly.add(UpdatePeriod.MONTHLY.partition("2015-02"))
    return {UpdatePeriod.HOURLY: hourly, UpdatePeriod.DAILY: daily, UpdatePeriod.MONTHLY: monthly}


def _ranges_text(timeline: PartitionTimeline) -> str:
    return " ∪ ".join(str(r) for r in timeline.ranges()) or "(empty)"


def render(console: Console) -> None:
    """Print the example's timelines, their stored sizes and a migration check."""
    timelines = example_timelines()
    console.rule("[bold]airflow-partitions demo: partition timelines")
    console.print("fact [bold]events[/], time column [bold]dt[/], zone UTC\n")

    table = Table(title="Timelines (existing partitions as half-open ranges)")
    table.add_column("period")
    table.add_column("partitions", justify="right")
    table.add_column("first")
    table.add_column("latest")
    table.add_column("ranges", overflow="fold")
    for period, timeline in timelines.items():
        table.add_row(
            period.name,
            str(len(timeline)),
            str(timeline.first()),
            str(timeline.latest()),
            _ranges_text(timeline),
        )
    console.print(table)

    sizes = Table(title="What each implementation stores (Lens-compatible properties)")
    sizes.add_column("period")
    for cls in IMPLEMENTATIONS:
        sizes.add_column(f"{cls.kind} keys / chars", justify="right")
    for period, timeline in timelines.items():
        cells = []
        for cls in IMPLEMENTATIONS:
            props = convert(timeline, cls.kind).to_properties()
            chars = sum(len(k) + len(v) for k, v in props.items())
            cells.append(f"{len(props)} / {chars}")
        sizes.add_row(period.name, *cells)
    console.print(sizes)

    daily = timelines[UpdatePeriod.DAILY]
    props = daily.to_properties()
    console.print("\n[bold]DAILY timeline as stored[/] (EndsAndHoles):")
    console.print_json(json.dumps(dict(sorted(props.items()))))
    migrated = convert(daily, "Ranges")
    reloaded = timeline_from_properties(migrated.to_properties(), UpdatePeriod.DAILY)
    verdict = "identical" if reloaded == daily else "DIFFERENT (bug)"
    console.print(
        f"\nMigrated DAILY to {type(reloaded).__name__} and reloaded it from its properties: "
        f"{verdict} ({_ranges_text(reloaded)})."
    )
    missing = UpdatePeriod.DAILY.partition("2015-02-10")
    hourly = timelines[UpdatePeriod.HOURLY]
    lo = UpdatePeriod.HOURLY.ordinal(missing.start)
    hi = UpdatePeriod.HOURLY.ordinal(missing.end)
    hours = sum(e - b for b, e in hourly.ordinal_ranges(lo, hi))
    console.print(
        f"DAILY {missing} exists? {daily.exists(missing)}; the HOURLY timeline holds "
        f"{hours} of that day's {hi - lo} hours, so a cover can fall back to them."
    )


def main(argv: list[str] | None = None) -> int:
    """Run the demo."""
    parser = argparse.ArgumentParser(
        prog="python -m airflow_partitions.demo.timelines",
        description="Show the partition timelines of a small built-in example.",
    )
    parser.parse_args(argv)
    render(Console())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
