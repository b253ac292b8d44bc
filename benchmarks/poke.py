"""One idle sensor poke and one idle trigger poll, warm, in one process.

The catalog is a real SQLite file with ten years of hourly partitions of ``events`` in which one
day lacks one hour; the sensor (``PartitionCoverageSensor``, its connection defined by a JSON
``AIRFLOW_CONN_BENCH_CATALOG``, or, second case, ``partitions_default`` absent and the store
from ``$AIRFLOW_PARTITIONS_STORE``) waits on that day, so every poke after the first is idle: the
answer does not change. Logging is configured as in a task process (the SDK's JSON structlog
output, here to ``/dev/null``); Airflow's metrics are off (the default).

Baselines, measured in the same run, interleaved with the pokes:

- Luigi 3.8.1's ``LocalTarget(path).exists()`` of the absent hour's directory, in a child
  process run by Luigi's own environment (``--luigi-python``, default
  ``benchmarks/.peers/luigi-venv/bin/python``, made by ``make peer-venvs``; without it the row
  is left out and the ratios use ``os.path.exists``), one round per round of ours;
- ``os.path.exists`` of that one directory, and ``glob.glob`` of the day's hourly directories
  (``dt=<day>-0*``: one listing of the 23 that exist), in this process;
- ``os.path.exists`` on the day's 24 hourly directories (23 exist): what Luigi's ``complete()``
  on 24 ``LocalTarget`` s does;
- the bare change stamp, ``catalog.kv.change_stamp()`` (a ``pread`` of SQLite's WAL-index
  header; ``PRAGMA data_version`` while a commit rewrites it): the one store round trip an idle
  poke cannot avoid (the floor), and the bare generation read,
  ``catalog.fact_state(fact).generation``, which an idle poke made before the stamp;
- Airflow's ``FileSensor.poke`` (``airflow.providers.standard``, connection ``fs_default`` from
  a JSON ``AIRFLOW_CONN_FS_DEFAULT``) on the absent hour, beside the hook call the docs show
  (``PartitionCatalogHook(conn).get_conn()`` then ``catalog.cover(...)``) and the cheaper one
  they recommend (``cached_conn()`` instead of ``get_conn()``).

Each number is the median over ``--rounds`` rounds of the mean of ``--pokes`` consecutive calls
(wall and CPU time; the CPU column counts every thread of the process, so the trigger's poller
and reader threads too). The trigger runs its real ``run()`` loop with ``poke_interval=0`` in an
event loop; its polls are the reads of the shared poller (``POLLER.reads``; before it, the calls
of ``CoverageWatch.cover_if_unchanged`` or ``check``). ``--before SRC`` also measures the
package found in ``SRC`` (e.g. the previous commit, ``git archive HEAD airflow_partitions | tar
-x -C SRC``) in a child process on the same catalog, rounds interleaved, so the table shows
before and after from one run.

    python benchmarks/poke.py [--years 10] [--rounds 7] [--pokes 2000] [--before SRC]
                              [--luigi-python PATH] [--profile]
                              [--write docs/benchmarks-poke.md]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import glob
import io
import json
import os
import platform
import pstats
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

FACT = "events"
#: The day the sensor waits on, and its missing hour.
DAY, NEXT_DAY, GAP_HOUR = "2019-06-10", "2019-06-11", 5
REPO = Path(__file__).resolve().parent.parent
#: The connection the per-call hook cases name (a JSON ``AIRFLOW_CONN_BENCH_CATALOG``).
CONN_ID = "bench_catalog"
LUIGI_PYTHON = REPO / "benchmarks/.peers/luigi-venv/bin/python"
#: The idle checks: ours, and the file-system checks of the peers.
CASES = {
    "luigi": "Luigi `LocalTarget(hour).exists()` (Luigi's environment, a child process)",
    "exists": "`os.path.exists` of the hour's directory",
    "glob": "`glob.glob` of the day's hourly directories (`dt=<day>-0*`)",
    "exists24": "`os.path.exists` on 24 hourly directories (Luigi's 24-target `complete()`)",
    "stamp": "bare change stamp, `kv.change_stamp()` (the WAL-index header: the floor)",
    "generation": "bare generation read, `fact_state(fact).generation`",
    "to_thread": "the stamp through `asyncio.to_thread` (Airflow's rule for blocking calls)",
    "poke": "sensor poke, connection from `AIRFLOW_CONN_BENCH_CATALOG` (JSON)",
    "poke_env": "sensor poke, `partitions_default` absent (`$AIRFLOW_PARTITIONS_STORE`)",
    "trigger": "trigger poll (`run()` loop, `poke_interval=0`)",
}
#: Per-call checks as a DAG author writes them: Airflow's file sensor and our hook.
HOOK_CASES = {
    "file_sensor": "Airflow `FileSensor.poke` on the hour (`fs_default` from the environment)",
    "hook_docs": "`PartitionCatalogHook(conn).get_conn()`, then `catalog.cover(fact, start, end)` "
                 "(the data interval's datetimes)",
    "hook_cached": "`PartitionCatalogHook(conn).cached_conn()`, then `catalog.cover(...)`",
}
#: What the child in Luigi's environment runs: one line of JSON per round asked on stdin.
LUIGI_CHILD = """\
import gc, json, sys, time
import luigi
target = luigi.LocalTarget(sys.argv[1])
n = int(sys.argv[2])
assert not target.exists()
print(json.dumps({"luigi": luigi.__version__}), flush=True)
for _ in sys.stdin:
    gc.collect(); gc.disable()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        target.exists()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    gc.enable()
    print(json.dumps({"wall": wall / n, "cpu": cpu / n, "round_trips": 0.0}), flush=True)
