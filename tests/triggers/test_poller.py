"""The shared poller: an idle watch is read once per interval and wakes no event loop;
a change or a failure wakes it; cancelling disarms, closing unregisters; one set of threads
serves every watch, and a read that hangs does not hold the others. Then the trigger on it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import pendulum
import pytest
from structlog.testing import capture_logs

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import CoverRequest
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.kv import KVStore, StoreUnavailable
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from airflow_partitions.triggers.poller import POLLER, POLLERS, Poller
from tests.helpers import T0, register_hours

REQUEST = CoverRequest.of("events", T0, T0.add(hours=4)).to_json()


@pytest.fixture
def poller() -> Iterator[Poller]:
    """A poller of its own, with a quick standby, stopped afterwards."""
    own = Poller(threads=2, slow=0.1)
    yield own
    own.stop()


class Counter:
    """A read whose answer the test sets; counts its calls and the threads that made them."""

    def __init__(self, value: Any = 0) -> None:
        self.value = value
        self.calls = 0
        self.threads: set[str] = set()

    def __call__(self) -> Any:
        self.calls += 1
        self.threads.add(threading.current_thread().name)
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value


def count_loop_wakeups(loop: asyncio.AbstractEventLoop) -> list[int]:
    """Every ``call_soon_threadsafe`` on ``loop`` (how any thread wakes it), counted."""
    calls = [0]
    original: Callable[..., Any] = loop.call_soon_threadsafe

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
    return calls


def test_an_idle_watch_reads_once_per_interval_and_wakes_nothing(poller: Poller) -> None:
    read = Counter(7)

    async def scenario() -> tuple[int, int, float]:
        wakeups = count_loop_wakeups(asyncio.get_running_loop())
        with poller.watch(read, 0.02) as watch:
            waiting = asyncio.ensure_future(watch.changed(7))
            started = time.monotonic()
            await asyncio.sleep(0.4)
            elapsed = time.monotonic() - started
            assert not waiting.done()
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            return wakeups[0], watch.wakeups, elapsed

    loop_wakeups, watch_wakeups, elapsed = asyncio.run(scenario())
    assert loop_wakeups == 0 and watch_wakeups == 0
    assert 5 <= read.calls <= elapsed / 0.02 + 1  # one read per interval, never more often
    assert poller.watches == 0 and poller.armed == 0


def test_a_changed_answer_wakes_the_waiter_once(poller: Poller) -> None:
    read = Counter(1)

    async def scenario() -> tuple[Any, int]:
        wakeups = count_loop_wakeups(asyncio.get_running_loop())
        with poller.watch(read, 0.01) as watch:
            waiting = asyncio.ensure_future(watch.changed(1))
            await asyncio.sleep(0.1)
            assert not waiting.done()
            read.value = 2
            answer = await asyncio.wait_for(waiting, 30)
            assert watch.wakeups == 1 and poller.armed == 0  # disarmed until awaited again
            calls = read.calls
            await asyncio.sleep(0.1)
            assert read.calls == calls  # nobody waits: no reads
            assert await asyncio.wait_for(watch.changed(None), 30) == 2  # anything is news
            return answer, wakeups[0]

    assert asyncio.run(scenario()) == (2, 2)
    assert poller.watches == 0


def test_a_failing_read_raises_in_the_waiter(poller: Poller) -> None:
    read = Counter(StoreUnavailable("hbase://h:9090", "reading the generation", "refused"))

    async def scenario() -> None:
        with poller.watch(read, 0.01) as watch:
            with pytest.raises(StoreUnavailable, match="refused"):
                await asyncio.wait_for(watch.changed(0), 30)
            read.value = 5  # the store is back: the watch can be awaited again
            assert await asyncio.wait_for(watch.changed(0), 30) == 5

    asyncio.run(scenario())


def test_cancelling_disarms_and_closing_unregisters(poller: Poller) -> None:
    read = Counter(0)

    async def scenario() -> None:
        watch = poller.watch(read, 0.01)
        assert poller.watches == 1
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(watch.changed(0), 0.1)
        assert poller.armed == 0 and poller.watches == 1
        calls = read.calls
        await asyncio.sleep(0.1)
        assert read.calls == calls
        watch.close()
        watch.close()
        assert poller.watches == 0
        with pytest.raises(RuntimeError, match="closed"):
            await watch.changed(0)

    asyncio.run(scenario())


def test_a_hanging_read_does_not_hold_the_other_watches(poller: Poller) -> None:
    """The leader is stuck in one read: after ``slow`` (0.1 s here) a standby thread leads."""
    gate = threading.Event()

    def hangs() -> int:
        gate.wait(30)
        return 1

    other = Counter(0)

    async def scenario() -> Any:
        with poller.watch(hangs, 0) as stuck, poller.watch(other, 0.01) as fine:
            blocked = asyncio.ensure_future(stuck.changed(0))
            await asyncio.sleep(0.05)  # the hanging read has started
            waiting = asyncio.ensure_future(fine.changed(0))
            await asyncio.sleep(0.3)
            other.value = 1
            answer = await asyncio.wait_for(waiting, 10)
            assert not blocked.done()
            gate.set()
            assert await asyncio.wait_for(blocked, 10) == 1
            return answer

    assert asyncio.run(scenario()) == 1


def test_a_slow_idle_read_is_read_again_after_another_thread_took_the_lead(
        poller: Poller) -> None:
    """One watch, its read slower than ``slow`` once (an HBase call while a RegionServer's
    regions move): a standby thread takes the lead and waits on the empty heap; when the slow
    read returns the same answer, its watch goes back on the heap and must be read again."""
    slow_once = threading.Event()
    calls = [0]

    def read() -> int:
        calls[0] += 1
        if not slow_once.is_set():
            slow_once.set()
            time.sleep(0.4)  # four times the poller's ``slow``
        return 0

    async def scenario() -> int:
        with poller.watch(read, 0.01) as watch:
            waiting = asyncio.ensure_future(watch.changed(0))
            deadline = time.monotonic() + 30
            while calls[0] < 5 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
        return calls[0]

    assert asyncio.run(scenario()) >= 5  # it kept being read after the slow one


# -- the trigger on the process's poller ------------------------------------------------------


def trigger(**kwargs: Any) -> PartitionCoverageTrigger:
    args: dict[str, Any] = {"request": REQUEST, "poke_interval": 0.01}
    args.update(kwargs)
    return PartitionCoverageTrigger(**args)


def test_an_idle_trigger_reads_per_interval_without_waking_its_loop(events: Catalog) -> None:
    register_hours(events, 0, 1)

    async def scenario() -> tuple[Any, int, int, int]:
        watches = POLLER.watches
        task = trigger()
        run = task.run()
        waiting = asyncio.ensure_future(run.__anext__())
        while task._polls is None or task._polls.reads < 2:  # the first check is done
            await asyncio.sleep(0.01)
        polls = task._polls
        assert POLLER.watches == watches + 1
        wakeups = count_loop_wakeups(asyncio.get_running_loop())
        reads, trips = polls.reads, events.stats.round_trips
        await asyncio.sleep(0.3)  # idle: reads go on in the poller, the loop sleeps
        idle = (wakeups[0], polls.reads - reads, events.stats.round_trips - trips)
        assert polls.wakeups == 0
        await asyncio.to_thread(register_hours, events, 2, 3)
        event = await asyncio.wait_for(waiting, 30)
        assert POLLER.watches == watches  # the success unregistered it
        return event, *idle

    event, loop_wakeups, reads, trips = asyncio.run(scenario())
    polls = event.payload.pop("polls")
    assert event.payload == {"status": "success", "covered_fraction": 1.0, "partitions": 4,
                             "deadline": None, "checks": 2}
    assert polls >= reads + 2  # the reads before the idle window, during it, and the change
    assert loop_wakeups == 0
    assert reads >= 5 and abs(trips - reads) <= 1  # one change stamp per poll, nothing else


def test_a_cancelled_trigger_unregisters(events: Catalog) -> None:
    register_hours(events, 0, 1)

    async def scenario() -> None:
        watches = POLLER.watches
        tasks = [trigger() for _ in range(3)]
        runs = [task.run() for task in tasks]
        waiting = [asyncio.ensure_future(run.__anext__()) for run in runs]
        while any(task._polls is None or task._polls.reads < 1 for task in tasks):
            await asyncio.sleep(0.01)
        assert POLLER.watches == watches + 3
        for future in waiting:  # what the triggerer does to a trigger it drops
            future.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        assert POLLER.watches == watches == 0 and POLLER.armed == 0
        for task, run in zip(tasks, runs, strict=True):
            await run.aclose()
            await task.cleanup()  # after run() unregistered: a no-op
        assert POLLER.watches == watches

    asyncio.run(scenario())


def test_several_triggers_share_the_poller_threads(events: Catalog,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    readers: set[str] = set()
    store_class = type(events.kv)
    original = store_class.change_stamp  # what each poll reads first

    def spy(self: KVStore) -> Hashable | None:
        readers.add(threading.current_thread().name)
        return original(self)

    monkeypatch.setattr(store_class, "change_stamp", spy)
    register_hours(events, 0, 1)
    before = {t.name for t in threading.enumerate()}

    async def scenario() -> list[Any]:
        tasks = [trigger(request=CoverRequest.of("events", T0, T0.add(hours=h)).to_json())
                 for h in (3, 4, 5, 6)]
        waiting = [asyncio.ensure_future(task.run().__anext__()) for task in tasks]
        while any(task._polls is None or task._polls.reads < 3 for task in tasks):
            await asyncio.sleep(0.01)
        await asyncio.to_thread(register_hours, events, 2, 6)
        return [e.payload["status"] for e in await asyncio.wait_for(asyncio.gather(*waiting), 30)]

    assert asyncio.run(scenario()) == ["success"] * 4
    # the checks read it too, in asyncio.to_thread; every poll is in the poller's threads
    polled = {name for name in readers if not name.startswith("asyncio_")}
    assert polled and all(name.startswith("partitions-poller-") for name in polled)
    pollers = {t.name for t in threading.enumerate() if t.name.startswith("partitions-poller-")}
    assert len(pollers) == POLLERS and not (pollers - before - {
        f"partitions-poller-{i}" for i in range(POLLERS)})


def test_a_failing_poll_warns_resolves_again_and_recovers(
        events: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """As before the poller: a store failure is a warning, the next poll resolves the
    connection again (a new catalog, a new watch), and the trigger goes on to its event."""
    register_hours(events, 0, 1)
    failures = [1]
    store_class = type(events.kv)
    original = store_class.change_stamp  # what an idle poll reads

    def flaky(self: KVStore) -> Hashable | None:
        if failures[0] and threading.current_thread().name.startswith("partitions-poller-"):
            failures[0] -= 1
            raise StoreUnavailable("sqlite:///x", "reading the generation", "disk I/O error")
        return original(self)

    monkeypatch.setattr(store_class, "change_stamp", flaky)
    resolutions: list[int] = []
    aresolve = PartitionCatalogHook.aresolve

    async def counting(self: PartitionCatalogHook) -> tuple[str, str | None]:
        resolutions.append(1)
        return await aresolve(self)

    monkeypatch.setattr(PartitionCatalogHook, "aresolve", counting)
    task = trigger()

    async def scenario() -> Any:
        run = task.run()
        waiting = asyncio.ensure_future(run.__anext__())
        with capture_logs() as logs:
            while failures[0]:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
            await asyncio.to_thread(register_hours, events, 2, 3)
            event = await asyncio.wait_for(waiting, 30)
        return event, logs

    event, logs = asyncio.run(scenario())
    assert event.payload["status"] == "success"
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == [
        "partition catalog unreachable, will retry: " + str(StoreUnavailable(
            "sqlite:///x", "reading the generation", "disk I/O error"))]
    assert len(resolutions) == 2  # once per run, and again after the failure


def test_a_deadline_ends_the_wait_with_the_timeout_event(events: Catalog) -> None:
    register_hours(events, 0, 2)
    soon = pendulum.now("UTC").add(seconds=0.3).isoformat()

    async def scenario() -> Any:
        watches = POLLER.watches
        event = await asyncio.wait_for(trigger(deadline=soon, poke_interval=60).run().__anext__(),
                                       30)
        assert POLLER.watches == watches
        return event

    event = asyncio.run(scenario())
    assert event.payload == {"status": "timeout", "deadline": soon, "missing": [
        "missing 2024-01-01T03:00/04:00: no HOURLY 2024-01-01-03"],
        "notes": ["region: not a dimension, any value counts"]}
