"""Writers ride out a catalog outage within one try, give up after their bound with a clear
typed error, and never wait on what waiting cannot mend.

Real parts: a real SQLite file whose write lock another connection holds (the store answers
"locked" for as long as it is held), and the HBase Thrift1 test double stopped half way
through a registration. The outage ends at the writer's first pause (the hook's
``forget_cached``, which the ride-out calls before each pause), so no test depends on timing.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowFailException
from airflow.sdk.execution_time.context import OutletEventAccessors

from airflow_partitions.catalog import Catalog, storage_row, timeline_column
from airflow_partitions.hooks.catalog import CatalogOutage, PartitionCatalogHook, forget_catalogs
from airflow_partitions.kv import StoreUnavailable
from airflow_partitions.operators import partitions
from airflow_partitions.operators.partitions import (
    DropPartitionsOperator,
    RegisterPartitionsOperator,
)
from airflow_partitions.periods import UpdatePeriod
from tests.helpers import T0, impatient_sqlite_store, poll

#: The pause point's switch (airflow_partitions/catalog/pause_point.py): hold a write at a step.
PAUSE_ENV = "AIRFLOW_PARTITIONS_PAUSE_AT"
VALUES = {"range": ["2024-01-01-00", "2024-01-01-03"], "region": ["eu", "us"]}


def register(**kwargs: Any) -> RegisterPartitionsOperator:
    return RegisterPartitionsOperator(task_id="register", storage="raw", period="HOURLY",
                                      values=kwargs.pop("values", VALUES), **kwargs)


def execute(op: RegisterPartitionsOperator | DropPartitionsOperator) -> dict[str, Any]:
    result: dict[str, Any] = op.execute(  # type: ignore[assignment]
        {"outlet_events": OutletEventAccessors()})  # type: ignore[arg-type]
    return result


class Pauses:
    """The ride-out's pauses, seen through the hook's ``forget_cached`` (called before each):
    how many were taken, and what happens at the next one (an outage ending)."""

    def __init__(self) -> None:
        self.taken = 0
        self.at_next: list[Callable[[], object]] = []

    def append(self, action: Callable[[], object]) -> None:
        self.at_next.append(action)


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> Pauses:
    seen = Pauses()
    forget = PartitionCatalogHook.forget_cached

    def at_pause(hook: PartitionCatalogHook) -> None:
        seen.taken += 1
        while seen.at_next:
            seen.at_next.pop(0)()
        forget(hook)

    monkeypatch.setattr(PartitionCatalogHook, "forget_cached", at_pause)
    return seen


@pytest.fixture
def locked_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[
        tuple[str, sqlite3.Connection]]:
    """The events catalog on a real SQLite file whose writers give up on its lock at once
    (``lock_timeout=0``), and a second connection holding that lock: the store is down for
    writers (readers still read, WAL) until the test rolls it back."""
    path, url = impatient_sqlite_store(tmp_path, monkeypatch)
    with Catalog(url) as setup:
        setup.create_fact("events")
        setup.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield url, holder
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
        forget_catalogs()


def registered(url: str) -> int:
    with Catalog(url) as check:
        return len(list(check.list_partitions("raw")))


def test_a_registration_waits_while_the_store_is_locked_and_then_registers(
        locked_sqlite: tuple[str, sqlite3.Connection], pauses: Pauses,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, holder = locked_sqlite
    pauses.append(lambda: holder.execute("ROLLBACK"))  # the store comes back at the 1st pause
    result = execute(register())
    assert (result["changed"], result["unchanged"]) == (6, 0)
    assert pauses.taken == 1 and registered(url) == 6
    log = capsys.readouterr()
    waits = [line for line in (log.out + log.err).splitlines() if "unreachable" in line]
    assert len(waits) == 1, waits
    assert "while trying to register raw HOURLY (attempt 1" in waits[0]
    assert "locked" in waits[0] and "trying again in" in waits[0], waits


def test_a_drop_rides_out_the_same_outage(locked_sqlite: tuple[str, sqlite3.Connection],
                                         pauses: Pauses) -> None:
    url, holder = locked_sqlite
    holder.execute("ROLLBACK")
    execute(register())
    holder.execute("BEGIN IMMEDIATE")
    pauses.append(lambda: holder.execute("ROLLBACK"))
    result = execute(DropPartitionsOperator(task_id="drop", storage="raw", period="HOURLY",
                                            values={"dt": "2024-01-01-00", "region": "eu"}))
    assert result["changed"] == 1 and pauses.taken == 1 and registered(url) == 5


def test_after_its_bound_the_writer_fails_with_a_clear_typed_error(
        locked_sqlite: tuple[str, sqlite3.Connection], pauses: Pauses,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The lock is never released: after ``outage_timeout`` the try fails with
    ``CatalogOutage`` (a ``StoreUnavailable``, so the task's retries take over, not a fail
    without retry), naming the store, what it tried, how long and how often."""
    url, _ = locked_sqlite
    with pytest.raises(CatalogOutage) as caught:
        execute(register(outage_timeout=0.3))
    error = caught.value
    assert isinstance(error, StoreUnavailable) and not isinstance(error, AirflowFailException)
    assert error.attempts >= 2 and error.attempts == pauses.taken + 1
    assert error.waited_s >= 0.3 and error.timeout_s == 0.3
    message = str(error)
    assert url in message and "stayed unreachable for" in message
    assert "to register raw HOURLY, outage_timeout 0.3 s" in message and "locked" in message
    assert "\n" not in message
    log = capsys.readouterr()
    assert sum("trying again in" in line for line in (log.out + log.err).splitlines()) \
        == pauses.taken
    assert registered(url) == 0


