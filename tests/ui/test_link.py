"""The sensor's "Partitions" button: the fact's view over the rendered range."""

from __future__ import annotations

import pytest

from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.ui.link import PartitionsViewLink
from airflow_partitions.ui.urls import fact_url


def sensor() -> PartitionCoverageSensor:
    return PartitionCoverageSensor(task_id="wait", fact="events",
                                   start="2024-01-01T00:00:00+00:00",
                                   end="2024-01-02T00:00:00+00:00")


def test_the_sensor_carries_the_link() -> None:
    [link] = sensor().operator_extra_links
    assert isinstance(link, PartitionsViewLink) and link.name == "Partitions"


def test_the_link_is_the_view_over_the_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW__API__BASE_URL", raising=False)
    url = PartitionsViewLink().get_link(sensor(), ti_key=None)
    assert url == ("/partitions/facts/events?start=2024-01-01T00%3A00%3A00%2B00%3A00"
                   "&end=2024-01-02T00%3A00%3A00%2B00%3A00")


def test_urls_quote_the_fact() -> None:
    assert fact_url("a b/c", base_url="http://127.0.0.1:8080/") == (
        "http://127.0.0.1:8080/partitions/facts/a%20b%2Fc")
