"""The supervisor: one small process that starts a recorded service again when it exits.

``make airflow`` and ``make airflow-cluster`` start it detached once every part is ready
(:func:`start_supervisor`; ``python -m airflow_partitions.demo.services.supervisor STATE_DIR``),
recorded in ``supervisor.pid`` like the parts. ``make airflow-stop`` ends it first, so it does
not start again what the stop ends.

Each second it reads the state directory's pid files and checks each part's leader (one
``/proc/<pid>/stat`` read a part). A part whose leader exited is started again from its spec
(:func:`.processes.respawn`: the same command line, environment and so ports, directory and
user), after what is left of its process group is stopped, and after a pause that doubles with
each recent restart (1, 2, 4, 8, 16 s, at most 30 s); a line in the supervisor's log and in the
part's own says so. After ``max_restarts`` restarts (5) within ``window`` (10 minutes) it gives
up on that part, with a line saying so, and ``status`` shows it. A part stopped by hand (its
pid file removed) is left alone; one started again by hand (a new pid file) is watched again.

What it costs: a Python process (about 20 MiB) reading a few small files a second.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from airflow_partitions.demo.services.processes import (
    ServiceRecord,
    recorded,
    respawn,
    spawn_recorded,
    stop_groups,
    write_record,
)

SUPERVISOR = "supervisor"
#: Seconds between two looks at the parts.
POLL = 1.0
#: Seconds what an exited part left gets after SIGTERM, before SIGKILL.
LEFT_GRACE = 5.0
#: The environment the supervisor itself needs (its children's come from their specs).
OWN_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "TMPDIR")


@dataclass(frozen=True)
class RestartPolicy:
    """How often a part is started again: at most ``max_restarts`` within ``window`` seconds,
    each after a pause of ``first_pause`` doubled per recent restart, at most ``max_pause``."""

    max_restarts: int = 5
    window: float = 600.0
    first_pause: float = 1.0
    max_pause: float = 30.0

    def pause(self, recent: int) -> float:
        return float(min(self.first_pause * 2 ** recent, self.max_pause))

    def argv(self) -> list[str]:
        return ["--max-restarts", str(self.max_restarts), "--window", str(self.window),
                "--first-pause", str(self.first_pause), "--max-pause", str(self.max_pause)]


#: Five restarts within ten minutes, after 1, 2, 4, 8 and 16 s.
DEFAULT_POLICY = RestartPolicy()


def _stamp() -> str:
    return dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")


class Supervisor:
    """Restarts the exited parts recorded in ``state_dir`` (:meth:`watch_once`, each second)."""

    def __init__(self, state_dir: Path, policy: RestartPolicy = DEFAULT_POLICY,
                 say: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.state_dir, self.policy, self.clock = state_dir, policy, clock
        self.say = say or (lambda line: print(f"{_stamp()} {line}", flush=True))
        #: The parts this supervisor started again: its children, reaped here.
        self.children: dict[str, subprocess.Popen[bytes]] = {}
        #: When each part was started again, within the window.
        self.recent: dict[str, list[float]] = {}
        #: Parts seen exited: (when to start them again, the exited pid).
        self.due: dict[str, tuple[float, int]] = {}
        self.stopped = threading.Event()

    def run(self, poll: float = POLL) -> None:
        """Watch until :meth:`stop` (SIGTERM or SIGINT in :func:`main`)."""
        names = ", ".join(r.name for r in recorded(self.state_dir) if r.name != SUPERVISOR)
        self.say(f"supervising {names or 'nothing yet'} in {self.state_dir} (at most "
                 f"{self.policy.max_restarts} restarts per part within "
                 f"{self.policy.window / 60:g} min)")
        while not self.stopped.is_set():
            self.watch_once()
            self.stopped.wait(poll)
        self.say("supervisor stopped")

    def stop(self) -> None:
        self.stopped.set()

    def watch_once(self) -> None:
        """One look at every recorded part: note the exited ones, restart the ones due."""
        for child in self.children.values():
            child.poll()  # reaps it: an exited child is then gone from /proc, not a zombie
        now = self.clock()
        records = [r for r in recorded(self.state_dir) if r.name != SUPERVISOR]
        for name in set(self.due) - {r.name for r in records}:
            del self.due[name]  # stopped by hand: its pid file is gone
        for record in records:
            if record.gave_up or record.leader_alive():
                self.due.pop(record.name, None)
                continue
            due = self.due.get(record.name)
            if due is None or due[1] != record.pid:
                self._exited(record, now)
            elif now >= due[0]:
                self._restart(record, now)

    def _recent(self, name: str, now: float) -> list[float]:
        kept = [t for t in self.recent.get(name, []) if now - t < self.policy.window]
        self.recent[name] = kept
        return kept

    def _exited(self, record: ServiceRecord, now: float) -> None:
        recent = self._recent(record.name, now)
        child = self.children.get(record.name)
        code = child.poll() if child is not None and child.pid == record.pid else None
        status = "" if code is None else f" with status {code}"
        if len(recent) >= self.policy.max_restarts:
            self._give_up(record, status)
            return
        pause = self.policy.pause(len(recent))
        self.due[record.name] = (now + pause, record.pid)
        self._tell(record, f"{record.name} (pid {record.pid}) exited{status}; starting it "
                           f"again in {pause:g} s (restart {len(recent) + 1} of at most "
                           f"{self.policy.max_restarts} within {self.policy.window / 60:g} min)")

    def _restart(self, record: ServiceRecord, now: float) -> None:
        del self.due[record.name]
        if record.live_members():  # what the exited leader left: its task processes, ...
            self._tell(record, f"stopping what {record.name} (pid {record.pid}) left: "
                               f"{len(record.live_members())} process(es)")
            stop_groups([record], grace=5)
        try:
            child, new = respawn(self.state_dir, record.name, record.restarts + 1)
        except (OSError, ValueError, KeyError) as exc:
            write_record(self.state_dir, replace(record, gave_up=True))
            self._tell(record, f"giving up on {record.name}: it could not be started again "
                               f"({type(exc).__name__}: {exc}); its log is {record.log}")
            return
        self.children[record.name] = child
        self._recent(record.name, now).append(now)
        self._tell(new, f"started {record.name} again as pid {new.pid} (same command line "
                        f"and ports; restart {new.restarts} since the start)")

    def _give_up(self, record: ServiceRecord, status: str) -> None:
        write_record(self.state_dir, replace(record, gave_up=True))
        self._tell(record, f"giving up on {record.name} (pid {record.pid} exited{status}): it "
                           f"exited {self.policy.max_restarts + 1} times within "
                           f"{self.policy.window / 60:g} min; its log is {record.log}. Stop "
                           "everything and start again once its cause is fixed")

    def _tell(self, record: ServiceRecord, line: str) -> None:
        """The line in the supervisor's log, and in the part's own."""
        self.say(line)
        try:
            with open(record.log, "a") as log:
                log.write(f"{_stamp()} [supervisor] {line}\n")
        except OSError:
            pass


def start_supervisor(state_dir: Path, policy: RestartPolicy = DEFAULT_POLICY) -> ServiceRecord:
    """The supervisor, detached (its own session: it outlives the command that starts it),
    recorded in ``supervisor.pid``, its log ``supervisor.log``."""
    env = {k: os.environ[k] for k in OWN_ENV if k in os.environ}
    argv = [sys.executable, "-m", "airflow_partitions.demo.services.supervisor",
            str(state_dir), *policy.argv()]
    _, record = spawn_recorded(state_dir, SUPERVISOR, argv, env, state_dir)
    return record


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m airflow_partitions.demo.services.supervisor",
        description="Start again every part recorded in STATE_DIR whose process exits, on the "
                    "same command line and ports, with a pause doubling per restart; give up "
                    "on a part after --max-restarts restarts within --window seconds. "
                    "Started by 'make airflow' and 'make airflow-cluster', stopped first by "
                    "'make airflow-stop'.")
    p.add_argument("state_dir", type=Path, help="where the parts' pid files and specs are")
    p.add_argument("--max-restarts", type=int, default=RestartPolicy.max_restarts,
                   help="restarts of one part within the window before giving up (5)")
    p.add_argument("--window", type=float, default=RestartPolicy.window,
                   help="seconds the restarts are counted over (600)")
    p.add_argument("--first-pause", type=float, default=RestartPolicy.first_pause,
                   help="seconds before a first restart, doubled per recent restart (1)")
    p.add_argument("--max-pause", type=float, default=RestartPolicy.max_pause,
                   help="longest pause before a restart, seconds (30)")
    p.add_argument("--poll", type=float, default=POLL, help="seconds between looks (1)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    supervisor = Supervisor(args.state_dir.resolve(), RestartPolicy(
        args.max_restarts, args.window, args.first_pause, args.max_pause))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: supervisor.stop())
    supervisor.run(args.poll)
    return 0


if __name__ == "__main__":
    sys.exit(main())
