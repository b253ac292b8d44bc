"""The sparse-history cliff: a one-day cover in a fresh process, dense history vs the same plus
one hour ten years later.

One far-future hour would make an EndsAndHoles timeline list every hour in between as a hole
(87,600 of them), and every cover, poke and trigger check parse them all. The
baseline is the same cover on the dense history alone, measured in the same run; the goal is a
ratio of at most 1.2x. A third storage forces EndsAndHoles explicitly, the slow shape a user
may still choose (and is warned about).

    python benchmarks/sparse_history.py [--days 365] [--repeat 7] [--write PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.periods import UpdatePeriod

HOURLY = UpdatePeriod.HOURLY
ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "dense": "dense history (the baseline)",
    "sparse": "dense + one hour ten years later (default timeline)",
    "forced": "dense + one hour ten years later, `--timeline-class HOURLY=EndsAndHoles`",
}
# What the child process runs: open the catalog cold and cover one day inside the history.
CHILD = """
import json, sys, time
t0 = time.perf_counter()
from airflow_partitions.catalog import Catalog
t1 = time.perf_counter()
catalog = Catalog(sys.argv[1], data_root="/data")
cover = catalog.cover(sys.argv[2], "2015-06-10T00:00:00Z", "2015-06-11T00:00:00Z")
t2 = time.perf_counter()
assert cover.coverable and len(cover.partitions) == 24, cover
print(json.dumps({"import": t1 - t0, "open_and_cover": t2 - t1}))
"""


def build(url: str, days: int) -> dict[str, dict[str, object]]:
    """One fact per case, each with one hourly storage holding ``days`` of history."""
    catalog = Catalog(url, data_root="/data", cache=TimelineCache())
    first = HOURLY.parse_ordinal("2015-01-01-00")
    dense = [{"dt": HOURLY.format_ordinal(first + i)} for i in range(days * 24) if i % 997 != 500]
    far = {"dt": HOURLY.format_ordinal(first + 10 * 8766)}
    shape: dict[str, dict[str, object]] = {}
    for case in CASES:
        classes = {"HOURLY": "EndsAndHoles"} if case == "forced" else None
        catalog.create_fact(case)
        catalog.create_storage(case, f"{case}_raw", ["HOURLY"], timeline_classes=classes)
        catalog.register(f"{case}_raw", "HOURLY", dense)
        if case != "dense":
            catalog.register(f"{case}_raw", "HOURLY", [far])
        props = catalog.timeline_properties(f"{case}_raw", "HOURLY")
        shape[case] = {
            "class": next(v for k, v in props.items() if k.endswith("storage.class")),
            "chars": sum(len(k) + len(v) for k, v in props.items()),
            "ranges": len(catalog.timeline(f"{case}_raw", "HOURLY").ordinal_ranges()),
        }
    catalog.close()
    return shape


def fresh_cover(url: str, fact: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD, url, fact], env=env, check=True,
                          capture_output=True, text=True, timeout=600)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=365, help="days of dense hourly history")
    parser.add_argument("--repeat", type=int, default=7,
                        help="fresh processes per case; the median is reported")
    parser.add_argument("--write", type=Path, help="also write the markdown section here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/sparse.db"
        print("building the catalog ...", file=sys.stderr, flush=True)
        shape = build(url, args.days)
        times: dict[str, list[float]] = {case: [] for case in CASES}
        for i in range(args.repeat):  # interleaved, so drift on a noisy machine hits all cases
            print(f"round {i + 1}/{args.repeat} ...", file=sys.stderr, flush=True)
            for case in CASES:
                times[case].append(fresh_cover(url, case)["open_and_cover"])
    median = {case: statistics.median(t) for case, t in times.items()}
    command = "python benchmarks/sparse_history.py " + shlex.join(argv or sys.argv[1:])
    lines = [
        "| history | stored as | properties (chars) | ranges | open + one-day cover "
        "(median of fresh processes) | ÷ dense |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for case, label in CASES.items():
        stored = str(shape[case]["class"]).rsplit(".", 1)[-1]
        lines.append(
            f"| {label} | {stored} | {shape[case]['chars']:,} | {shape[case]['ranges']} "
            f"| {median[case] * 1e3:,.1f} ms | {median[case] / median['dense']:.2f}x |"
        )
    text = (
        "## Sparse history (`benchmarks/sparse_history.py`)\n\n"
        f"Command: `{command.strip()}`\n\n"
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; SQLite catalog. {args.days} days of hourly partitions "
        "(one hole every 997 hours), then one hour ten years later. Each number is the median "
        f"of {args.repeat} fresh processes opening the catalog and covering one day inside the "
        "history (interpreter start and imports excluded; the cases run interleaved). Goal: "
        "the default at most 1.2x the dense baseline.\n\n"
        + "\n".join(lines) + "\n"
    )
    print(text)
    if args.write:
        args.write.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
