"""One idle sensor poke and one idle trigger poll, warm, in one process.

The catalog is a real SQLite file with ten years of hourly partitions of ``events`` in which one
day lacks one hour; the sensor (``PartitionCoverageSensor``, its connection defined by a JSON
``AIRFLOW_CONN_BENCH_CATALOG``, or, second case, ``partitions_default`` absent and the store
from ``$AIRFLOW_PARTITIONS_STORE``) waits on that day, so every poke after the first is idle: the
answer does not change. Logging is configured as in a task process (the SDK's JSON structlog
output, here to ``/dev/null``); Airflow's metrics are off (the default).

Baselines, measured in the same run, interleaved with the pokes:

- the bare generation read, ``catalog.fact_state(fact).generation``: the one store round trip
  an idle poke cannot avoid (the floor);
- ``os.path.exists`` on the day's 24 hourly directories (23 exist): what Luigi's ``complete()``
  on 24 ``LocalTarget`` s does.

Each number is the median over ``--rounds`` rounds of the mean of ``--pokes`` consecutive calls
(wall and CPU time; the CPU column counts every thread of the process, so the trigger's poller
and reader threads too). The trigger runs its real ``run()`` loop with ``poke_interval=0`` in an
event loop; its polls are the reads of the shared poller (``POLLER.reads``; before it, the calls
of ``CoverageWatch.cover_if_unchanged`` or ``check``). ``--before SRC`` also measures the
package found in ``SRC`` (e.g. the previous commit, ``git archive HEAD airflow_partitions | tar
-x -C SRC``) in a child process on the same catalog, rounds interleaved, so the table shows
before and after from one run.

    python benchmarks/poke.py [--years 10] [--rounds 7] [--pokes 2000] [--before SRC]
                              [--profile] [--write docs/benchmarks-poke.md]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

FACT = "events"
#: The day the sensor waits on, and its missing hour.
DAY, NEXT_DAY, GAP_HOUR = "2019-06-10", "2019-06-11", 5
CASES = {
    "generation": "bare generation read, `fact_state(fact).generation` (the floor)",
    "to_thread": "the same read through `asyncio.to_thread` (Airflow's rule for blocking calls)",
    "exists24": "`os.path.exists` on 24 hourly directories (Luigi's 24-target `complete()`)",
    "poke": "sensor poke, connection from `AIRFLOW_CONN_BENCH_CATALOG` (JSON)",
    "poke_env": "sensor poke, `partitions_default` absent (`$AIRFLOW_PARTITIONS_STORE`)",
    "trigger": "trigger poll (`run()` loop, `poke_interval=0`)",
}


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
        from airflow_partitions.hooks.catalog import PartitionCatalogHook
        from airflow_partitions.sensors.coverage import PartitionCoverageSensor

        self.url = f"sqlite:///{db}"
        os.environ["AIRFLOW_PARTITIONS_STORE"] = self.url
        os.environ["AIRFLOW_PARTITIONS_DATA_ROOT"] = str(data)
        conn = {"conn_type": "partition_catalog", "extra": {"sqlite_path": str(db)}}
        os.environ["AIRFLOW_CONN_BENCH_CATALOG"] = json.dumps(conn)
        os.environ.pop("AIRFLOW_CONN_PARTITIONS_DEFAULT", None)
        quiet_task_logging()
        start, end = f"{DAY}T00:00:00+00:00", f"{NEXT_DAY}T00:00:00+00:00"
        self.window = (start, end)

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

    @staticmethod
    def round_trips(catalog: Any, fn: Callable[[], Any], n: int = 50) -> float:
        before = catalog.stats.round_trips
        for _ in range(n):
            fn()
        return float(catalog.stats.round_trips - before) / n

    def measure(self, pokes: int) -> dict[str, dict[str, float]]:
        """One round: every case once, with round trips per call."""
        assert self.exists24() == 23
        out: dict[str, dict[str, float]] = {}
        calls: dict[str, tuple[Any, Callable[[], Any]]] = {
            "generation": (self.catalog, self.generation), "exists24": (None, self.exists24),
            "poke": (self.conn_catalog, lambda: self.sensor.poke({})),
            "poke_env": (self.env_catalog, lambda: self.sensor_env.poke({})),
        }
        for case, (catalog, fn) in calls.items():
            wall, cpu = timed(fn, pokes)
            trips = 0.0 if catalog is None else self.round_trips(catalog, fn)
            out[case] = {"wall": wall, "cpu": cpu, "round_trips": trips}
        out["to_thread"] = asyncio.run(self.threaded_reads(pokes))
        out["trigger"] = asyncio.run(self.trigger_round(pokes))
        return out

    async def threaded_reads(self, n: int) -> dict[str, float]:
        """``n`` generation reads, each awaited through ``asyncio.to_thread``."""
        gc.collect()
        gc.disable()
        try:
            t0 = self.catalog.stats.round_trips
            w0, c0 = time.perf_counter(), time.process_time()
            for _ in range(n):
                await asyncio.to_thread(self.generation)
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
        rounds: dict[str, list[dict[str, dict[str, float]]]] = {"after": [], "before": []}
        for i in range(args.rounds):
            print(f"round {i + 1}/{args.rounds} ...", file=sys.stderr, flush=True)
            if other is not None:
                assert other.stdin is not None and other.stdout is not None
                other.stdin.write("go\n")
                other.stdin.flush()
                rounds["before"].append(json.loads(other.stdout.readline()))
            rounds["after"].append(bench.measure(args.pokes))
        if other is not None:
            assert other.stdin is not None
            other.stdin.close()
            other.wait(timeout=60)
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
Where the time goes (`--profile`, a cProfile of the poke; shares measured when this benchmark
was written). In the code measured as *before*, an idle poke spent about half its time asking
Airflow for the connection again (`BaseHook.get_connection`: the secrets backends, the config
parser, the connection URI). About a sixth went to reading four `[metrics]` settings to find
metrics off, and about a quarter to formatting and logging the status line. The store read was
under a tenth. Now the connection is resolved once per process, the settings are read once, and
the line is formatted and logged only when it changes. What is left is the store read (three
quarters of the poke: one `SELECT`, without `BEGIN` and `COMMIT` since a get is one statement)
and the connection's fingerprint (three `os.environ` lookups).

A trigger poll had what a sensor poke does not have: a hand-off of the blocking read to a
thread and back to the event loop. `asyncio.to_thread` alone costs about three times the read
here (its row); the reader threads of the previous version (a queue and `call_soon_threadsafe`)
still cost about twice the read. Now a trigger registers its generation read with one shared
poller per process (`triggers/poller.py`) and awaits a change: the poller's thread runs the read
when it is due and wakes the trigger's event loop only when the generation moved or the read
failed. An idle poll is the read, a heap pop and push under one lock and two clock reads, with
no hand-off and no event-loop wake-up, so it costs about the bare read (its row). A moved
generation computes the cover in `to_thread`, as before.
"""


