"""Coverage assets under the real services: from a completing write to the consumer's run.

Starts the services as ``make airflow`` does (api-server, scheduler, dag-processor, triggerer,
and the assets follower, LocalExecutor on sqlite, every setting at its default: the follower's
``--poll 0.5 --refresh 10``) in a temporary ``AIRFLOW_HOME``, on a SQLite catalog with three
facts, each a ``(dt, region)`` HOURLY storage declaring ``region=eu,us``. Per repetition, one
new day each (48 partitions):

* **(a) in-task**: ``bt_produce`` (``RegisterPartitionsOperator``) writes the day; from the
  task instance's ``end_date`` to the consumer run's ``queued_at`` and ``start_date``
  (``bt_daily``, scheduled on ``CoverageAsset("bt", "DAILY")``);
* **(b) CLI**: ``airflow-partitions partition add --file`` writes the day; from the command's
  exit to the consumer run's ``queued_at`` and ``start_date`` (``bc_daily``);
* **(c) the deferrable sensor**: ``bs_wait`` (``PartitionCoverageSensor(deferrable=True)``,
  default ``trigger_poll_interval``) waits for the day, deferred, with one hour missing; the
  Python API writes it; from that write's return to the sensor task instance's ``end_date``
  (the trigger fired and the task resumed on a worker).

Then the follower's idle cost, in process: ``Follower.poll_once`` with no change, with 1 and 10
followed facts (the REST API stubbed), store round trips per poll (``catalog.stats()``) and
wall time per poll.

    python benchmarks/coverage_assets.py [--reps 5] [--write docs/benchmarks-coverage_assets.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import CoverageAssetSpec, EmissionMarkers
from airflow_partitions.demo.services.environment import VENV_BIN, airflow_environment
from airflow_partitions.demo.services.ports import choose_ports
from airflow_partitions.demo.services.runner import AirflowServices

FACTS = ("bt", "bc", "bs")
DAGS = '''
import pendulum
from airflow.sdk import DAG, PartitionedAssetTimetable, task

from airflow_partitions.assets import CoverageAsset
from airflow_partitions.operators.partitions import RegisterPartitionsOperator
from airflow_partitions.sensors.coverage import PartitionCoverageSensor

START = pendulum.datetime(2024, 1, 1, tz="UTC")
DAY = "{{ dag_run.conf['day'] }}"

for fact in ("bt", "bc"):
    with DAG(f"{fact}_daily", start_date=START, catchup=False,
             schedule=PartitionedAssetTimetable(assets=CoverageAsset(fact, "DAILY"))):
        @task
        def record(dag_run=None):
            print("coverage run", dag_run.partition_key)

        record()

with DAG("bt_produce", schedule=None, start_date=START):
    RegisterPartitionsOperator(task_id="register", storage="bt_raw", period="HOURLY",
                               values={"dt": [DAY + f"-{h:02d}" for h in range(24)],
                                       "region": ["eu", "us"]})

with DAG("bs_wait", schedule=None, start_date=START):
    PartitionCoverageSensor(task_id="wait", fact="bs", deferrable=True, timeout=600,
                            start=DAY + "T00:00:00+00:00",
                            end="{{ macros.ds_add(dag_run.conf['day'], 1) }}T00:00:00+00:00")
'''


def instant(text: str | None) -> float:
    assert text, "no time"
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def poll(what: str, check: Callable[[], Any], timeout: float = 300, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got is not None:
            return got
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(every)


def hours(day: str, skip: int | None = None) -> list[dict[str, str]]:
    return [{"dt": f"{day}-{h:02d}", "region": r} for h in range(24) for r in ("eu", "us")
            if (h, r) != (skip, "eu")]


class Bench:
    def __init__(self, root: Path) -> None:
        self.home = root / "airflow"
        dags = self.home / "dags"
        dags.mkdir(parents=True)
        (dags / "bench_coverage.py").write_text(DAGS)
        store = f"sqlite:///{root / 'catalog.db'}"
        self.catalog = Catalog(store, data_root=str(root / "data"))
        for fact in FACTS:
            self.catalog.create_fact(fact)
            self.catalog.create_storage(fact, f"{fact}_raw", ["HOURLY"],
                                        columns=["dt", "region"], dimensions=["region=eu,us"])
        base = {**os.environ, "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False"}
        env = airflow_environment(self.home, dags, store, root / "data", base=base)
        self.run("airflow", "db", "migrate", env=env)
        self.services = AirflowServices(self.home, env, choose_ports())
        self.api = self.services.client()

    def run(self, *argv: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run([str(VENV_BIN / argv[0]), *argv[1:]],
                              env=env or self.services.env, cwd=self.home, capture_output=True,
                              text=True, timeout=600, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{argv}: {(done.stdout + done.stderr)[-3000:]}")
        return done.stdout

    def start(self) -> None:
        self.services.start()
        self.services.wait_healthy(timeout=300)
        self.services.wait_for_dags(["bt_daily", "bc_daily", "bt_produce", "bs_wait"])
        markers = EmissionMarkers(self.catalog.rows.kv)
        wanted = {CoverageAssetSpec.of(f, "DAILY").uri for f in ("bt", "bc")}
        poll("the follower following the assets",
             lambda: wanted <= {u for u, _ in markers.assets()} or None, timeout=120)

    def consumer_run(self, dag_id: str, day: str) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            doc: Any = self.api.get(f"dags/{dag_id}/dagRuns")
            for run in doc["dag_runs"]:
                if run.get("partition_key") == f"{day}T00:00:00" and run.get("start_date"):
                    return dict(run)
            return None
        run: dict[str, Any] = poll(f"{dag_id} run of {day}", check)
        return run

    def ti(self, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
        doc: Any = self.api.get(f"dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}")
        return dict(doc)

    def succeeded(self, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            ti = self.ti(dag_id, run_id, task_id)
            if ti.get("state") in {"failed", "upstream_failed"}:
                raise RuntimeError(f"{dag_id}.{task_id} failed")
            return ti if ti.get("state") == "success" else None
        done: dict[str, Any] = poll(f"{dag_id}.{task_id}", check)
        return done

    def trigger(self, dag_id: str, day: str) -> str:
        run_id = f"bench__{dag_id}__{day}"
        self.run("airflow", "dags", "trigger", dag_id, "--run-id", run_id, "-c",
                 json.dumps({"day": day}))
        return run_id

    def in_task(self, day: str) -> tuple[float, float]:
        run_id = self.trigger("bt_produce", day)
        ti = self.succeeded("bt_produce", run_id, "register")
        run = self.consumer_run("bt_daily", day)
        end = instant(ti["end_date"])
        return instant(run["queued_at"]) - end, instant(run["start_date"]) - end

    def cli(self, day: str, root: Path) -> tuple[float, float]:
        lines = root / f"{day}.txt"
        lines.write_text("".join(f"dt={p['dt']} region={p['region']}\n" for p in hours(day)))
        self.run("airflow-partitions", "partition", "add", "bc_raw", "--period", "HOURLY",
                 "--file", str(lines))
        exited = time.time()
        run = self.consumer_run("bc_daily", day)
        return instant(run["queued_at"]) - exited, instant(run["start_date"]) - exited

    def sensor(self, day: str) -> float:
        self.catalog.register("bs_raw", "HOURLY", hours(day, skip=5))
        run_id = self.trigger("bs_wait", day)
        poll("bs_wait deferred", lambda: self.ti("bs_wait", run_id, "wait").get("state")
             == "deferred" or None)
        time.sleep(2)  # a few idle polls of the trigger first
        self.catalog.register("bs_raw", "HOURLY", {"dt": f"{day}-05", "region": "eu"})
        written = time.time()
        ti = self.succeeded("bs_wait", run_id, "wait")
        return instant(ti["end_date"]) - written


class StubApi:
    """The REST API the follower lists assets from, without a server."""

    def __init__(self, specs: dict[CoverageAssetSpec, int]) -> None:
        self.specs = specs

    def coverage_assets(self) -> dict[CoverageAssetSpec, int]:
        return self.specs

    def post(self, asset_id: int, emission: object) -> None:
        del asset_id, emission


def idle_cost(root: Path, facts: int, polls: int = 200) -> tuple[float, float]:
    """Round trips and microseconds per idle ``poll_once`` with ``facts`` followed facts."""
    from airflow_partitions.assets.follower import Follower

    catalog = Catalog(f"sqlite:///{root / f'idle{facts}.db'}", data_root=str(root / "d"))
    specs = {}
    for n in range(facts):
        catalog.create_fact(f"f{n}")
        catalog.create_storage(f"f{n}", f"f{n}_raw", ["HOURLY"], columns=["dt", "region"],
                               dimensions=["region=eu,us"])
        catalog.register(f"f{n}_raw", "HOURLY", hours("2024-01-01"))
        specs[CoverageAssetSpec.of(f"f{n}", "DAILY")] = n + 1
    follower = Follower(catalog, StubApi(specs), refresh=1e9)  # type: ignore[arg-type]
    follower.poll_once()
    follower.poll_once()
    before = catalog.stats.round_trips
    began = time.perf_counter()
    for _ in range(polls):
        follower.poll_once()
    took = time.perf_counter() - began
    trips = (catalog.stats.round_trips - before) / polls
    catalog.close()
    return trips, took / polls * 1e6


def median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--write", type=Path, help="also write the markdown section here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_cov_") as tmp:
        root = Path(tmp)
        idle = {n: idle_cost(root, n) for n in (1, 10)}
        bench = Bench(root)
        results: dict[str, list[tuple[float, ...]]] = {"a": [], "b": [], "c": []}
        try:
            bench.start()
            for rep in range(args.reps):
                day = f"2024-02-{rep + 10:02d}"
                results["a"].append(bench.in_task(day))
                results["b"].append(bench.cli(day, root))
                results["c"].append((bench.sensor(day),))
                print(f"rep {rep + 1}: " + ", ".join(
                    f"{k} " + "/".join(f"{v:.2f}" for v in r[-1]) for k, r in results.items()),
                    flush=True)
            follower_log = (bench.services.state_dir / "assets-follower.log").read_text()
        finally:
            bench.services.stop()
            bench.catalog.close()
    by_follower = {f: sum(1 for line in follower_log.splitlines()
                          if "announced" in line and f"{f} daily coverage" in line)
                   for f in ("bt", "bc")}
    load = os.getloadavg()[0]
    command = "python benchmarks/coverage_assets.py " + shlex.join(
        a for a in sys.argv[1:])
    raw = {k: [[round(x, 2) for x in r] for r in v] for k, v in results.items()}
    a_q, a_s = (median([r[i] for r in results["a"]]) for i in (0, 1))
    b_q, b_s = (median([r[i] for r in results["b"]]) for i in (0, 1))
    c_e = median([r[0] for r in results["c"]])
    md = f"""## Coverage assets: a write to its consumer's run (`benchmarks/coverage_assets.py`)

