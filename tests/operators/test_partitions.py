"""Register/Drop operators: values (mapping, list, range), idempotence, asset partition keys."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pendulum
import pytest
from airflow.sdk import Asset
from airflow.sdk.exceptions import AirflowFailException
from airflow.sdk.execution_time.context import OutletEventAccessors

from airflow_partitions.catalog import Catalog
from airflow_partitions.errors import InvalidInput
from airflow_partitions.interop import expand_values, partition_keys
from airflow_partitions.operators.partitions import (
    DropPartitionsOperator,
    RegisterPartitionsOperator,
)
from tests.helpers import T0

RAW = Asset(name="events_raw", uri="file:///data/events/raw")


def run(op: RegisterPartitionsOperator | DropPartitionsOperator,
        **context: Any) -> tuple[dict[str, Any], OutletEventAccessors]:
    outlet_events = OutletEventAccessors()
    result = op.execute({"outlet_events": outlet_events, **context})  # type: ignore[arg-type]
    return result, outlet_events


def live(catalog: Catalog, storage: str = "raw") -> list[dict[str, str]]:
    return [p.values for p in catalog.list_partitions(storage)]


def test_expand_a_range_with_other_columns(events: Catalog) -> None:
    sdef = events.get_storage("raw")
    parts = expand_values({"range": ["2024-01-01-22", "2024-01-02-01"], "region": ["eu", "us"]},
                          sdef, "HOURLY")
    assert parts == [{"dt": f"2024-01-{d}", "region": r}
                     for d in ("01-22", "01-23", "02-00") for r in ("eu", "us")]
    # instants (datetimes, or the rendered text of {{ data_interval_start }}) work too
    assert expand_values({"range": [T0, "2024-01-01 02:00:00+00:00"], "region": "eu"},
                         sdef, "HOURLY") == [{"dt": "2024-01-01-00", "region": "eu"},
                                             {"dt": "2024-01-01-01", "region": "eu"}]
    assert expand_values('[{"dt": "2024-01-01-00", "region": "eu"}]', sdef, "HOURLY") == \
        [{"dt": "2024-01-01-00", "region": "eu"}]


def test_a_range_is_expanded_in_the_storage_zone(catalog: Catalog) -> None:
    catalog.create_fact("local", tz="Europe/Paris")
    sdef = catalog.create_storage("local", "daily", ["DAILY"])
    start = pendulum.datetime(2024, 3, 30, tz="Europe/Paris")
    parts = expand_values({"range": [start, start.add(days=2)]}, sdef, "DAILY")
    assert parts == [{"dt": "2024-03-30"}, {"dt": "2024-03-31"}]  # the 23-hour day included
    assert partition_keys(parts, sdef, "DAILY", "start") == ["2024-03-30T00:00:00",
                                                            "2024-03-31T00:00:00"]


@pytest.mark.parametrize("values, match", [
    ({"range": ["2024-01-01-00"]}, "start, end"),
    ({"range": ["2024-01-01-00:30", "2024-01-01-02"], "region": "eu"}, "yyyy-MM-dd-HH"),
    ({"range": ["2024-01-01 00:30:00+00:00", "2024-01-01-02"], "region": "eu"}, "does not start"),
    ("not json", "JSON"),
    (42, "mapping"),
    ({"dt": "2024-01-01-00", "region": {"nested": 1}}, "must be text"),
])
def test_bad_values(events: Catalog, values: Any, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        expand_values(values, events.get_storage("raw"), "HOURLY")


def test_register_is_idempotent_and_emits_partition_keys(events: Catalog) -> None:
    op = RegisterPartitionsOperator(
        task_id="register", storage="raw", period="HOURLY", outlets=[RAW],
        values={"range": ["2024-01-01-00", "2024-01-01-02"], "region": ["eu", "us"]},
    )
    result, outlet_events = run(op)
    assert (result["changed"], result["unchanged"]) == (4, 0)
    assert result["keys"] == ["2024-01-01T00:00:00", "2024-01-01T01:00:00"]
    assert outlet_events[RAW].partition_keys == {"2024-01-01T00:00:00", "2024-01-01T01:00:00"}
    assert outlet_events[RAW].extra["airflow_partitions"]["action"] == "register"
    assert len(live(events)) == 4
    result, outlet_events = run(op)  # a retried task: nothing changes, the keys are re-emitted
    assert (result["changed"], result["unchanged"]) == (0, 4)
    assert len(outlet_events[RAW].partition_keys) == 2


@pytest.mark.parametrize("style, keys", [
    ("value", ["2024-01-01-05"]),
    ("columns", ["dt=2024-01-01-05,region=eu", "dt=2024-01-01-05,region=us"]),
])
def test_partition_key_styles(events: Catalog, style: str, keys: list[str]) -> None:
    op = RegisterPartitionsOperator(
        task_id="register", storage="raw", period="HOURLY", outlets=[RAW], partition_key=style,
        values=[{"dt": "2024-01-01-05", "region": "eu"}, {"dt": "2024-01-01-05", "region": "us"}],
    )
    result, outlet_events = run(op)
    assert result["keys"] == keys and outlet_events[RAW].partition_keys == set(keys)


def test_templated_values_and_location(events: Catalog, tmp_path: Any) -> None:
    op = RegisterPartitionsOperator(
        task_id="register", storage="rollup", period="DAILY",
        values={"dt": "{{ ds }}"}, location=str(tmp_path) + "/rollup/{{ ds_nodash }}",
    )
    assert {"storage", "period", "values", "location", "catalog_conn_id"} <= set(
        op.template_fields)
    op.render_template_fields({"ds": "2024-01-01", "ds_nodash": "20240101"})
    run(op)
    [part] = events.list_partitions("rollup")
    assert part.values == {"dt": "2024-01-01"}
    assert part.location == f"{tmp_path}/rollup/20240101"


def test_drop_is_idempotent(events: Catalog) -> None:
    values = {"range": [dt.datetime(2024, 1, 1, tzinfo=dt.UTC), "2024-01-01-03"], "region": "eu"}
    run(RegisterPartitionsOperator(task_id="r", storage="raw", period="HOURLY", values=values))
    drop = DropPartitionsOperator(task_id="d", storage="raw", period="HOURLY", outlets=[RAW],
                                  values={"dt": "2024-01-01-01", "region": "eu"})
    result, outlet_events = run(drop)
    assert result["changed"] == 1 and outlet_events[RAW].partition_keys == {"2024-01-01T01:00:00"}
    assert outlet_events[RAW].extra["airflow_partitions"]["action"] == "drop"
    assert run(drop)[0]["changed"] == 0
    assert [p["dt"] for p in live(events)] == ["2024-01-01-00", "2024-01-01-02"]
    assert not events.cover("events", T0, T0.add(hours=3)).coverable


def test_invalid_input_fails_the_task_without_retry(events: Catalog) -> None:
    op = RegisterPartitionsOperator(task_id="r", storage="raw", period="DAILY",
                                    values={"dt": "2024-01-01", "region": "eu"})
    with pytest.raises(AirflowFailException, match="no DAILY partitions"):
        run(op)
    with pytest.raises(ValueError, match="partition_key"):
        RegisterPartitionsOperator(task_id="r", storage="raw", period="DAILY", values={},
                                   partition_key="nope")


def test_events_follow_time_order_and_each_key_finds_its_own_facts(events: Catalog) -> None:
    """Airflow creates one event per key by iterating partition_keys; listed out of order, the
    keys still come out in time order, and every event's extra maps its key to its facts."""
    from airflow.sdk.execution_time.task_runner import _serialize_outlet_events

    hours = [5, 1, 3, 0, 4, 2]
    op = RegisterPartitionsOperator(
        task_id="register", storage="raw", period="HOURLY", outlets=[RAW],
        values=[{"dt": f"2024-01-01-0{h}", "region": r} for h in hours for r in ("eu", "us")])
    result, outlet_events = run(op)
    expected = [f"2024-01-01T0{h}:00:00" for h in range(6)]
    assert result["keys"] == expected and list(outlet_events[RAW].partition_keys) == expected
    emitted = list(_serialize_outlet_events(outlet_events))
    assert [e["partition_key"] for e in emitted] == expected
    facts = emitted[0]["extra"]["airflow_partitions"]
    assert facts["batch"] == {"keys": 6, "partitions": 12, "changed": 12, "unchanged": 0,
                              "restated": 0, "first": expected[0], "last": expected[-1]}
    assert facts["by_key"]["2024-01-01T03:00:00"] == {
        "value": "2024-01-01-03", "start": "2024-01-01T03:00:00+00:00",
        "end": "2024-01-01T04:00:00+00:00", "partitions": 2, "restated": False}
    assert "partitions" not in facts  # the old batch count read as if it were per event


