"""The view's coverage assets (``GET /api/facts/{fact}/coverage-assets`` and the page's section):
the app in-process over a real SQLite catalog, the markers written by the real emitter."""

from __future__ import annotations

from collections.abc import Iterator

import pendulum
import pytest
from fastapi.testclient import TestClient

from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import (
    CoverageAssetSpec,
    CoverageEmitter,
    Emission,
    EmissionMarkers,
)
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.ui.app import create_app
from airflow_partitions.ui.auth import require_viewer

DAILY = CoverageAssetSpec("events", UpdatePeriod.DAILY)
RANGE = {"start": "2024-01-01T00:00:00Z", "end": "2024-01-03T00:00:00Z"}


def hours(day: str, wanted: range) -> list[dict[str, str]]:
    return [{"dt": f"{day}-{h:02d}", "region": "eu"} for h in wanted]


@pytest.fixture
def client(events: Catalog) -> Iterator[TestClient]:
    """DAILY windows of ``events`` followed, then 2024-01-01 whole (announced) and 20 hours of
    2024-01-02 (pending)."""
    emitter = CoverageEmitter(events)
    emitter.follow(DAILY)
    events.register("raw", "HOURLY", hours("2024-01-01", range(24)))
    events.register("raw", "HOURLY", hours("2024-01-02", range(20)))
    posted: list[Emission] = []
    emitter.emit(DAILY, posted.append)
    assert len(posted) == 1
    app = create_app(lambda: events)
    app.dependency_overrides[require_viewer] = lambda: "tester"
    with TestClient(app) as test_client:
        yield test_client


def test_the_route_lists_announced_and_pending_windows(client: TestClient) -> None:
    response = client.get("/api/facts/events/coverage-assets", params=RANGE)
    assert response.status_code == 200
    [asset] = response.json()
    assert (asset["uri"], asset["name"], asset["error"], asset["cut"]) == (
        DAILY.uri, DAILY.name, None, None)
    assert asset["counts"] == {"announced": 1, "pending": 1}
    announced, pending = asset["windows"]
    assert (announced["key"], announced["status"], announced["version"],
            announced["restated"]) == ("2024-01-01T00:00:00", "announced", 1, False)
    assert announced["at"]
    assert (pending["key"], pending["status"]) == ("2024-01-02T00:00:00", "pending")
    assert "2024-01-02T20" in pending["lacks"]


def test_the_default_range_is_the_facts_history(client: TestClient) -> None:
    [asset] = client.get("/api/facts/events/coverage-assets").json()
    assert [w["key"] for w in asset["windows"]] == ["2024-01-01T00:00:00",
                                                    "2024-01-02T00:00:00"]
    [narrow] = client.get("/api/facts/events/coverage-assets", params={
        "start": "2024-01-02T00:00", "end": "2024-01-02T12:00"}).json()
    assert [w["status"] for w in narrow["windows"]] == ["pending"]


@pytest.mark.parametrize(("path", "params", "status"), [
    ("/api/facts/nothing/coverage-assets", {}, 404),
    ("/api/facts/events/coverage-assets", {"start": "yesterday"}, 400),
    ("/api/facts/events/coverage-assets", {"start": RANGE["end"], "end": RANGE["start"]}, 400),
])
def test_bad_requests(client: TestClient, path: str, params: dict[str, str],
                      status: int) -> None:
    response = client.get(path, params=params)
    assert response.status_code == status
    assert response.json()["detail"]


def test_a_fact_with_no_followed_asset_answers_an_empty_list(events: Catalog) -> None:
    app = create_app(lambda: events)
    app.dependency_overrides[require_viewer] = lambda: "tester"
    with TestClient(app) as test_client:
        assert test_client.get("/api/facts/events/coverage-assets").json() == []
        page = test_client.get("/facts/events").text
    assert "Coverage assets" not in page


def test_the_page_shows_each_asset_and_what_its_windows_lack(client: TestClient) -> None:
    page = client.get("/facts/events", params=RANGE)
    assert page.status_code == 200
    section = page.text.split("<section id='coverage-assets'>", 1)[1].split("</section>")[0]
    assert "events daily coverage" in section
    assert DAILY.uri in section
    assert "2024-01-01T00:00:00" in section and "announced" in section
    assert "2024-01-02T00:00:00" in section and "pending" in section
    assert "1 announced, 1 pending" in section
    assert "2024-01-02T20" in section  # what it lacks


def test_the_route_needs_a_viewer(events: Catalog) -> None:
    """The app-wide viewer check covers the route: no token, 401 (Airflow's ``get_user``)."""
    app = create_app(lambda: events)
    with TestClient(app) as test_client:
        response = test_client.get("/api/facts/events/coverage-assets")
    assert response.status_code in (401, 403)


def test_values_are_escaped(events: Catalog) -> None:
    """An asset's filter with markup (in its name, and in what its windows lack) is text."""
    spec = CoverageAssetSpec("events", UpdatePeriod.DAILY, where="region = '<i>&'")
    EmissionMarkers(events.rows.kv).first_seen(spec.uri, pendulum.now("UTC"))
    events.register("raw", "HOURLY", hours("2024-01-01", range(24)))
    app = create_app(lambda: events)
    app.dependency_overrides[require_viewer] = lambda: "tester"
    with TestClient(app) as test_client:
        page = test_client.get("/facts/events").text
    section = page.split("<section id='coverage-assets'>", 1)[1]
    assert "<i>" not in section
    assert "where region = &#x27;&lt;i&gt;&amp;&#x27;" in section
    assert "dimension" in section  # why: no storage declares region a dimension (escaped too)
