"""``PartitionBackfillOperator``: ``airflow-partitions backfill`` from inside a DAG.

The task plans the producer runs that make ``[start, end)`` coverable, creates the Airflow
backfills stage by stage and waits for them (it holds its worker slot meanwhile: give it a
pool). An Airflow 3 task may not open the metadata DB, so it talks to the api-server's REST
API with the login of the ``airflow_api_conn_id`` connection.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook, BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from airflow_partitions.backfill.rest_api import RestBackfills
from airflow_partitions.backfill.runner import BackfillOptions, BackfillReportJson, BackfillRunner
from airflow_partitions.errors import InvalidInput
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.planning import Instant

if TYPE_CHECKING:
    from airflow.sdk import Context


class PartitionBackfillOperator(BaseOperator):
    """Backfill the producers of a fact's range, in dependency order, until it is coverable.

    :param fact: the fact. (templated)
    :param start: start of the range, included (default: the data interval start). (templated)
    :param end: end of the range, excluded (default: the data interval end). (templated)
    :param restate: also re-run the producers of stale partitions; only fresh partitions count.
    :param where: only these slices of the declared dimensions (``"region = 'eu'"``; default
        every required one); each run's slices reach it as its run conf. (templated)
    :param max_active_runs: runs of one backfill at a time.
    :param unpause: unpause paused producer DAGs instead of failing.
    :param poll_interval: seconds between progress checks.
    :param airflow_api_conn_id: an ``http`` connection to the api-server: host (with scheme),
        port, login and password of a user allowed to create backfills. (templated)
    :param catalog_conn_id: the ``partition_catalog`` connection. (templated)
    """

    template_fields: Sequence[str] = ("fact", "start", "end", "where", "airflow_api_conn_id",
                                      "catalog_conn_id")
    ui_color = "#c8e6c9"

    def __init__(self, *, fact: str, start: Instant | None = None,
                 end: Instant | None = None, restate: bool = False,
                 max_active_runs: int = 10, unpause: bool = False, poll_interval: float = 30.0,
                 airflow_api_conn_id: str = "airflow_api_default",
                 catalog_conn_id: str = PartitionCatalogHook.default_conn_name,
                 where: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if max_active_runs < 1 or not math.isfinite(poll_interval) or poll_interval <= 0:
            raise ValueError("max_active_runs must be >= 1 and poll_interval above 0")
        self.fact, self.start, self.end, self.where = fact, start, end, where
        self.restate, self.unpause = restate, unpause
        self.max_active_runs, self.poll_interval = max_active_runs, poll_interval
        self.airflow_api_conn_id = airflow_api_conn_id
        self.catalog_conn_id = catalog_conn_id

    def api(self) -> RestBackfills:
        conn = BaseHook.get_connection(self.airflow_api_conn_id)
        host = conn.host or "localhost"
        if "://" not in host:
            host = f"{conn.schema or 'http'}://{host}"
        base = f"{host}:{conn.port}" if conn.port else host
        return RestBackfills(base, conn.login or "", conn.password or "")

    def execute(self, context: Context) -> BackfillReportJson:
        start = self.start or context["data_interval_start"]
        end = self.end or context["data_interval_end"]
        if start is None or end is None:  # a run without a data interval (asset-triggered)
            raise AirflowFailException(f"{self.task_id}: this run has no data interval: pass "
                                       "start= and end=")
        catalog = PartitionCatalogHook(self.catalog_conn_id).get_conn()
        runner = BackfillRunner(catalog, self.api(), self.log.info)
        options = BackfillOptions(max_active_runs=self.max_active_runs, restate=self.restate,
                                  unpause=self.unpause, poll_interval=self.poll_interval,
                                  where=self.where or None)
        try:
            report = runner.run(self.fact, start, end, options)
        except InvalidInput as exc:
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc
        if not report.ok:
            raise AirflowFailException(
                f"{self.task_id}: " + "; ".join(report.failures or [report.missing or ""]))
        return report.to_json()
