"""``PartitionsViewLink``: a sensor task's button to its fact's view over the range it waits on.

Airflow 3 computes a task's extra links when the task finishes, on the rendered task, and
keeps the URL in XCom; so the link shows the range the sensor really waited on, templates
rendered. The URL is absolute when ``[api] base_url`` is set, else relative to the UI's host.
The button sits on the task instance's Details tab, under "Extra Links"; so that nobody has to
find it, the sensor also logs the same URL once, at its first poke (:func:`view_url`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from airflow.sdk import BaseOperatorLink
from airflow.sdk.configuration import conf

from airflow_partitions.cover import CoverRequest
from airflow_partitions.ui.urls import fact_url

if TYPE_CHECKING:
    from airflow.sdk import BaseOperator
    from airflow.sdk.types import TaskInstanceKey


class _CoverOperator(Protocol):
    """The sensor the link is on: its rendered and validated ``CoverRequest``."""

    request: CoverRequest


class PartitionsViewLink(BaseOperatorLink):
    """The fact's Partitions view over the sensor's ``[start, end)``."""

    name = "Partitions"

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        # the sensor's rendered and validated CoverRequest
        return view_url(cast(_CoverOperator, operator).request)


def view_url(request: CoverRequest) -> str:
    """The fact's Partitions view over the request's range: what the button opens, and what the
    sensor's first poke logs (absolute once ``[api] base_url`` is set, as ``make airflow`` does)."""
    base = conf.get("api", "base_url", fallback="") or ""
    return fact_url(request.require_fact(), request.start.isoformat(), request.end.isoformat(),
                    base_url=base)
