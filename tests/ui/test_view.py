"""The Partitions view's app in-process (FastAPI's TestClient).

Auth is overridden here except where it is the subject; ``tests/e2e/test_scheduler.py`` runs the
same app under a real api-server with Airflow's auth.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from fastapi.testclient import TestClient

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import status_line
from airflow_partitions.get_provider_info import PLUGIN_NAME, get_provider_info
from airflow_partitions.ui.app import URL_PREFIX, create_app

DAY = {"start": "2024-01-01T00:00:00+00:00", "end": "2024-01-02T00:00:00+00:00"}


def stretches(view: dict[str, Any], storage: str) -> list[tuple[str, str, str, int]]:
    [lane] = [lane for lane in view["lanes"] if lane["storage"] == storage]
    return [(s["state"], s["first"], s["last"], s["partitions"]) for s in lane["stretches"]]


def test_facts(client: TestClient) -> None:
    response = client.get("/api/facts")
    assert response.status_code == 200
    assert response.json() == [{
        "name": "events", "tz": "UTC", "time_columns": ["dt"],
        "storages": [{"name": "raw", "periods": ["HOURLY"], "priority": 0},
                     {"name": "rollup", "periods": ["DAILY"], "priority": 5}],
    }]


def test_stretches_and_the_sensors_status_line(client: TestClient, events: Catalog) -> None:
    view = client.get("/api/facts/events", params=DAY).json()
    assert stretches(view, "raw") == [
        ("registered", "2024-01-01-00", "2024-01-01-04", 5),
        ("missing", "2024-01-01-05", "2024-01-01-06", 2),
        ("registered", "2024-01-01-07", "2024-01-01-23", 17),
    ]
    assert stretches(view, "rollup") == [("missing", "2024-01-01", "2024-01-01", 1)]
    assert view["status"] == status_line(events.cover("events", DAY["start"], DAY["end"]))
    assert view["coverable"] is False
    assert [m["start"] for m in view["cover"]["missing"]] == ["2024-01-01T05:00:00+00:00"]
    assert [r["partitions"] for r in view["cover"]["runs"]] == [5, 17]


def test_default_range_is_the_whole_history(client: TestClient) -> None:
    view = client.get("/api/facts/events").json()
    assert (view["start"], view["end"]) == (DAY["start"], DAY["end"])
    assert view["extent"] == DAY


def test_stale_stretches(client: TestClient, events: Catalog) -> None:
    hours = [{"dt": f"2024-01-01-{h:02d}", "region": "eu"} for h in range(5)]
    events.register("rollup", "DAILY", {"dt": "2024-01-01"}, inputs=[
        {"storage": "raw", "period": "HOURLY", "values": v, "version": 1} for v in hours])
    events.register("raw", "HOURLY", hours[0], restate=True)
    view = client.get("/api/facts/events", params=DAY).json()
    assert stretches(view, "rollup") == [("stale", "2024-01-01", "2024-01-01", 1)]
    without = client.get("/api/facts/events", params={**DAY, "stale": "false"}).json()
    assert stretches(without, "rollup") == [("registered", "2024-01-01", "2024-01-01", 1)]


def test_zoom_to_hours_of_a_long_history(client: TestClient, events: Catalog) -> None:
    """A window narrower than the history clips the lanes to the partitions overlapping it."""
    view = client.get("/api/facts/events", params={
        "start": "2024-01-01T04:00:00Z", "end": "2024-01-01T06:00:00Z"}).json()
    assert stretches(view, "raw") == [("registered", "2024-01-01-04", "2024-01-01-04", 1),
                                      ("missing", "2024-01-01-05", "2024-01-01-05", 1)]
    assert view["status"].startswith("events [2024-01-01T04:00, 06:00): 50.0% covered")


@pytest.mark.parametrize(("params", "status"), [
    ({"start": "yesterday"}, 400),
    ({"start": DAY["end"], "end": DAY["start"]}, 400),
    ({"time_column": "nope"}, 400),
])
def test_bad_input_is_400(client: TestClient, params: dict[str, str], status: int) -> None:
    response = client.get("/api/facts/events", params=params)
    assert response.status_code == status, response.text
    assert client.get("/facts/events", params=params).status_code == status


def test_unknown_fact_is_404(client: TestClient) -> None:
    assert client.get("/api/facts/nope").status_code == 404
    assert client.get("/facts/nope").status_code == 404


def test_pages(client: TestClient) -> None:
    index = client.get("/")
    assert index.status_code == 200 and "href='/facts/events'" in index.text
    page = client.get("/facts/events", params=DAY).text
    assert "<svg" in page and "missing 2024-01-01T05:00/07:00" in page
    assert page.count("<rect") >= 4  # 3 raw stretches, 1 rollup, the cover's runs and gap


def test_every_value_is_escaped(client: TestClient) -> None:
    page = client.get("/facts/events", params={**DAY, "x": "<script>alert(1)</script>'"}).text
    # the one script is the "Act" section's own (ui/page_actions.py); the injected one is not
    assert page.count("<script>") == 1 and "<script>alert" not in page
    assert "alert(1)</script>'" not in page


def test_routes_need_an_airflow_user(events: Catalog) -> None:
    """Without the override, a request without credentials never reaches the catalog."""
    with TestClient(create_app(lambda: events)) as anonymous:
        for path in ("/", "/api/facts", "/api/facts/events", "/facts/events"):
            assert anonymous.get(path).status_code == 401


def test_the_provider_declares_the_plugin() -> None:
    [plugin] = get_provider_info()["plugins"]
    module, _, name = plugin["plugin-class"].rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert plugin["name"] == cls.name == PLUGIN_NAME
    [app] = cls.fastapi_apps
    assert app["url_prefix"] == URL_PREFIX
    [view] = cls.external_views
    assert view["href"] == f"{URL_PREFIX}/" and view["url_route"]
    # a top-level button, which the UI highlights on its page; the Browse menu's never is
    assert view["nav_top_level"] is True and "category" not in view


def test_sub_pixel_holes_are_ticks_under_one_registered_bar() -> None:
    """A century of hours with a thousand one-hour holes: one green bar, at most one red tick
    per pixel, never a lane painted red."""
    import datetime as dt

    from airflow_partitions.ui.page import WIDTH, Scale, rects

    t0 = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    hour = dt.timedelta(hours=1)
    items = []
    for i in range(1000):
        start = t0 + hour * (i * 1000)
        items.append(("registered", start, start + hour * 999, "r", None))
        items.append(("missing", start + hour * 999, start + hour * 1000, "m",
                      (start, start + hour)))
    svg = rects(items, Scale(t0, t0 + hour * 1_000_000), 0, lambda a, b: "#")
    green = [r for r in svg.split("<rect")[1:] if "#74c476" in r]
    red = [r for r in svg.split("<rect")[1:] if "#de2d26" in r]
    assert len(green) == 1 and f"width='{WIDTH:.2f}'" in green[0]
    assert 0 < len(red) <= WIDTH and all("y='0'" not in r for r in red)


def test_a_write_is_seen_at_once(client: TestClient, events: Catalog) -> None:
    """The cover is reused only while the fact's generation stands."""
    assert client.get("/api/facts/events", params=DAY).json()["coverable"] is False
    events.register("raw", "HOURLY", [{"dt": f"2024-01-01-0{h}", "region": "eu"} for h in (5, 6)])
    view = client.get("/api/facts/events", params=DAY).json()
    assert view["coverable"] is True
    assert view["status"].endswith("coverable; region: not a dimension, any value counts")


