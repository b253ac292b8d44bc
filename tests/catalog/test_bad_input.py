"""Bad input through the Python API is a typed, readable error, and nothing is written
(docs/design.md, invariant 9): wrong Python types, control characters in locations and values,
values so long that echoing them would flood a log.

Without the argument checks in :mod:`airflow_partitions.arguments`, every case here would raise
a raw ``AttributeError``/``TypeError``/``ValueError`` (or write the bad location).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.definitions.tables import UnsafeLocation
from airflow_partitions.errors import InvalidInput, WrongType
from tests.catalog.conftest import rows_truth

V = {"dt": "2015-01-01-00", "region": "us"}
START, END = "2015-01-01T00:00+00:00", "2015-01-02T00:00+00:00"

WRONG_TYPES: dict[str, Callable[[Catalog], Any]] = {
    "register period=None": lambda c: c.register("raw", None, V),
    "register period=5": lambda c: c.register("raw", 5, V),
    "register values=None": lambda c: c.register("raw", "HOURLY", None),
    "register values='dt=2015'": lambda c: c.register("raw", "HOURLY", "dt=2015-01-01-00"),
    "register values=[str]": lambda c: c.register("raw", "HOURLY", ["dt=2015-01-01-00"]),
    "register location=123": lambda c: c.register("raw", "HOURLY", V, location=123),
    "register overwrite='yes'": lambda c: c.register("raw", "HOURLY", V, overwrite="yes"),
    "register storage=None": lambda c: c.register(None, "HOURLY", V),
    "drop period=None": lambda c: c.drop("raw", None, V),
    "get_partition values=None": lambda c: c.get_partition("raw", "HOURLY", None),
    "list_partitions period=5": lambda c: list(c.list_partitions("raw", 5)),
    "create_storage priority='high'": lambda c: c.create_storage("events", "s", ["DAILY"],
                                                                 priority="high"),
    "create_storage priority=1.5": lambda c: c.create_storage("events", "s", ["DAILY"],
                                                              priority=1.5),
    "create_storage periods=None": lambda c: c.create_storage("events", "s", None),
    "create_storage periods='DAILY'": lambda c: c.create_storage("events", "s", "DAILY"),
    "create_storage location=123": lambda c: c.create_storage("events", "s", ["DAILY"],
                                                              location=123),
    "create_storage columns=5": lambda c: c.create_storage("events", "s", ["DAILY"], columns=5),
    "create_fact tz=None": lambda c: c.create_fact("f", tz=None),
    "create_fact time_columns='dt'": lambda c: c.create_fact("f", time_columns="dt"),
    "filter=None": lambda c: c.get_partitions_by_filter("raw", None),
    "filter=5": lambda c: c.get_partitions_by_filter("raw", 5),
    "max_parts='x'": lambda c: c.get_partitions_by_filter("raw", "region = 'us'",
                                                          max_parts="x"),
    "max_parts=1.5": lambda c: c.get_partitions_by_filter("raw", "region = 'us'",
                                                          max_parts=1.5),
    "explain filter=None": lambda c: c.explain("raw", None),
    "cover periods=5": lambda c: c.cover("events", START, END, periods=5),
    "cover storages=5": lambda c: c.cover("events", START, END, storages=5),
    "cover storages=[5]": lambda c: c.cover("events", START, END, storages=[5]),
    "cover verify='no'": lambda c: c.cover("events", START, END, verify="no"),
    "timeline column=5": lambda c: c.timeline("raw", "HOURLY", 5),
    "get_storage None": lambda c: c.get_storage(None),
    "get_fact 5": lambda c: c.get_fact(5),
    "migrate_timeline to=None": lambda c: c.migrate_timeline("raw", "HOURLY", None, None),
}


@pytest.mark.parametrize("case", list(WRONG_TYPES))
def test_wrong_types_are_typed_errors_and_write_nothing(events: Catalog, case: str) -> None:
    before = rows_truth(events, "raw"), [s.name for s in events.list_storages()]
    with pytest.raises(WrongType) as raised:
        WRONG_TYPES[case](events)
    assert isinstance(raised.value, InvalidInput)  # the CLI and Airflow layer's one-line path
    assert len(str(raised.value)) < 200, str(raised.value)
    assert (rows_truth(events, "raw"), [s.name for s in events.list_storages()]) == before


@pytest.mark.parametrize("bound", [dt.datetime.max.replace(tzinfo=dt.UTC),
                                   dt.datetime.min.replace(tzinfo=dt.UTC)])
def test_the_ends_of_datetime_as_cover_bounds(events: Catalog, bound: dt.datetime) -> None:
    start, end = (bound, dt.datetime(2015, 1, 1, tzinfo=dt.UTC))[:: 1 if bound.year == 1 else -1]
    for align in (None, "outer", "inner"):
        try:
            cover = events.cover("events", start, end, align=align)
        except InvalidInput:
            continue
        assert not cover.coverable  # nothing is registered this far out


@pytest.mark.parametrize("location", ["/data/a\x00b", "/data/a\nb", "/data/a\rb", "/data/\x1bx",
                                      "/data/a\x7fb", "", "   "])
def test_a_location_with_control_characters_is_refused(events: Catalog, location: str) -> None:
    with pytest.raises(UnsafeLocation):
        events.register("raw", "HOURLY", V, location=location)
    assert events.get_partition("raw", "HOURLY", V) is None


@pytest.mark.parametrize("value", ["u\x00s", "u\ns", "u\ts", "\x1b[31mred"])
def test_a_value_with_control_characters_is_refused(events: Catalog, value: str) -> None:
    with pytest.raises(UnsafeLocation, match="control characters"):
        events.register("raw", "HOURLY", {**V, "region": value})
    assert list(events.list_partitions("raw")) == []


def test_a_location_template_with_control_characters_is_refused(events: Catalog) -> None:
    with pytest.raises(InvalidInput, match="control character"):
        events.create_storage("events", "s", ["DAILY"], location="/data/x\n/{dt}")
    assert "s" not in [s.name for s in events.list_storages()]


LONG = "x" * 100_000
LONG_VALUES: dict[str, Callable[[Catalog], Any]] = {
    "a region value": lambda c: c.register("raw", "HOURLY", {**V, "region": LONG}),
    "a time value": lambda c: c.register("raw", "HOURLY", {**V, "dt": "2" * 100_000}),
    "a period": lambda c: c.register("raw", "H" * 100_000, V),
    "a storage name": lambda c: c.register("r" * 100_000, "HOURLY", V),
    "a column name": lambda c: c.register("raw", "HOURLY", {**V, "z" * 100_000: "a"}),
    "a filter literal": lambda c: c.get_partitions_by_filter("raw", "region = '" + LONG),
    "a filter column": lambda c: c.get_partitions_by_filter("raw", "nosuch" * 20_000 + " = 'a'"),
    "a cover bound": lambda c: c.cover("events", "2" * 100_000, END),
    "a location": lambda c: c.register("raw", "HOURLY", V, location="/d/\n" + LONG),
}


@pytest.mark.parametrize("case", list(LONG_VALUES))
def test_long_values_are_cut_in_messages(events: Catalog, case: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        LONG_VALUES[case](events)
    message = str(raised.value)
    assert len(message) < 400, message[:500]
    assert "characters)" in message or "bytes" in message, message
