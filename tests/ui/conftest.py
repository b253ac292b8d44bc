"""The Partitions view's app in-process, shared by the view and screenshot tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from airflow_partitions.catalog import Catalog, Producer
from airflow_partitions.ui.app import create_app
from airflow_partitions.ui.auth import require_viewer
from tests.ui.fakes import Gate, User, View, ViewFake

#: The hours of ``regions``' fact the tests look at: three complete, the fourth missing.
FIRST_HOURS = {"start": "2015-01-01T00:00:00+00:00", "end": "2015-01-01T04:00:00+00:00"}


@pytest.fixture
def client(events: Catalog) -> Iterator[TestClient]:
    events.register("raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}", "region": "eu"}
                                      for h in range(24) if h not in (5, 6)])
    app = create_app(lambda: events)
    app.dependency_overrides[require_viewer] = lambda: "tester"
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def view(produced: Catalog) -> Iterator[View]:
    airflow, gate, user = ViewFake(produced), Gate(), [User("ada")]
    app = create_app(lambda: produced)
    app.dependency_overrides[require_viewer] = lambda: user[0]
    app.state.airflow_for = lambda request: airflow
    app.state.may_trigger = gate.may_trigger
    app.state.audit = gate.log
    with TestClient(app) as client:
        yield View(client, airflow, gate, user)


@pytest.fixture
def regions(catalog: Catalog) -> Iterator[TestClient]:
    """``ev``: ``ev_raw`` HOURLY by (dt, region), region declared (eu, us), made by ``ingest``;
    the first three hours of 2015 registered for both regions."""
    catalog.create_fact("ev")
    catalog.create_storage("ev", "ev_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"])
    catalog.set_producers("ev_raw", {"HOURLY": Producer("ingest")})
    catalog.register("ev_raw", "HOURLY", [{"dt": f"2015-01-01-{h:02d}", "region": r}
                                          for h in range(3) for r in ("eu", "us")])
    app = create_app(lambda: catalog)
    app.dependency_overrides[require_viewer] = lambda: User("ada")
    app.state.airflow_for = lambda request: ViewFake(catalog)
    app.state.may_trigger = Gate().may_trigger
    with TestClient(app) as client:
        yield client