def test_a_cover_on_stale_partitions_says_how_many(client: TestClient, events: Catalog) -> None:
    """Green "coverable" alone would hide that the cover stands on a stale partition."""
    hours = [{"dt": f"2024-01-01-{h:02d}", "region": "eu"} for h in range(24) if h not in (5, 6)]
    events.register("rollup", "DAILY", {"dt": "2024-01-01"}, inputs=[
        {"storage": "raw", "period": "HOURLY", "values": v, "version": 1} for v in hours])
    events.register("raw", "HOURLY", hours[0], restate=True)
    view = client.get("/api/facts/events", params=DAY).json()
    assert view["coverable"] is True and view["stale_used"] == 1
    assert view["status"].endswith(", coverable; region: not a dimension, any value counts; "
                                   "1 stale partition used"), view["status"]
    assert "class='status ok stale'" in client.get("/facts/events", params=DAY).text
    unchecked = client.get("/api/facts/events", params={**DAY, "stale": "false"}).json()
    assert unchecked["status"].endswith("coverable; region: not a dimension, any value counts")
    assert unchecked["stale_used"] == 0
    assert "class='status ok'" in client.get("/facts/events",
                                             params={**DAY, "stale": "false"}).text


def test_partitions_that_stick_out_of_the_range_are_not_applicable(
        client: TestClient, events: Catalog) -> None:
    """A MONTHLY lane over three days, and the days a window cuts, cannot be in any
    cover of the window: they are drawn grey and not counted as missing."""
    events.create_storage("events", "monthly", ["MONTHLY"], priority=9)
    three_days = {"start": "2024-01-01T00:00:00+00:00", "end": "2024-01-04T00:00:00+00:00"}
    view = client.get("/api/facts/events", params=three_days).json()
    assert stretches(view, "monthly") == [("not_applicable", "2024-01", "2024-01", 1)]
    [monthly] = [lane for lane in view["lanes"] if lane["storage"] == "monthly"]
    assert (monthly["missing"], monthly["not_applicable"]) == (0, 1)
    assert stretches(view, "rollup") == [("missing", "2024-01-01", "2024-01-03", 3)]
    cut = client.get("/api/facts/events", params={"start": "2024-01-01T04:00:00Z",
                                                  "end": "2024-01-02T04:00:00Z"}).json()
    assert stretches(cut, "rollup") == [("not_applicable", "2024-01-01", "2024-01-02", 2)]
    page = client.get("/facts/events", params=three_days).text
    assert "not applicable" in page and "fill='#e0e0e0'" in page
