"""A day right after another process's registration, asked in three states of the asking process.

Why: ``make bench-peers`` times this question after a ``gc.collect()`` (so no collection lands in
a timed call), and there a loop of 24 ``os.path.exists`` calls is a little ahead of our proven
answer. The collection walks the whole heap; afterwards a call that runs much Python over many
objects (ours: a change stamp, the feeds' read, a few catalog cells checked) finds less of its
code and data near the CPU. valgrind's cachegrind counts about seven thousand last-level misses
a call for ours there, under one thousand for the loop, whose time is in the kernel's ``stat``.
So which is ahead depends on what ran just before, and this measures three cases a sensor
meets:

* *warm*: nothing between the other process's registration and the question (a tight poll);
* *after gc.collect()*: what ``make bench-peers`` does before each timed call;
* *after other work*: 8 MiB of fresh memory mapped, written and unmapped first (a poke after
  other work in the same process);
* *after gc.collect(), Airflow's SDK imported*: as the second, in a process that imported
  ``airflow.sdk`` first (a task's or a triggerer's process, where a sensor runs: some 140,000
  objects more for the collection to walk), for every tool alike.

Per state and tool, a fresh process on the peers' 1-year dataset (built by
``benchmarks/peers.py`` under ``benchmarks/.peers/data`` when missing): before each timed call,
untimed, another process registers the next hour after the data's end (the peers' writer) or
the loop's writer creates its directory; then the day of the data's middle hole is asked, and
every answer is checked against the dataset's truth. CPU time (``time.process_time``), the
median of ``--calls`` calls per process, then the median over ``--rounds`` interleaved rounds.

    python benchmarks/cache_state.py [--rounds 3] [--calls 300] [--write FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import mmap
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers_child

#: The state whose process imported Airflow's SDK before its tool.
AIRFLOW_LOADED = "after gc.collect(), Airflow's SDK imported"
#: The states of the asking process before each question, in the order reported.
STATES = ("warm", "after gc.collect()", "after other work", AIRFLOW_LOADED)
#: The tools (``peers_child.setup_<name>``) and what the report calls them.
TOOLS = {
    "ours": "us, the fact's cover",
    "exists": "`os.path.exists` loop",
    "sqlite_keys": "one SELECT of the day's keys (SQLite's floor)",
}
#: The fresh memory :func:`other_work` maps and writes: eight times the per-core cache of the
#: machines this runs on, a quarter of their shared one.
OTHER_WORK_BYTES = 8 << 20
#: What it writes, in turns (64 KiB, below glibc's threshold for a fresh mapping).
OTHER_WORK_BLOCKS = (b"\x00" * (64 << 10), b"\x01" * (64 << 10))


def child(spec: dict[str, Any]) -> float:
    """The median CPU seconds of ``spec["calls"]`` questions by one tool in one state (this
    process), each answer checked against ``spec["want"]``."""
    tool, state = str(spec["tool"]), str(spec["state"])
    if tool not in TOOLS:
        raise SystemExit(f"unknown tool {tool!r}; expected one of {', '.join(TOOLS)}")
    if state not in STATES:
        raise SystemExit(f"unknown state {state!r}; expected one of {', '.join(STATES)}")
    manifest = Path(str(spec["manifest"]))
    ds = json.loads(manifest.read_text())
    if state == AIRFLOW_LOADED:  # imports airflow.sdk; AIRFLOW_HOME beside the datasets
        peers_child.airflow_env(ds, {"airflow_home": str(manifest.parent.parent / "airflow-home")})
    start, end = (peers_child.parse_hour(str(spec[k])) for k in ("start", "end"))
    query, _ = getattr(peers_child, f"setup_{tool}")(ds, {"register": True, "fact": True})
    times = []
    try:
        query(start, end)  # warm-up: decodes, statements, memos
        for i in range(int(spec["calls"])):
            query.before()
            if state in ("after gc.collect()", AIRFLOW_LOADED):
                gc.collect()
            elif state == "after other work":
                other_work(OTHER_WORK_BLOCKS[i % 2])
            t0 = time.process_time()
            raw = query(start, end)
            times.append(time.process_time() - t0)
            answer = peers_child.answered(query, raw, start, end)
            if answer != spec["want"]:
                raise SystemExit(f"{tool}: {answer} where the data says {spec['want']}")
    finally:
        query.close()
    return statistics.median(times)


def other_work(block: bytes) -> None:
    """8 MiB of fresh memory mapped, written with ``block`` and unmapped: the memory churn of
    other work between two questions.

    An mmap and small blocks, not a bytearray and one 8 MiB copy: a freed allocation that
    large raises glibc's threshold for serving allocations from fresh pages, which changed
    how much later allocations in the same process grow its resident memory."""
    with mmap.mmap(-1, OTHER_WORK_BYTES) as fresh:
        for _ in range(OTHER_WORK_BYTES // len(block)):
            fresh.write(block)


def measure(manifest: Path, rounds: int, calls: int) -> dict[str, dict[str, list[float]]]:
    """Per state and tool, one median per round; tools and states interleaved per round."""
    import peers  # the datasets (here: a child loads only its manifest, as the peers' do)

    dataset = peers.years_dataset(1, json.loads(manifest.read_text())["params"]["seed"])
    case = peers.day_case(dataset)
    found: dict[str, dict[str, list[float]]] = {s: {t: [] for t in TOOLS} for s in STATES}
    for r in range(rounds):
        for state in STATES:
            for tool in TOOLS:
                spec = {"tool": tool, "state": state, "manifest": str(manifest), "calls": calls,
                        "start": case.start.strftime(peers_child.KEY_FORMAT),
                        "end": case.end.strftime(peers_child.KEY_FORMAT),
                        "want": peers.expected_missing(dataset, case.start, case.end,
                                                       mixed=tool == "ours")}
                out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                                     check=True, capture_output=True, text=True).stdout
                found[state][tool].append(float(out.strip().splitlines()[-1]))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    return found


def report(found: dict[str, dict[str, list[float]]], rounds: int, calls: int,
           argv: list[str]) -> str:
    """The markdown table: CPU ms per call, and the loop ÷ us (above 1: we are ahead)."""
    lines = [
        "## A day right after one registration, by cache state (`benchmarks/cache_state.py`)",
        "",
        f"Command: `{shlex.join(['python', 'benchmarks/cache_state.py', *argv])}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average {os.getloadavg()[0]:.1f} at the end. "
        f"CPU ms per call: per state and tool, the median of {calls} calls in a fresh "
        f"process, then the median of {rounds} interleaved rounds; the peers' 1-year dataset, "
        "the day of its middle hole, each call right after another process's registration of "
        "the next hour, every answer checked. *Loop ÷ us* above 1: we are ahead.",
        "",
        "| state of the process before the call | " + " | ".join(TOOLS.values())
        + " | loop ÷ us |",
        "| --- |" + " ---: |" * (len(TOOLS) + 1),
    ]
    for state in STATES:
        ms = {t: statistics.median(found[state][t]) * 1000 for t in TOOLS}
        lines.append(f"| {state} | " + " | ".join(f"{ms[t]:.3f}" for t in TOOLS)
                     + f" | {ms['exists'] / ms['ours']:.2f}x |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(child(json.loads(argv[1])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--calls", type=int, default=300,
                        help="timed calls per process (default 300)")
    parser.add_argument("--write", type=Path, help="write the markdown table to this path")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        parser.error("--rounds and --calls must be at least 1")
    import peers

    manifest = peers.materialise(peers.years_dataset(1, peers.DEFAULT_SEED),
                                 peers.DEFAULT_WORKDIR)
    text = report(measure(manifest, args.rounds, args.calls), args.rounds, args.calls, argv)
    print(text)
    if args.write:
        args.write.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
