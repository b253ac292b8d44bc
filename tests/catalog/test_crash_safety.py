"""Invariant 5: a crash between any two write steps under-reports at worst; reconcile repairs."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from airflow_partitions.catalog import CRASH_ENV, Catalog
from airflow_partitions.catalog.writer import DROP_STEPS, REGISTER_STEPS
from tests.catalog.conftest import rows_truth, stored_values
from tests.catalog.workers import crash_op

# The steps come from the code, so a new step in the write protocol is crash-tested at once.
STEPS = {"register": REGISTER_STEPS, "drop": DROP_STEPS}
CASES = [(op, step) for op, steps in STEPS.items() for step in steps]
INITIAL = [{"dt": f"2015-01-01-{h:02d}", "region": r} for h in range(6) for r in ("us", "eu")]


def _run_child(catalog: Catalog, op: str, crash_at: str | None) -> int:
    """Run ``op`` in a forked child that opens its own catalog; its exit code (86: crashed).

    Forked rather than a new interpreter: the child starts with the modules already imported,
    and dies by the same ``os._exit`` at the same step (about 0.1 s a child instead of 1 s).
    """
    def child() -> None:
        os.environ.pop(CRASH_ENV, None)
        if crash_at:
            os.environ[CRASH_ENV] = crash_at
        crash_op(catalog.kv.url, catalog.data_root, op)

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    process.join(timeout=120)
    if process.exitcode is None:
        process.kill()
        raise AssertionError(f"the {op} child did not finish in 120 s")
    return process.exitcode


@pytest.mark.parametrize(("op", "step"), CASES, ids=[s for _, s in CASES])
def test_crash_never_over_reports_and_reconcile_repairs(events: Catalog, op: str,
                                                        step: str) -> None:
    events.register("raw", "HOURLY", INITIAL)
    assert _run_child(events, op, step) == 86, "the crash hook did not fire"

    advertised = stored_values(events, "raw")[("HOURLY", "dt")]
    truth = rows_truth(events, "raw")[("HOURLY", "dt")]
    assert advertised <= truth, f"over-reported after a crash at {step}: {advertised - truth}"

    events.reconcile("raw")
    assert stored_values(events, "raw") == rows_truth(events, "raw")
    assert events.reconcile("raw").consistent

    # The interrupted operation is idempotent: running it again finishes the job.
    assert _run_child(events, op, None) == 0
    final = stored_values(events, "raw")[("HOURLY", "dt")]
    assert final == rows_truth(events, "raw")[("HOURLY", "dt")]
    if op == "register":
        assert {"2015-01-01-06", "2015-01-01-02"} <= final
    else:
        assert "2015-01-01-01" not in final and "2015-01-01-02" in final
    assert events.reconcile("raw").consistent


def _warm_values(catalog: Catalog) -> set[str]:
    """What a long-lived process (poke-mode sensor, triggerer) sees: the cache, never flushed."""
    return {p.value for p in catalog.timeline("raw", "HOURLY", "dt")}


@pytest.mark.parametrize(("op", "step"), CASES, ids=[s for _, s in CASES])
def test_rerun_after_crash_reaches_warm_caches(events: Catalog, op: str, step: str) -> None:
    # A register killed after its timeline write but before the generation bump must not leave
    # warm caches blind for good when the re-run itself changes nothing.
    events.register("raw", "HOURLY", INITIAL)
    before = _warm_values(events)
    assert _run_child(events, op, step) == 86, "the crash hook did not fire"
    assert _warm_values(events) <= rows_truth(events, "raw")[("HOURLY", "dt")] | before

    assert _run_child(events, op, None) == 0
    truth = rows_truth(events, "raw")[("HOURLY", "dt")]
    assert _warm_values(events) == truth, f"a warm cache missed the re-run after {step}"
    if op == "register":
        assert {"2015-01-01-06", "2015-01-01-02"} <= truth
    else:
        assert "2015-01-01-01" not in truth
