"""The events :class:`~.coverage.PartitionCoverageTrigger` yields, as one typed contract.

Why a TypedDict: the trigger writes the event in the triggerer and the sensor reads it back
in a worker, through Airflow's JSON; a field renamed on one side only would show up as a
``KeyError`` at run time. Each field is written by the trigger and read by
``PartitionCoverageSensor.execute_complete``; mypy checks both against this one definition.
"""

from __future__ import annotations

from typing import Literal, TypedDict


class CoverageEvent(TypedDict, total=False):
    """``status`` says which of the other fields are set:

    - ``success``: ``covered_fraction``, ``partitions``, ``deadline``, ``checks`` (covers
      computed), ``polls`` (the poller's reads: change stamps, or generations);
    - ``timeout``: ``missing`` (the status lines of what was missing), ``notes`` (the
      columns that are not dimensions), ``deadline``;
    - ``error``: ``message``.
    """

    status: Literal["success", "timeout", "error"]
    covered_fraction: float
    partitions: int
    deadline: str | None
    checks: int
    polls: int
    missing: list[str]
    notes: list[str]
    message: str


__all__ = ["CoverageEvent"]
