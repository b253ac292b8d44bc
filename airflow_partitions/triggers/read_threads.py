"""A few long-lived threads for the triggers' idle reads: the cheapest way off the event loop.

Why not ``asyncio.to_thread``: an idle trigger poll is one small blocking read (the fact's
generation), and ``to_thread``'s machinery (a ``concurrent.futures`` future chained to an
asyncio one, the executor's bookkeeping) cost twice the read itself: about 0.14 ms per call on
the 2-core benchmark machine, against about 0.06 ms for a queue and ``call_soon_threadsafe``
(docs/benchmarks-poke.md). The reads still never run on the event loop. Work that may take long
(computing a cover) stays on ``asyncio.to_thread``: a few readers must not be held by it.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: Reader threads per process: enough that a store timing out (an HBase outage) does not queue
#: every trigger's poll behind one read.
READERS = 4

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[[], Any]]


class ReadThreads:
    """Daemon threads taking ``(loop, future, fn)`` from one queue, started on first use (and
    again in a forked child, where threads do not survive)."""

    def __init__(self, size: int = READERS) -> None:
        self.size = size
        self._queue: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._pid: int | None = None
        self._lock = threading.Lock()

    def _ensure_started(self) -> None:
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._queue = queue.SimpleQueue()
            for i in range(self.size):
                threading.Thread(target=_work, args=(self._queue,), daemon=True,
                                 name=f"partitions-reader-{i}").start()
            self._pid = os.getpid()

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a reader thread; its result or its exception, here."""
        self._ensure_started()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put((loop, future, fn))
        return await future


def _work(jobs: queue.SimpleQueue[_Job]) -> None:
    while True:
        loop, future, fn = jobs.get()
        try:
            result, error = fn(), None
        except BaseException as exc:  # handed to the coroutine that waits for it
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(_settle, future, result, error)
        except RuntimeError:  # the loop closed meanwhile: nobody waits for this answer
            pass


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the waiting task was cancelled
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


#: This process's readers, shared by every trigger of a triggerer.
READ_THREADS = ReadThreads()
