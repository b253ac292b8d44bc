"""``PartitionCoverageSensor``: wait until registered partitions cover ``[start, end)``.

Each poke asks a :class:`~airflow_partitions.watch.CoverageWatch`: one round trip while nothing
changed (the store's change stamp; where the store has none, HBase, the fact's generation read),
and a verified cover only when the fact's generation moved since the last poke of this process.
An idle poke costs that round trip and little else (docs/airflow.md): the connection is
resolved once per process (``PartitionCatalogHook.cached_conn``), the ``[metrics]`` settings
read once, and the status line logged only when it changes (or as a reminder every 10 minutes).
Each poke publishes the coverage metrics when Airflow's metrics are on (docs/observability.md).
Success returns the verified cover (``Cover.to_json()``) as the task's XCom return value.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final

import pendulum
from airflow.sdk import BaseSensorOperator, PokeReturnValue
from airflow.sdk.configuration import conf
from airflow.sdk.exceptions import (
    AirflowException,
    AirflowFailException,
    AirflowSensorTimeout,
    AirflowSkipException,
)

from airflow_partitions.catalog import CoverVerificationError
from airflow_partitions.cover import (
    Cover,
    CoverJson,
    CoverRequest,
    missing_list,
    status_line,
    to_instant,
)
from airflow_partitions.errors import CorruptCatalog, InvalidInput
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.hooks.stats import publish_coverage
from airflow_partitions.kv import StoreDamaged, StoreUnavailable
from airflow_partitions.operators.cover_arguments import COVER_TEMPLATE_FIELDS, CoverArguments
from airflow_partitions.triggers.coverage import PartitionCoverageTrigger
from airflow_partitions.triggers.events import CoverageEvent
from airflow_partitions.ui.link import PartitionsViewLink, view_url
from airflow_partitions.watch import CoverageWatch

if TYPE_CHECKING:
    from airflow.sdk import Context

#: How long past the trigger's own deadline Airflow waits before it times the deferral out.
DEFERRAL_GRACE = dt.timedelta(minutes=2)
#: The range a sensor waits on unless told otherwise: the run's data interval.
DEFAULT_START = "{{ data_interval_start }}"
DEFAULT_END = "{{ data_interval_end }}"


#: Seconds between a deferred sensor's checks in the triggerer: one round trip each while
#: nothing changed (the change stamp), so a second costs little and starts the work a second
#: after the write.
TRIGGER_POLL_SECONDS: Final = 1.0

class PartitionCoverageSensor(CoverArguments, BaseSensorOperator):
    """Wait until the catalog can cover ``[start, end)`` of ``fact`` with registered partitions.

    :param fact: the fact to cover. (templated)
    :param start: the range start, a datetime or ISO text with an offset; default the data
        interval start. (templated)
    :param end: the range end (exclusive); default the data interval end. (templated)
    :param time_column: the time partition column (default: the fact's first). (templated)
    :param periods: restrict the cover to these update periods. (templated)
    :param storages: restrict the cover to these storage tables. (templated)
    :param align: the cover's alignment policy, passed to ``catalog.cover``. (templated)
    :param fresh_only: wait for a cover of fresh partitions: stale ones (``Catalog.stale``)
        do not count, and each poke's line says which were skipped.
    :param where: which slices of the fact's declared dimensions must be present, a filter
        over dimension columns (``"region IN ('eu', 'us')"``); default: every value each
        domain requires (docs/dimensions.md). It travels in the trigger's request and in the
        XCom cover (key ``where``), so a ``cover_from`` operator asks for the same slices.
        A ``where`` that selects no declared slice (a value no domain has: no registration
        can satisfy it) fails the task at its first check, as does a column that is not a
        dimension. (templated)
    :param catalog_conn_id: the ``partition_catalog`` connection. (templated)
    :param deferrable: wait in the triggerer (no worker slot) between the first and last check.
    :param trigger_poll_interval: seconds between the trigger's checks while deferred (default
        1: the sensor fires about a second after the completing write; while nothing changed
        a check is one store round trip, on the triggerer's shared poller thread).
        ``poke_interval`` paces the checks of a sensor that does not defer.
    """

    template_fields: Sequence[str] = (*COVER_TEMPLATE_FIELDS, "catalog_conn_id")
    fact: str  # required here
    ui_color = "#c8e6c9"
    #: A button to the fact's Partitions view over the range (docs/observability.md).
    operator_extra_links = (PartitionsViewLink(),)

    def __init__(
        self,
        *,
        fact: str,
        start: str | dt.datetime = DEFAULT_START,
        end: str | dt.datetime = DEFAULT_END,
        time_column: str | None = None,
        periods: Sequence[str] | str | None = None,
        storages: Sequence[str] | str | None = None,
        align: str | None = None,
        fresh_only: bool = False,
        where: str | None = None,
        catalog_conn_id: str = PartitionCatalogHook.default_conn_name,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        trigger_poll_interval: float = TRIGGER_POLL_SECONDS,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.keep_cover_arguments(
            fact=fact, start=start, end=end, time_column=time_column, periods=periods,
            storages=storages, align=align, where=where, fresh_only=fresh_only,
        )
        self.catalog_conn_id = catalog_conn_id
        self.deferrable = deferrable
        if not trigger_poll_interval > 0:
            raise ValueError(f"trigger_poll_interval is seconds above 0, not "
                             f"{trigger_poll_interval!r}")
        self.trigger_poll_interval = float(trigger_poll_interval)
        self._watch: CoverageWatch | None = None
        self._range_from_interval = start == DEFAULT_START and end == DEFAULT_END

    @cached_property
    def hook(self) -> PartitionCatalogHook:
        return PartitionCatalogHook(self.catalog_conn_id)

    @cached_property
    def request(self) -> CoverRequest:
        """The rendered arguments, validated once (rendering happens before execute)."""
        try:
            return self.cover_request()
        except InvalidInput as exc:
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc

    def poke(self, context: Context) -> bool | PokeReturnValue:
        watch = self._watch
        if watch is None:
            watch = self._watch = CoverageWatch(self.request)
        try:
            catalog = self.hook.cached_conn()
            cover = watch.check(catalog)
        except StoreUnavailable as exc:
            self.hook.forget_cached()  # the connection may have moved: ask Airflow next time
            self.log.warning("partition catalog unreachable, will retry: %s", exc)
            return False
        except CoverVerificationError as exc:  # writers busy in the range: ask next poke
            self.log.warning("%s; will check again", exc)
            return False
        except (InvalidInput, CorruptCatalog, StoreDamaged) as exc:
            # unknown fact, misaligned range, a damaged catalog, ...: waiting cannot help
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc
        if watch.news() is not None:  # the answer changed, or the 10-minute reminder
            self.log.info("%s", watch.line)
        # no-op unless Airflow metrics are on; then every poke (lateness grows while idle)
        publish_coverage(catalog, self.request, cover, state=watch.state_now)
        if cover.coverable:
            return PokeReturnValue(is_done=True, xcom_value=self._xcom(cover))
        return False

    def _xcom(self, cover: Cover) -> CoverJson:
        """The verified cover as JSON, plus the slice filter it answered (``where``), which a
        ``cover_from`` operator reads back to ask for the same slices."""
        out = cover.to_json()
        if self.request.where is not None:
            out["where"] = self.request.where
        return out

    @property
    def last_cover(self) -> Cover | None:
        """The cover the last successful check computed (None before any)."""
        return self._watch.cover if self._watch is not None else None

    def _still_missing(self) -> str:
        if self.last_cover is None:
            return "the catalog was never reached"
        return "still missing: " + "; ".join([*missing_list(self.last_cover),
                                               *self.last_cover.notes])

    def _log_range(self, context: Context) -> None:
        """Say which range this check waits on, and warn when a manual run's data interval
        (Airflow infers it from when the run was triggered, not from ``--logical-date``) does
        not hold the run's logical date: the sensor would wait on the wrong hours."""
        request = self.request
        source = "the run's data interval" if self._range_from_interval else "start=/end="
        self.log.info("waiting until %s [%s, %s) is coverable (range from %s)", request.fact,
                      request.start.isoformat(), request.end.isoformat(), source)
        if not context.get("task_reschedule_count"):  # the try's first poke: once, not each
            self.log.info("Partitions view of this range: %s (also the Partitions button under "
                          "this task instance's Details tab, Extra Links)", view_url(request))
        run = context.get("dag_run")
        logical = getattr(run, "logical_date", None)
        if (self._range_from_interval and logical is not None
                and str(getattr(run, "run_type", "")).lower().endswith("manual")
                and not request.start <= logical < request.end):
            self.log.warning(
                "this manual run's logical date %s is outside its data interval [%s, %s): "
                "Airflow infers a manual run's interval from when it was triggered. Pass "
                "start= and end= (e.g. '{{ logical_date }}') to wait on the logical date's "
                "range", logical.isoformat(), request.start.isoformat(), request.end.isoformat())

    def execute(self, context: Context) -> CoverJson | None:
        self._log_range(context)
        if self.deferrable:
            result = self.poke(context)
            if result:
                xcom: CoverJson | None = (result.xcom_value if isinstance(result, PokeReturnValue)
                                          else None)
                return xcom
            self._defer(pendulum.now("UTC").add(seconds=self.timeout))
        try:
            done: CoverJson | None = super().execute(context)  # what poke returned
            return done
        except AirflowSensorTimeout as exc:
            raise AirflowSensorTimeout(f"{exc} {self.fact}: {self._still_missing()}") from exc
        except AirflowSkipException as exc:
            if "timed out" not in str(exc):
                raise
            raise AirflowSkipException(f"{exc} {self.fact}: {self._still_missing()}") from exc

    def _defer(self, deadline: pendulum.DateTime) -> None:
        remaining = max((deadline - pendulum.now("UTC")).total_seconds(), 0.0)
        self.defer(
            trigger=PartitionCoverageTrigger(
                request=self.request.to_json(),
                catalog_conn_id=self.catalog_conn_id,
                poke_interval=self.trigger_poll_interval,
                deadline=deadline.isoformat(),
            ),
            method_name="execute_complete",
            timeout=dt.timedelta(seconds=remaining) + DEFERRAL_GRACE,
        )

    def execute_complete(self, context: Context, event: CoverageEvent | None = None
                         ) -> CoverJson | None:
        """Resume after the trigger fired: re-verify the cover before succeeding."""
        event = event or CoverageEvent()
        status = event.get("status")
        if status == "timeout":
            missing = "; ".join([*(event.get("missing") or ["unknown"]),
                                 *(event.get("notes") or [])])
            raise AirflowSensorTimeout(
                f"{self.task_id}: timed out waiting for {self.fact}; still missing: {missing}"
            )
        if status != "success":
            raise AirflowException(
                f"{self.task_id}: the coverage trigger failed: {event.get('message', event)}"
            )
        try:
            cover = self.hook.get_conn().cover_with_partitions(self.request).cover
        except (StoreUnavailable, CoverVerificationError) as exc:
            self.log.warning("could not re-verify after the trigger fired: %s", exc)
            cover = None
        except (InvalidInput, CorruptCatalog, StoreDamaged) as exc:
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc
        if "checks" in event:  # how the wait went: 2 checks = fired at the first change seen
            self.log.info("the trigger fired at its cover check %s, after %s poll(s)",
                          event["checks"], event.get("polls"))
        if cover is not None and cover.coverable:
            self.log.info("%s (re-verified)", status_line(cover))
            return self._xcom(cover)
        if cover is not None:
            self._watch = CoverageWatch(self.request)
            self._watch.cover = cover
            self.log.warning("coverable in the triggerer, not any more: %s", status_line(cover))
        deadline = to_instant(event["deadline"], "deadline") if event.get("deadline") else None
        if deadline is None or pendulum.now("UTC") >= deadline:
            raise AirflowSensorTimeout(f"{self.task_id}: {self.fact}: {self._still_missing()}")
        self._defer(deadline)
        return None  # unreachable: defer raises
