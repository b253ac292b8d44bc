"""The lineage flag: a stale check reads no row of a storage none of whose rows records inputs,
and never misses a derived partition because of the flag.

Every backend. The cost assertions count the store's round trips (``kv.stats``): a raw
storage's stale check costs the same whatever its rows, an old storage (no flag) is scanned as
before until ``reconcile`` settles its flag.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog, writer
from airflow_partitions.catalog.lineage.flag import LINEAGE, NONE, SOME, settle
from airflow_partitions.catalog.rows.layout import storage_row

DAY = "2015-01-02"
HOURS = [f"{DAY}-{h:02d}" for h in range(24)]
START, END = f"{DAY}T00:00:00Z", "2015-01-03T00:00:00Z"


def flag(catalog: Catalog, storage: str) -> bytes | None:
    return catalog.rows.catalog.get(storage_row(storage), [LINEAGE]).get(LINEAGE)


def inputs(hours: list[str]) -> list[dict[str, Any]]:
    return [{"storage": "raw", "period": "HOURLY", "values": {"dt": h}} for h in hours]


@pytest.fixture
def ev(catalog: Catalog) -> Catalog:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "raw", ["HOURLY"])
    catalog.create_storage("ev", "daily", ["DAILY"], priority=5)
    catalog.register("raw", "HOURLY", [{"dt": h} for h in HOURS])
    return catalog


def stale_trips(catalog: Catalog) -> int:
    catalog.stale("ev", START, END)  # warm the cache: the generation read is all it adds
    catalog.kv.stats.reset()
    catalog.stale("ev", START, END)
    return catalog.kv.stats.round_trips


def test_a_new_storage_has_no_lineage_and_is_not_read(ev: Catalog) -> None:
    assert flag(ev, "raw") == NONE and flag(ev, "daily") == NONE
    few = stale_trips(ev)
    ev.register("raw", "HOURLY", [{"dt": f"2015-01-{d:02d}-{h:02d}"}
                                  for d in range(3, 20) for h in range(24)])
    assert stale_trips(ev) == few  # 17 more days of rows: not one more read


def test_a_register_with_inputs_marks_the_storage_first_and_staleness_is_found(
        ev: Catalog) -> None:
    ev.register("daily", "DAILY", {"dt": DAY}, inputs=inputs(HOURS))
    assert flag(ev, "daily") == SOME and flag(ev, "raw") == NONE
    assert ev.stale("ev", START, END) == []
    ev.register("raw", "HOURLY", {"dt": HOURS[3]}, restate=True)
    [stale] = ev.stale("ev", START, END)
    assert stale.partition.storage == "daily" and stale.partition.values == {"dt": DAY}


@pytest.fixture
def crash_before_rows() -> Iterator[None]:
    def hook(step: str) -> None:
        if step == "register:before-rows":
            raise RuntimeError("crashed before the rows")

    writer.STEP_HOOKS.append(hook)
    yield
    writer.STEP_HOOKS.remove(hook)


def test_a_crash_before_the_rows_leaves_the_flag_set(ev: Catalog, crash_before_rows: None
                                                     ) -> None:
    with pytest.raises(RuntimeError, match="crashed"):
        ev.register("daily", "DAILY", {"dt": DAY}, inputs=inputs(HOURS))
    assert flag(ev, "daily") == SOME  # a scan for nothing, never a derived row unread


def test_an_old_storage_is_scanned_until_reconcile_settles_its_flag(ev: Catalog) -> None:
    ev.register("daily", "DAILY", {"dt": DAY}, inputs=inputs(HOURS))
    for name in ("raw", "daily"):  # as written before the flag existed
        ev.rows.catalog.delete(storage_row(name), [LINEAGE])
    ev.cache.invalidate()
    ev.register("raw", "HOURLY", {"dt": HOURS[0]}, restate=True)
    assert [s.partition.storage for s in ev.stale("ev", START, END)] == ["daily"]
    before = stale_trips(ev)
    ev.reconcile("raw")
    ev.reconcile("daily")
    assert flag(ev, "raw") == NONE and flag(ev, "daily") == SOME
    assert stale_trips(ev) < before  # the raw storage's rows are read no more
    assert [s.partition.storage for s in ev.stale("ev", START, END)] == ["daily"]


def test_settle_never_lowers_some(ev: Catalog) -> None:
    ev.rows.catalog.put(storage_row("raw"), {LINEAGE: SOME})  # e.g. its derived rows dropped
    assert settle(ev.rows, ev.get_storage("raw")) == SOME
    assert flag(ev, "raw") == SOME


class _RegisterAfterScan:
    """The partitions table, with a register with inputs landing just after settle's scan
    found no derived row, before its check-and-put."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog, self.table = catalog, catalog.rows.partitions

    def scan_columns(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        yield from self.table.scan_columns(*args, **kwargs)
        self.catalog.rows.partitions = self.table
        self.catalog.register("daily", "DAILY", {"dt": DAY}, inputs=inputs(HOURS))


def test_a_register_with_inputs_after_the_settle_scanned_wins(ev: Catalog) -> None:
    """settle sets an absent flag to none only by check-and-put: the register that put
    ``some`` after settle scanned the (then underived) rows is never overwritten."""
    ev.rows.catalog.delete(storage_row("daily"), [LINEAGE])
    table = ev.rows.partitions
    ev.rows.partitions = _RegisterAfterScan(ev)  # type: ignore[assignment]
    try:
        assert settle(ev.rows, ev.get_storage("daily")) == SOME
    finally:
        ev.rows.partitions = table
    assert flag(ev, "daily") == SOME
    ev.register("raw", "HOURLY", {"dt": HOURS[0]}, restate=True)
    assert [s.partition.storage for s in ev.stale("ev", START, END)] == ["daily"]