def test_outage_timeout_zero_fails_at_the_first_outage(
        locked_sqlite: tuple[str, sqlite3.Connection], pauses: Pauses) -> None:
    with pytest.raises(CatalogOutage, match=r"1 attempt\(s\)"):
        execute(register(outage_timeout=0))
    assert pauses.taken == 0


def _corrupt_timeline(catalog: Catalog) -> None:
    catalog.register("raw", "HOURLY", [{"dt": "2024-01-01-00", "region": "eu"}])
    catalog.rows.catalog.put(storage_row("raw"),
                             {timeline_column(UpdatePeriod.HOURLY, "dt"): b"{not json"})
    catalog.rows.bump_generation("events")


def _conflict(catalog: Catalog) -> None:
    catalog.register("raw", "HOURLY", [{"dt": "2024-01-01-00", "region": "eu"}],
                     location="/elsewhere/00/eu")


@pytest.mark.parametrize(("damage", "match"), [
    (_corrupt_timeline, "reconcile raw"),
    (_conflict, "another location|overwrite"),
], ids=["corrupt-timeline", "refused-registration"])
def test_what_waiting_cannot_mend_fails_at_once_without_retry(
        events: Catalog, pauses: Pauses,
        damage: Callable[[Catalog], None], match: str) -> None:
    damage(events)
    with pytest.raises(AirflowFailException, match=match):
        execute(register(values={"dt": "2024-01-01-00", "region": "eu"}))
    assert pauses.taken == 0


def test_a_damaged_store_fails_at_once_without_retry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        pauses: Pauses) -> None:
    path = tmp_path / "partitions.db"
    path.write_bytes(b"this is not a SQLite database, it is a text file\n" * 100)
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", f"sqlite:///{path}")
    forget_catalogs()
    try:
        with pytest.raises(AirflowFailException, match="is damaged"):
            execute(register())
    finally:
        forget_catalogs()
    assert pauses.taken == 0


def test_a_registration_cut_off_half_way_by_an_outage_finishes_in_the_same_try(
        hbase_server_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        pauses: Pauses) -> None:
    """The registration writes its rows, then the Thrift server dies before the timelines are
    written (the pause point holds it there while the test stops the server). The ride-out's
    next attempt, once the server is back, finds the rows there and finishes the write: every
    partition registered once, the timelines what the rows say, in one try."""
    server = hbase_server_factory()
    url = f"{server.url}?table_prefix=cut_off"
    marker = tmp_path / "paused"
    monkeypatch.setenv("AIRFLOW_PARTITIONS_STORE", url)
    monkeypatch.delenv("AIRFLOW_CONN_PARTITIONS_DEFAULT", raising=False)
    monkeypatch.setenv(PAUSE_ENV, f"register:after-rows@{marker}")
    forget_catalogs()
    with Catalog(url) as setup:
        setup.create_fact("events")
        setup.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])

    def cut_off() -> None:
        poll("the registration to hold after its rows", lambda: marker.exists() or None, 60,
             every=0.05)
        server.stop()
        monkeypatch.delenv(PAUSE_ENV)  # the next attempt goes straight through
        marker.unlink()

    announced: list[str] = []
    monkeypatch.setattr(partitions, "announce_after_write",
                        lambda catalog, fact, conn_id: announced.append(fact))
    outage = threading.Thread(target=cut_off)
    outage.start()
    pauses.append(server.start)
    op = register()
    try:
        result = execute(op)
    finally:
        outage.join()
        forget_catalogs()
    assert pauses.taken >= 1 and op.attempts == pauses.taken + 1
    # The cut-off attempt wrote the rows: the next one finds them there ("unchanged"), and
    # still announces the coverage its write completed.
    assert (result["changed"], result["unchanged"]) == (0, 6)
    assert announced == ["events"]
    with Catalog(url) as check:
        assert check.reconcile("raw").consistent
        assert len(list(check.list_partitions("raw"))) == 6
        assert check.cover("events", T0, T0.add(hours=3)).coverable
