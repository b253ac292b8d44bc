"""Start a service in its own process group, and stop exactly that group later, by pid.

A service is recorded as ``{"name", "pid", "start_ticks", "boot_id", "argv", "log", ...}`` in
``<name>.pid``: the pid alone is not enough, because after a reboot or a long time the number
may belong to someone else. The group is signalled only when its leader is still the process we
started (same start time since the same boot), or when the leader is gone and members of its
group remain (the kernel does not reuse a pid while a process group still carries it).

Beside it, ``<name>.spec.json`` (owner-only: the environment may hold passwords) keeps what
started it: command line, environment, working directory, user. The supervisor
(:mod:`.supervisor`) starts an exited service again from it, so a restart has the same command
line and the same ports.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypedDict, cast

PROC = Path("/proc")


class ServicesFailed(RuntimeError):
    """A service exited or did not become healthy in time; the message shows its log's tail."""


def boot_id() -> str:
    try:
        return (PROC / "sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (which may hold spaces): state is [0]."""
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2:].split()


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (None if there is no such process)."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


class ServiceRecordJson(TypedDict):
    """A :class:`ServiceRecord` as its pid file holds it."""

    name: str
    pid: int
    start_ticks: int
    boot_id: str
    argv: list[str]
    log: str
    stop_signal: str
    restarts: int
    gave_up: bool


@dataclass(frozen=True)
class ServiceRecord:
    """What is needed to find, and only find, a started service again."""

    name: str
    pid: int
    start_ticks: int
    boot_id: str
    argv: list[str]
    log: str
    #: What asks it to stop: SIGTERM, except where that means something slower (PostgreSQL's
    #: SIGTERM waits for every client to disconnect; SIGINT is its fast shutdown).
    stop_signal: str = "SIGTERM"
    #: How often the supervisor started it again, and whether it stopped trying.
    restarts: int = 0
    gave_up: bool = False

    def to_json(self) -> ServiceRecordJson:
        return cast(ServiceRecordJson, asdict(self))

    @classmethod
    def from_json(cls, doc: ServiceRecordJson) -> ServiceRecord:
        return cls(name=str(doc["name"]), pid=int(doc["pid"]),
                   start_ticks=int(doc["start_ticks"]), boot_id=str(doc["boot_id"]),
                   argv=[str(a) for a in doc["argv"]], log=str(doc["log"]),
                   stop_signal=str(doc.get("stop_signal", "SIGTERM")),
                   restarts=int(doc.get("restarts", 0)), gave_up=bool(doc.get("gave_up")))

    def leader_is_ours(self) -> bool:
        return self.boot_id == boot_id() and start_ticks(self.pid) == self.start_ticks

    def leader_alive(self) -> bool:
        """Whether the process we started is still running (not gone, not a zombie)."""
        fields = _stat_fields(self.pid)
        return (fields is not None and fields[0] != "Z" and self.boot_id == boot_id()
                and int(fields[19]) == self.start_ticks)

    def live_members(self) -> list[int]:
        """Processes of our group still alive; [] when nothing of ours is left."""
        if self.boot_id != boot_id():
            return []
        if start_ticks(self.pid) is not None and not self.leader_is_ours():
            return []  # the pid now belongs to someone else: their group, not ours
        return group_members(self.pid)


def spawn(name: str, argv: Sequence[str], env: Mapping[str, str], log: Path,
          cwd: Path, user: int | None = None,
          stop_signal: str = "SIGTERM") -> tuple[subprocess.Popen[bytes], ServiceRecord]:
    """Start ``argv`` leading a new session (so a new process group), output to ``log``;
    as the uid ``user`` (with its primary group only) when given, e.g. PostgreSQL under root."""
    log.parent.mkdir(parents=True, exist_ok=True)
    who: dict[str, Any] = {}
    if user is not None:
        import pwd

        who = {"user": user, "group": pwd.getpwuid(user).pw_gid, "extra_groups": []}
    with log.open("ab") as out:
        proc = subprocess.Popen(list(argv), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL,  # noqa: S603
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                **who)
    ticks = start_ticks(proc.pid) or 0
    return proc, ServiceRecord(name, proc.pid, ticks, boot_id(), list(argv), str(log),
                               stop_signal)


class ServiceSpecJson(TypedDict):
    """What started a service (``<name>.spec.json``): enough to start it again alike."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    user: int | None
    stop_signal: str
    log: str


def pid_file(state_dir: Path, name: str) -> Path:
    return state_dir / f"{name}.pid"


def spec_file(state_dir: Path, name: str) -> Path:
    return state_dir / f"{name}.spec.json"


def write_owner_only(path: Path, text: str) -> None:
    """``text`` into ``path``, readable by its owner only from the first byte."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        out.write(text)
    path.chmod(0o600)  # a file left by an older run keeps its mode through O_TRUNC


