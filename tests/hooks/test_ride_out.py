"""``PartitionCatalogHook.ride_out``: how any task that writes (not only the operators) waits out
an unreachable catalog, with growing, jittered, bounded pauses; and the pauses themselves."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.demo.events import FACT, RAW, ensure_catalog
from airflow_partitions.hooks.catalog import CatalogOutage, PartitionCatalogHook, forget_catalogs
from tests.helpers import impatient_sqlite_store


def test_a_task_of_its_own_rides_out_a_locked_catalog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """What the example DAG's ``ensure_tables`` task does (``ride_out(ensure_catalog)``):
    the store's write lock is held by another connection until the first pause, then the same
    call creates the tables. With no bound left, the typed error names the store and the wait."""
    path, url = impatient_sqlite_store(tmp_path, monkeypatch)
    Catalog(url).close()  # the file and its tables exist; the lock is what keeps writers out
    holder = sqlite3.connect(path, isolation_level=None)
    hook = PartitionCatalogHook()
    forget = PartitionCatalogHook.forget_cached
    pauses: list[int] = []

    def at_pause(self: PartitionCatalogHook) -> None:
        pauses.append(1)
        if holder.in_transaction:
            holder.execute("ROLLBACK")  # the outage ends at the first pause
        forget(self)

    monkeypatch.setattr(PartitionCatalogHook, "forget_cached", at_pause)
    try:
        holder.execute("BEGIN IMMEDIATE")
        hook.ride_out(ensure_catalog, doing="create the events tables")
        assert len(pauses) == 1
        log = capsys.readouterr()
        assert "unreachable while trying to create the events tables (attempt 1" in \
            log.out + log.err
        with Catalog(url) as check:
            assert check.get_storage(RAW).fact == FACT

        holder.execute("BEGIN IMMEDIATE")
        pauses.clear()
        monkeypatch.setattr(PartitionCatalogHook, "forget_cached",
                            lambda self: pauses.append(1))
        # Long enough for a first try and at least one pause, even on a loaded machine.
        with pytest.raises(CatalogOutage) as caught:
            hook.ride_out(lambda catalog: catalog.create_fact("other"), doing="create a fact",
                          outage_timeout=2.0)
        assert caught.value.attempts == len(pauses) + 1 >= 2
        assert url in str(caught.value) and "create a fact" in str(caught.value)
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
        forget_catalogs()


def test_anything_but_an_outage_is_raised_at_once(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PartitionCatalogHook, "forget_cached",
                        lambda self: pytest.fail("paused on an error that is not an outage"))

    def refused(catalog: Catalog) -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        PartitionCatalogHook().ride_out(refused, doing="fail")
    with pytest.raises(ValueError, match="outage_timeout"):
        PartitionCatalogHook().ride_out(refused, doing="fail", outage_timeout=-1)
