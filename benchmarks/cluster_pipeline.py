"""The example pipeline on the cluster on one machine against ``make airflow``.

The same work on each topology, one run each, on the same machine:

* start-up: every part until ready (the cluster: PostgreSQL, Redis, the catalog's HBase over
  HDFS (seven JVMs), Spark master and workers, ``airflow db migrate``, the four Airflow
  services, two Celery workers;
  single machine: ``airflow db migrate`` on sqlite and the four services, LocalExecutor);
* the pipeline: three days of events written by one Spark job and registered, the three
  daily rollups through ``airflow-partitions backfill --max-active-runs 3``, then the report
  over the three days (``events_report``); the report is checked against the raw events;
* memory: the proportional set size (PSS, so shared pages count once) of every process of
  every part, sampled each second during the pipeline; the peak, and the idle figure after
  start-up; and each part's resident (RSS) and proportional set size, idle and at its peak.

Nothing is faulted here (tests/e2e/test_cluster.py does that).

    python benchmarks/cluster_pipeline.py [--topology cluster|local|both]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airflow_partitions.demo.cluster.layout import ClusterLayout
from airflow_partitions.demo.cluster.ports import choose_cluster_ports
from airflow_partitions.demo.cluster.runner import Cluster
from airflow_partitions.demo.layout import REPO
from airflow_partitions.demo.services.api import ApiClient
from airflow_partitions.demo.services.environment import VENV_BIN, airflow_environment
from airflow_partitions.demo.services.ports import choose_ports
from airflow_partitions.demo.services.processes import group_members
from airflow_partitions.demo.services.runner import AirflowServices, recorded
from airflow_partitions.spark import SLICE_REGIONS, expected_slice_totals, job_path

DAY0 = dt.datetime(2015, 1, 30, tzinfo=dt.UTC)
DAYS = 3
END = DAY0 + dt.timedelta(days=DAYS)


def rss_pss_kib(pid: int) -> tuple[int, int]:
    """Resident and proportional set size of one process (``smaps_rollup``), in KiB."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return rss, pss


def memory_by_part(state: Path) -> dict[str, tuple[float, float]]:
    """RSS and PSS of every recorded part (all processes of its group), in MiB."""
    parts: dict[str, tuple[float, float]] = {}
    for record in recorded(state):
        sizes = [rss_pss_kib(pid) for pid in group_members(record.pid)]
        parts[record.name] = (sum(r for r, _ in sizes) / 1024, sum(p for _, p in sizes) / 1024)
    return parts


def memory_mib(state: Path) -> float:
    """PSS of every process in every recorded part's process group, in MiB."""
    return sum(pss for _, pss in memory_by_part(state).values())