def write_record(state_dir: Path, record: ServiceRecord) -> None:
    """The pid file, replaced whole (a reader never sees half of it)."""
    path = pid_file(state_dir, record.name)
    partial = path.with_suffix(".pid.partial")
    partial.write_text(json.dumps(record.to_json()) + "\n")
    partial.replace(path)


def spawn_recorded(state_dir: Path, name: str, argv: Sequence[str], env: Mapping[str, str],
                   cwd: Path, user: int | None = None, stop_signal: str = "SIGTERM",
                   log: Path | None = None) -> tuple[subprocess.Popen[bytes], ServiceRecord]:
    """:func:`spawn`, with its pid file and its spec written to ``state_dir`` (the log there too,
    unless ``log`` says where)."""
    log = log or state_dir / f"{name}.log"
    spec: ServiceSpecJson = {"argv": list(argv), "env": dict(env), "cwd": str(cwd),
                             "user": user, "stop_signal": stop_signal, "log": str(log)}
    write_owner_only(spec_file(state_dir, name), json.dumps(spec))
    proc, record = spawn(name, argv, env, log, cwd, user=user, stop_signal=stop_signal)
    write_record(state_dir, record)
    return proc, record


def respawn(state_dir: Path, name: str, restarts: int = 0
            ) -> tuple[subprocess.Popen[bytes], ServiceRecord]:
    """Start ``name`` again from its spec: the same command line, environment (so the same
    ports), working directory and user; its pid file then names the new process."""
    spec: ServiceSpecJson = json.loads(spec_file(state_dir, name).read_text())
    log = Path(spec.get("log") or state_dir / f"{name}.log")
    proc, record = spawn(name, spec["argv"], spec["env"], log, Path(spec["cwd"]),
                         user=spec["user"], stop_signal=spec["stop_signal"])
    record = replace(record, restarts=restarts)
    write_record(state_dir, record)
    return proc, record


def recorded(state_dir: Path) -> list[ServiceRecord]:
    """The services recorded in ``state_dir`` (their pid files)."""
    records = []
    for path in sorted(state_dir.glob("*.pid")):
        try:
            records.append(ServiceRecord.from_json(json.loads(path.read_text())))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not one of ours, or half written: nothing we can safely signal
    return records


def stop_groups(records: Sequence[ServiceRecord], grace: float = 30.0) -> list[str]:
    """SIGTERM the services' process groups, SIGKILL what is left after ``grace`` s each.

    The api-server goes last: the scheduler waits for its running tasks to finish, and a task
    talks to the api-server (Airflow 3's execution API) until it does; stopped together, a
    task kept retrying a gone api-server until the scheduler was killed. Returns what
    happened, a line per service in ``records``' order, for a person. Safe to call again: a
    group that is gone is left alone.
    """
    api = [r for r in records if r.name == "api-server"]
    lines = _stop([r for r in records if r.name != "api-server"], grace)
    lines.update(_stop(api, grace))
    return [lines[r.name] for r in records]


def _stop(records: Sequence[ServiceRecord], grace: float) -> dict[str, str]:
    """Each group of ``records`` its stop signal at once, SIGKILL what is left after ``grace``."""
    lines: dict[str, str] = {}
    running = []
    for record in records:
        if record.live_members():
            _signal_group(record.pid, signal.Signals[record.stop_signal])
            running.append(record)
        else:
            lines[record.name] = f"{record.name} (pid {record.pid}) was not running"
    began = time.monotonic()
    deadline, repeat_at = began + grace, began + min(5.0, grace / 2)
    while any(r.live_members() for r in running) and time.monotonic() < deadline:
        if repeat_at and time.monotonic() >= repeat_at:
            # Airflow 3.3's dag-processor can lose its SIGTERM: the handler's sys.exit may fire
            # inside logging's lock release, where Python ignores the exception, and the
            # manager parses on. The same signal again ends it.
            for record in running:
                if record.live_members():
                    _signal_group(record.pid, signal.Signals[record.stop_signal])
            repeat_at = 0.0
        time.sleep(0.2)
    for record in running:
        if not record.live_members():
            lines[record.name] = f"stopped {record.name} (pid {record.pid})"
            continue
        _signal_group(record.pid, signal.SIGKILL)
        kill_deadline = time.monotonic() + 10
        while record.live_members() and time.monotonic() < kill_deadline:
            time.sleep(0.2)
        left = record.live_members()
        lines[record.name] = (f"{record.name} (pid {record.pid}): processes {left} survived "
                              "SIGKILL" if left else
                              f"killed {record.name} (pid {record.pid}) after {grace:.0f} s")
    return lines


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
