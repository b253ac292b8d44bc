"""An idle trigger poll is the store's change stamp; the generation is read only when it moved.

The poller calls a :class:`~airflow_partitions.watch.GenerationProbe`. Its answer must always be
the fact's generation as stored, whoever wrote (this connection, another one, another fact); the
property test below holds it to that over any sequence of writes, and the trigger tests count
what an idle poll reads (the store's own counters, no timing).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import CoverRequest
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from airflow_partitions.watch import CoverageWatch, GenerationProbe
from tests.helpers import T0, register_hours
from tests.hypothesis_budget import examples

REQUEST = CoverRequest.of("events", T0, T0.add(hours=4))


def test_an_idle_trigger_poll_reads_only_the_change_stamp(events: Catalog,
                                                          store_url: str) -> None:
    register_hours(events, 0, 2)
    script = ("import sys; from airflow_partitions.catalog import Catalog; "
              "c = Catalog(sys.argv[1]); "
              "c.register('raw', 'HOURLY', {'dt': '2024-01-01-03', 'region': 'eu'}); c.close()")

    async def scenario() -> tuple[Any, dict[str, int], int]:
        task = PartitionCoverageTrigger(request=REQUEST.to_json(), poke_interval=0.01)
        run = task.run()
        waiting = asyncio.ensure_future(run.__anext__())
        while task._polls is None or task._polls.reads < 2:  # the first check is done
            await asyncio.sleep(0.01)
        polls = task._polls
        events.stats.reset()
        reads = polls.reads
        await asyncio.sleep(0.3)  # idle
        ops, idle_reads = dict(events.stats.ops), polls.reads - reads
        # a write by another process wakes the trigger at its next poll
        await asyncio.to_thread(subprocess.run, [sys.executable, "-c", script, store_url],
                                check=True, timeout=300)
        event = await asyncio.wait_for(waiting, 60)
        return event, ops, idle_reads

    event, ops, idle_reads = asyncio.run(scenario())
    assert event.payload["status"] == "success" and event.payload["partitions"] == 4
    assert idle_reads >= 5
    assert set(ops) == {"change_stamp"}  # no generation read while nothing changed
    assert abs(ops["change_stamp"] - idle_reads) <= 1


def test_a_probe_seeded_by_a_watch_reads_no_generation_while_nothing_changed(
        events: Catalog) -> None:
    register_hours(events, 0, 1)
    watch = CoverageWatch(REQUEST)
    watch.check(events)
    assert watch.stamp is not None and watch.generation is not None
    probe = GenerationProbe(events, "events", known=(watch.stamp, watch.generation))
    events.stats.reset()
    assert [probe() for _ in range(3)] == [watch.generation] * 3
    assert dict(events.stats.ops) == {"change_stamp": 3}
    register_hours(events, 2, 2)
    events.stats.reset()
    assert probe() == watch.generation + 1
    assert events.stats.round_trips == 2  # the stamp moved: the generation read follows
    assert probe() == watch.generation + 1
    assert events.stats.round_trips == 3


def test_an_unseeded_probe_reads_the_generation_first(events: Catalog) -> None:
    probe = GenerationProbe(events, "events")
    events.stats.reset()
    assert probe() == events.rows.read_generation("events")
    assert events.stats.ops["change_stamp"] == 1 and events.stats.round_trips == 3


Writer = Callable[[Catalog, int], Any]
WRITES: dict[str, Writer] = {
    "register": lambda c, h: register_hours(c, h, h),
    "drop": lambda c, h: c.drop("raw", "HOURLY", {"dt": f"2024-01-01-{h:02d}", "region": "eu"}),
    "other fact": lambda c, h: c.register("clicks_raw", "HOURLY", {"dt": f"2024-01-02-{h:02d}"}),
    "nothing": lambda c, h: None,
}
STEPS = st.lists(st.tuples(st.sampled_from(sorted(WRITES)), st.booleans(),
                           st.integers(0, 4)), max_size=8)


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_the_probe_and_the_watch_always_answer_as_the_store_does(
        tmp_path: Path, steps: list[tuple[str, bool, int]]) -> None:
    """After any sequence of writes through this connection or a second one, the probe gives
    the stored generation and the watch the cover a fresh catalog computes."""
    path = tmp_path / f"probe-{len(list(tmp_path.iterdir()))}.db"
    with Catalog(f"sqlite:///{path}", data_root=str(tmp_path / "data")) as mine, \
            Catalog(f"sqlite:///{path}", data_root=str(tmp_path / "data")) as theirs:
        mine.create_fact("events")
        mine.create_storage("events", "raw", ["HOURLY"], columns=["dt", "region"])
        mine.create_fact("clicks")
        mine.create_storage("clicks", "clicks_raw", ["HOURLY"])
        probe, watch = GenerationProbe(mine, "events"), CoverageWatch(REQUEST)
        for write, by_them, hour in [("nothing", False, 0), *steps]:
            WRITES[write](theirs if by_them else mine, hour)
            assert probe() == theirs.rows.read_generation("events")
            answer = watch.check(mine).to_json()
            assert answer == theirs.cover_with_partitions(REQUEST).cover.to_json()
            assert watch.check(mine).to_json() == answer  # and again, idle


@pytest.mark.parametrize("fresh_only", [False, True])
def test_a_fresh_only_watch_is_recomputed_at_every_check(events: Catalog,
                                                         fresh_only: bool) -> None:
    """``fresh_only`` is recomputed every check, as before the stamp (staleness can change
    without this fact's generation moving): it reads the generation again each time."""
    register_hours(events, 0, 1)
    watch = CoverageWatch(CoverRequest.of("events", T0, T0.add(hours=4),
                                          fresh_only=fresh_only))
    first = watch.check(events)
    events.stats.reset()
    again = watch.check(events)
    if fresh_only:
        assert events.stats.ops["get"] >= 1  # the generation, and the cover asked again
    else:
        assert dict(events.stats.ops) == {"change_stamp": 1} and again is first
