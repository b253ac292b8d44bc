"""The bundled ingest job: one partitioned write, or one write per hour (or per hour and
region), give the same partitions."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from airflow_partitions.spark.jobs.events_ingest import write_hours, write_slices
from airflow_partitions.spark.synthetic import (
    SLICE_REGIONS,
    events_for_hour,
    events_for_slice,
    expected_slice_totals,
    totals,
)

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


def slice_rows(location: Path) -> list[tuple[int, int]]:
    table = pq.read_table(location)
    assert "region" not in table.column_names  # the region is in the path, as the hour is
    return sorted((r["user_id"], r["amount_cents"]) for r in table.to_pylist())


def expected_slice(hour: dt.datetime, region: str) -> list[tuple[int, int]]:
    return sorted((e.user_id, e.amount_cents) for e in events_for_slice(hour, region))


def test_slices_one_partitioned_write_equals_one_write_per_slice(spark: Any,
                                                                  tmp_path: Path) -> None:
    """``.../dt={dt}/region={region}`` takes the one-job path, any other template one write
    per (hour, region); both write exactly the slices asked for (a skipped hour in every
    region, a skipped slice in its region only), and re-writing one slice (a late region's
    hour) leaves the other region's hour as it was."""
    late = "2015-01-30-01/region=eu"
    one = write_slices(spark, T0, T0 + 3 * HOUR, f"{tmp_path}/one/dt={{dt}}/region={{region}}",
                       SLICE_REGIONS, skip=frozenset({"2015-01-30-02", late}))
    each = write_slices(spark, T0, T0 + 3 * HOUR, f"{tmp_path}/each/{{region}}/{{dt}}",
                        SLICE_REGIONS, skip=frozenset({"2015-01-30-02", late}))
    assert one == each == [("2015-01-30-00", "eu"), ("2015-01-30-00", "us"),
                           ("2015-01-30-01", "us")]
    for value, region in one:
        hour = dt.datetime.strptime(value, "%Y-%m-%d-%H").replace(tzinfo=dt.UTC)
        assert slice_rows(tmp_path / "one" / f"dt={value}" / f"region={region}") == \
            expected_slice(hour, region)
        assert slice_rows(tmp_path / "each" / region / value) == expected_slice(hour, region)
    assert not (tmp_path / "one" / "dt=2015-01-30-01" / "region=eu").exists()
    assert not (tmp_path / "one" / "dt=2015-01-30-02").exists()
    us_file = sorted((tmp_path / "one" / "dt=2015-01-30-01" / "region=us").glob("*.parquet"))

    assert write_slices(spark, T0 + HOUR, T0 + 2 * HOUR,
                        f"{tmp_path}/one/dt={{dt}}/region={{region}}", ["eu"]) == [
        ("2015-01-30-01", "eu")]
    assert slice_rows(tmp_path / "one" / "dt=2015-01-30-01" / "region=eu") == \
        expected_slice(T0 + HOUR, "eu")
    assert sorted((tmp_path / "one" / "dt=2015-01-30-01" / "region=us").glob(
        "*.parquet")) == us_file  # dynamic overwrite: the other region is not rewritten


def test_slice_events_are_their_regions_and_add_up() -> None:
    """Each slice's events carry its region, are the same in every call, and the expected
    totals are the sum of the slices."""
    for region in SLICE_REGIONS:
        events = events_for_slice(T0, region)
        assert events == events_for_slice(T0, region)
        assert {e.region for e in events} == {region}
        assert 20 <= len(events) <= 40
        assert all(T0 <= e.event_time < T0 + HOUR for e in events)
    assert events_for_slice(T0, "eu") != events_for_slice(T0, "us")
    assert expected_slice_totals(T0, T0 + 2 * HOUR, SLICE_REGIONS) == totals(
        e for h in (T0, T0 + HOUR) for r in SLICE_REGIONS for e in events_for_slice(h, r))
