"""Coverage metrics per slice (cover/slices/gauges.py): incomplete slices, the worst one, and
per-slice gauges only while the required slices are few."""

from __future__ import annotations

import pendulum

from airflow_partitions.cover import Cover, MissingRange, NeededPartitions, ValueRun
from airflow_partitions.cover.gauges import (
    INCOMPLETE_SLICES,
    MISSING_PARTITIONS,
    SLICE_MISSING,
    WORST_SLICE_MISSING,
    coverage_metrics,
    missing_partitions,
)
from airflow_partitions.cover.slices.gauges import MAX_SLICE_TAGS, slice_metrics
from airflow_partitions.periods import UpdatePeriod

T0 = pendulum.datetime(2015, 1, 1, tz="UTC")
H = UpdatePeriod.HOURLY


def region(name: str) -> tuple[tuple[str, str], ...]:
    return (("region", name),)


def lacking(name: str, hours: int) -> NeededPartitions:
    run = ValueRun("2015-01-01-00", f"2015-01-01-{hours - 1:02d}", hours)
    return NeededPartitions(H, (run,), hours, region(name))


def cover(*needed: NeededPartitions) -> Cover:
    hours = max((n.total for n in needed), default=0)
    missing = (MissingRange(T0, T0.add(hours=hours), needed),) if needed else ()
    return Cover(T0, T0.add(days=1), (), missing, fact="ev")


def test_few_slices_get_a_gauge_each_complete_ones_at_zero() -> None:
    metrics = coverage_metrics(cover(lacking("eu", 19), lacking("us", 2)), {}, T0,
                               [region("eu"), region("us"), region("ap")])
    assert metrics.slices is not None
    assert (metrics.slices.required, metrics.slices.incomplete) == (3, 2)
    assert (metrics.slices.worst, metrics.slices.worst_missing) == (region("eu"), 19)
    gauges = [(g.name, g.value, dict(g.tags)) for g in metrics.gauges()]
    assert (MISSING_PARTITIONS, 21, {"fact": "ev"}) in gauges  # 19 of eu and 2 of us
    assert (INCOMPLETE_SLICES, 2, {"fact": "ev"}) in gauges
    assert (WORST_SLICE_MISSING, 19, {"fact": "ev"}) in gauges
    per_slice = [(v, t) for n, v, t in gauges if n == SLICE_MISSING]
    assert per_slice == [(0, {"fact": "ev", "region": "ap"}), (19, {"fact": "ev", "region": "eu"}),
                         (2, {"fact": "ev", "region": "us"})]
    flat = {g.flat_name: g.value for g in metrics.gauges() if g.name == SLICE_MISSING}
    assert flat["partitions.coverage.slice_missing.ev.eu"] == 19
    doc = metrics.to_json()["slices"]
    assert doc["worst"] == "region=eu" and doc["incomplete"] == 2
    assert doc["per_slice"][1] == {"slice": "region=eu", "dimensions": {"region": "eu"},
                                   "missing": 19}


def test_above_the_cardinality_limit_only_the_fact_level_gauges_go() -> None:
    names = [f"r{i:03d}" for i in range(MAX_SLICE_TAGS + 1)]
    metrics = coverage_metrics(cover(lacking("r007", 3), lacking("r010", 5)), {}, T0,
                               [region(n) for n in names])
    assert metrics.slices is not None and metrics.slices.per_slice == ()
    assert (metrics.slices.required, metrics.slices.incomplete) == (MAX_SLICE_TAGS + 1, 2)
    assert metrics.slices.worst == region("r010")
    assert {g.name for g in metrics.gauges()} >= {INCOMPLETE_SLICES, WORST_SLICE_MISSING}
    assert SLICE_MISSING not in {g.name for g in metrics.gauges()}
    at_limit = slice_metrics((), [region(n) for n in names[:MAX_SLICE_TAGS]])
    assert at_limit is not None and len(at_limit.per_slice) == MAX_SLICE_TAGS


def test_a_fact_without_dimensions_has_no_slice_gauges() -> None:
    plain = MissingRange(T0, T0.add(hours=2), (NeededPartitions(
        H, (ValueRun("2015-01-01-00", "2015-01-01-01", 2),), 2),))
    metrics = coverage_metrics(Cover(T0, T0.add(days=1), (), (plain,), fact="ev"), {}, T0)
    assert metrics.slices is None and "slices" not in metrics.to_json()
    assert {g.name for g in metrics.gauges()} & {INCOMPLETE_SLICES, SLICE_MISSING} == set()
    assert missing_partitions(Cover(T0, T0.add(days=1), (), (plain,))) == 2


def test_a_coverable_cover_over_slices_sends_zeros() -> None:
    metrics = coverage_metrics(cover(), {}, T0, [region("eu"), region("us")])
    assert metrics.slices is not None
    assert (metrics.slices.incomplete, metrics.slices.worst, metrics.slices.worst_missing) == (
        0, None, 0)
    assert [g.value for g in metrics.gauges() if g.name == SLICE_MISSING] == [0, 0]
