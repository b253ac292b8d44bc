"""PartitionCoverageSensor: one cache check per poke, compact logs, verified XCom, deferral."""

from __future__ import annotations

from typing import Any

import pendulum
import pytest
from airflow.sdk import PokeReturnValue
from airflow.sdk.exceptions import (
    AirflowException,
    AirflowFailException,
    AirflowSensorTimeout,
    AirflowSkipException,
    TaskDeferred,
)
from structlog.testing import capture_logs

from airflow_partitions.catalog import Catalog, CoverVerificationError, VerifiedCover
from airflow_partitions.cover import Cover, CoverRequest
from airflow_partitions.kv import StoreUnavailable
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from tests.helpers import T0, register_hours


def sensor(**kwargs: Any) -> PartitionCoverageSensor:
    args: dict[str, Any] = {"task_id": "wait", "fact": "events", "start": T0,
                            "end": T0.add(hours=4), "poke_interval": 0, "timeout": 0}
    args.update(kwargs)
    return PartitionCoverageSensor(**args)


@pytest.fixture
def cover_calls(monkeypatch: pytest.MonkeyPatch) -> list[CoverRequest]:
    """Every cover the sensor computes."""
    calls: list[CoverRequest] = []
    original = Catalog.cover_with_partitions

    def spy(self: Catalog, request: CoverRequest, *, verify: bool = True) -> VerifiedCover:
        calls.append(request)
        assert verify, "the sensor only computes verified covers"
        return original(self, request, verify=verify)

    monkeypatch.setattr(Catalog, "cover_with_partitions", spy)
    return calls


def test_an_idle_poke_with_a_warm_cache_is_one_round_trip(events: Catalog) -> None:
    register_hours(events, 0, 1)
    task = sensor()
    assert task.poke({}) is False  # computes the cover (the cache is cold)
    events.stats.reset()
    assert task.poke({}) is False
    assert events.stats.round_trips == 1


def test_the_cover_is_computed_only_when_something_changed(
        events: Catalog, cover_calls: list[CoverRequest]) -> None:
    task = sensor()
    for _ in range(3):
        assert not task.poke({})
    assert len(cover_calls) == 1
    register_hours(events, 0, 1)
    assert not task.poke({})
    assert not task.poke({})
    assert len(cover_calls) == 2
    register_hours(events, 2, 3)
    result = task.poke({})
    assert len(cover_calls) == 3
    assert isinstance(result, PokeReturnValue) and result.is_done


def test_each_poke_logs_one_compact_line(events: Catalog) -> None:
    register_hours(events, 0, 1)
    with capture_logs() as logs:
        sensor().poke({})
    assert len(logs) == 1
    line = logs[0]["event"]
    assert "50.0% covered" in line
    assert "missing 2024-01-01T02:00/04:00: no HOURLY 2024-01-01-02..03 (2)" in line


def test_only_the_first_missing_ranges_are_logged(events: Catalog) -> None:
    register_hours(events, 0, 0)
    register_hours(events, 2, 2)
    register_hours(events, 4, 4)
    register_hours(events, 6, 6)
    with capture_logs() as logs:
        sensor(end=T0.add(hours=9)).poke({})
    line = logs[0]["event"]
    assert line.startswith("events [2024-01-01T00:00, 09:00): 44.4% covered by 4 partition(s); ")
    assert line.count("missing 2024") == 3
    # raw's region is not a declared dimension: every line says so, at its end
    assert line.endswith("(+1 more missing ranges); region: not a dimension, any value counts")


def test_success_pushes_the_verified_cover(events: Catalog) -> None:
    register_hours(events, 0, 3, regions=("eu", "us"))
    result = sensor().poke({})
    assert isinstance(result, PokeReturnValue) and result.is_done
    cover = Cover.from_json(result.xcom_value)
    assert cover.coverable and cover.fact == "events"
    assert [p.value for p in cover.partitions] == [f"2024-01-01-{h:02d}" for h in range(4)]
    assert sensor().execute({}) == result.xcom_value  # poke mode: execute returns it


