"""One tool's answer to "which hours of the range are missing?", timed in a fresh process.

``benchmarks/peers.py`` runs this script once per tool, dataset and round, each time in a new
process and with the tool's own Python: ours with ``.venv/bin/python``, Luigi's and Dagster's
with the virtual environments ``make bench-peers`` creates under ``benchmarks/.peers/``. So this
module imports only the standard library at the top; each tool's package is imported by its
setup function, in the process that runs it.

    python benchmarks/peers_child.py SPEC.json   # prints one JSON object on stdout

For each range of the spec the tool answers once untimed (the warm-up: caches, imports, Luigi's
task instances), then answers again until it has at least ``min_repeats`` timings and has spent
``budget_s`` (at most ``max_repeats``), with a ``gc.collect()`` before each timed call; the range's
time is the median of those calls. With ``memory`` one more call runs under ``tracemalloc``
(the peak growth of Python allocations during a warm call; SQLite's own memory is not in it).
Every answer is a sorted list of ``YYYY-MM-DD-HH`` strings, checked by the parent.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

HOUR = dt.timedelta(hours=1)
#: The answer's format, and the hour directories' names under the hourly root.
KEY_FORMAT = "%Y-%m-%d-%H"
DIR_FORMAT = "dt=%Y-%m-%d-%H"
#: Dagster's HourlyPartitionsDefinition keys.
DAGSTER_FORMAT = "%Y-%m-%d-%H:%M"

Query = Callable[[dt.datetime, dt.datetime], list[str]]


def parse_hour(text: str) -> dt.datetime:
    """``2015-01-01-00`` as an aware UTC datetime."""
    return dt.datetime.strptime(text, KEY_FORMAT).replace(tzinfo=dt.UTC)


def hours_of(ranges: Iterable[tuple[dt.datetime, dt.datetime]]) -> list[str]:
    """Every hour of the ``[start, end)`` ranges as ``YYYY-MM-DD-HH``: O(hours)."""
    out = []
    for start, end in ranges:
        t = start
        while t < end:
            out.append(t.strftime(KEY_FORMAT))
            t += HOUR
    return out


# --- the tools: each setup returns the query and the tool's version -------------------------------


def setup_exists(ds: dict[str, Any], _options: dict[str, Any]) -> tuple[Query, str]:
    """One ``os.path.exists`` per hour directory: the baseline without any metadata."""
    root = ds["hourly_root"]
    join, exists = os.path.join, os.path.exists

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        missing = []
        t = start
        while t < end:
            if not exists(join(root, t.strftime(DIR_FORMAT))):
                missing.append(t.strftime(KEY_FORMAT))
            t += HOUR
        return missing

    return query, f"Python {sys.version.split()[0]}"


def setup_luigi(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """Luigi's range tools over an external hourly task whose output is the hour directory.

    ``RangeHourlyBase.missing_datetimes`` calls ``complete()`` on one task instance per hour
    (Luigi caches the instances, so the warm repeats reuse them); ``RangeHourly`` (``glob``
    option) infers completeness from one file-system listing instead."""
    import logging

    import luigi  # type: ignore[import-not-found]
    from luigi.tools.range import RangeHourly, RangeHourlyBase  # type: ignore[import-not-found]

    logging.getLogger("luigi-interface").setLevel(logging.WARNING)
    root = ds["hourly_root"]

    class Hour(luigi.ExternalTask):  # type: ignore[misc]
        date_hour = luigi.DateHourParameter()

        def output(self) -> Any:
            return luigi.LocalTarget(os.path.join(root, self.date_hour.strftime(DIR_FORMAT)))

    range_cls = RangeHourly if options.get("glob") else RangeHourlyBase

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        naive_start, naive_end = (x.astimezone(dt.UTC).replace(tzinfo=None) for x in (start, end))
        task = range_cls(of=Hour, start=naive_start, stop=naive_end)
        missing = task.missing_datetimes(task.finite_datetimes(naive_start, naive_end))
        return [d.strftime(KEY_FORMAT) for d in sorted(missing)]

    return query, f"luigi {metadata.version('luigi')}"


def setup_dagster(ds: dict[str, Any], _options: dict[str, Any]) -> tuple[Query, str]:
    """Dagster's partition subsets: the subset of present hours built from their key set (as
    an asset's materialized keys), then the range's keys minus it."""
    import dagster  # type: ignore[import-not-found]

    first, end_all = parse_hour(ds["start"]), parse_hour(ds["end"])
    pdef = dagster.HourlyPartitionsDefinition(
        start_date=first.strftime(DAGSTER_FORMAT), end_date=end_all.strftime(DAGSTER_FORMAT),
        timezone="UTC",
    )
    present = Path(ds["present_keys"]).read_text().split()

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        materialized = pdef.empty_subset().with_partition_keys(present)
        wanted = pdef.empty_subset().with_partition_key_range(
            pdef, dagster.PartitionKeyRange(start.strftime(DAGSTER_FORMAT),
                                            (end - HOUR).strftime(DAGSTER_FORMAT)))
        return sorted(k[:13] for k in (wanted - materialized).get_partition_keys())

    return query, f"dagster {metadata.version('dagster')}"


def setup_ours(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """Our ``Catalog.cover`` on the SQLite catalog: verified (the normal path) or not, over the
    hourly storage alone or with the daily rollups (``mixed``). Unverified, every call
    computes the cover afresh (the memos are emptied first): that is the baseline verifying is
    measured against, and a kept answer would measure nothing."""
    from airflow_partitions.catalog import Catalog

    catalog = Catalog(ds["catalog_url"], data_root=ds["root"])
    storages = [ds["hourly_storage"]] + ([ds["daily_storage"]] if options.get("mixed") else [])
    verify = bool(options.get("verify", True))
    query = OursQuery(catalog, ds["fact"], storages, verify)
    if options.get("moved"):
        catalog.kv.create_table("peers_scratch", ("cf",), exist_ok=True)
        query.before = query.write_elsewhere
    return query, f"airflow-partitions {metadata.version('airflow-partitions')}"


class OursQuery:
    """One ``Catalog.cover`` per call. ``before`` (untimed, before each timed call), when
    set: a write to another table of the same SQLite file, so the store's change stamp moves
    and the verified cover reads its rows again, as after any registration elsewhere."""

    def __init__(self, catalog: Any, fact: str, storages: list[str], verify: bool) -> None:
        self.catalog, self.fact, self.storages, self.verify = catalog, fact, storages, verify
        self.before: Callable[[], None] | None = None
        self.writes = 0

    def write_elsewhere(self) -> None:
        self.writes += 1
        self.catalog.kv.table("peers_scratch").put(b"w", {b"cf:n": str(self.writes).encode()})

    def __call__(self, start: dt.datetime, end: dt.datetime) -> list[str]:
        from airflow_partitions.kv import forget_all

        if not self.verify:  # the computation itself, every time: not the answer kept for
            forget_all()  # the request (a warm verified call reuses what its read proves)
        cover = self.catalog.cover(self.fact, start, end, storages=self.storages,
                                   verify=self.verify)
        return hours_of((m.start, m.end) for m in cover.missing)


def source_fingerprint(package: str = "airflow_partitions") -> str:
    """A short hash of the source files of ``package``'s modules this process imported: the
    parent notes it when rounds ran different code (the work tree changed during the run).
    Costs a read of those files, after the timings."""
    import hashlib

    files = sorted({Path(f) for name, module in list(sys.modules.items())
                    if (name == package or name.startswith(package + "."))
                    and (f := getattr(module, "__file__", None))})
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


SETUPS: dict[str, Callable[[dict[str, Any], dict[str, Any]], tuple[Query, str]]] = {
    "exists": setup_exists,
    "luigi": setup_luigi,
    "dagster": setup_dagster,
    "ours": setup_ours,
}


# --- the harness ----------------------------------------------------------------------------------


def time_range(query: Query, start: dt.datetime, end: dt.datetime, *, min_repeats: int,
               max_repeats: int, budget_s: float, memory: bool) -> dict[str, Any]:
    """Warm-up, timed repeats and optionally a traced call of one range (see the module doc)."""
    t0 = time.perf_counter()
    answer = query(start, end)
    first_s = time.perf_counter() - t0
    times: list[float] = []
    before = getattr(query, "before", None)
    while len(times) < min_repeats or (sum(times) < budget_s and len(times) < max_repeats):
        if before is not None:
            before()
        gc.collect()
        t0 = time.perf_counter()
        again = query(start, end)
        times.append(time.perf_counter() - t0)
        if again != answer:
            raise SystemExit(f"the answer changed between calls ({len(answer)} -> {len(again)})")
    traced = None
    if memory:
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            query(start, end)
            traced = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    return {
        "first_s": first_s,
        "times": times,
        "median_s": statistics.median(times) if times else first_s,
        "missing": answer,
        "traced_peak_bytes": traced,
    }


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Set up the tool once, then time each range in order."""
    ds = json.loads(Path(spec["dataset"]).read_text())
    t0 = time.perf_counter()
    query, version = SETUPS[spec["tool"]](ds, spec.get("options", {}))
    setup_s = time.perf_counter() - t0
    ranges = {}
    for r in spec["ranges"]:
        ranges[r["name"]] = time_range(
            query, parse_hour(r["start"]), parse_hour(r["end"]),
            min_repeats=spec["min_repeats"], max_repeats=spec["max_repeats"],
            budget_s=spec["budget_s"], memory=bool(spec.get("memory")),
        )
    if spec["tool"] == "ours":
        version += f" (source {source_fingerprint()})"
    return {"tool": spec["tool"], "version": version, "setup_s": setup_s, "ranges": ranges}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(run(json.loads(Path(argv[0]).read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
