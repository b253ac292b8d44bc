"""Code that runs in child processes for the concurrency and crash tests (importable by spawn)."""

from __future__ import annotations

import random
from typing import Any

from airflow_partitions.catalog import Catalog


def random_adds_and_drops(
    url: str, data_root: str, worker: int, ops: int, seed: int, start: Any, results: Any,
    hours: int = 96,
) -> None:
    """Each worker owns region r<worker>; hours collide across workers on purpose."""
    catalog = Catalog(url, data_root=data_root)
    rng = random.Random(seed)
    start.wait()  # all workers write at the same time, or nothing contends
    for _ in range(ops):
        day, hour = divmod(rng.randrange(hours), 24)
        values = {"dt": f"2015-01-{day + 1:02d}-{hour:02d}", "region": f"r{worker}"}
        if rng.random() < 0.55:
            catalog.register("raw", "HOURLY", values)
        else:
            catalog.drop("raw", "HOURLY", values)
    results.put((worker, catalog.stats.round_trips, catalog.stats.events.get("swap_retry", 0)))
    catalog.close()


CRASH_REGISTER = [{"dt": "2015-01-01-06", "region": r} for r in ("us", "eu")] + [
    {"dt": "2015-01-01-02", "region": "ap"}
]
CRASH_DROP = [
    {"dt": "2015-01-01-01", "region": "us"},
    {"dt": "2015-01-01-01", "region": "eu"},
    {"dt": "2015-01-01-02", "region": "us"},
]


def crash_op(url: str, data_root: str, op: str) -> None:
    """One bulk register or drop; the test sets AIRFLOW_PARTITIONS_CRASH_AT to kill it midway."""
    catalog = Catalog(url, data_root=data_root)
    if op == "register":
        catalog.register("raw", "HOURLY", CRASH_REGISTER)
    else:
        catalog.drop("raw", "HOURLY", CRASH_DROP)
    catalog.close()


SAME_EIGHT = [{"dt": f"2015-01-01-{h:02d}", "region": "us"} for h in range(8)]


def same_partition_writer(
    url: str, data_root: str, adds: bool, ops: int, seed: int, start: Any, results: Any
) -> None:
    """Adders register, droppers drop, random subsets of the same eight partitions."""
    catalog = Catalog(url, data_root=data_root)
    rng = random.Random(seed)
    start.wait()
    for _ in range(ops):
        batch = rng.sample(SAME_EIGHT, rng.randint(1, 3))
        if adds:
            catalog.register("raw", "HOURLY", batch)
        else:
            catalog.drop("raw", "HOURLY", batch)
    results.put(seed)
    catalog.close()
