"""Store URLs and the default store."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_partitions.defaults import default_store_url
from airflow_partitions.kv import (
    HBaseConfig,
    InvalidStoreURL,
    SQLiteConfig,
    open_store,
    parse_store_url,
)
from airflow_partitions.kv.hbase import HBaseStore
from airflow_partitions.kv.sqlite import SQLiteStore


def test_sqlite_urls() -> None:
    assert parse_store_url("sqlite:///abs/p.db") == SQLiteConfig(Path("/abs/p.db"))
    assert parse_store_url("sqlite:////abs/p.db") == SQLiteConfig(Path("/abs/p.db"))
    assert parse_store_url("sqlite:rel/p.db").path == Path("rel/p.db")  # type: ignore[union-attr]
    cfg = parse_store_url("sqlite:///x.db?busy_timeout=100&synchronous=full")
    assert cfg == SQLiteConfig(Path("/x.db"), busy_timeout_ms=100, synchronous="FULL")
    cfg = parse_store_url("sqlite:///x.db?lock_timeout=7")
    assert cfg == SQLiteConfig(Path("/x.db"), lock_timeout_s=7)


def test_hbase_urls() -> None:
    assert parse_store_url("hbase://h") == HBaseConfig(host="h")
    cfg = parse_store_url(
        "hbase://h:9091?table_prefix=dev&transport=framed&protocol=compact&pool_size=8&timeout=500"
    )
    assert cfg == HBaseConfig("h", 9091, "dev", "framed", "compact", 8, 500)
    assert parse_store_url("hbase://[::1]:9090").host == "::1"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("mysql://h/db", "'mysql'"),
        ("", "non-empty"),
        ("hbase://h:99999", "port"),
        ("hbase://h:abc", "'abc'"),
        ("hbase://h:0", "port 0"),
        ("hbase://:9090", "no host"),
        ("hbase://h:9090/path", "path"),
        ("hbase://h?transport=udp", "transport"),
        ("hbase://h?protocol=json", "protocol"),
        ("hbase://h?pool_size=0", "pool_size"),
        ("hbase://h?pool_size=x", "pool_size"),
        ("hbase://h?timeout=-1", "timeout"),
        ("hbase://h?table_prefix=a%20b", "table_prefix"),
        ("hbase://h?colour=blue", "'colour'"),
        ("hbase://h?pool_size=1&pool_size=2", "twice"),
        ("hbase://u:p@h", "credentials"),
        ("sqlite://host/x.db", "host"),
        ("sqlite://", "no file path"),
        ("sqlite:///x.db?journal=off", "'journal'"),
        ("sqlite:///x.db?synchronous=sometimes", "synchronous"),
    ],
)
def test_bad_urls_name_the_bad_part(url: str, named: str) -> None:
    with pytest.raises(InvalidStoreURL, match=named.replace("?", r"\?")):
        open_store(url)


def test_open_store_picks_the_backend(tmp_path: Path) -> None:
    db = tmp_path / "deep" / "er" / "k.db"
    with open_store(f"sqlite://{db}") as store:
        assert isinstance(store, SQLiteStore)
        store.create_table("t")
    assert db.exists()  # parent directories are created
    hb = open_store("hbase://127.0.0.1:1")  # connects lazily: no error yet
    assert isinstance(hb, HBaseStore)
    hb.close()


def test_default_store_url() -> None:
    assert default_store_url({"AIRFLOW_PARTITIONS_STORE": "hbase://h"}) == "hbase://h"
    assert default_store_url({"AIRFLOW_HOME": "/opt/af"}) == "sqlite:///opt/af/partitions.db"
    assert default_store_url({"HOME": "/home/u"}) == "sqlite:///home/u/airflow/partitions.db"
    url = default_store_url({"AIRFLOW_HOME": "/opt/af"})
    assert parse_store_url(url) == SQLiteConfig(Path("/opt/af/partitions.db"))
