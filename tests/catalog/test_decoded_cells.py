"""After a write, readers decode what changed and still answer exactly as a full decode does."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, decoded_cells
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.decoded_cells import timeline_from_cell
from airflow_partitions.catalog.rows.layout import TimelineCell
from airflow_partitions.periods import UpdatePeriod
from tests.helpers import unique

T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
HOURLY, DAILY = UpdatePeriod.HOURLY, UpdatePeriod.DAILY


def hour(i: int) -> dict[str, str]:
    return {"dt": (T0 + dt.timedelta(hours=i)).strftime("%Y-%m-%d-%H")}


def day(i: int) -> dict[str, str]:
    return {"dt": (T0 + dt.timedelta(days=i)).strftime("%Y-%m-%d")}


def make_fact(catalog: Catalog) -> tuple[str, str, str]:
    fact = unique("events")
    catalog.create_fact(fact)
    raw, daily = f"{fact}_raw", f"{fact}_daily"
    catalog.create_storage(fact, raw, ["HOURLY"])
    catalog.create_storage(fact, daily, ["DAILY"], priority=10)
    catalog.register(raw, "HOURLY", [hour(i) for i in range(0, 24 * 20) if i % 7])
    catalog.register(daily, "DAILY", [day(i) for i in range(0, 20, 2)])
    return fact, raw, daily


def decoded_in_full(catalog: Catalog, storage: str, period: UpdatePeriod) -> list:
    """The stored cell decoded from scratch: the oracle."""
    sdef = catalog.get_storage(storage)
    cell = catalog.rows.read_timeline_cell(storage, period, "dt")
    return timeline_from_cell(catalog.rows, sdef, period, "dt", cell).ordinal_ranges()


writes = st.lists(st.tuples(st.sampled_from(["register", "drop"]), st.booleans(),
                            st.integers(-30, 24 * 25)), min_size=1, max_size=12)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes)
def test_after_any_writes_the_kept_decodes_equal_a_full_decode(
        store_url: str, ops: list[tuple[str, bool, int]]) -> None:
    """Registrations and drops inside, before and after the history, of either storage: what
    each reader of the process sees equals a full decode of the stored cell."""
    with Catalog(store_url, cache=TimelineCache()) as catalog:
        fact, raw, daily = make_fact(catalog)
        for op, hourly, at in ops:
            storage, period = (raw, "HOURLY") if hourly else (daily, "DAILY")
            values = [hour(at) if hourly else day(at // 24)]
            getattr(catalog, op)(storage, period, values)
            state = catalog.fact_state(fact)
            for name, per in ((raw, HOURLY), (daily, DAILY)):
                assert state.storages[name].timelines[(per, "dt")].ordinal_ranges() \
                    == decoded_in_full(catalog, name, per)


def test_a_write_by_another_process_is_patched_not_decoded_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process registers one hour: this process's next question keeps the daily
    storage's timeline as it was (the same object), patches the hourly one, decodes nothing
    in full, and sees the new hour."""
    url = f"sqlite:///{tmp_path}/c.db"
    with Catalog(url, cache=TimelineCache()) as catalog:
        fact, raw, daily = make_fact(catalog)
        before = catalog.fact_state(fact)
        new_hour = hour(24 * 20 + 5)["dt"]
        subprocess.run([sys.executable, "-c", (
            "from airflow_partitions.catalog import Catalog\n"
            f"Catalog({url!r}).register({raw!r}, 'HOURLY', [{{'dt': {new_hour!r}}}])\n")],
            check=True, timeout=120)
        full_decodes: list[str] = []
        real = decoded_cells.timeline_from_cell

        def counting(*args: object, **kwargs: object) -> object:
            full_decodes.append(str(args[1]))
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(decoded_cells, "timeline_from_cell", counting)
        after = catalog.fact_state(fact)
        assert after.generation != before.generation
        assert after.storages[daily].timelines[(DAILY, "dt")] \
            is before.storages[daily].timelines[(DAILY, "dt")]
        hourly = after.storages[raw].timelines[(HOURLY, "dt")]
        assert hourly is not before.storages[raw].timelines[(HOURLY, "dt")]
        assert full_decodes == []
        assert hourly.exists_ordinal(HOURLY.parse_ordinal(new_hour, "UTC"))
        assert hourly.ordinal_ranges() == decoded_in_full(catalog, raw, HOURLY)
        # The timeline the earlier question holds was not changed under it.
        assert not before.storages[raw].timelines[(HOURLY, "dt")].exists_ordinal(
            HOURLY.parse_ordinal(new_hour, "UTC"))


def test_a_writer_hands_over_what_it_wrote(store_url: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """After a registration in this process, the next question reads no timeline cell's
    content at all: the writer kept the timeline it wrote, by the bytes it wrote."""
    with Catalog(store_url, cache=TimelineCache()) as catalog:
        fact, raw, _ = make_fact(catalog)
        catalog.fact_state(fact)
        catalog.register(raw, "HOURLY", [hour(24 * 21)])
        reads: list[bytes | None] = []
        real = TimelineCell.read.__func__  # type: ignore[attr-defined]

        def counting(cls: type[TimelineCell], raw_cell: bytes | None, *args: object
                     ) -> TimelineCell:
            reads.append(raw_cell)
            return real(cls, raw_cell, *args)  # type: ignore[no-any-return]

        monkeypatch.setattr(TimelineCell, "read", classmethod(counting))
        state = catalog.fact_state(fact)
        assert reads == []
        assert state.storages[raw].timelines[(HOURLY, "dt")].ordinal_ranges() \
            == decoded_in_full(catalog, raw, HOURLY)


def test_a_reload_reads_only_the_storage_rows_written_since(tmp_path: Path) -> None:
    """SQLite's catalog feed names the storage rows written since the last load: after another
    process registers an hour, the daily storage's state is kept whole (its row not read);
    after it registers a day, the daily state is read again and shows the day."""
    url = f"sqlite:///{tmp_path}/c.db"
    with Catalog(url, cache=TimelineCache()) as catalog:
        fact, raw, daily = make_fact(catalog)
        before = catalog.fact_state(fact)

        def elsewhere(storage: str, period: str, value: dict[str, str]) -> None:
            subprocess.run([sys.executable, "-c", (
                "from airflow_partitions.catalog import Catalog\n"
                f"Catalog({url!r}).register({storage!r}, {period!r}, [{value!r}])\n")],
                check=True, timeout=120)

        elsewhere(raw, "HOURLY", hour(24 * 20 + 5))
        catalog.stats.reset()
        after = catalog.fact_state(fact)
        assert after.storages[daily] is before.storages[daily]
        assert after.storages[raw] is not before.storages[raw]
        assert catalog.stats.ops["changes_since"] == 1
        elsewhere(daily, "DAILY", day(30))
        again = catalog.fact_state(fact)
        assert again.storages[daily] is not after.storages[daily]
        assert again.storages[daily].timelines[(DAILY, "dt")].exists_ordinal(
            DAILY.parse_ordinal(day(30)["dt"], "UTC"))
        assert again.storages[raw] is after.storages[raw]
