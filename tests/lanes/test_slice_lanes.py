"""The Partitions view's slice lanes, computed from ranges: no store, no app."""

from __future__ import annotations

import datetime as dt
from typing import Any

from airflow_partitions.cover import Slice, to_us
from airflow_partitions.lanes.slice_lanes import (
    SlicePresence,
    merge,
    presence_of,
    slice_stretches,
    sliced_storage,
)
from airflow_partitions.periods import UpdatePeriod

H = UpdatePeriod.HOURLY
T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
DAY = T0 + dt.timedelta(days=1)
O0 = H.ordinal(T0, "UTC")
EU: Slice = (("region", "eu"),)
US: Slice = (("region", "us"),)
APAC: Slice = (("region", "apac"),)


def us_of(hours: float) -> int:
    return to_us(T0 + dt.timedelta(hours=hours))


def presence(lacking: dict[Slice, list[int]], *, apac_from: float | None = None,
             slices: tuple[Slice, ...] = (EU, US)) -> SlicePresence:
    """A day of HOURLY: every slice required all day (apac from ``apac_from`` hours)."""
    required = [(s, [(us_of(0), us_of(24))]) for s in slices]
    if apac_from is not None:
        required.append((APAC, [(us_of(apac_from), us_of(24))]))
    return presence_of("raw", H, "UTC", T0, DAY, required,
                       {s: [O0 + h for h in hours] for s, hours in lacking.items()})


def states(lane: Any) -> list[tuple[str, str, int]]:
    return [(s["state"], s["first"], s["partitions"])
            for s in lane["stretches"]]


def lanes_of(view: Any, group: int = -1) -> dict[str, Any]:
    return {lane["label"]: lane for lane in view["groups"][group]["lanes"]}


def test_a_slice_lacking_hours_shows_them_missing_for_that_slice_only() -> None:
    view = sliced_storage(presence({EU: list(range(5, 24))}), {}, "UTC")
    lanes = lanes_of(view)
    assert states(lanes["region=eu"]) == [("registered", "2015-01-01-00", 5),
                                          ("missing", "2015-01-01-05", 19)]
    assert states(lanes["region=us"]) == [("registered", "2015-01-01-00", 24)]
    assert (view["slices"], view["incomplete"], view["missing"]) == (2, 1, 19)


def test_worst_slices_first_and_the_summary_names_them() -> None:
    view = sliced_storage(presence({US: [3], EU: list(range(5, 24))}, apac_from=12), {}, "UTC")
    [group] = view["groups"]
    assert [lane["label"] for lane in group["lanes"]] == ["region=eu", "region=us",
                                                          "region=apac"]
    assert group["summary"] == ("region: 2 of 3 slices incomplete, 20 HOURLY partitions "
                                "missing (worst region=eu 19, region=us 1)")
    complete = sliced_storage(presence({}), {}, "UTC")
    assert complete["groups"][0]["summary"] == "region: all 2 slices complete"


def test_a_value_required_from_an_instant_is_not_applicable_before_it() -> None:
    """apac is required from 12:30: the 12:00 hour holds the launch, so it is required."""
    view = sliced_storage(presence({APAC: [20, 21]}, apac_from=12.5), {}, "UTC")
    apac = lanes_of(view)["region=apac"]
    assert states(apac) == [("not_applicable", "2015-01-01-00", 12),
                            ("registered", "2015-01-01-12", 8),
                            ("missing", "2015-01-01-20", 2),
                            ("registered", "2015-01-01-22", 2)]
    assert apac["not_applicable"] == 12 and apac["missing"] == 2


def test_lanes_are_grouped_per_dimension_column() -> None:
    """Two dimensions: one group per column (a value is missing where any of its slices is),
    then every slice."""
    slices = tuple(((("region", r), ("source", s))) for r in ("eu", "us") for s in ("app", "web"))
    lacking = {(("region", "eu"), ("source", "web")): [1, 2],
               (("region", "us"), ("source", "web")): [2, 3]}
    view = sliced_storage(presence(lacking, slices=slices), {}, "UTC")
    assert [(g["column"], g["kind"]) for g in view["groups"]] == [
        ("region", "values"), ("source", "values"), ("region, source", "slices")]
    source = lanes_of(view, 1)
    assert states(source["source=web"]) == [
        ("registered", "2015-01-01-00", 1), ("missing", "2015-01-01-01", 3),
        ("registered", "2015-01-01-04", 20)]
    assert source["source=app"]["missing"] == 0
    assert [lane["label"] for lane in view["groups"][2]["lanes"]][:2] == [
        "region=eu,source=web", "region=us,source=web"]
    assert view["groups"][0]["summary"].startswith("region: 2 of 2 values incomplete, 4 ")
    assert (view["slices"], view["incomplete"], view["missing"]) == (4, 2, 4)


def test_stale_and_sticking_out_partitions() -> None:
    """A stale hour of a slice is stale in its lane only; a lacking partition that sticks out
    of the window is not applicable, not missing."""
    stretches = slice_stretches([(0, 10)], [(0, 1), (5, 6)], [(2, 3)], 0, 10, (1, 10))
    assert [(s.state, s.first, s.end) for s in stretches] == [
        ("not_applicable", 0, 1), ("registered", 1, 2), ("stale", 2, 3),
        ("registered", 3, 5), ("missing", 5, 6), ("registered", 6, 10)]
    view = sliced_storage(presence({}), {EU: [(O0 + 4, O0 + 5)]}, "UTC")
    lanes = lanes_of(view)
    assert lanes["region=eu"]["stale"] == 1 and lanes["region=us"]["stale"] == 0


def test_the_storage_lane_counts_an_hour_only_when_every_slice_has_it() -> None:
    found = presence({EU: [5, 6], US: [6, 7]})
    assert found.complete([(O0, O0 + 24)]) == [(O0, O0 + 5), (O0 + 8, O0 + 24)]
    assert merge([(3, 4), (0, 1), (1, 2), (6, 6)]) == [(0, 2), (3, 4)]
