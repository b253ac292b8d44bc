"""The verified cover kept as runs answers exactly what a per-partition one would.

The oracle below is the per-partition algorithm, written from public reads: every chosen
partition's rows found by its time value in ``list_partitions`` (key order), its location the
row's or the directory its rows share, and the manifest rows in cover order. Random catalogs
(the time column first, second or alone in the key; several rows per hour; rollups) and random
ranges, on every backend.
"""

from __future__ import annotations

import datetime as dt
import itertools
import posixpath

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.definitions.tables import Partition
from airflow_partitions.cover import Cover, CoverRequest
from airflow_partitions.kv import forget_all
from tests.hypothesis_budget import examples

T0 = dt.datetime(2015, 3, 1, tzinfo=dt.UTC)
HOURS = 72
REGIONS = ("ap", "eu", "us")
LAYOUTS = (["dt"], ["dt", "region"], ["region", "dt"])
_names = itertools.count()


def hour(h: int) -> str:
    return (T0 + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H")


@st.composite
def catalogs(draw: st.DrawFn) -> tuple[list[str], dict[int, list[str]], list[int]]:
    """A raw storage's key columns, its rows (hour -> regions) and the registered days."""
    columns = draw(st.sampled_from(LAYOUTS))
    hours = draw(st.sets(st.integers(0, HOURS - 1), max_size=HOURS))
    regions = st.just(["eu"]) if "region" not in columns else st.lists(
        st.sampled_from(REGIONS), min_size=1, max_size=3, unique=True)
    rows = {h: draw(regions) for h in sorted(hours)}
    days = sorted(draw(st.sets(st.integers(0, HOURS // 24 - 1))))
    return columns, rows, days


def build(catalog: Catalog, columns: list[str], rows: dict[int, list[str]],
          days: list[int]) -> str:
    fact = f"lazy{next(_names)}"
    catalog.create_fact(fact)
    catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"], columns=columns)
    catalog.create_storage(fact, f"{fact}_day", ["DAILY"], priority=5)
    values = [{"dt": hour(h), **({"region": r} if "region" in columns else {})}
              for h, regions in rows.items() for r in regions]
    if values:
        catalog.register(f"{fact}_raw", "HOURLY", values)
    if days:
        catalog.register(f"{fact}_day", "DAILY", [
            {"dt": (T0 + dt.timedelta(days=d)).strftime("%Y-%m-%d")} for d in days])
    return fact


def oracle(catalog: Catalog, cover: Cover) -> tuple[list[tuple[object, ...]], list[Partition]]:
    """Today's answer: (storage, period, value, start, end, location) per cover partition, and
    the rows behind them in cover order."""
    listed: dict[tuple[str, str, str], list[Partition]] = {}
    for storage in {r.storage for r in cover.runs}:
        for part in catalog.list_partitions(storage):
            listed.setdefault((storage, part.period.name, part.values["dt"]), []).append(part)
    parts, rows = [], []
    for p in cover.partitions:
        behind = listed[(p.storage, p.period.name, p.value)]
        location = (behind[0].location if len(behind) == 1
                    else posixpath.commonpath([r.location for r in behind]))
        parts.append((p.storage, p.period, p.value, p.start, p.end, location))
        rows.extend(behind)
    return parts, rows


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(drawn=catalogs(), bounds=st.tuples(st.integers(0, HOURS), st.integers(0, HOURS)))
def test_the_lazy_verified_cover_equals_the_per_partition_one(
        catalog: Catalog, drawn: tuple[list[str], dict[int, list[str]], list[int]],
        bounds: tuple[int, int]) -> None:
    fact = build(catalog, *drawn)
    lo, hi = sorted(bounds)
    request = CoverRequest.of(fact, T0 + dt.timedelta(hours=lo), T0 + dt.timedelta(hours=hi))
    verified = catalog.cover_with_partitions(request)
    unverified = catalog.cover_with_partitions(request, verify=False).cover
    assert verified.cover.runs == unverified.runs
    assert verified.cover.missing == unverified.missing
    parts, rows = oracle(catalog, unverified)
    assert [(p.storage, p.period, p.value, p.start, p.end, p.location)
            for p in verified.cover.partitions] == parts
    assert list(verified.partitions) == rows
    assert verified.cover == Cover.from_json(verified.cover.to_json(), "UTC")


def test_nothing_is_built_until_a_caller_iterates(catalog: Catalog) -> None:
    """A sensor's question (coverable? what is missing?) builds no partition object."""
    fact = build(catalog, ["dt", "region"], {h: ["eu", "us"] for h in range(48)}, [])
    verified = catalog.cover_with_partitions(CoverRequest.of(
        fact, T0, T0 + dt.timedelta(hours=48)))
    assert verified.cover.coverable and len(verified.cover) == 48
    assert verified.cover._partitions is None  # the laziness is the subject
    assert verified._built is None
    assert len(verified.partitions) == 96
    assert verified.cover.partitions[0].location is not None
    assert verified.cover.partitions[0].location.endswith(f"dt={hour(0)}")


def test_runs_split_by_holes_are_read_in_one_round_trip(catalog: Catalog) -> None:
    """A day with two holes is three runs of one storage and period: one read gets them all
    (a projected scan; on HBase, where a scanner costs three calls, the rows by key), and a
    row in a hole that the timeline does not advertise (a register that crashed before its
    timeline step) is not attributed to any run."""
    hours = [h for h in range(24) if h not in (5, 17)]
    fact = build(catalog, ["dt"], {h: ["eu"] for h in hours}, [])
    request = CoverRequest.of(fact, T0, T0 + dt.timedelta(days=1))
    catalog.cover_with_partitions(request)  # warm the cache
    forget_all()  # every memo emptied: the rows are read again
    catalog.stats.reset()
    verified = catalog.cover_with_partitions(request)
    assert [(r.first % 24, r.end % 24 or 24) for r in verified.cover.runs] == [
        (0, 5), (6, 17), (18, 24)]
    if catalog.rows.partitions.keyed_reads_save_round_trips:
        assert dict(catalog.stats.ops) == {"get": 1, "get_many": 1}  # the fact row, the day's
    else:
        assert catalog.stats.ops["scan_page"] == 1
    # A row for hour 05 written behind the timelines' back: the cover still misses 05.
    sdef = catalog.get_storage(f"{fact}_raw")
    period = sdef.periods[0]
    catalog.rows.partitions.put(catalog.rows.partition_key(sdef, period, (hour(5),)),
                                {b"p:loc": b"/data/stray", b"p:v.dt": hour(5).encode()})
    again = catalog.cover_with_partitions(request)
    assert [m.start.hour for m in again.cover.missing] == [5, 17]
    assert [p.values["dt"] for p in again.partitions] == [hour(h) for h in hours]


def test_a_row_in_a_hole_cannot_stand_in_for_an_absent_hour(catalog: Catalog) -> None:
    """Runs split by a hole share one scan, whose key range spans the hole: a row there whose
    cells claim the next hour (hour 06's row moved to hour 05's key, behind the catalog's
    back) must not back hour 06, though the texts read match the runs' values in order."""
    hours = [h for h in range(24) if h != 5]
    fact = build(catalog, ["dt"], {h: ["eu"] for h in hours}, [])
    request = CoverRequest.of(fact, T0, T0 + dt.timedelta(days=1))
    assert [m.start.hour for m in catalog.cover_with_partitions(request).cover.missing] == [5]
    sdef = catalog.get_storage(f"{fact}_raw")
    period = sdef.periods[0]
    table = catalog.rows.partitions
    key5, key6 = (catalog.rows.partition_key(sdef, period, (hour(h),)) for h in (5, 6))
    table.put(key5, table.get(key6))
    table.delete(key6)
    cover = catalog.cover_with_partitions(request).cover
    assert [(m.start.hour, m.end.hour) for m in cover.missing] == [(5, 7)]
    assert hour(6) not in [p.value for p in cover.partitions]
