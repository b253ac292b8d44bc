"""A cover that is recomputed only when its fact changes: what a sensor pokes and a trigger polls.

Why: a sensor asks the same question every poke. The fact's generation counter moves on every
timeline change, so an unchanged generation means an unchanged answer, and a warm check costs
one round trip instead of a cover.
"""

from __future__ import annotations

from airflow_partitions.catalog.facade import Catalog
from airflow_partitions.cover.model import Cover
from airflow_partitions.cover.request import CoverRequest


class CoverageWatch:
    """The verified cover of one request, kept until the fact's generation moves.

    :meth:`check` costs one round trip when the cache is warm and nothing changed (the
    generation read of ``catalog.fact_state``); otherwise it computes one verified cover.
    A ``fresh_only`` request is recomputed on every check: an input of another fact can be
    restated without moving this fact's generation.
    """

    def __init__(self, request: CoverRequest) -> None:
        self.request = request
        self.fact = request.require_fact()
        self.generation: int | None = None
        self.cover: Cover | None = None

    def check(self, catalog: Catalog) -> Cover:
        generation = catalog.fact_state(self.fact).generation
        if self.cover is None or generation != self.generation or self.request.fresh_only:
            self.cover = catalog.cover_with_partitions(self.request).cover
            self.generation = generation
        return self.cover
