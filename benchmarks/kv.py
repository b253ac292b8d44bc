"""Benchmark the key/value layer: SQLite file vs happybase -> the HBase Thrift1 test double.

Measures single puts, batched puts, a full scan, and check-and-put under contention from several
processes. The HBase numbers measure happybase plus the in-process Python test double, not a
real HBase cluster: read them as client overhead and round-trip counts, not as HBase speed.

    python benchmarks/kv.py                       # both backends, default sizes (< ~2 min)
    python benchmarks/kv.py --write docs/benchmarks-kv.md
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow_partitions.kv import KVStore, open_store


@dataclass
class Result:
    backend: str
    benchmark: str
    operations: int
    seconds: float
    round_trips: int
    note: str = ""

    @property
    def rate(self) -> float:
        return self.operations / self.seconds if self.seconds > 0 else float("inf")


def _timed(store: KVStore, fn: Callable[[], int]) -> tuple[int, float, int]:
    store.stats.reset()
    start = time.perf_counter()
    ops = fn()
    return ops, time.perf_counter() - start, store.stats.round_trips


def _contender(url: str, rounds: int, barrier: Any, out: Any) -> None:
    """One process of the contention benchmark: ``rounds`` check-and-put increments."""
    with open_store(url) as store:
        table = store.table("bench")
        barrier.wait()
        lost = 0
        for _ in range(rounds):
            while True:
                current = table.get(b"counter", columns=[b"cf:n"]).get(b"cf:n")
                new = b"%d" % (int(current) + 1 if current else 1)
                if table.check_and_put(b"counter", b"cf:n", current, new):
                    break
                lost += 1
        out.put((lost, store.stats.round_trips))


def contention(url: str, processes: int, rounds: int) -> tuple[float, int, int]:
    """Seconds for ``processes`` x ``rounds`` contended updates, races lost, round trips."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes + 1)
    out = ctx.Queue()
    workers = [
        ctx.Process(target=_contender, args=(url, rounds, barrier, out)) for _ in range(processes)
    ]
    for w in workers:
        w.start()
    barrier.wait()  # every worker has imported and connected: start the clock
    start = time.perf_counter()
    reports = [out.get() for _ in workers]
    elapsed = time.perf_counter() - start
    for w in workers:
        w.join()
    with open_store(url) as store:
        final = store.table("bench").get(b"counter")[b"cf:n"]
    if int(final) != processes * rounds:
        raise SystemExit(f"lost update: counter is {final!r}, expected {processes * rounds}")
    return elapsed, sum(r[0] for r in reports), sum(r[1] for r in reports)


def run_backend(name: str, url: str, args: argparse.Namespace) -> list[Result]:
    results: list[Result] = []
    with open_store(url) as store:
        store.create_table("bench", exist_ok=True)
        table = store.table("bench")
        value = b"x" * args.value_size

        def single() -> int:
            for i in range(args.puts):
                table.put(b"single-%08d" % i, {b"cf:v": value})
            return args.puts

        ops, secs, rts = _timed(store, single)
        results.append(Result(name, "put, one row per call", ops, secs, rts))

        def batched() -> int:
            table.put_many(
                ((b"row-%08d" % i, {b"cf:v": value}) for i in range(args.rows)), batch_size=1000
            )
            return args.rows

        ops, secs, rts = _timed(store, batched)
        results.append(Result(name, "put_many, 1000 rows per batch", ops, secs, rts))

        def scan() -> int:
            return sum(1 for _ in table.scan(prefix=b"row-", batch_size=1000))

        ops, secs, rts = _timed(store, scan)
        if ops != args.rows:
            raise SystemExit(f"scan returned {ops} rows, expected {args.rows}")
        results.append(Result(name, f"scan {args.rows:,} rows, 1000 per page", ops, secs, rts))

    secs, lost, rts = contention(url, args.processes, args.rounds)
    total = args.processes * args.rounds
    results.append(
        Result(
            name,
            f"check-and-put counter, {args.processes} processes",
            total,
            secs,
            rts,
            note=f"{lost} lost races retried",
        )
    )
    return results


def render(results: list[Result], command: str) -> str:
    lines = [
        "## Key/value layer (`benchmarks/kv.py`)",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {platform.machine()}, {multiprocessing.cpu_count()} cores, "
        f"Python {platform.python_version()}. HBase rows use happybase against the in-process "
        "Python test double, not a real cluster.",
        "",
        "| backend | benchmark | operations | seconds | ops/s | round trips | note |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r.backend} | {r.benchmark} | {r.operations:,} | {r.seconds:.2f} | "
            f"{r.rate:,.0f} | {r.round_trips:,} | {r.note} |"
        )
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Benchmark airflow_partitions.kv on SQLite and on happybase + test server."
    )
    parser.add_argument(
        "--backends",
        default="sqlite,hbase",
        help="comma-separated: sqlite, hbase (the bundled test double) (default: %(default)s)",
    )
    parser.add_argument("--puts", type=int, default=2000, help="single puts (default: %(default)s)")
    parser.add_argument(
        "--rows", type=int, default=100_000, help="rows to batch in and scan (default: %(default)s)"
    )
    parser.add_argument("--value-size", type=int, default=64, help="bytes per value")
    parser.add_argument("--processes", type=int, default=4, help="contending processes")
    parser.add_argument("--rounds", type=int, default=250, help="updates per contending process")
    parser.add_argument("--write", type=Path, help="also write the markdown table to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = shlex.join(["python", "benchmarks/kv.py", *(sys.argv[1:] if argv is None else argv)])
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="kv-bench-") as tmp:
        for backend in backends:
            server_cm: AbstractContextManager[Any]
            if backend == "sqlite":
                url, server_cm = f"sqlite://{Path(tmp) / 'bench.db'}", nullcontext()
            elif backend == "hbase":
                from airflow_partitions.testing.hbase.server import HBaseTestServer

                server_cm = HBaseTestServer()
                url = ""
            else:
                raise SystemExit(f"unknown backend {backend!r}")
            with server_cm as server:
                if server is not None:
                    url = f"{server.url}?table_prefix=bench"
                print(f"running {backend} ({url}) ...", file=sys.stderr, flush=True)
                results += run_backend(backend, url, args)
    table = render(results, command)
    print(table)
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