def test_an_advertised_partition_without_a_row_is_not_success(events: Catalog) -> None:
    """Invariant 2: the timelines say hour 3 exists, its row is gone: keep waiting."""
    register_hours(events, 0, 3)
    task = sensor()
    assert task.poke({})
    sdef = events.get_storage("raw")
    [(_, key)] = events.keyed_specs(sdef, "HOURLY", {"dt": "2024-01-01-03", "region": "eu"})
    events.rows.partitions.delete(key)  # behind the catalog's back: the timeline over-reports
    events.rows.bump_generation("events")
    assert sensor().poke({}) is False


def test_an_unreachable_store_is_logged_and_retried(
        events: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    register_hours(events, 0, 3)

    def down(*args: Any, **kwargs: Any) -> Any:
        raise StoreUnavailable("hbase://h:9090", "reading the generation", "connection refused")

    monkeypatch.setattr(Catalog, "fact_state", down)
    task = sensor()
    with capture_logs() as logs:
        assert task.poke({}) is False
    assert logs[0]["log_level"] == "warning" and "connection refused" in logs[0]["event"]
    with pytest.raises(AirflowSensorTimeout, match="the catalog was never reached"):
        task.execute({})


def test_writers_outrunning_the_check_are_waited_out_not_a_failure(
        events: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Timelines and rows that kept disagreeing while writers changed the range: the poke
    says so and asks again at the next poke, as for an unreachable store."""
    register_hours(events, 0, 3)
    busy = [True]
    real = Catalog.cover_with_partitions

    def racing(self: Catalog, *args: Any, **kwargs: Any) -> Any:
        if busy[0]:
            raise CoverVerificationError("the timelines of 'events' and its partition rows "
                                         "kept disagreeing over 8 reads")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Catalog, "cover_with_partitions", racing)
    task = sensor()
    with capture_logs() as logs:
        assert task.poke({}) is False
    assert logs[0]["log_level"] == "warning" and "kept disagreeing" in logs[0]["event"]
    busy[0] = False
    register_hours(events, 3, 4)
    assert task.poke({})


def test_timeout_lists_what_is_missing(events: Catalog) -> None:
    register_hours(events, 0, 1)
    with pytest.raises(AirflowSensorTimeout) as failure:
        sensor().execute({})
    assert "still missing: missing 2024-01-01T02:00/04:00: no HOURLY" in str(failure.value)
    with pytest.raises(AirflowSkipException, match="still missing: missing 2024-01-01T02:00"):
        sensor(soft_fail=True).execute({})


def test_an_unknown_fact_fails_at_once(events: Catalog) -> None:
    with pytest.raises(AirflowFailException, match="nope"):
        sensor(fact="nope").poke({})
    with pytest.raises(AirflowFailException, match="no UTC offset"):
        sensor(start="2024-01-01T00:00:00").poke({})
    with pytest.raises(AirflowFailException, match="empty or reversed"):  # a manual run's interval
        sensor(start="2024-01-01 00:00:00+00:00", end="2024-01-01T00:00:00Z").poke({})


def test_templates_default_to_the_data_interval() -> None:
    task = PartitionCoverageSensor(task_id="w", fact="{{ params.fact }}",
                                   periods="{{ params.period }}")
    assert set(task.template_fields) >= {"fact", "start", "end", "time_column", "periods",
                                         "storages", "align", "catalog_conn_id"}
    assert task.deferrable is False  # [operators] default_deferrable
    task.render_template_fields({
        "data_interval_start": T0, "data_interval_end": T0.add(days=1),
        "params": {"fact": "events", "period": "HOURLY,DAILY"},
    })
    assert task.request == CoverRequest("events", T0, T0.add(days=1), periods=("HOURLY", "DAILY"))


def test_deferrable_defers_with_the_trigger(events: Catalog) -> None:
    register_hours(events, 0, 1)
    task = sensor(deferrable=True, poke_interval=5, timeout=600)
    with pytest.raises(TaskDeferred) as deferred:
        task.execute({})
    trigger = deferred.value.trigger
    assert isinstance(trigger, PartitionCoverageTrigger)
    assert deferred.value.method_name == "execute_complete"
    assert deferred.value.timeout is not None and deferred.value.timeout.total_seconds() > 600
    path, kwargs = trigger.serialize()
    assert path == "airflow_partitions.triggers.coverage.PartitionCoverageTrigger"
    # deferred, the checks are paced by trigger_poll_interval (1 s), not poke_interval
    assert kwargs["request"]["fact"] == "events" and kwargs["poke_interval"] == 1.0
    slower = sensor(deferrable=True, trigger_poll_interval=5, timeout=600)
    with pytest.raises(TaskDeferred) as deferred:
        slower.execute({})
    assert deferred.value.trigger.serialize()[1]["poke_interval"] == 5
    register_hours(events, 2, 3)  # coverable at once: no deferral at all
    assert sensor(deferrable=True).execute({})["coverable"] is True


def test_execute_complete_reverifies(events: Catalog) -> None:
    task = sensor(deferrable=True)
    future = pendulum.now("UTC").add(hours=1).isoformat()
    past = pendulum.now("UTC").subtract(seconds=1).isoformat()
    register_hours(events, 0, 1)
    # the trigger saw coverage but it is gone now: wait again, or time out at the deadline
    with pytest.raises(TaskDeferred):
        task.execute_complete({}, {"status": "success", "deadline": future})
    with pytest.raises(AirflowSensorTimeout, match=r"no HOURLY 2024-01-01-02\.\.03"):
        task.execute_complete({}, {"status": "success", "deadline": past})
    register_hours(events, 2, 3)
    assert task.execute_complete({}, {"status": "success", "deadline": future})["coverable"]
    with pytest.raises(AirflowSensorTimeout, match="still missing: missing X"):
        task.execute_complete({}, {"status": "timeout", "missing": ["missing X"]})
    with pytest.raises(AirflowException, match="boom"):
        task.execute_complete({}, {"status": "error", "message": "boom"})


def test_execute_logs_the_range_it_waits_on(events: Catalog) -> None:
    register_hours(events, 0, 4)
    with capture_logs() as logs:
        sensor().execute({})
    first = next(e["event"] for e in logs if e["event"].startswith("waiting until"))
    assert first.startswith("waiting until events [2024-01-01T00:00:00+00:00, "
                            "2024-01-01T04:00:00+00:00) is coverable"), logs
    assert "start=/end=" in first


class _Run:
    """The fields of a DagRun the sensor reads."""

    def __init__(self, run_type: str, logical_date: pendulum.DateTime) -> None:
        self.run_type = run_type
        self.logical_date = logical_date


def test_a_manual_run_whose_interval_misses_its_logical_date_is_warned(
    events: Catalog,
) -> None:
    """``airflow dags trigger --logical-date 2024-01-01`` gets an interval around 'now': the
    default range would be the wrong hours, and the log says so at the first check."""
    register_hours(events, 0, 4)
    task = PartitionCoverageSensor(task_id="w", fact="events", poke_interval=0, timeout=0)
    task.render_template_fields({"data_interval_start": T0, "data_interval_end": T0.add(hours=4)})
    for run_type, logical, warned in [("manual", T0.add(days=30), True),
                                      ("manual", T0.add(hours=1), False),
                                      ("scheduled", T0.add(days=30), False)]:
        with capture_logs() as logs:
            task.execute({"dag_run": _Run(run_type, logical)})  # type: ignore[typeddict-item]
        warnings = [e["event"] for e in logs if e["log_level"] == "warning"
                    and "outside of the Task Runner" not in e["event"]]
        assert bool(warnings) is warned, (run_type, logs)
        assert all("outside its data interval" in w and "start= and end=" in w for w in warnings)
        assert any("range from the run's data interval" in e["event"] for e in logs), logs


def test_the_first_poke_logs_the_partitions_view_once(events: Catalog,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The view is one click from the log, not only behind Details > Extra Links;
    a reschedule-mode poke after the first (a new process, the same try) does not repeat it."""
    monkeypatch.setenv("AIRFLOW__API__BASE_URL", "http://127.0.0.1:8080")
    register_hours(events, 0, 4)

    def view_lines(context: dict[str, Any]) -> list[str]:
        with capture_logs() as logs:
            sensor().execute(context)  # type: ignore[arg-type]
        return [e["event"] for e in logs if "Partitions view" in e["event"]]

    [line] = view_lines({})
    assert ("http://127.0.0.1:8080/partitions/facts/events?start=2024-01-01T00%3A00%3A00%2B00"
            "%3A00&end=2024-01-01T04%3A00%3A00%2B00%3A00") in line
    assert "Extra Links" in line
    assert view_lines({"task_reschedule_count": 2}) == []
