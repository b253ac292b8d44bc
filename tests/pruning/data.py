"""Regional test data written with pyarrow (no Spark needed to create it)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.spark import REGIONS, events_for_hour, hours, totals


def write_regional(template: str, start: dt.datetime, end: dt.datetime) -> list[dict[str, str]]:
    """Events of every (hour, region) as one Parquet file per partition directory."""
    schema = pa.schema([("event_time", pa.timestamp("us", tz="UTC")), ("user_id", pa.int64()),
                        ("amount_cents", pa.int64())])
    values = []
    for hour in hours(start, end):
        value = UpdatePeriod.HOURLY.format(hour, "UTC")
        events = events_for_hour(hour)
        for region in REGIONS:
            rows = [{"event_time": e.event_time, "user_id": e.user_id,
                     "amount_cents": e.amount_cents} for e in events if e.region == region]
            folder = Path(template.format(dt=value, region=region))
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-0.parquet")
            values.append({"dt": value, "region": region})
    return values


def write_dimension(path: Path, rows: list[dict[str, Any]]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path / "part-0.parquet")


def expected(start: dt.datetime, end: dt.datetime, regions: tuple[str, ...]
             ) -> dict[str, dict[str, int]]:
    """Per-region totals straight from the generator (independent of Spark)."""
    every = totals(e for h in hours(start, end) for e in events_for_hour(h))
    return {r: {"events": n, "amount_cents": c} for r, (n, c) in every.items() if r in regions}
