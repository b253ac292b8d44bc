"""The view's fast instants and values equal the periods' own."""

from __future__ import annotations

import pendulum
import pytest

from airflow_partitions.lanes.stretches import Instants, lane_stretches
from airflow_partitions.periods import UpdatePeriod


@pytest.mark.parametrize("period", list(UpdatePeriod))
@pytest.mark.parametrize("tz", ["UTC", "Europe/Berlin", "Asia/Kolkata"])
def test_instants_equal_the_period(period: UpdatePeriod, tz: str) -> None:
    anchor = period.ordinal(pendulum.datetime(2015, 3, 29, tz="UTC"), tz)  # a DST change
    at = Instants(period, tz, anchor)
    step = {UpdatePeriod.SECONDLY: 3607, UpdatePeriod.MINUTELY: 61}.get(period, 1)
    for ordinal in range(anchor - 200 * step, anchor + 200 * step, step):
        assert at.start(ordinal).isoformat() == period.start_of(ordinal, tz).isoformat()
        assert at.value(ordinal) == period.format_ordinal(ordinal, tz)


def test_stretches_tile_the_window() -> None:
    stretches = lane_stretches([(0, 3), (5, 9)], [(1, 2), (8, 12)], -2, 11)
    assert [(s.state, s.first, s.end) for s in stretches] == [
        ("missing", -2, 0), ("registered", 0, 1), ("stale", 1, 2), ("registered", 2, 3),
        ("missing", 3, 5), ("registered", 5, 8), ("stale", 8, 9), ("missing", 9, 11)]