Command: `{command}`

Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()},
load average {load:.1f} at the end. The services as `make airflow` starts them (LocalExecutor
on sqlite, every setting at its default; the follower `--poll 0.5 --refresh 10`), a SQLite
catalog; {args.reps} repetitions, a new day (48 partitions) each; medians.

| write | to the run's `queued_at` | to the run's `start_date` |
| --- | --: | --: |
| (a) `RegisterPartitionsOperator` in a producer DAG, from the task's `end_date` | {a_q} | {a_s} |
| (b) `airflow-partitions partition add --file`, from the command's exit | {b_q} | {b_s} |

| for comparison | median |
| --- | --: |
| (c) deferrable `PartitionCoverageSensor`, default `trigger_poll_interval`: from the \
completing write to the sensor task's `end_date` | {c_e} |

Who announced (follower log lines): in-task writes {by_follower["bt"]} of {args.reps} by the
follower (the rest by the writing task), CLI writes {by_follower["bc"]} of {args.reps}.

The follower's idle cost (no change in the catalog, REST API stubbed; {200} polls):

| followed facts | store round trips per poll | time per poll |
| --: | --: | --: |
""" + "".join(f"| {n} | {t:.2f} | {us:.0f} µs |\n" for n, (t, us) in idle.items()) + f"""
At the default `--poll 0.5` that is {idle[1][0] * 2:.0f} round trip(s) a second per followed
fact, plus one `GET /api/v2/assets` every 10 s.

Reading: (a) and (b) end when the consumer's run starts; (c) ends later in its task's life
(the trigger fired, the task was scheduled again and resumed on a worker), so it is an upper
bound on the sensor's firing: a consumer of a coverage asset starts about as soon after a
write as a deferrable sensor's task ends. The in-task announcement is posted before the
writing task ends, so the run is queued well within a second of the task's `end_date`; a CLI
write waits for the follower's next poll (0.5 s) plus the cover and the REST post. Between
`queued_at` and `start_date` is the scheduler's own loop. The machine was shared with other
suites while this ran (load average above).

Raw (seconds; a: queued/start, b: queued/start, c: end): `{json.dumps(raw)}`
"""
    print(md)
    if args.write:
        args.write.write_text(md)


if __name__ == "__main__":
    main()
