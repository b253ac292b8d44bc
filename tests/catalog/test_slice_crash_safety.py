"""Invariants 4 and 5 per slice: a crash at any write step leaves every slice timeline
under-reporting at worst, and concurrent writers of different regions of the same hours lose
no slice update; on every backend."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from airflow_partitions.catalog import CRASH_ENV, Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.writer import BUILD_STEPS, DROP_STEPS, REGISTER_STEPS
from tests.catalog.slice_truth import built, rows_slices, stored_slices
from tests.catalog.workers import crash_op, random_adds_and_drops

# The steps come from the code: a new step of the protocol is crash-tested per slice at once.
CASES = [("register", s) for s in REGISTER_STEPS] + [("drop", s) for s in DROP_STEPS]
INITIAL = [{"dt": f"2015-01-01-{h:02d}", "region": r} for h in range(6) for r in ("us", "eu")]


@pytest.fixture
def sliced(catalog: Catalog) -> Catalog:
    """The crash workers' ``events``/``raw`` with ``region`` declared a dimension."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=us,eu,ap"])
    return catalog


def _in_child(target: object, *args: object, crash_at: str | None = None) -> int:
    """Run ``target(*args)`` in a forked child (86: it crashed at ``crash_at``)."""
    def child() -> None:
        os.environ.pop(CRASH_ENV, None)
        if crash_at:
            os.environ[CRASH_ENV] = crash_at
        target(*args)  # type: ignore[operator]

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    process.join(timeout=120)
    if process.exitcode is None:
        process.kill()
        raise AssertionError("the child did not finish in 120 s")
    return process.exitcode


def _under(stored: dict, truth: dict) -> dict:  # type: ignore[type-arg]
    """The (slice, values) a stored slice timeline advertises without a row."""
    return {k: v - truth.get(k, set()) for k, v in stored.items() if v - truth.get(k, set())}


@pytest.mark.parametrize(("op", "step"), CASES, ids=[s for _, s in CASES])
def test_a_crash_never_over_reports_a_slice(sliced: Catalog, op: str, step: str) -> None:
    sliced.register("raw", "HOURLY", INITIAL)
    code = _in_child(crash_op, sliced.kv.url, sliced.data_root, op, crash_at=step)
    assert code == 86, "the crash hook did not fire"
    over = _under(stored_slices(sliced, "raw"), rows_slices(sliced, "raw"))
    assert not over, f"a slice over-reported after a crash at {step}: {over}"
    sliced.reconcile("raw")
    assert stored_slices(sliced, "raw") == rows_slices(sliced, "raw")
    assert _in_child(crash_op, sliced.kv.url, sliced.data_root, op) == 0  # idempotent re-run
    assert stored_slices(sliced, "raw") == rows_slices(sliced, "raw")


def _declare(url: str, data_root: str) -> None:
    catalog = Catalog(url, data_root=data_root)
    catalog.set_dimension("raw", "region=us,eu")
    catalog.close()


@pytest.mark.parametrize("step", BUILD_STEPS)
def test_a_crashed_build_is_unused_then_resumed(catalog: Catalog, step: str) -> None:
    """Declaring a dimension on a storage with rows: a crash leaves the slice timelines
    unused (the cover reads the rows), declaring again finishes the build."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    catalog.register("raw", "HOURLY", INITIAL)
    assert _in_child(_declare, catalog.kv.url, catalog.data_root, crash_at=step) == 86
    # Another process changed the definition: a new catalog object reads it.
    fresh = Catalog(catalog.kv.url, data_root=catalog.data_root, cache=TimelineCache())
    assert fresh.get_storage("raw").dimensions, "the definition was written before the build"
    assert not built(fresh, "raw")
    assert _in_child(_declare, catalog.kv.url, catalog.data_root) == 0
    assert built(fresh, "raw")
    assert stored_slices(fresh, "raw") == rows_slices(fresh, "raw")
    fresh.close()


def test_concurrent_regions_of_the_same_hours_lose_no_slice_update(sliced: Catalog) -> None:
    """Four processes, each owning a region, register and drop the same 24 hours."""
    processes, ops = 4, 40
    sliced.set_dimension("raw", "region=r0,r1,r2,r3")
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(processes), ctx.Queue()
    workers = [ctx.Process(target=random_adds_and_drops,
                           args=(sliced.kv.url, sliced.data_root, w, ops, 7 + w, start, results,
                                 24))
               for w in range(processes)]
    for proc in workers:
        proc.start()
    finished = [results.get(timeout=600) for _ in workers]
    for proc in workers:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert len(finished) == processes
    truth = rows_slices(sliced, "raw")
    assert len(truth) == processes, "every region should keep some hours"
    assert stored_slices(sliced, "raw") == truth
