"""read_manifest: one scan per storage, exactly the listed files, the manifest's values.

Every grouped result is compared with the per-location union (the pre-issue-18 reader), which
reads each location on its own and so cannot mix partitions up.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_partitions.spark import build_manifest, read_manifest
from airflow_partitions.spark.locations import attribute, spark_path_forms, unattributable
from airflow_partitions.spark.manifest import Manifest
from airflow_partitions.spark.reader import EmptyLocation, MissingLocation, PartitionDataError


def write(folder: Path, **columns: list[Any]) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), folder / "part-0.parquet")
    return str(folder)


def raw(tmp_path: Path, hours: int, template: str = "raw/dt={dt}/region={region}"
        ) -> list[dict[str, Any]]:
    """``hours`` hourly partitions of (dt, region); hour h holds h + 1 rows x = 100 h + i."""
    rows = []
    for h in range(hours):
        values = {"dt": f"2024-01-01-{h:02d}", "region": "eu" if h % 2 else "us"}
        loc = write(tmp_path / template.format(**values),
                    x=[100 * h + i for i in range(h + 1)])
        rows.append({"storage": "raw", "period": "HOURLY", "values": values, "location": loc})
    return rows


def manifest(rows: list[dict[str, Any]]) -> Manifest:
    return build_manifest("events", "2024-01-01T00:00:00+00:00", "2024-01-02T00:00:00+00:00",
                          rows, "dt")


def file_scans(df: Any) -> int:
    return len(re.findall(r"FileScan \w+", df._jdf.queryExecution().sparkPlan().toString()))


def collected(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def test_one_scan_per_storage_and_the_same_rows_as_the_union(spark: Any, tmp_path: Path) -> None:
    rows = raw(tmp_path, 6)
    rows.append({"storage": "rollup", "period": "DAILY", "values": {"dt": "2024-01-02"},
                 "location": write(tmp_path / "rollup/2024-01-02", region=["eu"], events=[7])})
    grouped = read_manifest(spark, manifest(rows), include_source=True)
    union = read_manifest(spark, manifest(rows), include_source=True, scan="per-location")
    assert file_scans(grouped) == 2 and file_scans(union) == 7
    assert grouped.schema == union.schema
    assert grouped.columns == ["x", "dt", "region", "_storage", "_period", "_location", "events"]
    assert collected(grouped) == collected(union)
    assert len(collected(grouped)) == 21 + 1


def test_reads_exactly_the_listed_files(spark: Any, tmp_path: Path) -> None:
    """Unlisted sibling partitions (and a file beside the locations) never leak in."""
    rows = raw(tmp_path, 8)
    listed = rows[1:7:2]
    write(tmp_path / "raw", x=[-1])  # a stray file in the parent directory
    df = read_manifest(spark, manifest(listed))
    files = {f.removeprefix("file://") for f in df.inputFiles()}
    assert files == {f"{r['location']}/part-0.parquet" for r in listed}
    assert sorted(r["x"] for r in df.collect()) == [100 * h + i for h in (1, 3, 5)
                                                   for i in range(h + 1)]
    assert {r["dt"] for r in df.collect()} == {"2024-01-01-01", "2024-01-01-03", "2024-01-01-05"}


def test_values_come_from_the_manifest_not_the_path(spark: Any, tmp_path: Path) -> None:
    """Custom templates: no ``col=value`` segments, odd characters; values stay text (a
    DAILY value Spark's discovery would make a date, a YEARLY one an int)."""
    rows = []
    for i, (dt, odd) in enumerate([("2024-01-01", "a b%c+d é"), ("2024", "x=1"),
                                    ("2024-01-02", "q")]):
        loc = write(tmp_path / "custom" / odd / str(i), x=[i], dt=[f"from file {i}"])
        rows.append({"storage": "s", "period": "DAILY", "values": {"dt": dt}, "location": loc})
    df = read_manifest(spark, manifest(rows))
    assert df.schema.simpleString() == "struct<x:bigint,dt:string>"
    assert collected(df) == [(0, "2024-01-01"), (1, "2024"), (2, "2024-01-02")]
    assert file_scans(df) == 1


def test_partitions_sharing_a_location_repeat_its_rows_as_before(spark: Any, tmp_path: Path
                                                                 ) -> None:
    loc = write(tmp_path / "shared", x=[1, 2])
    rows = [{"storage": "s", "period": "HOURLY", "values": {"dt": "a", "region": r},
             "location": loc} for r in ("eu", "us")]
    grouped = read_manifest(spark, manifest(rows))
    assert collected(grouped) == collected(read_manifest(spark, manifest(rows),
                                                         scan="per-location"))
    assert collected(grouped) == [(1, "a", "eu"), (1, "a", "us"), (2, "a", "eu"), (2, "a", "us")]


def test_globs_and_nested_locations_fall_back_to_per_location_reads(
        spark: Any, tmp_path: Path) -> None:
    outer = write(tmp_path / "n", x=[1])
    inner = write(tmp_path / "n" / "inner", x=[2])
    rows = [{"storage": "s", "period": "DAILY", "values": {"dt": d}, "location": loc}
            for d, loc in (("a", outer), ("b", inner))]
    assert unattributable([outer, inner]) == sorted([outer, inner])
    df = read_manifest(spark, manifest(rows))
    assert file_scans(df) == 2
    assert collected(df) == collected(read_manifest(spark, manifest(rows), scan="per-location"))


def test_missing_and_empty_locations_are_typed_errors(spark: Any, tmp_path: Path) -> None:
    rows = raw(tmp_path, 2)
    gone = {**rows[0], "values": {"dt": "2024-01-01-09", "region": "eu"},
            "location": str(tmp_path / "gone")}
    for scan in ("grouped", "per-location"):
        with pytest.raises(MissingLocation, match=r"raw HOURLY 2024-01-01-09 at .*/gone"):
            read_manifest(spark, manifest([*rows, gone]), scan=scan)  # type: ignore[arg-type]
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "_SUCCESS").touch()
    empty = {**gone, "location": str(tmp_path / "empty")}
    for scan in ("grouped", "per-location"):
        with pytest.raises(EmptyLocation, match=r"2024-01-01-09 at .*/empty"):
            read_manifest(spark, manifest([*rows, empty]), scan=scan)  # type: ignore[arg-type]
        with pytest.raises(EmptyLocation):
            read_manifest(spark, manifest([empty]), scan=scan)  # type: ignore[arg-type]
    zero_rows = {**gone, "location": write(tmp_path / "zero", x=pa.array([], pa.int64()))}
    assert read_manifest(spark, manifest([*rows, zero_rows])).count() == 3


