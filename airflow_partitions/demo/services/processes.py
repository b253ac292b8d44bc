"""Start a service in its own process group, and stop exactly that group later, by pid.

A service is recorded as ``{"name", "pid", "start_ticks", "boot_id", "argv", "log"}``: the pid
alone is not enough, because after a reboot or a long time the number may belong to someone
else. The group is signalled only when its leader is still the process we started (same start
time since the same boot), or when the leader is gone and members of its group remain (the
kernel does not reuse a pid while a process group still carries it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

PROC = Path("/proc")


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

    def to_json(self) -> ServiceRecordJson:
        return cast(ServiceRecordJson, asdict(self))

    @classmethod
    def from_json(cls, doc: ServiceRecordJson) -> ServiceRecord:
        return cls(name=str(doc["name"]), pid=int(doc["pid"]),
                   start_ticks=int(doc["start_ticks"]), boot_id=str(doc["boot_id"]),
                   argv=[str(a) for a in doc["argv"]], log=str(doc["log"]),
                   stop_signal=str(doc.get("stop_signal", "SIGTERM")))

    def leader_is_ours(self) -> bool:
        return self.boot_id == boot_id() and start_ticks(self.pid) == self.start_ticks

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
