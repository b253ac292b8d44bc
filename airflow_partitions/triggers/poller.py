"""One shared poller per process: the triggers' idle reads, without waking their event loop.

Why: handing an idle trigger poll's blocking read to a thread and the answer back to the event
loop at every poll costs more than twice the read (0.18 ms against 0.05 ms). Here a trigger
registers a :class:`Watch` (a read function and its interval) and awaits :meth:`Watch.changed`
with the answer it knows. The poller runs the read when it is due and wakes the trigger's event
loop (``call_soon_threadsafe`` on an ``asyncio.Future``) only when the answer differs or the
read failed. An idle poll costs the read, a heap pop and push under one lock and two clock
reads; the event loop does nothing at all. The reads still never run on the event loop: a lock
or a ``VACUUM`` on a SQLite file must not stall every trigger.

Threads: a read blocks its thread (SQLite waits for a lock, HBase for a timeout), so a few
threads (:data:`POLLERS`) share one heap. One of them leads: it waits for the earliest due watch
and runs the reads, one after the other. The others stand by and look every :data:`SLOW_READ`
seconds whether the leader has been inside one read that long; then one of them takes the lead
(the old leader stands by once its read returns). So a slow read delays the other watches by
about :data:`SLOW_READ`, until every thread is stuck in a read; then the rest wait for one to
return. Reads of one SQLite store are serialised by its connection's lock anyway. What standing
by costs: each standby thread wakes once per :data:`SLOW_READ` seconds (microseconds).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: Threads per process (one leads, the others stand by for a read that hangs).
POLLERS = 4
#: Seconds inside one read after which a standby thread takes over the other watches.
SLOW_READ = 1.0

_Entry = tuple[float, int, "Watch[Any]"]


class Watch(Generic[T]):
    """A registered read, run by the poller every ``interval`` seconds while someone awaits
    :meth:`changed`; :meth:`close` unregisters it (also a context manager).

    ``reads`` counts its reads, ``wakeups`` the times it woke the waiting event loop.
    """

    def __init__(self, poller: Poller, read: Callable[[], T], interval: float,
                 name: str = "") -> None:
        self.poller = poller
        self.read = read
        self.interval = max(0.0, float(interval))
        self.name = name
        self.reads = 0
        self.wakeups = 0
        self.closed = False
        # Armed state, guarded by the poller's lock: the answer the waiter knows, its loop and
        # future, and the token of its heap entry (0: not armed).
        self._last: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._future: asyncio.Future[T] | None = None
        self._token = 0

    async def changed(self, last: T | None) -> T:
        """The read's first answer that differs from ``last`` (``!=``), or its exception. The
        first read is one interval from now; equal answers wake nothing. Cancelling the await
        disarms the watch (it stays registered)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self.poller._arm(self, last, loop, future)
        try:
            return await future
        finally:
            self.poller._disarm(self, future)

    def close(self) -> None:
        """Unregister: no read runs for this watch any more (idempotent)."""
        self.poller._unregister(self)

    def __enter__(self) -> Watch[T]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Watch {self.name or hex(id(self))} every {self.interval:g} s>"


