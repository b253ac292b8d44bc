"""`make demo` prints real timelines; this guards it from breaking."""

from __future__ import annotations

import io

from rich.console import Console

from airflow_partitions.demo.timelines import example_timelines, render
from airflow_partitions.periods import UpdatePeriod


def test_example_matches_the_lens_scenario() -> None:
    timelines = example_timelines()
    daily = timelines[UpdatePeriod.DAILY]
    assert [str(r) for r in daily.ranges()] == [
        "[2015-01-30, 2015-02-10)",
        "[2015-02-11, 2015-03-01)",
    ]
    assert len(timelines[UpdatePeriod.HOURLY]) == 18 + 24 + 6


def test_render_prints_ranges_and_migration_verdict() -> None:
    buffer = io.StringIO()
    render(Console(file=buffer, width=200))
    text = buffer.getvalue()
    assert "[2015-01-30, 2015-02-10) ∪ [2015-02-11, 2015-03-01)" in text
    assert "identical" in text
    assert "DIFFERENT" not in text