def test_formats_per_storage(spark: Any, tmp_path: Path) -> None:
    rows = raw(tmp_path, 2)
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "a.json").write_text('{"x": 5}\n')
    rows.append({"storage": "j", "period": "DAILY", "values": {"dt": "2024-01-03"},
                 "location": str(tmp_path / "j")})
    df = read_manifest(spark, manifest(rows), {"raw": "parquet", "j": "json"})
    assert sorted(r["x"] for r in df.collect()) == [0, 5, 100, 101]
    with pytest.raises(PartitionDataError, match="no format given for storage 'j'"):
        read_manifest(spark, manifest(rows), {"raw": "parquet"})


def test_empty_manifest(spark: Any) -> None:
    assert read_manifest(spark, manifest([]), include_source=True).columns == [
        "_storage", "_period", "_location"]


def test_attribution_keys() -> None:
    found = attribute(["file:///d/a%20b/p.parquet", "s3a://bk/x/y/p", "file:///z/q"],
                      ["/d/a b", "s3a://bk/x/y", "/d"])
    assert found.files == {"file:///d/a%20b/p.parquet": "/d/a b", "s3a://bk/x/y/p": "s3a://bk/x/y"}
    assert found.unmatched == ("file:///z/q",) and found.empty(["/d/a b", "/d"]) == ["/d"]
    assert spark_path_forms("file:///d/f") == ("file:///d/f", "file:/d/f")
    assert spark_path_forms("s3a://b/k") == ("s3a://b/k",)
    assert unattributable(["/a", "/a-b", "/a/c", "/x/*"]) == ["/a", "/a/c", "/x/*"]


