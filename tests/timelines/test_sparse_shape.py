"""The sparse-history cliff: no registration pattern makes a timeline cost
more than O(ranges) in memory, and the sparse rule says when EndsAndHoles should become Ranges."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    EndsAndHolesTimeline,
    RangesTimeline,
    convert,
    is_sparse,
    new_timeline,
    timeline_from_properties,
)
from airflow_partitions.timelines.properties import timeline_prefix
from airflow_partitions.timelines.shape import HOLES_PER_RANGE, MIN_HOLES
from tests.hypothesis_budget import examples

HOURLY = UpdatePeriod.HOURLY
BASE = HOURLY.parse_ordinal("2015-01-01-00")
TEN_YEARS = 10 * 8766


@pytest.mark.parametrize("kind", ["EndsAndHoles", "Ranges"])
def test_a_far_partition_costs_one_range_not_a_hole_per_slot(kind: str) -> None:
    # Before: EndsAndHoles kept a set of every hole, so 10 million SECONDLY slots between two
    # partitions allocated 10 million integers.
    timeline = new_timeline(kind, "SECONDLY")
    tracemalloc.start()
    try:
        timeline.add_ordinal(0)
        timeline.add_ordinal(10_000_000)
        timeline.drop_ordinal(0)
        timeline.add_ordinal(5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"{peak:,} bytes for two ranges"
    assert timeline.ordinal_ranges() == [(5, 6), (10_000_000, 10_000_001)]
    assert len(timeline) == 2


def test_the_sparse_rule() -> None:
    timeline = EndsAndHolesTimeline(HOURLY)
    for o in range(BASE, BASE + 24 * 365):
        timeline.add_ordinal(o)
    assert not is_sparse(timeline)
    timeline.add_ordinal(BASE + TEN_YEARS)
    assert timeline.hole_count() == TEN_YEARS - 24 * 365 and timeline.range_count() == 2
    assert is_sparse(timeline)
    assert not is_sparse(convert(timeline, "Ranges")), "only EndsAndHoles is ever switched"


@settings(deadline=None, max_examples=examples(200))
@given(gaps=st.lists(st.integers(1, 40), min_size=1, max_size=400)
       | st.lists(st.integers(1, 3 * MIN_HOLES), min_size=1, max_size=4))
def test_sparse_exactly_when_holes_outnumber_ranges(gaps: list[int]) -> None:
    timeline = EndsAndHolesTimeline(HOURLY)
    o = BASE
    timeline.add_ordinal(o)
    for gap in gaps:
        o += gap + 1
        timeline.add_ordinal(o)
    holes, ranges = sum(gaps), len(gaps) + 1
    assert (timeline.hole_count(), timeline.range_count()) == (holes, ranges)
    assert is_sparse(timeline) == (holes > MIN_HOLES and holes > HOLES_PER_RANGE * ranges)


def test_holes_in_a_run_are_still_validated() -> None:
    # Loading guesses each hole as the successor of the previous; a non-canonical string in
    # the middle of a run must still be reported, not guessed past.
    prefix = timeline_prefix("HOURLY", "dt")
    props = {
        prefix + "first": "2015-01-01-00", prefix + "latest": "2015-01-01-09",
        prefix + "holes.size": "1", prefix + "holes0": "2015-01-01-03,2015-01-01-4,2015-01-01-05",
        prefix + "storage.class": EndsAndHolesTimeline.lens_class,
    }
    with pytest.raises(CorruptTimeline, match="2015-01-01-4"):
        timeline_from_properties(props, HOURLY)
    props[prefix + "holes0"] = "2015-01-01-03,2015-01-01-04,2015-01-01-05"
    loaded = timeline_from_properties(props, HOURLY)
    first = HOURLY.parse_ordinal("2015-01-01-00")
    assert loaded.ordinal_ranges() == [(first, first + 3), (first + 6, first + 10)]
    assert isinstance(convert(loaded, "Ranges"), RangesTimeline)
