"""A cover that is recomputed only when its fact changes: what a sensor pokes and a trigger polls.

Why: a sensor asks the same question every poke, and almost every poke finds nothing changed.
Two counters prove that, cheapest first. The store's change stamp
(:meth:`~airflow_partitions.kv.KVStore.change_stamp`; SQLite: its WAL-index header, or
``PRAGMA data_version`` while that cannot be read, and the connection's own counters) stays
equal only while no row of the store changed, written by any connection of any process: then
the answer is the one computed last, and an idle check is that one round trip, about a
file-system stat's CPU. When the stamp moved (a write, to any fact), or the store has none
(HBase), the fact's generation counter decides as before: it moves on every timeline change
of the fact, so an unchanged generation means an unchanged answer, and only a moved one asks
for a verified cover (which the catalog may prove still true from its change feeds).
:class:`GenerationProbe` is the same two-step read for the trigger's poller.

The watch also decides when the answer is worth a log line (:meth:`CoverageWatch.news`): when
its status text changed, or as a reminder after :data:`REMINDER_SECONDS` without a change, so an
idle check formats and logs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Literal

from airflow_partitions.catalog import Catalog, FactState, NothingSelected
from airflow_partitions.cover import Cover, CoverRequest, status_line

#: Seconds without a change after which the unchanged status line is reported again: a long
#: wait in one process (a poke-mode sensor, a deferral) still shows it is alive in its log.
REMINDER_SECONDS = 600.0

News = Literal["changed", "reminder"]


class CoverageWatch:
    """The verified cover of one request, kept until the fact's generation moves.

    :meth:`check` costs one round trip when nothing changed: the store's change stamp
    (SQLite), or, where the store has none (HBase), the fact's generation. When the stamp
    moved, the generation alone is read (a second round trip). A moved generation (or another
    catalog: a connection that changed) asks for a verified cover, which the catalog may
    prove still true in one more round trip on SQLite (its change feeds), in two on HBase
    (the catalog rows, then the answer's partition rows: ``catalog/covers/answer_basis.py``).
    A cover whose
    ``where`` selects no declared slice raises :class:`NothingSelected` (an ``InvalidInput``:
    permanent). A ``fresh_only`` request is recomputed on every check, without the stamp: an
    input of another fact can be restated without moving this fact's generation.

    :param reminder: seconds after which :meth:`news` repeats an unchanged line (None: never;
        default :data:`REMINDER_SECONDS`).
    :param clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, request: CoverRequest, *, reminder: float | None = REMINDER_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.request = request
        self.fact = request.require_fact()
        self.generation: int | None = None
        self.cover: Cover | None = None
        #: The fact's cached state (its timelines give the metrics); None until
        #: :meth:`state_now` reads it after a check that asked for a cover.
        self.state: FactState | None = None
        self._catalog: Catalog | None = None
        #: The change stamp taken before the generation read behind :attr:`cover` (None: the
        #: store has none, or no check succeeded yet): equal now means nothing changed since.
        self.stamp: Hashable | None = None
        self.reminder = reminder
        self._clock = clock
        self._line_of: Cover | None = None
        self._line = ""
        self._reported: str | None = None
        self._reported_at = 0.0

    def check(self, catalog: Catalog) -> Cover:
        """The verified cover of the request now (see the class doc for what it costs)."""
        cover = self.cover
        if self.request.fresh_only:
            stamp = None
        else:
            stamp = catalog.kv.change_stamp()
            if (stamp is not None and stamp == self.stamp and catalog is self._catalog
                    and cover is not None):  # no row changed: the answer stands
                if cover.unselected is not None:
                    raise NothingSelected(f"{self.fact}: {cover.unselected}")
                return cover
        # The stamp is taken before these reads: a write during them moves it, so the next
        # check reads again rather than keep an answer older than the stamp.
        self.stamp = None
        # The generation alone: the cover, when asked for, reads what it needs itself.
        generation, state = catalog.rows.read_generation(self.fact), self.state
        if (cover is None or generation != self.generation or catalog is not self._catalog
                or self.request.fresh_only):  # another catalog's generations mean nothing here
            cover = self.cover = catalog.cover_with_partitions(self.request).cover
            self.generation = generation
            self._catalog = catalog
            state = None  # read when asked for (metrics): :meth:`state_now`
        self.state = state
        self.stamp = stamp
        if cover.unselected is not None:
            raise NothingSelected(f"{self.fact}: {cover.unselected}")
        return cover

    def state_now(self) -> FactState | None:
        """The fact's cached state behind the last check (None before one), read now if that
        check did not read it (a store with a change stamp reads the generation only) and kept
        until the next check. Metrics ask for it; an idle check never does."""
        if self.state is None and self._catalog is not None and self.cover is not None:
            self.state = self._catalog.fact_state(self.fact)
        return self.state

    @property
    def line(self) -> str:
        """The status line of the current cover, formatted once per cover ("" before any)."""
        cover = self.cover
        if cover is not self._line_of:
            self._line = "" if cover is None else status_line(cover)
            self._line_of = cover
        return self._line

    def news(self) -> News | None:
        """Whether :attr:`line` should be logged after a check: ``"changed"`` when it differs
        from the last one reported (the first check's always does), ``"reminder"`` when it
        was last reported :attr:`reminder` seconds ago; None for an idle check (a pointer
        comparison and a clock read: the line is formatted only when the cover changed)."""
        line, now = self.line, self._clock()
        if line != self._reported:
            self._reported, self._reported_at = line, now
            return "changed"
        if self.reminder is not None and now - self._reported_at >= self.reminder:
            self._reported_at = now
            return "reminder"
        return None


class GenerationProbe:
    """A fact's generation counter, read only when the store's change stamp moved: what the
    trigger's poller calls every interval.

    An idle call is one round trip (the stamp) on SQLite; a moved stamp (a write to any fact)
    adds the generation read, and a store without a stamp (HBase) reads the generation every
    call, as before. Errors are the store's own (``StoreUnavailable``, ``StoreDamaged``, ...).

    :param catalog: the catalog to read.
    :param fact: the fact whose generation is returned.
    :param known: a (stamp, generation) pair read in that order, e.g. a
        :class:`CoverageWatch`'s (``stamp``, ``generation``), so the first call need not read
        the generation when the stamp has not moved since.
    """

    def __init__(self, catalog: Catalog, fact: str,
                 known: tuple[Hashable | None, int | None] = (None, None)) -> None:
        self.catalog = catalog
        self.fact = fact
        self._stamp, self._generation = known
        self._kv = catalog.kv

    def __call__(self) -> int:
        stamp = self._kv.change_stamp()
        known = self._generation
        if stamp is not None and stamp == self._stamp and known is not None:
            return known
        self._stamp = None  # until the read below succeeds
        generation = self.catalog.rows.read_generation(self.fact)
        self._stamp, self._generation = stamp, generation
        return generation