"""


def build(path: Path, data: Path, years: int) -> None:
    """The catalog (``years`` of hourly partitions up to the end of 2019, minus one hour of
    ``DAY``) and the day's 24 hourly directories minus the same hour."""
    from airflow_partitions.catalog import Catalog
    from airflow_partitions.periods import UpdatePeriod

    hourly = UpdatePeriod.HOURLY
    first = hourly.parse_ordinal(f"{2020 - years}-01-01-00")
    last = hourly.parse_ordinal("2020-01-01-00")
    gap = hourly.parse_ordinal(f"{DAY}-{GAP_HOUR:02d}")
    with Catalog(f"sqlite:///{path}", data_root=str(data)) as catalog:
        catalog.create_fact(FACT)
        catalog.create_storage(FACT, "events_raw", ["HOURLY"])
        values = [{"dt": hourly.format_ordinal(o)} for o in range(first, last) if o != gap]
        for i in range(0, len(values), 50_000):
            catalog.register("events_raw", "HOURLY", values[i:i + 50_000])
    for hour in range(24):
        if hour != GAP_HOUR:
            (data / "hours" / f"dt={DAY}-{hour:02d}").mkdir(parents=True, exist_ok=True)


def quiet_task_logging() -> None:
    """Structlog as the SDK configures it in a task process (JSON lines), to /dev/null."""
    from airflow.sdk.log import configure_logging

    configure_logging(json_output=True, output=open(os.devnull, "wb"),
                      sending_to_supervisor=True)
    sys.excepthook = sys.__excepthook__  # the SDK's hook would log a crash to /dev/null too


def timed(fn: Callable[[], Any], n: int) -> tuple[float, float]:
    """(wall, CPU) seconds per call, the mean of ``n`` consecutive calls, GC off."""
    gc.collect()
    gc.disable()
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            fn()
        return (time.perf_counter() - w0) / n, (time.process_time() - c0) / n
    finally:
        gc.enable()


