"""PartitionCatalogHook: store URL from connection fields, fallback order, one catalog per store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowNotFoundException

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.connection import InvalidConnection, store_url_from_fields
from airflow_partitions.hooks.catalog import PartitionCatalogHook


def test_url_from_hbase_fields() -> None:
    url = store_url_from_fields(
        "thrift.example.com", 9091,
        {"backend": "hbase", "table_prefix": "prod_", "transport": "framed",
         "protocol": "compact"},
    )
    assert url == ("hbase://thrift.example.com:9091?table_prefix=prod_&transport=framed"
                   "&protocol=compact")
    assert store_url_from_fields("h", None, {}) == "hbase://h:9090"  # a host means hbase


def test_url_from_sqlite_fields(tmp_path: Path) -> None:
    path = tmp_path / "cat.db"
    assert store_url_from_fields(None, None, {"sqlite_path": str(path)}) == f"sqlite://{path}"
    env = {"AIRFLOW_HOME": "/ah", "AIRFLOW_PARTITIONS_STORE": "hbase://elsewhere"}
    # an explicit sqlite backend without a path: the sqlite file under AIRFLOW_HOME
    assert store_url_from_fields(None, None, {"backend": "sqlite"}, env) == \
        "sqlite:///ah/partitions.db"
    # a connection naming nothing: the environment decides, as without a connection
    assert store_url_from_fields(None, None, {}, env) == "hbase://elsewhere"
    # prefixed UI keys and store_url, which wins
    assert store_url_from_fields(
        "ignored", 1, {"extra__partition_catalog__store_url": "sqlite:///x.db"}) == \
        "sqlite:///x.db"


@pytest.mark.parametrize("extras, host, match", [
    ({"backend": "hbase"}, None, "needs a host"),
    ({"backend": "cassandra"}, None, "not sqlite or hbase"),
    ({"backend": "hbase", "transport": "carrier-pigeon"}, "h", "transport"),
])
def test_bad_connection_fields(extras: dict[str, str], host: str | None, match: str) -> None:
    with pytest.raises(InvalidConnection, match=match):
        store_url_from_fields(host, None, extras)


def test_hook_reads_the_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   store_url: str) -> None:
    db = tmp_path / "from_conn.db"
    monkeypatch.setenv("AIRFLOW_CONN_MY_CATALOG", json.dumps({
        "conn_type": "partition_catalog",
        "extra": {"backend": "sqlite", "sqlite_path": str(db), "data_root": "/srv/data"},
    }))
    hook = PartitionCatalogHook("my_catalog")
    assert hook.resolve() == (f"sqlite://{db}", "/srv/data")
    assert asyncio.run(hook.aresolve()) == (f"sqlite://{db}", "/srv/data")
    catalog = hook.get_conn()
    assert catalog.data_root == "/srv/data"
    assert catalog is PartitionCatalogHook("my_catalog").get_conn()  # one per store, per process


def test_default_connection_absent_falls_back_to_the_environment(store_url: str) -> None:
    hook = PartitionCatalogHook()
    assert hook.resolve()[0] == store_url
    catalog = hook.get_conn()
    assert isinstance(catalog, Catalog)
    assert catalog is PartitionCatalogHook().get_conn()
    assert catalog.cache is PartitionCatalogHook().get_conn().cache


def test_a_named_connection_must_exist(store_url: str) -> None:
    with pytest.raises(AirflowNotFoundException):
        PartitionCatalogHook("no_such_catalog").resolve()


def test_test_connection(store_url: str, events: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    ok, message = PartitionCatalogHook().test_connection()
    assert ok and "1 fact(s)" in message and store_url in message
    monkeypatch.setenv("AIRFLOW_CONN_BROKEN", json.dumps(
        {"conn_type": "partition_catalog", "extra": {"backend": "hbase"}}))
    ok, message = PartitionCatalogHook("broken").test_connection()
    assert not ok and "needs a host" in message


def test_hook_metadata() -> None:
    assert PartitionCatalogHook.conn_type == "partition_catalog"
    assert PartitionCatalogHook.default_conn_name == "partitions_default"
    assert PartitionCatalogHook.hook_name == "Partition Catalog"
    assert PartitionCatalogHook.conn_name_attr == "catalog_conn_id"