class Sampler:
    """The peak of :func:`memory_mib` while running, and of each part's RSS and PSS, sampled
    each second on a thread."""

    def __init__(self, state: Path) -> None:
        self.state, self.peak, self._stop = state, 0.0, threading.Event()
        self.part_peaks: dict[str, tuple[float, float]] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            parts = memory_by_part(self.state)
            self.peak = max(self.peak, sum(pss for _, pss in parts.values()))
            for name, (rss, pss) in parts.items():
                old = self.part_peaks.get(name, (0.0, 0.0))
                self.part_peaks[name] = (max(old[0], rss), max(old[1], pss))

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run(argv: list[str], env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=1800, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def pipeline(env: dict[str, str], cwd: Path, data: Path, master: str, store: str,
             api: ApiClient) -> None:
    """Ingest and register, backfill the rollups, run the report; check it."""
    location = str(data / "events" / "events_raw" / "HOURLY" / "dt={dt}" / "region={region}")
    run([str(VENV_BIN / "spark-submit"), "--master", master, "--conf", "spark.ui.enabled=false",
         job_path("events_ingest"), "--start", DAY0.isoformat(), "--end", END.isoformat(),
         "--regions", ",".join(SLICE_REGIONS), "--location-template", location], env, cwd)
    for region in SLICE_REGIONS:
        run([str(VENV_BIN / "airflow-partitions"), "--store", store, "partition", "add",
             "events_raw", "--period", "HOURLY", "--range", DAY0.isoformat(), END.isoformat(),
             f"region={region}"], env, cwd)
    run([str(VENV_BIN / "airflow-partitions"), "backfill", "events", "--start",
         DAY0.isoformat(), "--end", END.isoformat(), "--max-active-runs", "3", "--unpause",
         "--poll-interval", "2"], env, cwd)
    run([str(VENV_BIN / "airflow"), "dags", "unpause", "events_report"], env, cwd)
    doc = api.call("POST", "dags/events_report/dagRuns", {
        "logical_date": None, "conf": {"start": DAY0.isoformat(), "end": END.isoformat(),
                                       "output": "bench_report.json"}})
    wait_success(api, "events_report", str(doc["dag_run_id"]))
    report = json.loads((data / "reports" / "bench_report.json").read_text())
    got = {r: (t["events"], t["amount_cents"]) for r, t in report["totals"].items()}
    if got != expected_slice_totals(DAY0, END, SLICE_REGIONS):
        raise SystemExit(f"the report differs from the raw events: {got}")


def wait_success(api: ApiClient, dag_id: str, run_id: str, timeout: float = 1800) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = api.get(f"dags/{dag_id}/dagRuns/{run_id}")["state"]
        if state in ("success", "failed"):
            if state != "success":
                raise SystemExit(f"{dag_id} {run_id}: {state}")
            return
        time.sleep(2)
    raise SystemExit(f"{dag_id} {run_id} did not finish in {timeout:.0f} s")


def measure(start: Callable[[], None], state: Path, go: Callable[[], None]) -> dict[str, Any]:
    began = time.monotonic()
    start()
    started = time.monotonic() - began
    time.sleep(5)
    idle_parts = memory_by_part(state)
    idle = sum(pss for _, pss in idle_parts.values())
    with Sampler(state) as sampler:
        began = time.monotonic()
        go()
        took = time.monotonic() - began
    parts = {name: {"idle_rss": round(rss), "idle_pss": round(pss),
                    "peak_rss": round(sampler.part_peaks.get(name, (0, 0))[0]),
                    "peak_pss": round(sampler.part_peaks.get(name, (0, 0))[1])}
             for name, (rss, pss) in idle_parts.items()}
    return {"startup_s": round(started, 1), "pipeline_s": round(took, 1),
            "idle_mib": round(idle), "peak_mib": round(sampler.peak), "parts": parts}


def part_table(parts: dict[str, dict[str, int]]) -> str:
    """Each part's memory as a markdown table (MiB)."""
    rows = ["| part | RSS idle | PSS idle | RSS peak | PSS peak |",
            "| --- | --: | --: | --: | --: |"]
    rows += [f"| `{name}` | {m['idle_rss']} | {m['idle_pss']} | {m['peak_rss']} | "
             f"{m['peak_pss']} |" for name, m in sorted(parts.items())]
    return "\n".join(rows)


def on_cluster(root: Path) -> dict[str, Any]:
    layout = ClusterLayout.at(root / "cluster", REPO / "dags_examples")
    cluster = Cluster(layout, choose_cluster_ports())
    try:
        return measure(lambda: cluster.start(progress=lambda line: None), layout.state,
                       lambda: pipeline(cluster.env, layout.root, layout.data,
                                        cluster.ports.spark_url, cluster.ports.catalog_url,
                                        cluster.client()))
    finally:
        cluster.stop()


def on_one_machine(root: Path) -> dict[str, Any]:
    home, data = root / "airflow", root / "data"
    home.mkdir(parents=True)
    store = f"sqlite:///{root}/partitions.db"
    env = airflow_environment(home, REPO / "dags_examples", store, data)
    services = AirflowServices(home, env, choose_ports(), parallelism=4)

    def start() -> None:
        run([str(VENV_BIN / "airflow"), "db", "migrate"], services.env, home)
        code = ("from airflow_partitions.catalog import Catalog\n"
                "from airflow_partitions.demo.events import ensure_catalog\n"
                f"with Catalog({store!r}) as c:\n    ensure_catalog(c)\n")
        run([sys.executable, "-c", code], services.env, home)
        services.start()
        services.wait_healthy(600)

    try:
        return measure(start, services.state_dir,
                       lambda: pipeline(services.env, root, data, "local[*]", store,
                                        services.client()))
    finally:
        services.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topology", choices=("cluster", "local", "both"), default="both")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for name, fn in (("local", on_one_machine), ("cluster", on_cluster)):
        if args.topology in (name, "both"):
            root = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
            root.chmod(0o755)  # PostgreSQL runs as nobody under root
            try:
                results[name] = fn(root)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            print(name, json.dumps({k: v for k, v in results[name].items() if k != "parts"}),
                  flush=True)
            print(part_table(results[name]["parts"]), flush=True)
    if "local" in results and "cluster" in results:
        ratio = results["cluster"]["pipeline_s"] / results["local"]["pipeline_s"]
        print(f"pipeline time, cluster / single machine: {ratio:.2f}")


if __name__ == "__main__":
    main()