class Bench:
    """The objects one process measures: catalog, sensors, trigger, the 24 paths."""

    def __init__(self, db: Path, data: Path) -> None:
        try:
            from airflow_partitions import watch as coverage_watch
        except ImportError:  # a --before tree where the watch lived in coverage/
            from airflow_partitions import coverage as coverage_watch
        import pendulum
        from airflow.providers.standard.sensors.filesystem import FileSensor

        from airflow_partitions.hooks.catalog import PartitionCatalogHook
        from airflow_partitions.sensors.coverage import PartitionCoverageSensor

        self.hook_class = PartitionCatalogHook
        self.url = f"sqlite:///{db}"
        os.environ["AIRFLOW_PARTITIONS_STORE"] = self.url
        os.environ["AIRFLOW_PARTITIONS_DATA_ROOT"] = str(data)
        conn = {"conn_type": "partition_catalog", "extra": {"sqlite_path": str(db)}}
        os.environ["AIRFLOW_CONN_BENCH_CATALOG"] = json.dumps(conn)
        os.environ["AIRFLOW_CONN_FS_DEFAULT"] = json.dumps(
            {"conn_type": "fs", "extra": {"path": str(data / "hours")}})
        os.environ.pop("AIRFLOW_CONN_PARTITIONS_DEFAULT", None)
        quiet_task_logging()
        start, end = f"{DAY}T00:00:00+00:00", f"{NEXT_DAY}T00:00:00+00:00"
        self.window = (start, end)
        # what a task's code has at hand: its data interval, as pendulum datetimes
        self.interval = (pendulum.parse(start), pendulum.parse(end))

        def sensor(conn_id: str) -> Any:
            return PartitionCoverageSensor(task_id=f"wait_{conn_id}", fact=FACT, start=start,
                                           end=end, catalog_conn_id=conn_id, poke_interval=0)

        self.sensor = sensor("bench_catalog")
        self.sensor_env = sensor(PartitionCatalogHook.default_conn_name)
        self.catalog = PartitionCatalogHook(store_url=self.url).get_conn()
        # the catalog object each case reads through (its store counts the round trips)
        self.conn_catalog = PartitionCatalogHook("bench_catalog").get_conn()
        self.env_catalog = PartitionCatalogHook().get_conn()
        self.paths = [str(data / "hours" / f"dt={DAY}-{h:02d}") for h in range(24)]
        self.hour = self.paths[GAP_HOUR]
        self.pattern = str(data / "hours" / f"dt={DAY}-0*")
        self.file_sensor = FileSensor(task_id="wait_file", filepath=Path(self.hour).name,
                                      fs_conn_id="fs_default", poke_interval=0)
        assert self.file_sensor.poke({}) is False  # resolves fs_default once (a cached path)
        kv = self.catalog.kv
        self.stamp: Callable[[], Any] = getattr(kv, "change_stamp", self.generation)
        self._polls = 0
        try:  # this code: the poller counts the idle reads it makes for triggers
            from airflow_partitions.triggers.poller import POLLER

            self.polls: Callable[[], int] = lambda: POLLER.reads
        except ImportError:  # before it: what one trigger poll calls once
            watch_class = coverage_watch.CoverageWatch
            name = "cover_if_unchanged" if hasattr(watch_class, "cover_if_unchanged") else "check"
            original = getattr(watch_class, name)

            def counting(watch: Any, catalog: Any) -> Any:
                self._polls += 1
                return original(watch, catalog)

            setattr(watch_class, name, counting)
            self.polls = lambda: self._polls
        for task in (self.sensor, self.sensor_env):  # cold: the first poke computes the cover
            assert task.poke({}) is False, "the day must stay uncoverable"

    def generation(self) -> int:
        return self.catalog.fact_state(FACT).generation

    def exists24(self) -> int:
        return sum(os.path.exists(p) for p in self.paths)

    def exists(self) -> bool:
        return os.path.exists(self.hour)

    def glob(self) -> list[str]:
        return glob.glob(self.pattern)

    def hook_docs(self) -> Any:
        """The call docs/airflow.md showed: the connection resolved at every call."""
        return self.hook_class(CONN_ID).get_conn().cover(FACT, *self.interval)

    def hook_cached(self) -> Any:
        """The same with the connection resolved once per process."""
        return self.hook_class(CONN_ID).cached_conn().cover(FACT, *self.interval)

    @staticmethod
    def round_trips(catalog: Any, fn: Callable[[], Any], n: int = 50) -> float:
        before = catalog.stats.round_trips
        for _ in range(n):
            fn()
        return float(catalog.stats.round_trips - before) / n

    def measure(self, pokes: int) -> dict[str, dict[str, float]]:
        """One round: every case once, with round trips per call."""
        assert self.exists24() == 23 and not self.exists() and len(self.glob()) == 9
        assert not self.hook_docs().coverable and not self.hook_cached().coverable
        out: dict[str, dict[str, float]] = {}
        slow = max(50, pokes // 4)  # the per-call checks take about a tenth of a millisecond
        calls: dict[str, tuple[Any, Callable[[], Any], int]] = {
            "exists": (None, self.exists, pokes), "glob": (None, self.glob, pokes),
            "exists24": (None, self.exists24, pokes), "stamp": (self.catalog, self.stamp, pokes),
            "generation": (self.catalog, self.generation, pokes),
            "poke": (self.conn_catalog, lambda: self.sensor.poke({}), pokes),
            "poke_env": (self.env_catalog, lambda: self.sensor_env.poke({}), pokes),
            "file_sensor": (None, lambda: self.file_sensor.poke({}), slow),
            "hook_docs": (self.conn_catalog, self.hook_docs, slow),
            "hook_cached": (self.conn_catalog, self.hook_cached, slow),
        }
        for case, (catalog, fn, n) in calls.items():
            wall, cpu = timed(fn, n)
            trips = 0.0 if catalog is None else self.round_trips(catalog, fn)
            out[case] = {"wall": wall, "cpu": cpu, "round_trips": trips}
        out["to_thread"] = asyncio.run(self.threaded_reads(pokes))
        out["trigger"] = asyncio.run(self.trigger_round(pokes))
        return out

    async def threaded_reads(self, n: int) -> dict[str, float]:
        """``n`` change stamps, each awaited through ``asyncio.to_thread``."""
        gc.collect()
        gc.disable()
        try:
            t0 = self.catalog.stats.round_trips
            w0, c0 = time.perf_counter(), time.process_time()
            for _ in range(n):
                await asyncio.to_thread(self.stamp)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        finally:
            gc.enable()
        return {"wall": wall / n, "cpu": cpu / n,
                "round_trips": (self.catalog.stats.round_trips - t0) / n}

    async def trigger_round(self, polls: int) -> dict[str, float]:
        """``polls`` idle polls of the real trigger loop (after a warm-up poll)."""
        from airflow_partitions.cover import CoverRequest
        from airflow_partitions.triggers.coverage import PartitionCoverageTrigger

        request = CoverRequest.of(FACT, *self.window).to_json()
        trigger = PartitionCoverageTrigger(request=request, catalog_conn_id="bench_catalog",
                                           poke_interval=0)
        run = trigger.run()
        waiting = asyncio.ensure_future(run.__anext__())
        warm = self.polls() + 3  # the first poll of a new trigger computes the cover
        while self.polls() < warm and not waiting.done():
            await asyncio.sleep(0.005)
        gc.collect()
        gc.disable()
        try:
            p0, t0 = self.polls(), self.conn_catalog.stats.round_trips
            w0, c0 = time.perf_counter(), time.process_time()
            while self.polls() - p0 < polls and not waiting.done():
                await asyncio.sleep(0.005)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            n, trips = self.polls() - p0, self.conn_catalog.stats.round_trips - t0
        finally:
            gc.enable()
        assert not waiting.done(), waiting.result()
        waiting.cancel()
        try:
            await waiting
        except asyncio.CancelledError:
            pass
        await run.aclose()
        return {"wall": wall / n, "cpu": cpu / n, "round_trips": trips / n}


def start_luigi(python: Path, hour: str, calls: int) -> subprocess.Popen[str] | None:
    """The child timing ``LocalTarget(hour).exists()`` in Luigi's environment (None, and a
    note, when that environment is absent)."""
    if not python.exists():
        print(f"no {python} (make peer-venvs): the Luigi row is left out", file=sys.stderr)
        return None
    child = subprocess.Popen([str(python), "-c", LUIGI_CHILD, hour, str(calls)], text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None
    version = json.loads(child.stdout.readline())["luigi"]
    print(f"Luigi {version} in {python}", file=sys.stderr)
    return child


def ask(process: subprocess.Popen[str]) -> Any:
    """One round of a child process: a line out, a line of JSON back."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("go\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def child(args: argparse.Namespace) -> int:
    """``--child``: measure one round per line read from stdin, print it as JSON."""
    import airflow_partitions

    bench = Bench(args.catalog, args.catalog.parent / "data")
    print(json.dumps({"package": airflow_partitions.__file__}), flush=True)
    for _ in sys.stdin:
        print(json.dumps(bench.measure(args.pokes)), flush=True)
    return 0


def profile(bench: Bench, pokes: int) -> str:
    """cProfile of ``pokes`` idle pokes: the top functions by cumulative time."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(pokes):
        bench.sensor.poke({})
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(25)
    return text.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--years", type=int, default=10, help="years of hourly history")
    parser.add_argument("--rounds", type=int, default=7, help="rounds; medians are reported")
    parser.add_argument("--pokes", type=int, default=2000, help="calls per case and round")
    parser.add_argument("--before", type=Path, help="also measure the package in this folder")
    parser.add_argument("--before-label", default="the previous code",
                        help="what --before holds, for the text (e.g. a commit)")
    parser.add_argument("--luigi-python", type=Path, default=LUIGI_PYTHON,
                        help="Python of Luigi's environment (make peer-venvs)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the poke")
    parser.add_argument("--catalog", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--write", type=Path, help="also write the markdown section here")
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    with tempfile.TemporaryDirectory(prefix="bench-poke-") as tmp:
        home = Path(tmp) / "airflow"
        home.mkdir()
        os.environ["AIRFLOW_HOME"] = str(home)
        os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        db, data = Path(tmp) / "partitions.db", Path(tmp) / "data"
        print(f"building {args.years} years of hourly partitions ...", file=sys.stderr)
        build(db, data, args.years)
        other = None
        if args.before:
            env = {**os.environ, "PYTHONPATH": str(args.before.resolve())}
            other = subprocess.Popen(
                [sys.executable, __file__, "--child", "--catalog", str(db),
                 "--pokes", str(args.pokes)], env=env, cwd=tmp, text=True,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert other.stdin is not None and other.stdout is not None
            package = json.loads(other.stdout.readline())["package"]
            assert package.startswith(str(args.before.resolve())), package
        bench = Bench(db, data)
        luigi = start_luigi(args.luigi_python, bench.hour, args.pokes)
        rounds: dict[str, list[dict[str, dict[str, float]]]] = {"after": [], "before": []}
        for i in range(args.rounds):
            print(f"round {i + 1}/{args.rounds} ...", file=sys.stderr, flush=True)
            if other is not None:
                rounds["before"].append(ask(other))
            baseline = {"luigi": ask(luigi)} if luigi is not None else {}
            rounds["after"].append({**bench.measure(args.pokes), **baseline})
            if rounds["before"]:
                rounds["before"][-1].update(baseline)  # one baseline for both columns
        for process in (other, luigi):
            if process is not None:
                assert process.stdin is not None
                process.stdin.close()
                process.wait(timeout=60)
        if args.profile:
            print(profile(bench, args.pokes))
    command = "python benchmarks/poke.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    text = render(command.strip(), args, rounds)
    print(text)
    if args.write:
        args.write.write_text(text)
        print(f"wrote {args.write}")
    return 0


NOTES = """\
What an idle poke does (`--profile`, a cProfile of the poke). It reads the store's change stamp
and this connection's own write counters. Equal to the last poke's, no row changed, so the
cover found then still holds; no generation read, no cover, no log line (the status line is
logged only when it changes). The stamp is one `pread` of 96 bytes: the WAL-index header in
SQLite's `-shm` file, which every commit of any connection or process rewrites; while it is
unchanged nothing was committed since. `PRAGMA data_version` (a read transaction: two `fcntl`
system calls on the `-shm` file and the statement's own work, the *before* columns' stamp) is
asked only while a commit is rewriting the header. So the bare stamp costs about Luigi's
`exists()` (one `stat`), and a poke under twice it. The rest is
the connection's fingerprint (three lookups in `os.environ`'s dict: a changed
`AIRFLOW_CONN_<ID>` is seen at the next poke), the reminder clock and the metrics switch.
An idle poke reads the fact's generation counter only when the stamp moved, and on HBase, which
has no stamp.

A trigger poll is the same stamp, read by the triggerer's shared poller thread
(`triggers/poller.py`): the event loop is woken only when the fact's generation moved, so an idle
poll is the stamp, a heap pop and push under one lock and two clock reads.

The per-call rows are what a DAG author's own code pays. `FileSensor.poke` logs a line and
globs one path (its connection is read once, at its first poke). The hook's `get_conn()` asks
Airflow for the connection at every call (the secrets backends, the config parser, the
connection URI), which is most of its cost; `cached_conn()`, the call docs/airflow.md shows,
resolves it once per process, and `catalog.cover` of an unchanged store is the stamp and the
answer found last time (`catalog/covers/verified.py`) plus parsing the range.
"""


def medians(rounds: list[dict[str, dict[str, float]]],
            cases: Iterable[str]) -> dict[str, dict[str, float]]:
    return {case: {key: statistics.median(r[case][key] for r in rounds)
                   for key in ("wall", "cpu", "round_trips")}
            for case in cases if all(case in r for r in rounds)}


def table(title: str, labels: dict[str, str], after: dict[str, dict[str, float]],
          before: dict[str, dict[str, float]] | None,
          baselines: list[tuple[str, str]]) -> list[str]:
    """Markdown rows: each case's round trips, wall and CPU, and its CPU over each baseline
    (``(case, heading)``) of the same run; with ``before``, that code's CPU and first ratio."""
    first, first_head = baselines[0]
    head = [title, "round trips"]
    if before is not None:
        head += ["before: CPU", f"before ÷ {first_head}"]
    head += ["wall", "CPU", *(f"÷ {name} (CPU)" for _, name in baselines)]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for case, label in labels.items():
        if case not in after:
            continue
        now = after[case]
        cells = [label, f"{now['round_trips']:.2g}"]
        if before is not None:
            old = before.get(case)
            cells += ([f"{old['cpu'] * 1e3:.4f} ms", f"{old['cpu'] / before[first]['cpu']:.2f}x"]
                      if old is not None else ["", ""])
        cells += [f"{now['wall'] * 1e3:.4f} ms", f"{now['cpu'] * 1e3:.4f} ms",
                  *(f"{now['cpu'] / after[base]['cpu']:.2f}x" for base, _ in baselines)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render(command: str, args: argparse.Namespace,
           rounds: dict[str, list[dict[str, dict[str, float]]]]) -> str:
    every = [*CASES, *HOOK_CASES]
    after = medians(rounds["after"], every)
    before = medians(rounds["before"], every) if rounds["before"] else None
    peer = ("luigi", "Luigi `exists()`") if "luigi" in after else ("exists", "`os.path.exists`")
    idle = table("idle check", CASES, after, before, [peer, ("stamp", "change stamp")])
    calls = table("per call", HOOK_CASES, after, before,
                  [("file_sensor", "`FileSensor.poke`"), peer])
    base, sensor = after[peer[0]]["cpu"], after["file_sensor"]["cpu"]
    goal = (f"Idle poke {after['poke']['cpu'] / base:.2f}x and idle poll "
            f"{after['trigger']['cpu'] / base:.2f}x {peer[1]} (goal: at most 2x); the docs' "
            f"hook call (`cached_conn()`) {after['hook_cached']['cpu'] / sensor:.2f}x "
            "`FileSensor.poke` (goal: below 1x).")
    load = os.getloadavg()[0]
    return (
        "## Idle poke (`benchmarks/poke.py`)\n\n"
        f"Command: `{command}`\n\n"
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {load:.1f} at the end. SQLite catalog, "
        f"{args.years} years of hourly partitions, the sensor waiting on {DAY} (hour "
        f"{GAP_HOUR:02d} missing: the file-system checks look for that hour's directory), "
        f"logging as in a task process, Airflow metrics off. Each number is the median of "
        f"{args.rounds} rounds of the mean of {args.pokes} consecutive calls "
        f"({max(50, args.pokes // 4)} for the per-call rows), every case in every round, "
        "CPU time of the whole process (`time.process_time`; Luigi's in its own process)"
        + (f"; before: {args.before_label}, in a child process, rounds interleaved"
           if before is not None else "")
        + ".\n\n" + goal + "\n\n"
        + "\n".join(idle) + "\n\n" + "\n".join(calls) + "\n\n"
        + NOTES
    )


if __name__ == "__main__":
    raise SystemExit(main())
