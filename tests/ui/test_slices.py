"""The Partitions view's slice lanes through the app: JSON schema, grouping, the
storage lane, bounded and escaped HTML, the "not a dimension" note."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any, get_type_hints

import pytest
from fastapi.testclient import TestClient

from airflow_partitions.catalog import Catalog
from airflow_partitions.lanes import (
    DimensionGroupJson,
    SlicedStorageJson,
    SliceLaneJson,
    StretchJson,
    UndeclaredJson,
)
from airflow_partitions.ui.app import create_app
from airflow_partitions.ui.auth import require_viewer
from airflow_partitions.ui.page import SHOWN_LANES

T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
DAY = {"start": "2015-01-01T00:00:00+00:00", "end": "2015-01-02T00:00:00+00:00"}
#: A region a partition path may hold ('/' may not): tags, quotes and an ampersand.
EVIL = "<script>alert('x')&\""


def hour(h: int) -> str:
    return (T0 + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H")


def register(catalog: Catalog, region: str, hours: range | list[int]) -> None:
    catalog.register("ev_raw", "HOURLY", [{"dt": hour(h), "region": region, "source": "web"}
                                          for h in hours])


@pytest.fixture
def regions(catalog: Catalog) -> Catalog:
    """``ev``: ``ev_raw`` HOURLY by (dt, region, source), region declared, source not."""
    catalog.create_fact("ev")
    catalog.create_storage("ev", "ev_raw", ["HOURLY"], columns=["dt", "region", "source"],
                           dimensions=[f"region=eu,us,{EVIL}"])
    return catalog


@pytest.fixture
def app(regions: Catalog) -> Iterator[TestClient]:
    app = create_app(lambda: regions)
    app.dependency_overrides[require_viewer] = lambda: "tester"
    with TestClient(app) as test_client:
        yield test_client


def assert_schema(value: Any, typed: Any) -> None:
    """``value`` has exactly the keys of TypedDict ``typed`` (nested ones checked too)."""
    hints = get_type_hints(typed)
    assert set(value) == set(hints), typed.__name__
    nested = {"groups": DimensionGroupJson, "lanes": SliceLaneJson, "stretches": StretchJson}
    for key, inner in nested.items():
        for item in value.get(key, []) if key in hints else []:
            assert_schema(item, inner)


def test_json_lanes_per_slice_and_the_storage_lane(app: TestClient, regions: Catalog) -> None:
    register(regions, "us", range(24))
    register(regions, EVIL, range(24))
    register(regions, "eu", range(5))
    view = app.get("/api/facts/ev", params=DAY).json()
    [sliced] = view["slices"]
    assert_schema(sliced, SlicedStorageJson)
    for note in view["undeclared"]:
        assert_schema(note, UndeclaredJson)
    assert view["undeclared"] == [{"storage": "ev_raw", "column": "source",
                                   "note": "source: not a dimension, any value counts"}]
    [group] = sliced["groups"]
    assert [lane["label"] for lane in group["lanes"]] == [
        "region=eu", f"region={EVIL}", "region=us"]
    eu = group["lanes"][0]
    assert [(s["state"], s["first"], s["partitions"]) for s in eu["stretches"]] == [
        ("registered", "2015-01-01-00", 5), ("missing", "2015-01-01-05", 19)]
    assert [lane["missing"] for lane in group["lanes"]] == [19, 0, 0]
    # the status line is the cover's, per slice: it names the region that lacks the hours
    assert "no HOURLY 2015-01-01-05..23 (19) for region=eu" in view["status"], view["status"]
    # the storage's own lane counts an hour only when every region has it, as the cover does
    [lane] = view["lanes"]
    assert (lane["registered"], lane["missing"]) == (5, 19)
    assert not view["coverable"]
    register(regions, "eu", range(5, 24))  # a write: the kept presence is not reused
    view = app.get("/api/facts/ev", params=DAY).json()
    assert view["slices"][0]["incomplete"] == 0 and view["coverable"]
    assert view["lanes"][0]["registered"] == 24


def test_html_groups_escapes_and_bounds(app: TestClient, regions: Catalog) -> None:
    register(regions, "us", range(24))
    register(regions, EVIL, [0])
    page = app.get("/facts/ev", params=DAY).text
    assert EVIL not in page
    assert ">region=&lt;script&gt;alert(&#x27;x&#x27;)&amp;&quot;</text>" in page
    assert "<details class='slices' open><summary>region: 2 of 3 slices incomplete" in page
    assert "<li>ev_raw: source: not a dimension, any value counts</li>" in page
    # a thousand regions would draw only the worst lanes; the JSON keeps every one
    many = [f"r{i:03d}" for i in range(SHOWN_LANES + 5)]
    regions.set_dimension("ev_raw", "region=" + ",".join(many))
    for i, region in enumerate(many[:3]):
        register(regions, region, range(i + 1))
    page = app.get("/facts/ev", params=DAY).text
    view = app.get("/api/facts/ev", params=DAY).json()
    [group] = view["slices"][0]["groups"]
    assert len(group["lanes"]) == len(many) + 3
    drawn = group["lanes"][:SHOWN_LANES]
    assert all(f">{lane['label']}</text>" in page for lane in drawn)
    assert f">{group['lanes'][SHOWN_LANES]['label']}</text>" not in page
    # not drawn: 3 regions lacking 24 hours, EVIL and r000 23, r001 22, r002 21, us complete
    assert "... and 8 more: 7 incomplete (161 HOURLY partitions missing), 1 complete" in page


def test_a_storage_without_dimensions_says_so(events: Catalog) -> None:
    app = create_app(lambda: events)
    app.dependency_overrides[require_viewer] = lambda: "tester"
    events.register("raw", "HOURLY", {"dt": "2024-01-01-00", "region": "eu"})
    with TestClient(app) as client:
        view = client.get("/api/facts/events").json()
        page = client.get("/facts/events").text
    assert view["slices"] == []
    assert [n["note"] for n in view["undeclared"]] == ["region: not a dimension, any value counts"]
    assert "<li>raw: region: not a dimension, any value counts</li>" in page
    assert "<h2>Slices</h2>" not in page
