"""No cost cliff in the catalog (invariant 10): one hour registered ten years after a dense history
switches a default timeline to Ranges (logged, Lens storage.class), and keeps an explicit choice."""

from __future__ import annotations

import logging

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.timelines import EndsAndHolesTimeline, RangesTimeline
from tests.catalog.conftest import rows_truth, stored_values

DENSE = [{"dt": f"2015-01-{d:02d}-{h:02d}"} for d in range(1, 31) for h in range(24)]
FAR = {"dt": "2025-01-01-00"}
CLASS_KEY = "cube.storagetable.partition.timeline.cache.HOURLY.dt.storage.class"


def _hourly(catalog: Catalog, name: str, classes: dict[str, str] | None = None) -> None:
    catalog.create_fact(name)
    catalog.create_storage(name, f"{name}_raw", ["HOURLY"], timeline_classes=classes)
    catalog.register(f"{name}_raw", "HOURLY", DENSE)


def test_a_far_hour_switches_the_default_timeline_to_ranges(
    catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    _hourly(catalog, "events")
    props = catalog.timeline_properties("events_raw", "HOURLY")
    assert props[CLASS_KEY] == EndsAndHolesTimeline.lens_class
    with caplog.at_level(logging.INFO, logger="airflow_partitions.catalog.timeline_shape"):
        catalog.register("events_raw", "HOURLY", [FAR])
    props = catalog.timeline_properties("events_raw", "HOURLY")
    assert props[CLASS_KEY] == RangesTimeline.lens_class
    assert sum(len(v) for v in props.values()) < 500, "the stored timeline stays O(ranges)"
    assert "storing it as Ranges" in caplog.text and "'events_raw'" in caplog.text
    assert stored_values(catalog, "events_raw") == rows_truth(catalog, "events_raw")
    # A fresh process (an empty cache) reads the switched cell and covers as before.
    fresh = Catalog(catalog.kv.url, data_root=catalog.data_root, cache=TimelineCache())
    cover = fresh.cover("events", "2015-01-10T00:00:00Z", "2015-01-11T00:00:00Z")
    assert cover.coverable and len(cover.partitions) == 24
    # It stays Ranges: dropping the far hour again does not flap back.
    catalog.drop("events_raw", "HOURLY", [FAR])
    stored = catalog.timeline_properties("events_raw", "HOURLY")[CLASS_KEY]
    assert stored == RangesTimeline.lens_class
    assert catalog.reconcile("events_raw").consistent


def test_an_explicit_ends_and_holes_choice_is_kept_with_a_warning(
    catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    _hourly(catalog, "chosen", {"HOURLY": "EndsAndHoles"})
    with caplog.at_level(logging.WARNING, logger="airflow_partitions.catalog.timeline_shape"):
        catalog.register("chosen_raw", "HOURLY", [FAR])
        catalog.register("chosen_raw", "HOURLY", [{"dt": "2025-01-01-01"}])
    props = catalog.timeline_properties("chosen_raw", "HOURLY")
    assert props[CLASS_KEY] == EndsAndHolesTimeline.lens_class
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, "warned once per process, not on every write"
    assert "chosen explicitly" in warnings[0].getMessage()
    assert "timeline migrate chosen_raw --period HOURLY --to Ranges" in warnings[0].getMessage()
    assert stored_values(catalog, "chosen_raw") == rows_truth(catalog, "chosen_raw")


def test_rebuild_and_reconcile_store_a_sparse_default_timeline_as_ranges(
    catalog: Catalog,
) -> None:
    """A sparse EndsAndHoles cell written before the switch existed (here: migrated back by
    hand) is stored as Ranges by the next rebuild, as a register would store it."""
    _hourly(catalog, "events")
    catalog.register("events_raw", "HOURLY", [FAR])
    catalog.migrate_timeline("events_raw", "HOURLY", None, "EndsAndHoles")
    props = catalog.timeline_properties("events_raw", "HOURLY")
    assert props[CLASS_KEY] == EndsAndHolesTimeline.lens_class
    assert sum(len(v) for v in props.values()) > 100_000, "a hole per missing hour"
    catalog.rebuild("events_raw")
    props = catalog.timeline_properties("events_raw", "HOURLY")
    assert props[CLASS_KEY] == RangesTimeline.lens_class
    assert sum(len(v) for v in props.values()) < 500
    assert stored_values(catalog, "events_raw") == rows_truth(catalog, "events_raw")
    assert catalog.reconcile("events_raw").consistent
