"""The ``make airflow`` harness without Airflow: process groups stopped by pid, exactly and
idempotently; loopback-only ports; the environment every service shares."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from airflow_partitions.demo.layout import DemoLayout
from airflow_partitions.demo.services.cli import main
from airflow_partitions.demo.services.environment import (
    VENV_BIN,
    ServicePorts,
    airflow_environment,
    overridden,
    override_notice,
    passed_through,
    service_settings,
)
from airflow_partitions.demo.services.ports import (
    LOOPBACK,
    ApiPort,
    choose_ports,
    free_port,
    is_loopback,
    kept_port,
    pick_api_port,
    port_free,
)
from airflow_partitions.demo.services.processes import (
    ServiceRecord,
    group_members,
    respawn,
    spawn,
    spawn_recorded,
    stop_groups,
)
from airflow_partitions.demo.services.runner import (
    AirflowServices,
    env_script,
    last_api_port,
    last_ports,
    recorded,
    stop_recorded,
)
from airflow_partitions.demo.services.supervisor import RestartPolicy, Supervisor, start_supervisor
from tests.helpers import poll

# a leader that ignores nothing, with a child in its group (as the scheduler has task processes)
TREE = [sys.executable, "-c",
        "import subprocess, sys, time; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
        "time.sleep(120)"]


def wait_for_members(pgid: int, n: int) -> None:
    deadline = time.monotonic() + 30
    while len(group_members(pgid)) < n and time.monotonic() < deadline:
        time.sleep(0.05)


def test_stop_ends_the_whole_group_and_is_safe_twice(tmp_path: Path) -> None:
    proc, record = spawn("tree", TREE, {"PATH": "/usr/bin:/bin"}, tmp_path / "tree.log", tmp_path)
    (tmp_path / "tree.pid").write_text(json.dumps(record.to_json()))
    try:
        wait_for_members(proc.pid, 2)
        assert len(record.live_members()) == 2
        assert stop_recorded(tmp_path, grace=10) == [f"stopped tree (pid {proc.pid})"]
        proc.wait(timeout=10)
        assert group_members(proc.pid) == []
        assert not (tmp_path / "tree.pid").exists()
        assert stop_recorded(tmp_path) == []  # the second stop finds nothing to do
    finally:
        if group_members(proc.pid):
            stop_groups([record], grace=1)


def test_a_reused_pid_is_never_signalled(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            start_new_session=True)
    try:
        _, record = spawn("gone", [sys.executable, "-c", "pass"], {}, tmp_path / "g.log",
                          tmp_path)
        # a record that names a live process started at another time: someone else's pid now
        stranger = dataclasses.replace(record, pid=proc.pid, start_ticks=record.start_ticks + 1)
        assert stranger.live_members() == []
        assert stop_groups([stranger]) == [f"gone (pid {proc.pid}) was not running"]
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_half_written_pid_files_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "scheduler.pid").write_text("{not json")
    assert recorded(tmp_path) == []


def test_stop_without_services_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    assert main(["--root", str(tmp_path), "stop"]) == 0
    assert "nothing to stop" in capsys.readouterr().out


def test_only_loopback_and_no_default_log_ports() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    ports = choose_ports()
    assert ports.host == "127.0.0.1"
    assert len({ports.api, ports.worker_logs, ports.trigger_logs}) == 3
    assert not {ports.worker_logs, ports.trigger_logs} & {8793, 8794}
    settings = service_settings(ports)
    assert settings["AIRFLOW__API__HOST"] == "127.0.0.1"
    assert settings["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == \
        f"http://127.0.0.1:{ports.api}/execution/"
    assert settings["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"


def test_the_demo_and_the_services_share_one_environment(tmp_path: Path) -> None:
    layout = DemoLayout.at(tmp_path)
    env = layout.environment()
    assert env["AIRFLOW_HOME"] == str(tmp_path.resolve() / "airflow")
    assert env["AIRFLOW_PARTITIONS_DATA_ROOT"] == str(tmp_path.resolve() / "data")
    assert json.loads(env["AIRFLOW_CONN_SPARK_DEFAULT"])["host"] == "local[*]"
    assert json.loads(env["AIRFLOW_CONN_PARTITIONS_DEFAULT"])["extra"]["store_url"] == \
        layout.store_url
    assert env["PYSPARK_PYTHON"] == sys.executable


# -- the caller's settings, env.sh, the port --------------------------------------------------

USER = {"AIRFLOW__METRICS__STATSD_ON": "True", "AIRFLOW_CONN_WAREHOUSE": '{"password": "s3cret"}',
        "AIRFLOW_PARTITIONS_STORE": "sqlite:////elsewhere.db", "AIRFLOW__CORE__EXECUTOR":
        "CeleryExecutor", "PATH": "/usr/bin:/bin"}


def test_the_callers_settings_reach_the_services_and_the_harness_names_what_it_replaced(
        tmp_path: Path) -> None:
    layout = DemoLayout.at(tmp_path)
    env = airflow_environment(layout.home, layout.dags, layout.store_url, layout.data, base=USER)
    services = AirflowServices(layout.home, env, choose_ports(), layout.services)
    # passed through: metrics on, the user's own connection
    assert services.env["AIRFLOW__METRICS__STATSD_ON"] == "True"
    assert services.env["AIRFLOW_CONN_WAREHOUSE"] == USER["AIRFLOW_CONN_WAREHOUSE"]
    # the harness's required values win: its catalog, LocalExecutor; PATH is extended
    assert services.env["AIRFLOW_PARTITIONS_STORE"] == layout.store_url
    assert services.env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert services.env["PATH"] == f"{VENV_BIN}:/usr/bin:/bin"
    assert overridden(USER, services.env) == ["AIRFLOW_PARTITIONS_STORE",
                                              "AIRFLOW__CORE__EXECUTOR"]
    notice = override_notice(USER, services.env)
    assert notice is not None and "AIRFLOW__CORE__EXECUTOR" in notice
    assert "s3cret" not in notice and "CeleryExecutor" not in notice  # names, never values
    assert override_notice({"AIRFLOW__METRICS__STATSD_ON": "True"}, services.env) is None
    assert passed_through(USER, services.env) == ["AIRFLOW_CONN_WAREHOUSE",
                                                  "AIRFLOW__METRICS__STATSD_ON"]


def test_env_sh_puts_the_venvs_airflow_first_on_path_in_a_fresh_shell(tmp_path: Path) -> None:
    script = tmp_path / "env.sh"
    script.write_text(env_script({"AIRFLOW_HOME": "/h o m e", "AIRFLOW__METRICS__STATSD_ON":
                                  "True", "UNRELATED": "x"}))
    shell = subprocess.run(
        ["bash", "-c", f"source {script}; command -v airflow; echo $AIRFLOW_HOME; echo $PATH; "
                       "echo ${UNRELATED:-unset}"],
        env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True)
    airflow, home, path, unrelated = shell.stdout.splitlines()
    assert airflow == str(VENV_BIN / "airflow")
    assert home == "/h o m e" and unrelated == "unset"
    assert path == f"{VENV_BIN}:/usr/bin:/bin"  # the shell's own PATH is kept after it


def test_the_ui_keeps_last_times_port_while_it_is_free(tmp_path: Path) -> None:
    last = free_port()
    assert pick_api_port(LOOPBACK, 0, last) == ApiPort(last)
    with socket.socket() as taken:  # someone else listens there now
        taken.bind((LOOPBACK, last))
        taken.listen()
        moved = pick_api_port(LOOPBACK, 0, last)
    assert moved.port != last
    assert moved.moved is not None and str(last) in moved.moved and str(moved.port) in moved.moved
    assert pick_api_port(LOOPBACK, 0, None).moved is None  # a first start has nothing to say
    assert pick_api_port(LOOPBACK, 8123, last) == ApiPort(8123)  # asked for: always that one


def test_the_last_port_is_read_from_the_state_the_start_wrote(tmp_path: Path) -> None:
    assert last_api_port(tmp_path) is None
    services = AirflowServices(tmp_path, {}, ServicePorts(LOOPBACK, 41234, 41235, 41236),
                               tmp_path)
    services.write_state()
    assert last_api_port(tmp_path) == 41234
    assert (tmp_path / "env.sh").stat().st_mode & 0o777 == 0o600
    (tmp_path / "services.json").write_text('{"ports": "garbled"}')
    assert last_api_port(tmp_path) is None


# -- the coverage-event announcers: the follower and the tasks' API connection ----------------


def test_the_admin_password_is_written_before_the_api_server_and_kept(tmp_path: Path) -> None:
    from airflow_partitions.demo.services.api import admin_password, ensure_admin_password

    password = ensure_admin_password(tmp_path)
    assert admin_password(tmp_path) == password
    assert (tmp_path / "simple_auth_manager_passwords.json.generated").stat().st_mode & 0o077 == 0
    assert ensure_admin_password(tmp_path) == password  # kept, as the api-server keeps it
    (tmp_path / "simple_auth_manager_passwords.json.generated").write_text('{"viewer": "v"}')
    other = ensure_admin_password(tmp_path)  # a user the api-server generated is kept too
    assert json.loads((tmp_path / "simple_auth_manager_passwords.json.generated").read_text()
                      ) == {"viewer": "v", "admin": other}


def test_the_follower_and_every_task_get_the_api_address_and_the_admin() -> None:
    from airflow_partitions.demo.services.environment import api_settings, follower_argv

    settings = api_settings("http://127.0.0.1:8123", "admin", "pw")
    assert settings["AIRFLOW_PARTITIONS_API_URL"] == "http://127.0.0.1:8123"
    assert settings["AIRFLOW_PARTITIONS_API_USER"] == "admin"
    assert settings["AIRFLOW_PARTITIONS_API_PASSWORD"] == "pw"
    assert json.loads(settings["AIRFLOW_CONN_AIRFLOW_API_DEFAULT"]) == {
        "conn_type": "http", "host": "http://127.0.0.1", "port": 8123, "login": "admin",
        "password": "pw"}
    assert follower_argv()[-2:] == ["assets", "follow"]
    assert Path(follower_argv()[0]).name == "airflow-partitions"


# -- the supervisor: an exited service started again, on the same command line ------------------

#: A part that notes each start (its argv and a setting of its environment), then lives
#: ``LIVES`` s and exits with status 3.
PART = [sys.executable, "-c",
        "import os, sys, time; open(sys.argv[1], 'a').write(os.environ['PORT'] + ' ' + "
        "' '.join(sys.argv[1:]) + '\\n'); time.sleep(float(sys.argv[2])); sys.exit(3)"]
FAST = RestartPolicy(max_restarts=2, window=60, first_pause=0.05, max_pause=0.1)


def supervise_until(supervisor: Supervisor, done: Callable[[], bool], timeout: float = 30
                    ) -> None:
    """Watch (as the supervisor's loop does) until ``done()``; the deadline only bounds a hang."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the supervisor did not get there"
        supervisor.watch_once()
        time.sleep(0.02)


def record_named(state: Path, name: str) -> ServiceRecord:
    [record] = [r for r in recorded(state) if r.name == name]
    return record


def test_an_exited_part_is_started_again_alike_until_the_supervisor_gives_up(
        tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    spawn_recorded(tmp_path, "part", [*PART, str(starts), "0.1"], {"PORT": "41999"}, tmp_path)
    lines: list[str] = []
    supervisor = Supervisor(tmp_path, FAST, say=lines.append)
    try:
        supervise_until(supervisor, lambda: record_named(tmp_path, "part").gave_up)
        assert record_named(tmp_path, "part").restarts == 2
    finally:
        stop_recorded(tmp_path, grace=5)
    # started three times, each time with the same command line and environment (so ports)
    assert starts.read_text().splitlines() == [f"41999 {starts} 0.1"] * 3
    said = "\n".join(lines)
    assert said.count("exited with status 3") == 2  # the first exit was not its child's
    assert "started part again as pid" in said and "restart 2 since the start" in said
    assert "giving up on part (pid " in lines[-1]
    assert "exited with status 3): it exited 3 times within 1 min" in lines[-1]
    log = (tmp_path / "part.log").read_text()  # the part's own log says so too
    assert "[supervisor] started part again" in log and "[supervisor] giving up" in log


def test_a_part_stopped_by_hand_stays_stopped_and_one_started_again_by_hand_is_watched(
        tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    spawn_recorded(tmp_path, "part", [*PART, str(starts), "60"], {"PORT": "1"}, tmp_path)
    supervisor = Supervisor(tmp_path, FAST, say=lambda line: None)
    started = lambda n: len(starts.read_text().splitlines()) >= n or None  # noqa: E731
    try:
        poll("the part's start", lambda: starts.exists() or None, 30)
        supervisor.watch_once()
        assert stop_recorded(tmp_path, grace=5)[-1].startswith("stopped part")
        for _ in range(10):
            supervisor.watch_once()
            time.sleep(0.02)
        assert recorded(tmp_path) == [] and len(starts.read_text().splitlines()) == 1
        _, again = respawn(tmp_path, "part")  # by hand: a new pid file
        poll("the start by hand", lambda: started(2), 30)
        os.kill(again.pid, signal.SIGKILL)
        supervise_until(supervisor, lambda: record_named(tmp_path, "part").restarts == 1)
        poll("the supervisor's start", lambda: started(3), 30)
    finally:
        stop_recorded(tmp_path, grace=5)


def test_what_an_exited_leader_left_is_stopped_before_the_restart(tmp_path: Path) -> None:
    _, record = spawn_recorded(tmp_path, "tree", TREE, {"PATH": "/usr/bin:/bin"}, tmp_path)
    wait_for_members(record.pid, 2)
    [child] = [p for p in group_members(record.pid) if p != record.pid]
    supervisor = Supervisor(tmp_path, FAST, say=lambda line: None)
    try:
        os.kill(record.pid, signal.SIGKILL)  # the leader dies, its child lives on
        supervise_until(supervisor, lambda: record_named(tmp_path, "tree").restarts == 1)
        assert child not in group_members(record.pid)  # no orphan beside the new one
    finally:
        stop_recorded(tmp_path, grace=5)


def test_stop_ends_the_detached_supervisor_first_so_nothing_is_started_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "airflow" / "services"
    state.mkdir(parents=True)
    starts = tmp_path / "starts.txt"
    spawn_recorded(state, "scheduler", [*PART, str(starts), "0.5"], {"PORT": "2"}, tmp_path)
    spawn_recorded(state, "api-server", [*PART, str(starts), "60"], {"PORT": "3"}, tmp_path)
    start_supervisor(state, RestartPolicy(max_restarts=50, window=60, first_pause=0.05,
                                          max_pause=0.05))
    try:
        poll("a restart", lambda: record_named(state, "scheduler").restarts >= 1 or None, 30)
        main(["--root", str(tmp_path), "status"])  # 1 while the scheduler is between starts
        shown = capsys.readouterr().out
        assert re.search(r"scheduler +pid \d+ +\w[\w ]* +restarts [1-9]", shown), shown
        assert re.search(r"supervisor +pid \d+ +running", shown), shown
    finally:
        lines = stop_recorded(state, grace=5)
    assert lines[0].startswith("stopped supervisor")
    assert recorded(state) == []
    count = len(starts.read_text().splitlines())
    time.sleep(1.5)  # longer than the supervisor's pause and poll: nothing starts any more
    assert len(starts.read_text().splitlines()) == count
    assert (state / "supervisor.log").read_text().splitlines()[-1].endswith("supervisor stopped")


def a_port_no_connection_takes() -> int:
    """A free port below Linux's ephemeral range (32768 and up), where the other tests'
    outgoing connections take theirs: free now, it stays free unless something binds it."""
    return next(port for port in range(24000, 32000) if port_free(LOOPBACK, port))


def test_a_second_start_keeps_every_port_that_is_still_free(tmp_path: Path) -> None:
    pg = a_port_no_connection_takes()
    first = choose_ports()
    assert choose_ports(LOOPBACK, first.api, first) == first
    with socket.socket() as taken:  # someone else took the trigger log port meanwhile
        taken.bind((LOOPBACK, first.trigger_logs))
        taken.listen()
        second = choose_ports(LOOPBACK, first.api, first)
    assert second.worker_logs == first.worker_logs and second.trigger_logs != first.trigger_logs
    services = AirflowServices(tmp_path, {}, first, tmp_path, postgres_port=pg)
    services.write_state()
    assert last_ports(tmp_path) == (first, pg)
    assert f"@127.0.0.1:{pg}/" in services.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    again = AirflowServices(tmp_path, {}, first, tmp_path, postgres_port=pg)
    assert again.env == services.env  # the same password: env.sh stays valid
    taken_set = {first.api}
    assert kept_port(LOOPBACK, pg, taken_set) == pg and pg in taken_set


def test_a_database_of_the_callers_own_is_used_and_no_postgresql_started(tmp_path: Path) -> None:
    own = {"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "postgresql+psycopg2://u:p@db:5432/airflow"}
    services = AirflowServices(tmp_path, own, choose_ports(), tmp_path)
    assert services.postgres_port is None
    assert services.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == own[
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]


def test_a_part_that_cannot_be_started_again_is_given_up_on_saying_why(tmp_path: Path) -> None:
    spawn_recorded(tmp_path, "part", [sys.executable, "-c", "pass"], {}, tmp_path)
    (tmp_path / "part.spec.json").unlink()  # nothing left to start it from
    lines: list[str] = []
    supervisor = Supervisor(tmp_path, FAST, say=lines.append)
    supervise_until(supervisor, lambda: record_named(tmp_path, "part").gave_up)
    assert lines[-1].startswith("giving up on part: it could not be started again "
                                "(FileNotFoundError")