class Poller:
    """The threads and the heap of armed watches. Threads start with the first registration
    (and again in a forked child, where threads do not survive); they are daemons named
    ``partitions-poller-<n>``."""

    def __init__(self, threads: int = POLLERS, slow: float = SLOW_READ) -> None:
        self.threads = threads
        self.slow = slow
        self._start_lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[_Entry] = []
        self._tokens = itertools.count(1)
        self._registered = 0
        self._leader: int | None = None
        self._reading_since: float | None = None  # when the leader started its current read
        self._pid: int | None = None
        #: Reads run, and event-loop wake-ups made, by this process's poller.
        self.reads = 0
        self.wakeups = 0

    @property
    def watches(self) -> int:
        """Registered watches that are not closed."""
        return self._registered

    @property
    def armed(self) -> int:
        """Awaited watches waiting for their next read (one being read now is not counted)."""
        with self._cond:
            return len(self._heap)

    def watch(self, read: Callable[[], T], interval: float, name: str = "") -> Watch[T]:
        """Register ``read``, to be run every ``interval`` seconds while awaited."""
        self._ensure_started()
        with self._cond:
            self._registered += 1
        return Watch(self, read, interval, name)

    def stop(self) -> None:
        """End the threads (tests; the process's :data:`POLLER` runs until the process ends).
        A later registration starts new ones."""
        with self._start_lock:
            old = self._cond
            with old:
                self._reset()  # a new condition: the old threads see it and end
                old.notify_all()

    def _ensure_started(self) -> None:
        if self._pid == os.getpid():
            return
        with self._start_lock:
            if self._pid == os.getpid():
                return
            if self._pid is not None:  # a forked child: no parent's thread or watch is here
                self._reset()
            state = self._cond, self._heap
            for number in range(self.threads):
                threading.Thread(target=self._serve, args=(number, *state), daemon=True,
                                 name=f"partitions-poller-{number}").start()
            self._pid = os.getpid()

    def _arm(self, watch: Watch[Any], last: Any, loop: asyncio.AbstractEventLoop,
             future: asyncio.Future[Any]) -> None:
        with self._cond:
            if watch.closed:
                raise RuntimeError(f"{watch!r} is closed")
            if watch._token:
                raise RuntimeError(f"{watch!r} is already awaited")
            token = next(self._tokens)
            watch._last, watch._loop, watch._future, watch._token = last, loop, future, token
            heapq.heappush(self._heap, (time.monotonic() + watch.interval, token, watch))
            if self._heap[0][1] == token:  # due before what the leader waits for
                self._cond.notify_all()

    def _disarm(self, watch: Watch[Any], future: asyncio.Future[Any] | None = None) -> None:
        """Forget the waiter (a no-op when the poller already settled it); its heap entry goes."""
        with self._cond:
            if future is not None and watch._future is not future:
                return
            self._disarm_locked(watch)

    def _disarm_locked(self, watch: Watch[Any]) -> None:
        token, watch._token = watch._token, 0
        watch._loop = watch._future = watch._last = None
        if not token:
            return
        heap = self._heap
        for i, entry in enumerate(heap):  # O(watches), only when a wait ends without a change
            if entry[1] == token:
                heap[i] = heap[-1]
                heap.pop()
                heapq.heapify(heap)
                break
        # absent: a thread is reading it now, and drops the answer (the token no longer matches)

    def _unregister(self, watch: Watch[Any]) -> None:
        with self._cond:
            if watch.closed:
                return
            watch.closed = True
            self._registered -= 1
            self._disarm_locked(watch)

    def _serve(self, me: int, cond: threading.Condition, heap: list[_Entry]) -> None:
        """A thread's life: lead (wait for the earliest due watch, read it, wake its loop only
        for news) or stand by for a leader stuck in a read."""
        clock, slow = time.monotonic, self.slow
        with cond:
            while cond is self._cond:  # until stop(): then the thread ends
                now = clock()
                leader = self._leader
                if leader != me:
                    since = self._reading_since
                    if leader is not None and (since is None or now - since < slow):
                        cond.wait(slow)  # stand by
                        continue
                    self._leader, self._reading_since = me, None  # none, or stuck: lead
                if not heap:
                    cond.wait()
                    continue
                due, token, watch = heap[0]
                if watch._token != token:  # defensive: a stale entry
                    heapq.heappop(heap)
                    continue
                if due > now:
                    cond.wait(due - now)
                    continue
                heapq.heappop(heap)
                self._reading_since = now
                error: BaseException | None = None
                cond.release()
                try:
                    value = watch.read()
                except BaseException as exc:  # handed to the waiting coroutine
                    value, error = None, exc
                finally:
                    cond.acquire()
                self.reads += 1
                watch.reads += 1
                if self._leader == me:
                    self._reading_since = None
                if watch._token != token:  # cancelled or closed meanwhile: nobody waits
                    continue
                if error is None:
                    try:
                        same = value == watch._last
                    except BaseException as exc:
                        same, error = False, exc
                    if same:  # idle: no wake-up, the next read one interval from now
                        heapq.heappush(heap, (clock() + watch.interval, token, watch))
                        if self._leader != me:
                            # Another thread took the lead during this slow read and may be
                            # waiting on an empty heap, or for a later entry: tell it.
                            cond.notify_all()
                        continue
                loop, future = watch._loop, watch._future
                watch._token, watch._loop, watch._future, watch._last = 0, None, None, None
                if loop is None or future is None:  # cannot happen while the token matches
                    continue
                self.wakeups += 1
                watch.wakeups += 1
                try:
                    loop.call_soon_threadsafe(_settle, future, value, error)
                except RuntimeError:  # the loop closed meanwhile: nobody waits for this answer
                    pass


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():  # the waiting task was cancelled
        return
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(error)


#: This process's poller, shared by every trigger of a triggerer.
POLLER = Poller()
