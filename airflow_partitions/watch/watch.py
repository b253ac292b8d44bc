"""A cover that is recomputed only when its fact changes: what a sensor pokes and a trigger polls.

Why: a sensor asks the same question every poke. The fact's generation counter moves on every
timeline change, so an unchanged generation means an unchanged answer, and a warm check costs
one round trip instead of a cover. The watch also decides when the answer is worth a log line
(:meth:`CoverageWatch.news`): when its status text changed, or as a reminder after
:data:`REMINDER_SECONDS` without a change, so an idle check formats and logs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from airflow_partitions.catalog import Catalog, FactState, NothingSelected
from airflow_partitions.cover import Cover, CoverRequest, status_line

#: Seconds without a change after which the unchanged status line is reported again: a long
#: wait in one process (a poke-mode sensor, a deferral) still shows it is alive in its log.
REMINDER_SECONDS = 600.0

News = Literal["changed", "reminder"]


class CoverageWatch:
    """The verified cover of one request, kept until the fact's generation moves.

    :meth:`check` costs one round trip when the cache is warm and nothing changed (the
    generation read of ``catalog.fact_state``); otherwise (or when handed another catalog: a
    connection that changed) it computes one verified cover. A cover whose ``where`` selects
    no declared slice raises :class:`NothingSelected` (an ``InvalidInput``: permanent).
    A ``fresh_only`` request is recomputed on every check: an input of another fact can be
    restated without moving this fact's generation.

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
        #: The fact's cached state read by the last check (its timelines give the metrics).
        self.state: FactState | None = None
        self._catalog: Catalog | None = None
        self.reminder = reminder
        self._clock = clock
        self._line_of: Cover | None = None
        self._line = ""
        self._reported: str | None = None
        self._reported_at = 0.0

    def check(self, catalog: Catalog) -> Cover:
        state = catalog.fact_state(self.fact)
        self.state = state
        generation = state.generation
        if (self.cover is None or generation != self.generation or catalog is not self._catalog
                or self.request.fresh_only):  # another catalog's generations mean nothing here
            self.cover = catalog.cover_with_partitions(self.request).cover
            self.generation = generation
            self._catalog = catalog
        if self.cover.unselected is not None:
            raise NothingSelected(f"{self.fact}: {self.cover.unselected}")
        return self.cover

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
