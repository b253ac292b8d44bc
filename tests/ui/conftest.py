"""The Partitions view's app in-process, shared by the view and screenshot tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from airflow_partitions.catalog import Catalog
from airflow_partitions.ui.app import create_app
from airflow_partitions.ui.auth import require_viewer
from tests.ui.fakes import Gate, User, View, ViewFake


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
