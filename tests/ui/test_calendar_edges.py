"""The Partitions view at the edges of the calendar."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from airflow_partitions.catalog import Catalog


@pytest.mark.parametrize("params", [
    {"start": "0001-01-01T00:00:00Z", "end": "0001-01-02T00:00:00Z"},
    {"start": "9999-12-30T00:00:00Z", "end": "9999-12-31T00:00:00Z"},
    {"start": "0001-01-01T00:00:00Z", "end": "9999-12-31T00:00:00Z"},
], ids=["year 1", "year 9999", "both ends"])
def test_the_page_draws_ranges_reaching_the_ends_of_the_calendar(
        client: TestClient, params: dict[str, str]) -> None:
    """The zoom links do not overflow (500) where the JSON endpoint answers 200."""
    assert client.get("/api/facts/events", params=params).status_code == 200
    page = client.get("/facts/events", params=params)
    assert page.status_code == 200, page.text
    assert "zoom out" in page.text


def test_the_last_day_of_the_calendar_is_viewable(client: TestClient, events: Catalog) -> None:
    """A DAILY 9999-12-31 partition does not make the default view (its whole history) a 400."""
    events.register("rollup", "DAILY", {"dt": "9999-12-31"})
    view = client.get("/api/facts/events")
    assert view.status_code == 200, view.text
    assert client.get("/facts/events").status_code == 200