def test_a_large_batch_leaves_by_key_out(events: Catalog) -> None:
    """Each event carries the whole extra, so per-key facts stop at BY_KEY_MAX keys."""
    from airflow_partitions.operators.asset_events import BY_KEY_MAX

    op = RegisterPartitionsOperator(
        task_id="register", storage="raw", period="HOURLY", outlets=[RAW],
        values={"range": [T0, T0.add(hours=BY_KEY_MAX + 1)], "region": "eu"})
    _, outlet_events = run(op)
    facts = outlet_events[RAW].extra["airflow_partitions"]
    assert "by_key" not in facts and facts["batch"]["keys"] == BY_KEY_MAX + 1
    keys = list(outlet_events[RAW].partition_keys)
    assert keys == sorted(keys) and len(keys) == BY_KEY_MAX + 1


def test_keys_in_order_behaves_as_a_set() -> None:
    from airflow_partitions.operators.asset_events import KeysInOrder

    keys = KeysInOrder(["c", "a"])
    keys.update(["b"], ["a", "d"])
    keys.discard("a")
    keys.add("a")  # back, in its first place
    keys.remove("d")
    assert list(keys) == ["c", "a", "b"] and keys == {"a", "b", "c"} and len(keys) == 3


def test_a_registration_rides_out_a_catalog_outage_within_one_try(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The Thrift server is down when the task starts and comes back 3 s later: the same try
    registers everything, after logged waits; with ``outage_timeout=0`` the try fails at once
    with the store's own error, and nothing is registered."""
    import threading

    from airflow_partitions.hooks.catalog import forget_catalogs
    from airflow_partitions.kv import StoreUnavailable
    from airflow_partitions.testing.hbase.server import HBaseTestServer

    server = HBaseTestServer()
    server.start()
    url = f"hbase://127.0.0.1:{server.port}?table_prefix=outage"
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", url)
    monkeypatch.delenv("AIRFLOW_CONN_PARTITIONS_DEFAULT", raising=False)
    forget_catalogs()
    with Catalog(url) as setup:
        setup.create_fact("events")
        setup.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    values = {"range": ["2024-01-01-00", "2024-01-01-03"], "region": ["eu", "us"]}
    try:
        server.stop()
        impatient = RegisterPartitionsOperator(task_id="register", storage="raw",
                                               period="HOURLY", values=values, outage_timeout=0)
        with pytest.raises(StoreUnavailable, match=r"refused|connect"):
            run(impatient)
        back = threading.Timer(3.0, server.start)
        back.start()
        patient = RegisterPartitionsOperator(task_id="register", storage="raw", period="HOURLY",
                                             values=values)
        capsys.readouterr()
        result, _ = run(patient)
        back.join()
        assert (result["changed"], result["unchanged"]) == (6, 0)
        log = capsys.readouterr()
        waits = [line for line in (log.out + log.err).splitlines() if "unreachable" in line]
        assert waits and all("trying again in" in w for w in waits), waits
        with Catalog(url) as check:
            assert len(live(check)) == 6
    finally:
        server.stop()
        forget_catalogs()


def test_outage_timeout_must_be_seconds() -> None:
    with pytest.raises(ValueError, match="outage_timeout"):
        RegisterPartitionsOperator(task_id="r", storage="raw", period="HOURLY", values={},
                                   outage_timeout=-1)
