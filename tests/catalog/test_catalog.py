"""Facts, storages and partitions: definitions, idempotence, conflicts, safety, multi-column."""

from __future__ import annotations

import pytest

from airflow_partitions.catalog import AlreadyExists, Catalog, PartitionConflict
from airflow_partitions.catalog.cache import UnknownFact, UnknownStorage
from airflow_partitions.catalog.definitions.tables import (
    InvalidDefinition,
    InvalidPartitionSpec,
    UnsafeLocation,
)
from airflow_partitions.catalog.writer import update_timeline
from airflow_partitions.errors import InvalidPartitionValue
from airflow_partitions.periods import UpdatePeriod
from tests.catalog.conftest import rows_truth, stored_values

HOURS = [f"2015-01-01-{h:02d}" for h in range(24)]


def test_definitions_round_trip_and_conflicts(events: Catalog) -> None:
    raw = events.get_storage("raw")
    assert raw.fact == "events"
    assert raw.column_names == ("dt", "region")
    assert raw.time_columns == ("dt",)
    assert raw.location.endswith("/{fact}/{storage}/{period}/dt={dt}/region={region}")
    assert [f.name for f in events.list_facts()] == ["events"]
    assert sorted(s.name for s in events.list_storages("events")) == ["raw", "rollup"]
    events.create_fact("events", exist_ok=True)
    with pytest.raises(AlreadyExists, match="events"):
        events.create_fact("events", tz="Europe/Berlin", exist_ok=True)
    with pytest.raises(AlreadyExists):
        events.create_storage("events", "raw", ["DAILY"])
    events.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"], exist_ok=True)
    with pytest.raises(UnknownFact):
        events.create_storage("nope", "x", ["DAILY"])
    with pytest.raises(UnknownStorage):
        events.register("missing", "DAILY", {"dt": "2015-01-01"})
    with pytest.raises(InvalidDefinition, match="name"):
        events.create_fact("bad-name")
    with pytest.raises(InvalidDefinition, match="template"):
        events.create_storage("events", "t2", ["DAILY"], location="/d/{nope}")
    with pytest.raises(InvalidDefinition, match=r"\.\."):
        events.create_storage("events", "t3", ["DAILY"], location="/d/../{dt}")


def test_register_is_idempotent_and_location_conflicts_are_errors(events: Catalog) -> None:
    first = events.register("raw", "HOURLY", {"dt": HOURS[0], "region": "us"})
    again = events.register("raw", "HOURLY", {"dt": HOURS[0], "region": "us"})
    assert (first.changed, again.changed, again.unchanged) == (1, 0, 1)
    part = events.get_partition("raw", "HOURLY", {"dt": HOURS[0], "region": "us"})
    assert part is not None
    assert part.location.endswith("/events/raw/HOURLY/dt=2015-01-01-00/region=us")
    with pytest.raises(PartitionConflict, match="overwrite"):
        events.register("raw", "HOURLY", {"dt": HOURS[0], "region": "us"}, location="/else")
    events.register("raw", "HOURLY", {"dt": HOURS[0], "region": "us"}, location="/else",
                    overwrite=True)
    moved = events.get_partition("raw", "HOURLY", {"dt": HOURS[0], "region": "us"})
    assert moved is not None and moved.location == "/else"


def test_bad_values_are_rejected_before_anything_is_written(events: Catalog) -> None:
    good = {"dt": HOURS[1], "region": "us"}
    for bad, error in [
        ({"dt": HOURS[2], "region": ".."}, UnsafeLocation),
        ({"dt": HOURS[2], "region": "a/b"}, UnsafeLocation),
        ({"dt": HOURS[2], "region": "/abs"}, UnsafeLocation),
        ({"dt": HOURS[2], "region": ""}, UnsafeLocation),
        ({"dt": "2015-13-45-00", "region": "us"}, InvalidPartitionValue),
        ({"dt": HOURS[2]}, InvalidPartitionSpec),
        ({"dt": HOURS[2], "region": "us", "x": "1"}, InvalidPartitionSpec),
    ]:
        with pytest.raises(error):
            events.register("raw", "HOURLY", [good, bad])
    with pytest.raises(InvalidPartitionSpec, match="DAILY"):
        events.register("raw", "DAILY", {"dt": "2015-01-01", "region": "us"})
    assert list(events.list_partitions("raw")) == []
    assert stored_values(events, "raw") == {("HOURLY", "dt"): set()}


