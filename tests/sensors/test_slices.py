"""The sensor and the trigger over declared dimensions: they wait for every required
slice, take a ``where`` slice filter, and name the slice that lacks an hour in their status
lines and timeout messages. The covered operators: tests/operators/test_slices.py."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from airflow.sdk import PokeReturnValue
from airflow.sdk.exceptions import AirflowFailException, AirflowSensorTimeout, TaskDeferred
from structlog.testing import capture_logs

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import Cover, CoverRequest
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from tests.helpers import T0, region_hours, regions_fact

EU_ONLY = "region = 'eu'"
US_ONLY = "region = 'us'"


@pytest.fixture
def regions(catalog: Catalog) -> Catalog:
    """``ev``: us has hours 00..03, eu 00..01 (``tests.helpers.regions_fact``)."""
    return regions_fact(catalog)


def sensor(**kwargs: Any) -> PartitionCoverageSensor:
    args: dict[str, Any] = {"task_id": "wait", "fact": "ev", "start": T0,
                            "end": T0.add(hours=4), "poke_interval": 0, "timeout": 0}
    return PartitionCoverageSensor(**{**args, **kwargs})


def test_the_sensor_waits_while_one_region_lacks_an_hour(regions: Catalog) -> None:
    """The issue's defect at the sensor: us has every hour, eu lacks two; no success until eu's
    hours are registered, and each line names eu."""
    task = sensor()
    with capture_logs() as logs:
        assert task.poke({}) is False
    [line] = [e["event"] for e in logs]
    assert "missing 2024-01-01T02:00/04:00: no HOURLY 2024-01-01-02..03 (2) for region=eu" \
        in line, line
    assert "region=us" not in line
    region_hours(regions, "eu", 2, 2)
    assert task.poke({}) is False  # one hour is not enough
    region_hours(regions, "eu", 3, 3)
    result = task.poke({})
    assert isinstance(result, PokeReturnValue) and result.is_done
    cover = Cover.from_json(result.xcom_value)
    # each region its own four hours (was: four hours both had, without their slice)
    assert cover.coverable and len(cover.partitions) == 8
    assert {p.dimensions for p in cover.partitions} == {(("region", "eu"),), (("region", "us"),)}
    assert "where" not in result.xcom_value  # no filter: every required slice


def test_where_narrows_the_slices_the_sensor_waits_for(regions: Catalog) -> None:
    result = sensor(where=US_ONLY).poke({})
    assert isinstance(result, PokeReturnValue) and result.is_done
    assert result.xcom_value["where"] == US_ONLY  # a cover_from operator asks the same
    assert sensor(where=EU_ONLY).poke({}) is False


def test_where_is_templated_and_reaches_the_request() -> None:
    task = PartitionCoverageSensor(task_id="w", fact="ev", start=T0, end=T0.add(hours=1),
                                   where="region = '{{ params.region }}'")
    assert "where" in task.template_fields
    task.render_template_fields({"params": {"region": "eu"}})
    assert task.request == CoverRequest("ev", T0, T0.add(hours=1), where=EU_ONLY)


def test_a_where_over_a_column_that_is_not_a_dimension_fails_at_once(regions: Catalog) -> None:
    with pytest.raises(AirflowFailException, match="dt is not a declared dimension"):
        sensor(where="dt = '2024-01-01-00'").poke({})


def test_the_timeout_names_the_lacking_slice(regions: Catalog) -> None:
    with pytest.raises(AirflowSensorTimeout, match=r"still missing: missing 2024-01-01T02:00/"
                                                   r"04:00: no HOURLY 2024-01-01-02\.\.03 \(2\) "
                                                   r"for region=eu"):
        sensor().execute({})


def test_the_deferral_carries_the_filter_to_the_trigger(regions: Catalog) -> None:
    with pytest.raises(TaskDeferred) as deferred:
        sensor(where=EU_ONLY, deferrable=True, timeout=600).execute({})
    trigger = deferred.value.trigger
    assert isinstance(trigger, PartitionCoverageTrigger)
    _, kwargs = trigger.serialize()
    assert kwargs["request"]["where"] == EU_ONLY
    assert CoverRequest.from_json(kwargs["request"]).where == EU_ONLY


async def first_event(trigger: PartitionCoverageTrigger) -> dict[str, Any]:
    event = await asyncio.wait_for(trigger.run().__anext__(), 30)
    payload: dict[str, Any] = event.payload
    return payload


def test_the_trigger_fires_only_once_every_selected_slice_is_there(regions: Catalog) -> None:
    """Over both regions the trigger waits through polls while eu lacks hours and fires after
    they are registered; over us alone it fires at once."""
    both = CoverRequest.of("ev", T0, T0.add(hours=4)).to_json()
    us = CoverRequest.of("ev", T0, T0.add(hours=4), where=US_ONLY).to_json()
    assert asyncio.run(first_event(PartitionCoverageTrigger(us, poke_interval=0.05)))[
        "status"] == "success"

    async def scenario() -> dict[str, Any]:
        waiting = asyncio.ensure_future(first_event(PartitionCoverageTrigger(
            both, poke_interval=0.05)))
        await asyncio.sleep(0.3)  # several polls: none may fire while eu lacks two hours
        assert not waiting.done()
        await asyncio.to_thread(region_hours, regions, "eu", 2, 3)
        return await waiting

    fired = asyncio.run(scenario())
    assert fired["status"] == "success"
    # computed at the start, then once: it fired on the first generation change it saw (the
    # first poll after the registration), after polling the generation while eu lacked hours
    assert fired["checks"] == 2 and fired["polls"] >= 3, fired


def test_the_trigger_timeout_names_the_lacking_slice(regions: Catalog) -> None:
    request = CoverRequest.of("ev", T0, T0.add(hours=4)).to_json()
    past = T0.subtract(days=1).isoformat()
    payload = asyncio.run(first_event(PartitionCoverageTrigger(request, poke_interval=0.05,
                                                               deadline=past)))
    assert payload["status"] == "timeout"
    assert payload["missing"] == [
        "missing 2024-01-01T02:00/04:00: no HOURLY 2024-01-01-02..03 (2) for region=eu"]
    assert payload["notes"] == []  # region is declared: nothing to note


def test_many_lacking_regions_are_summed_in_the_poke_line(catalog: Catalog) -> None:
    """Four of six regions lack hours: the line names the three worst and counts the rest;
    the cover's JSON keeps every slice's entry."""
    regions = [f"r{i}" for i in range(6)]
    catalog.create_fact("wide")
    catalog.create_storage("wide", "wide_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=" + ",".join(regions)])
    catalog.register("wide_raw", "HOURLY", [
        {"dt": f"2024-01-01-{h:02d}", "region": r} for i, r in enumerate(regions)
        for h in range(4) if h < i or h == 0])  # r0, r1: hour 00; r2: 00..01; r3: 00..02
    task = sensor(fact="wide")
    with capture_logs() as logs:
        assert task.poke({}) is False
    [line] = [e["event"] for e in logs]
    assert line.endswith("missing 3 hours of region=r0, 3 hours of region=r1, "
                         "2 hours of region=r2 and 1 more slice, in "
                         "2024-01-01T01:00/04:00"), line
    assert task.last_cover is not None
    sliced = {n["dimensions"]["region"] for m in task.last_cover.to_json()["missing"]
              for n in m["needed"]}
    assert sliced == {"r0", "r1", "r2", "r3"}  # r4 and r5 have every hour


def test_a_column_that_is_not_a_dimension_is_said_in_the_line_and_the_xcom(
        events: Catalog) -> None:
    """``events.raw`` is partitioned by (dt, region) with no dimension declared: any region's
    hour counts, and every answer says so."""
    events.register("raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}", "region": "eu"}
                                      for h in range(4)])
    with capture_logs() as logs:
        result = sensor(fact="events").poke({})
    assert isinstance(result, PokeReturnValue) and result.is_done
    [line] = [e["event"] for e in logs]
    assert line.endswith(", coverable; region: not a dimension, any value counts"), line
    assert result.xcom_value["notes"] == ["region: not a dimension, any value counts"]
    assert Cover.from_json(result.xcom_value).notes == (
        "region: not a dimension, any value counts",)
    with pytest.raises(AirflowSensorTimeout, match=r"no HOURLY 2024-01-01-04; region: not a "
                                                   r"dimension, any value counts$"):
        sensor(fact="events", end=T0.add(hours=5)).execute({})
    past = T0.subtract(days=1).isoformat()
    payload = asyncio.run(first_event(PartitionCoverageTrigger(
        CoverRequest.of("events", T0, T0.add(hours=5)).to_json(), poke_interval=0.05,
        deadline=past)))
    assert payload["notes"] == ["region: not a dimension, any value counts"]
    with pytest.raises(AirflowSensorTimeout, match="; region: not a dimension"):
        sensor(fact="events").execute_complete({}, payload)


def test_a_mixed_cover_still_waits_for_the_hour_one_region_lacks(catalog: Catalog) -> None:
    """Per-slice covers at the sensor: us has its DAILY, eu 23 of its hours. The sensor waits
    and names eu's hour; once it is registered the XCom cover is us's day and eu's 24 hours
    (before per-slice covers no period had both regions, so it never fired)."""
    catalog.create_fact("mx")
    catalog.create_storage("mx", "mx_raw", ["HOURLY", "DAILY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"])
    catalog.register("mx_raw", "DAILY", [{"dt": "2024-01-01", "region": "us"}])
    catalog.register("mx_raw", "HOURLY", [{"dt": f"2024-01-01-{h:02d}", "region": "eu"}
                                          for h in range(23)])
    task = sensor(fact="mx", end=T0.add(days=1))
    with capture_logs() as logs:
        assert task.poke({}) is False
    [line] = [e["event"] for e in logs]
    assert "missing 2024-01-01T23:00/2024-01-02T00:00" in line, line
    assert "no HOURLY 2024-01-01-23 for region=eu" in line, line
    assert "region=us" not in line
    catalog.register("mx_raw", "HOURLY", [{"dt": "2024-01-01-23", "region": "eu"}])
    result = task.poke({})
    assert isinstance(result, PokeReturnValue) and result.is_done
    cover = Cover.from_json(result.xcom_value)
    assert cover.coverable and len(cover.partitions) == 25
    assert [(p.period.name, p.dimensions) for p in cover.partitions
            if p.dimensions == (("region", "us"),)] == [("DAILY", (("region", "us"),))]


def test_a_where_selecting_no_declared_slice_fails_at_once(regions: Catalog) -> None:
    """``euu`` is no value of the domain: no registration can ever satisfy the sensor, so it
    fails at its first poke (it would otherwise wait forever), and the deferrable half sends
    an error event with the same reason."""
    reason = "matches no declared slice of ev (declared: region=eu,us)"
    with pytest.raises(AirflowFailException, match=r"region = 'euu'.*" + re.escape(reason)):
        sensor(where="region = 'euu'").poke({})
    with pytest.raises(AirflowFailException, match=re.escape(reason)):
        sensor(where="region = 'euu'", deferrable=True, timeout=600).execute({})
    request = CoverRequest.of("ev", T0, T0.add(hours=4), where="region = 'euu'").to_json()
    payload = asyncio.run(first_event(PartitionCoverageTrigger(request, poke_interval=0.05)))
    assert payload["status"] == "error" and reason in payload["message"], payload


def test_a_covered_operator_whose_where_selects_nothing_fails_at_once(
        regions: Catalog, tmp_path: Any) -> None:
    """The operators take the sensor's ``where`` (tests/operators/test_slices.py): one that
    selects no declared slice fails without retries, ``allow_partial`` or not."""
    from airflow_partitions.operators.spark import CoveredSparkSubmitOperator
    from tests.helpers import FakeTI

    for partial in (False, True):
        op = CoveredSparkSubmitOperator(
            task_id="spark", application="job.py", fact="ev", start=T0, end=T0.add(hours=4),
            where="region = 'euu'", allow_partial=partial,
            manifest_dir=str(tmp_path / "manifests"))
        with pytest.raises(AirflowFailException, match="matches no declared slice of ev"):
            op.build_manifest({"ti": FakeTI()})  # type: ignore[typeddict-item]
