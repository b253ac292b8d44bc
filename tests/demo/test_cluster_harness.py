"""The cluster harness without starting it: its environment, connections, CLI and stop."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_partitions.demo.cluster.layout import ClusterLayout
from airflow_partitions.demo.cluster.ports import ClusterPorts, choose_cluster_ports
from airflow_partitions.demo.cluster.runner import STOP_ORDER
from airflow_partitions.demo.cluster.settings import (
    cluster_environment,
    connections,
    worker_environment,
)
from airflow_partitions.demo.services.pg_files import PostgresFiles, placed, reachable
from airflow_partitions.demo.services.supervisor import SUPERVISOR


def test_connections_live_in_the_metadata_db_not_in_the_environment(tmp_path: Path) -> None:
    layout = ClusterLayout.at(tmp_path)
    layout.state.mkdir(parents=True)
    ports = choose_cluster_ports()
    user = {"AIRFLOW_CONN_PARTITIONS_DEFAULT": "{}", "AIRFLOW_CONN_SPARK_DEFAULT": "{}",
            "AIRFLOW_PARTITIONS_STORE": "sqlite:///x.db", "PATH": "/usr/bin"}
    env = cluster_environment(layout, ports, base=user)
    assert not {"AIRFLOW_CONN_PARTITIONS_DEFAULT", "AIRFLOW_CONN_SPARK_DEFAULT",
                "AIRFLOW_PARTITIONS_STORE"} & set(env)
    assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("postgresql+psycopg2://")
    password = json.loads((layout.state / "secrets.json").read_text())["redis_password"]
    assert env["AIRFLOW__CELERY__BROKER_URL"] == \
        f"redis://:{password}@127.0.0.1:{ports.redis}/0"
    assert (layout.state / "secrets.json").stat().st_mode & 0o077 == 0
    conns = connections(ports, layout)
    assert conns["partitions_default"]["extra"] == {"store_url": ports.catalog_url,
                                                    "data_root": str(layout.data)}
    one, two = (worker_environment(env, layout, n) for n in (1, 2))
    assert one["AIRFLOW_HOME"] != two["AIRFLOW_HOME"]
    assert one["AIRFLOW_PARTITIONS_HOSTNAME"] == "worker-1"
    # the secrets every process must agree on are made once and kept
    assert cluster_environment(layout, ports, base=user)["AIRFLOW__API_AUTH__JWT_SECRET"] == \
        env["AIRFLOW__API_AUTH__JWT_SECRET"]


def test_every_port_is_distinct_and_survives_a_json_round_trip() -> None:
    ports = choose_cluster_ports()
    numbers = [ports.postgres, ports.redis, *ports.hbase.all(), ports.spark_master,
               ports.spark_master_ui, *ports.spark_worker_uis, ports.airflow.api,
               ports.airflow.worker_logs, ports.airflow.trigger_logs]
    assert len(set(numbers)) == len(numbers)
    assert ClusterPorts.from_json(json.loads(json.dumps(ports.to_json()))) == ports


def test_a_second_start_keeps_the_ports_still_free_and_moves_only_the_taken_ones() -> None:
    first = choose_cluster_ports()
    assert choose_cluster_ports(previous=first) == first  # env.sh and bookmarks stay valid
    with socket.socket() as held, socket.socket() as held_hbase:
        held.bind((first.host, first.postgres))
        held.listen()
        held_hbase.bind((first.host, first.hbase.thrift))
        held_hbase.listen()
        second = choose_cluster_ports(previous=first)
    assert second.postgres != first.postgres and second.redis == first.redis
    assert second.airflow == first.airflow and second.spark_master == first.spark_master
    assert second.hbase != first.hbase  # HBase's ports go together: all new
    assert choose_cluster_ports(8123, previous=first).airflow.api == 8123  # asked for


def test_the_supervisor_is_stopped_before_any_part() -> None:
    assert STOP_ORDER[0] == (SUPERVISOR,)


def test_help_and_stop_with_nothing_started(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "airflow_partitions.demo.cluster", "--root", str(tmp_path)]
    shown = subprocess.run([*cli, "--help"], capture_output=True, text=True, check=True)
    assert "PostgreSQL" in shown.stdout and "stop" in shown.stdout
    for _ in range(2):  # safe to run twice
        done = subprocess.run([*cli, "stop"], capture_output=True, text=True, check=False)
        assert done.returncode == 0 and "nothing to stop" in done.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="PostgreSQL runs as nobody only under root")
def test_postgres_files_move_where_nobody_reaches_them(tmp_path: Path) -> None:
    uid = pwd.getpwnam("nobody").pw_uid
    hidden = tmp_path / "private"
    hidden.mkdir(mode=0o700)
    (hidden / "pginstall" / "bin").mkdir(parents=True)
    (hidden / "pginstall" / "bin" / "postgres").write_text("#!/bin/sh\n")
    (hidden / "pginstall" / "bin" / "postgres").chmod(0o755)
    home = hidden / "cluster" / "postgres"
    assert not reachable(uid, home.parent)  # pytest's temporary root is 0700
    pg = placed(home, hidden / "pginstall" / "bin", uid)
    try:
        assert pg.home != home and reachable(uid, pg.home)
        assert reachable(uid, pg.bin / "postgres")
        assert placed(home, hidden / "pginstall" / "bin", uid) == pg  # stable across starts
    finally:
        shutil.rmtree(pg.home)
    assert placed(tmp_path, tmp_path, None) == PostgresFiles(tmp_path, tmp_path)


def test_the_broker_wants_its_password(tmp_path: Path) -> None:
    """Redis as the cluster starts it: AUTH with the cluster's password and PING answer; a
    client without it is refused; the password is in an owner-only file, not on the command
    line."""
    import socket

    from airflow_partitions.demo.cluster import broker
    from airflow_partitions.demo.services.ports import free_port

    port, password = free_port(), "s3cret-_x"
    argv = broker.server_argv(tmp_path, "127.0.0.1", port, password)
    assert password not in " ".join(argv)
    assert (tmp_path / "redis.conf").stat().st_mode & 0o077 == 0
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        broker.wait_ready("127.0.0.1", port, password, timeout=60)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"PING\r\n")
            assert sock.recv(64).startswith(b"-NOAUTH")
        with pytest.raises(Exception, match="not ready"):
            broker.wait_ready("127.0.0.1", port, "wrong", timeout=1)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_metadata_db_wants_its_password() -> None:
    """PostgreSQL as the cluster initialises and starts it: the cluster's password connects,
    none and a wrong one are refused, and the password file initdb read is gone."""
    import tempfile

    import psycopg2

    from airflow_partitions.demo.services import postgres
    from airflow_partitions.demo.services.ports import free_port

    # Not under pytest's tmp_path: its root is 0700, and PostgreSQL runs as nobody under root.
    root = Path(tempfile.mkdtemp(prefix="airflow-partitions-pg-"))
    root.chmod(0o755)
    port, password = free_port(), "pa55-_word"
    pg = postgres.files(root / "postgres")
    server = None
    try:
        assert postgres.initdb(pg, password)
        assert not postgres.initdb(pg, password)  # once
        assert not list(pg.data.parent.glob(".initdb-password"))
        server = subprocess.Popen(postgres.server_argv(pg, "127.0.0.1", port), cwd=pg.home,
                                  user=postgres.run_as(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        postgres.wait_ready("127.0.0.1", port, timeout=120)
        postgres.create_database("127.0.0.1", port, password)
        for wrong in ("", "nope"):
            with pytest.raises(psycopg2.OperationalError, match="password"):
                psycopg2.connect(host="127.0.0.1", port=port, user=postgres.USER,
                                 password=wrong, dbname=postgres.DATABASE)
        url = postgres.sqlalchemy_url("127.0.0.1", port, password)
        assert url == (f"postgresql+psycopg2://{postgres.USER}:{password}@127.0.0.1:{port}/"
                       f"{postgres.DATABASE}")
    finally:
        if server is not None:
            server.send_signal(2)
            server.wait(timeout=60)
        shutil.rmtree(pg.home, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