def test_a_time_value_stays_while_any_partition_has_it(events: Catalog) -> None:
    events.register("raw", "HOURLY", [{"dt": h, "region": r} for h in HOURS for r in ("us", "eu")])
    events.drop("raw", "HOURLY", {"dt": HOURS[5], "region": "us"})
    assert HOURS[5] in stored_values(events, "raw")[("HOURLY", "dt")]
    dropped = events.drop("raw", "HOURLY", {"dt": HOURS[5], "region": "eu"})
    again = events.drop("raw", "HOURLY", {"dt": HOURS[5], "region": "eu"})
    assert (dropped.changed, again.changed, again.unchanged) == (1, 0, 1)
    values = stored_values(events, "raw")[("HOURLY", "dt")]
    assert HOURS[5] not in values and len(values) == 23
    assert stored_values(events, "raw") == rows_truth(events, "raw")
    assert len(list(events.list_partitions("raw", "HOURLY"))) == 46


def test_typed_non_time_columns(catalog: Catalog) -> None:
    catalog.create_fact("sales")
    catalog.create_storage("sales", "by_shop", ["DAILY"], columns=["dt", "shop:int"])
    catalog.register("by_shop", "DAILY", [{"dt": "2015-01-01", "shop": s} for s in ("10", "-2")])
    with pytest.raises(InvalidPartitionSpec, match="int"):
        catalog.register("by_shop", "DAILY", {"dt": "2015-01-01", "shop": "x"})
    shops = [p.values["shop"] for p in catalog.list_partitions("by_shop")]
    assert shops == ["-2", "10"]  # key order follows integer order


def test_timeline_classes_and_migration_keep_contents(catalog: Catalog) -> None:
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY", "DAILY"],
                           timeline_classes={"HOURLY": "StoreAll", "DAILY": "Ranges"})
    catalog.register("raw", "HOURLY", [{"dt": h} for h in HOURS if h != HOURS[7]])
    catalog.register("raw", "DAILY", [{"dt": "2015-01-01"}, {"dt": "2015-01-03"}])
    hourly = catalog.timeline("raw", "HOURLY")
    assert type(hourly).__name__ == "StoreAllTimeline" and len(hourly) == 23
    props = catalog.timeline_properties("raw", "HOURLY")
    key = "cube.storagetable.partition.timeline.cache.HOURLY.dt.partitions0"
    assert props[key].split(",")[:2] == [HOURS[0], HOURS[1]]
    assert type(catalog.timeline("raw", "DAILY")).__name__ == "RangesTimeline"
    for kind in ("EndsAndHoles", "Ranges", "StoreAll", "EndsAndHoles"):
        catalog.migrate_timeline("raw", "HOURLY", "dt", kind)
        catalog.cache.invalidate()
        migrated = catalog.timeline("raw", "HOURLY")
        assert migrated.kind == kind
        assert [p.value for p in migrated] == [h for h in HOURS if h != HOURS[7]]
    assert catalog.reconcile("raw").consistent


def test_reconcile_reports_and_repairs_drift(events: Catalog) -> None:
    events.register("raw", "HOURLY", [{"dt": h, "region": "us"} for h in HOURS[:4]])
    sdef = events.get_storage("raw")
    # Simulate drift behind the catalog's back: the timeline forgets one hour, invents another.
    period = UpdatePeriod.HOURLY
    update_timeline(events.rows, sdef, period, "dt", add={period.parse_ordinal(HOURS[10])},
                    remove={period.parse_ordinal(HOURS[1])})
    report = events.reconcile("raw")
    [diff] = report.diffs
    assert diff.under_reported == [HOURS[1]]
    assert diff.over_reported == [HOURS[10]]
    assert not report.consistent
    assert events.reconcile("raw").consistent
    assert stored_values(events, "raw") == rows_truth(events, "raw")