def medians(rounds: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    return {case: {key: statistics.median(r[case][key] for r in rounds)
                   for key in ("wall", "cpu", "round_trips")}
            for case in CASES}


def render(command: str, args: argparse.Namespace,
           rounds: dict[str, list[dict[str, dict[str, float]]]]) -> str:
    after = medians(rounds["after"])
    before = medians(rounds["before"]) if rounds["before"] else None
    base = after["exists24"]["cpu"]
    head = ["| check | round trips | wall | CPU | ÷ 24 × exists (CPU) | ÷ generation read (CPU) |"]
    if before is not None:
        head = ["| check | round trips | before: wall | before: CPU | before ÷ 24 × exists | "
                "wall | CPU | ÷ 24 × exists (CPU) | ÷ generation read (CPU) |"]
    lines = [*head, "| --- |" + " ---: |" * (head[0].count("|") - 2)]
    for case, label in CASES.items():
        now = after[case]
        cells = [label, f"{now['round_trips']:.2g}"]
        if before is not None:
            old = before[case]
            cells += [f"{old['wall'] * 1e3:.3f} ms", f"{old['cpu'] * 1e3:.3f} ms",
                      f"{old['cpu'] / before['exists24']['cpu']:.2f}x"]
        cells += [f"{now['wall'] * 1e3:.3f} ms", f"{now['cpu'] * 1e3:.3f} ms",
                  f"{now['cpu'] / base:.2f}x", f"{now['cpu'] / after['generation']['cpu']:.2f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    load = os.getloadavg()[0]
    return (
        "## Idle poke (`benchmarks/poke.py`)\n\n"
        f"Command: `{command}`\n\n"
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {load:.1f} at the end. SQLite catalog, "
        f"{args.years} years of hourly partitions, the sensor waiting on {DAY} (hour "
        f"{GAP_HOUR:02d} missing), logging as in a task process, Airflow metrics off. Each "
        f"number is the median of {args.rounds} rounds of the mean of {args.pokes} consecutive "
        "calls, every case in every round"
        + (f" (before: {args.before_label}, in a child process, rounds interleaved)"
           if before is not None else "")
        + ". Goal: an idle poke and poll at most 0.15 ms, below the 24-target "
        "`exists` check.\n\n"
        + "\n".join(lines) + "\n\n"
        + NOTES
    )


if __name__ == "__main__":
    raise SystemExit(main())
