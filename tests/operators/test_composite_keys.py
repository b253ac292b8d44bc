"""Composite asset partition keys: ``partition_key='composite'`` gives Airflow 3.3's
``region|start`` form, which the consumer's ``ProductMapper`` splits segment by segment; the
scheduler-level proof is in tests/e2e/test_scheduler.py."""

from __future__ import annotations

from typing import Any

import pytest
from airflow.partition_mappers.identity import IdentityMapper
from airflow.partition_mappers.product import ProductMapper
from airflow.partition_mappers.temporal import StartOfDayMapper, StartOfHourMapper
from airflow.sdk import Asset
from airflow.sdk.execution_time.context import OutletEventAccessors

from airflow_partitions.catalog import Catalog
from airflow_partitions.errors import InvalidInput
from airflow_partitions.interop import composite_segments, partition_keys
from airflow_partitions.operators.partitions import (
    DropPartitionsOperator,
    RegisterPartitionsOperator,
)

RAW = Asset(name="ev_raw", uri="file:///data/ev/raw")
HOURS = {"range": ["2024-01-01-05", "2024-01-01-07"], "region": ["us", "eu"]}


@pytest.fixture
def ev(catalog: Catalog) -> Catalog:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "ev_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu,us"])
    return catalog


def emitted(op: RegisterPartitionsOperator | DropPartitionsOperator) -> list[str]:
    outlet_events = OutletEventAccessors()
    op.execute({"outlet_events": outlet_events})  # type: ignore[arg-type]
    return list(outlet_events[RAW].partition_keys)


def register(**kwargs: Any) -> RegisterPartitionsOperator:
    return RegisterPartitionsOperator(task_id="register", storage="ev_raw", period="HOURLY",
                                      outlets=[RAW], values=HOURS, **kwargs)


def test_one_composite_key_per_slice_and_hour_in_time_order(ev: Catalog) -> None:
    keys = emitted(register(partition_key="composite"))
    assert keys == ["eu|2024-01-01T05:00:00", "us|2024-01-01T05:00:00",
                    "eu|2024-01-01T06:00:00", "us|2024-01-01T06:00:00"]
    # what a consumer with ProductMapper(IdentityMapper(), StartOfDayMapper()) gets: one
    # downstream key per region and day, and the day as the run's partition date
    mapper = ProductMapper(IdentityMapper(), StartOfDayMapper())
    assert {mapper.to_downstream(k) for k in keys} == {"eu|2024-01-01", "us|2024-01-01"}
    anchor = mapper.to_partition_date("eu|2024-01-01")
    assert anchor is not None and anchor.isoformat().startswith("2024-01-01T00:00:00")
    hourly = ProductMapper(IdentityMapper(), StartOfHourMapper())
    assert hourly.to_downstream(keys[0]) == "eu|2024-01-01T05"  # the mapper's own format


def test_key_segments_follow_the_consumers_mapper_order(ev: Catalog) -> None:
    keys = emitted(register(partition_key="composite", key_segments=["dt", "region"]))
    assert keys[:2] == ["2024-01-01T05:00:00|eu", "2024-01-01T05:00:00|us"]
    mapper = ProductMapper(StartOfDayMapper(), IdentityMapper())
    assert mapper.to_downstream(keys[0]) == "2024-01-01|eu"
    # a drop emits the same keys
    drop = DropPartitionsOperator(task_id="drop", storage="ev_raw", period="HOURLY",
                                  outlets=[RAW], values=HOURS, partition_key="composite")
    assert emitted(drop)[0] == "eu|2024-01-01T05:00:00"


def test_bad_composite_keys_are_refused(ev: Catalog, catalog: Catalog) -> None:
    sdef = ev.get_storage("ev_raw")
    with pytest.raises(ValueError, match="for partition_key='composite' only"):
        register(key_segments=["region", "dt"])
    with pytest.raises(ValueError, match="list of column names"):
        register(partition_key="composite", key_segments="region,dt")
    with pytest.raises(InvalidInput, match="must include the time column"):
        composite_segments(sdef, ["region"])
    with pytest.raises(InvalidInput, match="distinct partition columns"):
        composite_segments(sdef, ["dt", "country"])
    with pytest.raises(InvalidInput, match=r"holds '\|'"):
        partition_keys([{"dt": "2024-01-01-05", "region": "e|u"}], sdef, "HOURLY", "composite")
    catalog.create_storage("ev", "ev_total", ["DAILY"])
    with pytest.raises(InvalidInput, match="two segments or more"):
        composite_segments(ev.get_storage("ev_total"))
