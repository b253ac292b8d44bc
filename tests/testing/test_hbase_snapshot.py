"""The test double's ``--state``: a stopped server comes back with its tables."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import happybase
import pytest

from airflow_partitions.testing.hbase import snapshot
from airflow_partitions.testing.hbase.server import HBaseTestServer, load_hbase_thrift
from airflow_partitions.testing.hbase.store import Store


def test_a_snapshot_round_trips_tables_rows_versions_and_descriptors(tmp_path: Path) -> None:
    path = tmp_path / "tables.pickle"
    with HBaseTestServer() as server:
        conn = happybase.Connection(server.host, server.port)
        conn.create_table("t", {"cf": {"max_versions": 3}, "other": {}})
        table = conn.table("t")
        table.put(b"r1", {b"cf:a": b"1"}, timestamp=10)
        table.put(b"r1", {b"cf:a": b"2"}, timestamp=20)
        table.put(b"r0", {b"other:": b"\x00\xff"})
        before = (list(table.scan()), table.cells(b"r1", b"cf:a", versions=3))
        conn.close()
        assert snapshot.save(server._store, path) == 1
    store = Store()
    assert snapshot.load(store, path, load_hbase_thrift()) == 1
    with HBaseTestServer() as again:
        again._store.tables.update(store.tables)
        conn = happybase.Connection(again.host, again.port)
        table = conn.table("t")
        assert (list(table.scan()), table.cells(b"r1", b"cf:a", versions=3)) == before
        assert conn.table("t").families()[b"cf"]["max_versions"] == 3
        conn.close()


def test_no_snapshot_is_an_empty_store_and_a_foreign_file_is_refused(tmp_path: Path) -> None:
    assert snapshot.load(Store(), tmp_path / "none", load_hbase_thrift()) == 0
    import pickle

    (tmp_path / "foreign").write_bytes(pickle.dumps({"format": 99}))
    with pytest.raises(ValueError, match="not a snapshot"):
        snapshot.load(Store(), tmp_path / "foreign", load_hbase_thrift())


def test_the_server_saves_on_sigterm_and_loads_at_start(tmp_path: Path) -> None:
    state = tmp_path / "tables.pickle"

    def serve() -> tuple[subprocess.Popen[str], int]:
        proc = subprocess.Popen([sys.executable, "-m", "airflow_partitions.testing.hbase",
                                 "--port", "0", "--state", str(state)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            if "ready on" in line:
                return proc, int(line.rsplit(":", 1)[1])
        raise AssertionError("the server never said ready")

    proc, port = serve()
    try:
        conn = happybase.Connection("127.0.0.1", port)
        conn.create_table("kept", {"cf": {}})
        conn.table("kept").put(b"row", {b"cf:q": b"v"})
        conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert "saved 1 tables" in out
    proc, port = serve()
    try:
        conn = happybase.Connection("127.0.0.1", port)
        assert conn.table("kept").row(b"row") == {b"cf:q": b"v"}
        conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
