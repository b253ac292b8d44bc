"""The bundled ingest job: one partitioned write, or one write per hour, give the same hours."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from airflow_partitions.spark.jobs.events_ingest import write_hours
from airflow_partitions.spark.synthetic import events_for_hour

T0 = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)


def amounts(location: Path) -> list[tuple[int, int]]:
    rows = pq.read_table(location, columns=["user_id", "amount_cents"]).to_pylist()
    return sorted((r["user_id"], r["amount_cents"]) for r in rows)


def expected(hour: dt.datetime) -> list[tuple[int, int]]:
    return sorted((e.user_id, e.amount_cents) for e in events_for_hour(hour))


def test_one_partitioned_write_equals_one_write_per_hour(spark: Any, tmp_path: Path) -> None:
    """``.../dt={dt}`` takes the one-job path, any other template the per-hour path; both
    write exactly the hours asked for, each with its own events; a re-run replaces the hours
    it writes and keeps the others."""
    kept = tmp_path / "one" / "dt=2015-01-29-23"
    kept.mkdir(parents=True)
    (kept / "part-0.parquet").write_bytes(b"not touched")
    one = write_hours(spark, T0, T0 + 4 * HOUR, f"{tmp_path}/one/dt={{dt}}",
                      skip=frozenset({"2015-01-30-02"}))
    each = write_hours(spark, T0, T0 + 4 * HOUR, f"{tmp_path}/each/{{dt}}/events",
                       skip=frozenset({"2015-01-30-02"}))
    assert one == each == ["2015-01-30-00", "2015-01-30-01", "2015-01-30-03"]
    for value, hour in zip(one, (T0, T0 + HOUR, T0 + 3 * HOUR), strict=True):
        assert amounts(tmp_path / "one" / f"dt={value}") == expected(hour)
        assert amounts(tmp_path / "each" / value / "events") == expected(hour)
    assert not (tmp_path / "one" / "dt=2015-01-30-02").exists()

    again = write_hours(spark, T0 + 3 * HOUR, T0 + 4 * HOUR, f"{tmp_path}/one/dt={{dt}}")
    assert again == ["2015-01-30-03"]
    assert amounts(tmp_path / "one" / "dt=2015-01-30-03") == expected(T0 + 3 * HOUR)
    assert (kept / "part-0.parquet").read_bytes() == b"not touched"
    assert amounts(tmp_path / "one" / "dt=2015-01-30-00") == expected(T0)
