"""PartitionCatalogHook: store URL from connection fields, fallback order, one catalog per store."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowNotFoundException

from airflow_partitions.catalog import Catalog
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.interop import InvalidConnection, store_url_from_fields
from tests.helpers import ROOT, AirflowHome, unique


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


HOOK_OUTSIDE_A_TASK = """
import json, sys
from airflow_partitions.hooks.catalog import PartitionCatalogHook
out = {}
for conn_id in sys.argv[1:]:
    try:
        out[conn_id] = list(PartitionCatalogHook(conn_id).resolve())
    except Exception as exc:
        out[conn_id] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def test_hook_outside_a_task_reads_the_metadata_db_like_the_cli(airflow_home: AirflowHome) -> None:
    # A script or notebook opens the connection saved in the metadata DB, as the CLI does, not
    # sqlite:///$AIRFLOW_HOME/partitions.db (another, empty catalog).
    conn_id = unique("saved_catalog")
    saved = airflow_home.home / f"{conn_id}.db"
    added = airflow_home.airflow("connections", "add", conn_id, "--conn-json", json.dumps(
        {"conn_type": "partition_catalog",
         "extra": {"sqlite_path": str(saved), "data_root": "/srv/saved"}}))
    assert added.returncode == 0, added.stderr[-2000:]
    env = {**airflow_home.env, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", HOOK_OUTSIDE_A_TASK, conn_id, "no_such_conn"],
                          capture_output=True, text=True, env=env, timeout=120, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found[conn_id] == [f"sqlite://{saved}", "/srv/saved"]
    assert found["no_such_conn"].startswith("AirflowNotFoundException")
    assert "'no_such_conn' is not defined" in found["no_such_conn"]
    # The CLI resolves the same connection to the same store.
    cli = subprocess.run(
        [sys.executable, "-c", "from airflow_partitions.cli.entry_point import "
         f"airflow_connection_url as u; print(u({conn_id!r}))"],
        capture_output=True, text=True, env=env, timeout=120, check=True)
    assert cli.stdout.strip().splitlines()[-1] == f"sqlite://{saved}"
