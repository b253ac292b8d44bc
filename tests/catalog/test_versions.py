"""Partition versions and lineage: what register records, when it bumps, what it refuses.

Runs on every backend (the ``events`` fixture): ``raw`` HOURLY by (dt, region), ``rollup``
DAILY and MONTHLY.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog, writer
from airflow_partitions.catalog.lineage.inputs import MAX_INPUTS, InvalidLineage, TooManyInputs
from airflow_partitions.catalog.rows.layout import INPUTS, STAMP, VERSION
from airflow_partitions.catalog.writer import REGISTER_STEPS
from airflow_partitions.errors import InvalidInput, WrongType

DAY = {"dt": "2015-01-02"}
HOURS = [{"dt": f"2015-01-02-{h:02d}", "region": "eu"} for h in range(24)]


def _inputs(hours: list[dict[str, str]], version: int = 1) -> list[dict[str, Any]]:
    return [{"storage": "raw", "period": "HOURLY", "values": h, "version": version}
            for h in hours]


def _row(catalog: Catalog, storage: str, period: str, values: dict[str, str]) -> dict[bytes, bytes]:
    sdef = catalog.get_storage(storage)
    [(_, key)] = catalog.keyed_specs(sdef, period, values)
    return catalog.rows.partitions.get(key)


def _version(catalog: Catalog, storage: str, period: str, values: dict[str, str]) -> int:
    part = catalog.get_partition(storage, period, values)
    assert part is not None
    return part.version


def test_new_registration_is_version_1_and_a_retry_changes_nothing(events: Catalog) -> None:
    assert events.register("raw", "HOURLY", HOURS).changed == 24
    stamp = _row(events, "raw", "HOURLY", HOURS[0])[STAMP]
    again = events.register("raw", "HOURLY", HOURS)
    assert (again.changed, again.unchanged, again.restated) == (0, 24, ())
    assert {p.version for p in events.list_partitions("raw")} == {1}
    assert _row(events, "raw", "HOURLY", HOURS[0])[STAMP] == stamp
    assert events.get_partition("raw", "HOURLY", HOURS[0]).to_json()["version"] == 1  # type: ignore[union-attr]


def test_restate_bumps_the_version_and_says_which(events: Catalog) -> None:
    events.register("raw", "HOURLY", HOURS)
    result = events.register("raw", "HOURLY", HOURS[3:5], restate=True)
    assert (result.changed, result.unchanged) == (2, 0)
    assert [dict(r) for r in result.restated] == HOURS[3:5]
    assert events.register("raw", "HOURLY", HOURS[3], restate=True).changed == 1
    versions = {p.values["dt"]: p.version for p in events.list_partitions("raw")}
    assert versions["2015-01-02-03"] == 3 and versions["2015-01-02-04"] == 2
    assert sum(v == 1 for v in versions.values()) == 22
    # restating an absent partition is a plain new registration
    fresh = events.register("raw", "HOURLY", {"dt": "2015-01-03-00", "region": "eu"},
                            restate=True)
    assert fresh.changed == 1 and fresh.restated == ()
    assert _version(events, "raw", "HOURLY", {"dt": "2015-01-03-00", "region": "eu"}) == 1


def test_overwrite_to_a_new_location_bumps_the_version(events: Catalog, tmp_path: Any) -> None:
    events.register("rollup", "DAILY", DAY)
    moved = events.register("rollup", "DAILY", DAY, location=str(tmp_path / "v2"),
                            overwrite=True)
    assert moved.changed == 1 and [dict(r) for r in moved.restated] == [DAY]
    assert _version(events, "rollup", "DAILY", DAY) == 2
    same = events.register("rollup", "DAILY", DAY, location=str(tmp_path / "v2"))
    assert same.unchanged == 1 and _version(events, "rollup", "DAILY", DAY) == 2


def test_inputs_are_recorded_and_only_different_inputs_bump(events: Catalog) -> None:
    events.register("raw", "HOURLY", HOURS)
    first = events.register("rollup", "DAILY", DAY, inputs=_inputs(HOURS))
    assert first.changed == 1 and first.restated == ()
    # the same lineage in another order, with a duplicate: a retry, unchanged
    shuffled = _inputs(HOURS[::-1] + HOURS[:1])
    assert events.register("rollup", "DAILY", DAY, inputs=shuffled).unchanged == 1
    # no lineage given: left as it is
    assert events.register("rollup", "DAILY", DAY).unchanged == 1
    assert INPUTS in _row(events, "rollup", "DAILY", DAY)
    # one input at another version: a new build, a new version
    events.register("raw", "HOURLY", HOURS[0], restate=True)
    newer = _inputs(HOURS[1:]) + _inputs(HOURS[:1], version=2)
    bumped = events.register("rollup", "DAILY", DAY, inputs=newer)
    assert bumped.changed == 1 and len(bumped.restated) == 1
    assert _version(events, "rollup", "DAILY", DAY) == 2


def test_rows_written_before_versions_read_as_version_1(events: Catalog) -> None:
    events.register("raw", "HOURLY", HOURS[:2])
    sdef = events.get_storage("raw")
    [(_, key)] = events.keyed_specs(sdef, "HOURLY", HOURS[0])
    events.rows.partitions.delete(key, [VERSION])  # an old row
    assert VERSION not in events.rows.partitions.get(key)
    assert [p.version for p in events.list_partitions("raw")] == [1, 1]
    assert events.register("raw", "HOURLY", HOURS[0]).unchanged == 1
    events.register("raw", "HOURLY", HOURS[0], restate=True)
    assert _version(events, "raw", "HOURLY", HOURS[0]) == 2


@pytest.mark.parametrize("step", REGISTER_STEPS)
def test_version_and_lineage_land_in_one_row_put(events: Catalog, step: str) -> None:
    """A crash at any register step leaves the row old or new, never half (the crash-safety
    suite covers the timelines; this covers the new cells)."""
    events.register("raw", "HOURLY", HOURS)
    events.register("rollup", "DAILY", DAY, inputs=_inputs(HOURS))
    events.register("raw", "HOURLY", HOURS[0], restate=True)
    before = _row(events, "rollup", "DAILY", DAY)

    class Crash(Exception):
        pass

    def hook(at: str) -> None:
        if at == step:
            raise Crash(at)

    newer = _inputs(HOURS[1:]) + _inputs(HOURS[:1], version=2)
    writer.STEP_HOOKS.append(hook)
    try:
        with pytest.raises(Crash):
            events.register("rollup", "DAILY", DAY, inputs=newer, restate=True)
    finally:
        writer.STEP_HOOKS.remove(hook)
    after = _row(events, "rollup", "DAILY", DAY)
    if step == "register:before-rows":
        assert after == before
    else:
        assert after[VERSION] != before[VERSION] and after[INPUTS] != before[INPUTS]
        assert _version(events, "rollup", "DAILY", DAY) == 2


def test_a_monthly_rollup_over_hours_is_fine(events: Catalog) -> None:
    hours = [{"dt": f"2015-01-{d:02d}-{h:02d}", "region": "eu"}
             for d in range(1, 32) for h in range(24)]
    assert len(hours) == 744
    events.register("raw", "HOURLY", hours)
    events.register("rollup", "MONTHLY", {"dt": "2015-01"}, inputs=_inputs(hours))
    assert events.stale("events") == []
    events.register("raw", "HOURLY", hours, restate=True)
    [stale] = events.stale("events")
    assert len(stale.changed) == 744 and {c.reason for c in stale.changed} == {"restated"}


BAD: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("too many", lambda: _inputs([{"dt": "2015-01-02-00", "region": f"r{i}"}
                                  for i in range(MAX_INPUTS + 1)]),
     TooManyInputs, "10,001 inputs recorded for one registration; the limit is 10,000"),
    ("not a list", lambda: "raw", WrongType, "inputs must be a list"),
    ("not a mapping", lambda: ["raw HOURLY"], InvalidLineage, "inputs[0] must be a mapping"),
    ("no values", lambda: [{"storage": "raw", "period": "HOURLY"}], InvalidLineage,
     "inputs[0] lacks values"),
    ("bad version", lambda: [{"storage": "raw", "period": "HOURLY", "values": HOURS[0],
                              "version": "2"}], InvalidLineage, "version must be a positive"),
    ("two versions", lambda: _inputs(HOURS[:1]) + _inputs(HOURS[:1], version=2),
     InvalidLineage, "given twice, at versions 1 and 2"),
    ("unknown storage", lambda: [{"storage": "nope", "period": "HOURLY",
                                  "values": HOURS[0]}], InvalidInput, "nope"),
    ("bad value", lambda: [{"storage": "raw", "period": "HOURLY",
                            "values": {"dt": "2015-01-02", "region": "eu"}}],
     InvalidInput, "2015-01-02"),
    ("itself", lambda: [{"storage": "rollup", "period": "DAILY", "values": DAY}],
     InvalidLineage, "given as its own input"),
]


@pytest.mark.parametrize(("inputs", "error", "text"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_lineage_is_refused_with_a_readable_message_and_nothing_written(
        events: Catalog, inputs: Callable[[], Any], error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=None) as caught:
        events.register("rollup", "DAILY", DAY, inputs=inputs())
    assert text in str(caught.value) and len(str(caught.value)) < 300
    assert isinstance(caught.value, InvalidInput)
    assert list(events.list_partitions("rollup")) == []
