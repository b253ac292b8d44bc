"""The arguments that name a cover, kept alike by the sensor and the Spark operators.

``PartitionCoverageSensor`` and ``CoveredSparkSubmitOperator`` (so ``PrunedSparkSubmitOperator``
too) take the same ``fact``, ``start``, ``end``, ``time_column``, ``periods``, ``storages``,
``align``, ``where`` and ``fresh_only``; each keeps them through :class:`CoverArguments`, lists
:data:`COVER_TEMPLATE_FIELDS` among its template fields, and builds its ``CoverRequest`` from the
rendered values with :meth:`CoverArguments.cover_request`. No ``airflow`` import: a mixin of
plain attributes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Final, TypedDict, Unpack

from airflow_partitions.cover import CoverRequest

#: The templated ones, in the order the operators list them (``fresh_only`` is a flag).
COVER_TEMPLATE_FIELDS: Final = (
    "fact", "start", "end", "time_column", "periods", "storages", "align", "where",
)


class CoverOverrides(TypedDict, total=False):
    """What :meth:`CoverArguments.cover_request` may take in place of the rendered
    arguments."""

    fact: str | None
    start: str | dt.datetime | None
    end: str | dt.datetime | None
    periods: Sequence[str] | str | None
    storages: Sequence[str] | str | None
    where: str | None


class CoverArguments:
    """A mixin for an operator that asks the catalog for one cover."""

    fact: str | None
    start: str | dt.datetime | None
    end: str | dt.datetime | None
    time_column: str | None
    periods: Sequence[str] | str | None
    storages: Sequence[str] | str | None
    align: str | None
    where: str | None
    fresh_only: bool

    def keep_cover_arguments(
        self, *, fact: str | None, start: str | dt.datetime | None,
        end: str | dt.datetime | None, time_column: str | None,
        periods: Sequence[str] | str | None, storages: Sequence[str] | str | None,
        align: str | None, where: str | None, fresh_only: bool,
    ) -> None:
        """Keep the arguments as attributes of the same names (Airflow renders them there)."""
        self.fact, self.start, self.end = fact, start, end
        self.time_column, self.periods, self.storages = time_column, periods, storages
        self.align, self.where, self.fresh_only = align, where, fresh_only

    def cover_request(self, **overrides: Unpack[CoverOverrides]) -> CoverRequest:
        """The rendered arguments as a ``CoverRequest`` (no empty range), with ``overrides``
        (``fact``, ``start``, ``end``, ``periods``, ``storages``, ``where``) in their place."""
        given: CoverOverrides = {
            "fact": self.fact, "start": self.start, "end": self.end, "periods": self.periods,
            "storages": self.storages, "where": self.where, **overrides,
        }
        return CoverRequest.of(
            given["fact"], given["start"], given["end"], time_column=self.time_column,
            periods=given["periods"], storages=given["storages"], align=self.align,
            allow_empty=False, fresh_only=self.fresh_only, where=given["where"],
        )
