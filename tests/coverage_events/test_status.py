"""The view's half of coverage assets: per window, what was announced and what the rest lack
(:func:`airflow_partitions.coverage_events.asset_windows`), on a real SQLite catalog with the
real emitter writing the markers."""

from __future__ import annotations

import pendulum
import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import (
    CoverageAssetSpec,
    CoverageEmitter,
    Emission,
    EmissionMarkers,
    asset_windows,
    followed_assets,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod

DAY1 = pendulum.datetime(2024, 1, 1)
DAY3 = pendulum.datetime(2024, 1, 3)
DAILY = CoverageAssetSpec("events", UpdatePeriod.DAILY)


def hours(day: str, wanted: range) -> list[dict[str, str]]:
    return [{"dt": f"{day}-{h:02d}", "region": "eu"} for h in wanted]


@pytest.fixture
def posted(events: Catalog) -> list[Emission]:
    """DAILY windows followed before any data, then one whole day and 20 hours of the next
    registered and emitted."""
    out: list[Emission] = []
    emitter = CoverageEmitter(events)
    assert emitter.follow(DAILY)
    events.register("raw", "HOURLY", hours("2024-01-01", range(24)))
    events.register("raw", "HOURLY", hours("2024-01-02", range(20)))
    emitter.emit(DAILY, out.append)
    assert [e.key for e in out] == ["2024-01-01T00:00:00"]
    return out


def statuses(catalog: Catalog, spec: CoverageAssetSpec = DAILY
             ) -> list[tuple[str, str, int, bool]]:
    answer = asset_windows(catalog, spec, DAY1, DAY3)
    return [(w.window.key, w.status, w.version, w.restated) for w in answer.windows]


def test_announced_and_pending_with_what_it_lacks(events: Catalog, posted: list[Emission]
                                                 ) -> None:
    answer = asset_windows(events, DAILY, DAY1, DAY3)
    first, second = answer.windows
    assert (first.status, first.version, first.restated, first.lacks) == (
        "announced", 1, False, "")
    assert first.at is not None
    assert (second.status, second.version, second.at) == ("pending", 0, None)
    assert "2024-01-02T20" in second.lacks  # the missing hours, as window_state says
    assert answer.cut is None and answer.error is None
    assert answer.followed_since is not None
    doc = answer.to_json()
    assert doc["counts"] == {"announced": 1, "pending": 1}
    assert [w["key"] for w in doc["windows"]] == ["2024-01-01T00:00:00", "2024-01-02T00:00:00"]
    assert doc["windows"][1]["lacks"] == second.lacks
    assert doc["uri"] == DAILY.uri and doc["name"] == DAILY.name


def test_due_once_coverable_then_announced_and_restated(events: Catalog,
                                                        posted: list[Emission]) -> None:
    events.register("raw", "HOURLY", hours("2024-01-02", range(20, 24)))
    assert statuses(events) == [("2024-01-01T00:00:00", "announced", 1, False),
                                ("2024-01-02T00:00:00", "due", 0, False)]
    events.register("raw", "HOURLY", hours("2024-01-01", range(1)), restate=True)
    CoverageEmitter(events).emit(DAILY, posted.append)
    assert statuses(events) == [("2024-01-01T00:00:00", "announced", 2, True),
                                ("2024-01-02T00:00:00", "announced", 1, False)]


def test_windows_coverable_when_first_followed_are_known(events: Catalog,
                                                         posted: list[Emission]) -> None:
    hourly = CoverageAssetSpec("events", UpdatePeriod.HOURLY)
    CoverageEmitter(events).follow(hourly)
    answer = asset_windows(events, hourly, DAY1, DAY3)
    assert answer.counts() == {"known": 44, "pending": 4}
    assert [w.window.key for w in answer.windows if w.status == "pending"] == [
        f"2024-01-02T{h}:00:00" for h in range(20, 24)]


def test_the_work_is_bounded(events: Catalog, posted: list[Emission]) -> None:
    answer = asset_windows(events, DAILY, DAY1, DAY3, limit=1)
    assert [w.window.key for w in answer.windows] == ["2024-01-01T00:00:00"]
    assert answer.cut is not None and "first 1 windows" in answer.cut
    assert answer.to_json()["cut"] == answer.cut
    with pytest.raises(InvalidInput):
        asset_windows(events, DAILY, DAY1, DAY3, limit=0)


def test_an_asset_the_fact_can_no_longer_make_answers_its_error(events: Catalog) -> None:
    minutely = CoverageAssetSpec("events", UpdatePeriod.MINUTELY)
    answer = asset_windows(events, minutely, DAY1, DAY3)
    assert answer.windows == [] and answer.error is not None
    assert "MINUTELY" in answer.error


def test_followed_assets_of_a_fact(events: Catalog, posted: list[Emission]) -> None:
    hourly = CoverageAssetSpec("events", UpdatePeriod.HOURLY, per_slice=True)
    CoverageEmitter(events).follow(hourly)
    events.create_fact("other")
    events.create_storage("other", "o", ["DAILY"])
    CoverageEmitter(events).follow(CoverageAssetSpec("other", UpdatePeriod.DAILY))
    markers = EmissionMarkers(events.rows.kv)
    assert followed_assets(events, "events", markers) == sorted([DAILY, hourly],
                                                                key=lambda s: s.uri)
    assert followed_assets(events, "nothing") == []
