"""Invariant 4: many processes adding and dropping distinct partitions lose no update."""

from __future__ import annotations

import multiprocessing

from airflow_partitions.catalog import Catalog
from tests.catalog.conftest import rows_truth, stored_values
from tests.catalog.workers import random_adds_and_drops

PROCESSES = 8
OPS = 300


def test_concurrent_writers_leave_timelines_equal_to_their_rebuild(events: Catalog) -> None:
    url = events.kv.url
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(PROCESSES)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=random_adds_and_drops,
                    args=(url, events.data_root, w, OPS, 1000 + w, start, results))
        for w in range(PROCESSES)
    ]
    for proc in workers:
        proc.start()
    finished = [results.get(timeout=600) for _ in workers]
    for proc in workers:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert sorted(w for w, _, _ in finished) == list(range(PROCESSES))
    truth = rows_truth(events, "raw")
    assert truth[("HOURLY", "dt")], "the workload should leave some partitions registered"
    assert stored_values(events, "raw") == truth
    report = events.reconcile("raw")
    assert report.consistent, report.to_json()
    assert sum(retries for _, _, retries in finished) > 0, "the writers never contended"
