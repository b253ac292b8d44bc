"""Coverage metrics (cover/gauges.py): fraction, missing partitions, lateness, their gauges."""

from __future__ import annotations

import pendulum
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.cover import Cover, CoverRequest, CoverSource, compute_cover
from airflow_partitions.cover.gauges import (
    COVERED_FRACTION,
    LATENESS_SECONDS,
    MISSING_PARTITIONS,
    coverage_metrics,
    latest_end,
    missing_partitions,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline, new_timeline
from tests.hypothesis_budget import examples

H, D = UpdatePeriod.HOURLY, UpdatePeriod.DAILY
T0 = pendulum.datetime(2024, 1, 1, tz="UTC")
DAYS = 2
HOUR0 = H.ordinal(T0, "UTC")
DAY0 = D.ordinal(T0, "UTC")


def timelines(hours: set[int], days: set[int]) -> tuple[PartitionTimeline, PartitionTimeline]:
    """``raw`` HOURLY with hours ``HOUR0 + h``, ``rollup`` DAILY with days ``DAY0 + d``."""
    hourly, daily = new_timeline(None, H), new_timeline(None, D)
    for h in hours:
        hourly.add_ordinal(HOUR0 + h)
    for d in days:
        daily.add_ordinal(DAY0 + d)
    return hourly, daily


def cover_for(hourly: PartitionTimeline, daily: PartitionTimeline,
              fact: str | None = "events") -> Cover:
    sources = [CoverSource("raw", 0, H, hourly), CoverSource("rollup", 5, D, daily)]
    return compute_cover(sources, CoverRequest.of(fact, T0, T0.add(days=DAYS)), tz="UTC")


@settings(max_examples=examples(150), deadline=None)
@given(hours=st.sets(st.integers(0, 24 * DAYS - 1)), days=st.sets(st.integers(0, DAYS - 1)))
def test_values_follow_the_cover(hours: set[int], days: set[int]) -> None:
    hourly, daily = timelines(hours, days)
    cover = cover_for(hourly, daily)
    now = T0.add(days=5)
    metrics = coverage_metrics(cover, {"raw": [hourly], "rollup": [daily]}, now)

    # an hour slot is covered when its hour or its day is registered (nested periods)
    uncovered = [h for h in range(24 * DAYS) if h not in hours and h // 24 not in days]
    assert metrics.missing_partitions == len(uncovered)
    assert 0.0 <= metrics.covered_fraction <= 1.0
    assert metrics.covered_fraction == pytest.approx(1 - len(uncovered) / (24 * DAYS))
    assert (metrics.missing_partitions == 0) == cover.coverable
    assert (metrics.covered_fraction == 1.0) == cover.coverable

    late = {row.storage: row for row in metrics.lateness}
    if hours:
        end = T0.add(hours=max(hours) + 1)
        assert late["raw"].latest_end == end
        assert late["raw"].seconds == (now - end).total_seconds()
    else:
        assert late["raw"].latest_end is None and late["raw"].seconds is None
    if days:
        assert late["rollup"].latest_end == T0.add(days=max(days) + 1)
    gauges = metrics.gauges()
    assert [g.name for g in gauges[:2]] == [COVERED_FRACTION, MISSING_PARTITIONS]
    lateness = {g.tags["storage"]: g.value for g in gauges if g.name == LATENESS_SECONDS}
    assert lateness == {s: r.seconds for s, r in late.items() if r.seconds is not None}
    assert all(g.tags["fact"] == "events" for g in gauges)


def test_missing_counts_the_finest_period_of_each_gap() -> None:
    hourly, daily = timelines({0, 1, 30}, set())
    cover = cover_for(hourly, daily)
    assert len(cover.missing) == 2
    assert missing_partitions(cover) == (24 - 2) + (24 - 1)


def test_lateness_is_over_every_period_of_a_storage_and_may_be_negative() -> None:
    hourly, daily = timelines({5}, {0})
    assert latest_end([hourly, daily]) == T0.add(days=1)
    assert latest_end([new_timeline(None, H)]) is None
    cover = cover_for(hourly, daily)
    metrics = coverage_metrics(cover, {"both": [hourly, daily]}, T0.add(hours=20))
    assert metrics.lateness[0].seconds == -4 * 3600.0  # the day ends after "now"


def test_json_has_every_value() -> None:
    hourly, daily = timelines({0}, set())
    now = T0.add(hours=3)
    data = coverage_metrics(cover_for(hourly, daily), {"raw": [hourly]}, now).to_json()
    assert data["fact"] == "events" and data["now"] == now.isoformat()
    assert data["missing_partitions"] == 24 * DAYS - 1
    assert data["lateness"] == [{"storage": "raw", "latest_end": T0.add(hours=1).isoformat(),
                                 "seconds": 7200.0}]


def test_refuses_a_cover_without_fact_or_a_naive_now() -> None:
    hourly, daily = timelines(set(), set())
    with pytest.raises(InvalidInput, match="fact"):
        coverage_metrics(cover_for(hourly, daily, fact=None), {}, T0)
    with pytest.raises(InvalidInput, match="offset"):
        coverage_metrics(cover_for(hourly, daily), {}, T0.naive())