def test_bad_scan_value(spark: Any) -> None:
    with pytest.raises(ValueError, match="scan must be"):
        read_manifest(spark, manifest([]), scan="each")  # type: ignore[arg-type]


def test_the_bundled_aggregate_job_over_raw_hours_and_a_rollup(spark: Any, tmp_path: Path
                                                               ) -> None:
    """events_aggregate reads raw HOURLY rows and a DAILY rollup through one manifest: two
    scans, and the generator's totals."""
    import datetime as dt

    from airflow_partitions.spark.jobs.events_aggregate import aggregate
    from airflow_partitions.spark.synthetic import events_for_hour, expected_totals, hours, totals

    t0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    rows: list[dict[str, Any]] = []
    for hour in hours(t0, t0 + dt.timedelta(hours=3)):
        events = events_for_hour(hour)
        value = hour.strftime("%Y-%m-%d-%H")
        rows.append({"storage": "raw", "period": "HOURLY", "values": {"dt": value},
                     "location": write(tmp_path / f"raw/{value}", region=[e.region for e in events],
                                       amount_cents=[e.amount_cents for e in events])})
    day = t0 + dt.timedelta(days=1)
    rolled = totals(e for h in hours(day, day + dt.timedelta(days=1)) for e in events_for_hour(h))
    rows.append({"storage": "rollup", "period": "DAILY", "values": {"dt": "2024-01-02"},
                 "location": write(tmp_path / "rollup/2024-01-02", region=list(rolled),
                                   events=[n for n, _ in rolled.values()],
                                   amount_cents=[c for _, c in rolled.values()])})
    result = aggregate(spark, manifest(rows))
    assert file_scans(result) == 2
    got = {r["region"]: (r["events"], r["amount_cents"]) for r in result.collect()}
    want = expected_totals(t0, day + dt.timedelta(days=1),
                           skip=list(hours(t0 + dt.timedelta(hours=3), day)))
    assert got == want


def test_the_manifest_comes_from_the_argument_else_the_spark_conf(spark: Any) -> None:
    """``manifest_location``: ``--partitions-manifest`` first, else the documented conf (what
    ``manifest_conf=True`` passes), else a clear error."""
    from airflow_partitions.spark.manifest import MANIFEST_CONF, ManifestError
    from airflow_partitions.spark.reader import manifest_location

    with pytest.raises(ManifestError, match="--partitions-manifest PATH or the spark conf"):
        manifest_location(spark, None)
    spark.conf.set(MANIFEST_CONF, "/m/by-conf.manifest.json")
    try:
        assert manifest_location(spark, None) == ("/m/by-conf.manifest.json", MANIFEST_CONF)
        assert manifest_location(spark, "/m/arg.json") == ("/m/arg.json", "--partitions-manifest")
    finally:
        spark.conf.unset(MANIFEST_CONF)


def test_held_tasks_announce_themselves_and_pass_every_row(spark: Any, tmp_path: Path) -> None:
    """The cluster test's seam: released from the start, every task writes its marker and the
    rows come through unchanged."""
    import json

    from airflow_partitions.spark.task_hold import RELEASE, held

    (tmp_path / RELEASE).touch()
    frame = spark.createDataFrame([(i, f"r{i % 3}") for i in range(20)], "n long, region string")
    out = held(spark, frame.repartition(2), str(tmp_path))
    assert sorted(r["n"] for r in out.collect()) == list(range(20))
    markers = sorted(tmp_path.glob("held-*.json"))
    assert len(markers) >= 2
    assert all(json.loads(m.read_text())["pid"] > 0 for m in markers)
