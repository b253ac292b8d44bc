"""``RegisterPartitionsOperator`` and ``DropPartitionsOperator``: update the catalog after a job.

Both are idempotent (a retried task is harmless), ride out a catalog that is unreachable for up
to ``outage_timeout`` seconds (two minutes by default) within one try
(:meth:`~airflow_partitions.hooks.catalog.PartitionCatalogHook.ride_out`), fail at once, with
no retry, on what waiting cannot mend (bad input, a refused registration, a damaged catalog),
and, given
``outlets=[Asset(...)]``, emit one asset event per partition key and asset, in time order (see
:mod:`.asset_events`), so ``PartitionedAssetTimetable`` DAGs can follow. Keys: see
:func:`airflow_partitions.interop.partition_values.partition_key`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from airflow.sdk import Asset, BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from airflow_partitions.assets.in_task import API_CONN_ID, announce_after_write
from airflow_partitions.catalog import StorageDef, WriteResult
from airflow_partitions.errors import CorruptCatalog, InvalidInput
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.interop import (
    KEY_STYLES,
    KeyFactsJson,
    expand_values,
    key_facts,
    partition_key,
)
from airflow_partitions.kv import StoreDamaged
from airflow_partitions.operators.asset_events import emit_in_time_order, event_extra
from airflow_partitions.operators.openlineage_facets import registration_lineage
from airflow_partitions.outages import OUTAGE_TIMEOUT
from airflow_partitions.periods import UpdatePeriod

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_partitions.catalog import Catalog
    from airflow_partitions.operators.openlineage_facets import Lineage


class _Written(NamedTuple):
    """One attempt's outcome: the storage, the partitions, their asset keys, the catalog
    written to, and the write (None: nothing to do)."""

    sdef: StorageDef
    parts: list[dict[str, str]]
    facts: dict[str, KeyFactsJson]
    catalog: Catalog
    result: WriteResult | None


class WrittenJson(TypedDict):
    """What a register or drop operator returns (its XCom): the counts, and the asset
    partition keys (the first 100, then ``... N more``)."""

    storage: str
    period: str
    changed: int
    unchanged: int
    keys: list[str]


class _PartitionsOperator(BaseOperator):
    """Shared arguments: which partitions, which catalog, which asset keys."""

    template_fields: Sequence[str] = ("storage", "period", "values", "catalog_conn_id")
    template_fields_renderers = {"values": "json"}
    action = ""

    def __init__(
        self,
        *,
        storage: str,
        period: str,
        values: object,
        catalog_conn_id: str = PartitionCatalogHook.default_conn_name,
        partition_key: str = "start",
        key_segments: Sequence[str] | None = None,
        outage_timeout: float = OUTAGE_TIMEOUT,
        airflow_api_conn_id: str = API_CONN_ID,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        #: Where this task announces the coverage events its write made due (docs/airflow.md).
        self.airflow_api_conn_id = airflow_api_conn_id
        if isinstance(outage_timeout, bool) or not isinstance(outage_timeout, int | float) \
                or not outage_timeout >= 0:
            raise ValueError(f"outage_timeout is seconds, 0 or more, not {outage_timeout!r}")
        self.outage_timeout = float(outage_timeout)
        if partition_key not in KEY_STYLES:
            raise ValueError(f"partition_key must be one of {KEY_STYLES}, not {partition_key!r}")
        if key_segments is not None and (partition_key != "composite" or isinstance(
                key_segments, str) or not all(isinstance(c, str) for c in key_segments)):
            raise ValueError("key_segments is a list of column names, for "
                             f"partition_key='composite' only, not {key_segments!r}")
        self.storage = storage
        self.period = period
        self.values = values
        self.catalog_conn_id = catalog_conn_id
        self.partition_key = partition_key
        self.key_segments = None if key_segments is None else tuple(key_segments)
        #: The storage and the partitions the last run wrote (for OpenLineage).
        self.written: tuple[StorageDef, list[dict[str, str]]] | None = None
        #: How many attempts the last run's write took (more than one: it rode out an outage).
        self.attempts = 0

    @cached_property
    def hook(self) -> PartitionCatalogHook:
        return PartitionCatalogHook(self.catalog_conn_id)

    @abstractmethod
    def write(self, catalog: Catalog, parts: list[dict[str, str]]) -> WriteResult:
        """Register or drop ``parts``; each concrete operator says which."""

    def execute(self, context: Context) -> WrittenJson:
        self.written = None
        self.attempts = 0
        try:
            done = self.hook.ride_out(
                self._read_and_write, doing=f"{self.action} {self.storage} {self.period}",
                outage_timeout=self.outage_timeout, log=self.log)
        except InvalidInput as exc:
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc
        except (CorruptCatalog, StoreDamaged) as exc:  # retrying cannot mend it: no retry
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc
        sdef, parts, facts, catalog, result = done
        keys = list(facts)
        if result is None:
            self.log.info("no partitions to %s", self.action)
            return {"storage": self.storage, "period": self.period, "changed": 0,
                    "unchanged": 0, "keys": []}
        self.written = (sdef, parts)
        self.log.info(
            "%s %s %s: %d partition(s), %d changed, %d already so (%s..%s)",
            self.action, self.storage, self.period, len(parts), result.changed,
            result.unchanged, keys[0], keys[-1],
        )
        self._emit(context, sdef, facts, result)
        if result.changed or self.attempts > 1:  # a cut-off attempt may have done the change
            announce_after_write(catalog, sdef.fact, self.airflow_api_conn_id)
        return {"storage": self.storage, "period": self.period, "changed": result.changed,
                "unchanged": result.unchanged, "keys": keys if len(keys) <= 100 else
                [*keys[:100], f"... {len(keys) - 100} more"]}

    def _read_and_write(self, catalog: Catalog) -> _Written:
        """One attempt, safe to run again from the start (the ride-out does after an outage):
        the storage and partitions are read again, and the write finishes what a cut-off one
        left (rows first, timelines by check-and-put, the generation last)."""
        self.attempts += 1
        sdef = catalog.get_storage(self.storage)
        parts = expand_values(self.values, sdef, self.period)
        facts = key_facts(parts, sdef, self.period, self.partition_key, self.key_segments)
        return _Written(sdef, parts, facts, catalog,
                        self.write(catalog, parts) if parts else None)

    def _emit(self, context: Context, sdef: StorageDef, facts: dict[str, KeyFactsJson],
              result: WriteResult) -> None:
        """One event per key and Asset outlet, in time order (also when nothing changed: a
        retry after a crash past the write must still tell downstream DAGs)."""
        assets = [o for o in self.outlets if isinstance(o, Asset)]
        if not assets:
            return
        restated_keys = {partition_key(part, sdef, UpdatePeriod.of(self.period),
                                       self.partition_key, self.key_segments)
                         for part in result.restated}
        extra = event_extra(self.action, self.storage, self.period, facts, result.changed,
                            result.unchanged, restated=len(result.restated),
                            restated_keys=restated_keys)
        emit_in_time_order(context["outlet_events"], assets, list(facts), extra)
        self.log.info("asset partition keys for %s: %d, in time order", [a.name for a in assets],
                      len(facts))


class RegisterPartitionsOperator(_PartitionsOperator):
    """Register partitions of a storage table (idempotent).

    :param storage: the storage table. (templated)
    :param period: the update period (``HOURLY``, ``DAILY``...). (templated)
    :param values: the partitions: a mapping, a list of mappings or a range, see
        :mod:`airflow_partitions.interop.partition_values`. (templated)
    :param location: an explicit location (one partition only); default: the storage's
        location template. (templated)
    :param overwrite: move partitions registered at another location (a new version).
    :param restate: their data changed: register them again with a new version, so partitions
        built from them read as stale (``Catalog.stale``); asset events say ``restated``.
    :param inputs_from: task id of the upstream ``CoveredSparkSubmitOperator`` whose job built
        these partitions; its XCom ``inputs`` (the manifest's partitions with versions) is
        recorded as their lineage. (templated)
    :param catalog_conn_id: the ``partition_catalog`` connection. (templated)
    :param outage_timeout: seconds to keep trying, within one try, while the catalog is
        unreachable (120; pauses of about 1, 2, 4, 8, then 15 s, a warning each); then the try
        fails with ``CatalogOutage``, naming the store and how long it tried, and the task's
        retries take over. 0 fails the try at the first outage.
    :param airflow_api_conn_id: the ``http`` connection to the api-server through which the
        task announces the coverage asset windows its write completed, right after the write
        (``airflow_api_default``; without it the follower announces them).
    :param partition_key: asset partition key style: ``start`` (default), ``value``,
        ``columns``, or ``composite``: Airflow 3.3's composite key for a consumer whose
        ``PartitionedAssetTimetable`` maps with ``ProductMapper(...)``, one ``|``-separated
        segment per column (``eu|2024-01-01T05:00:00``: the non-time columns in column order,
        then the time partition's start), so each slice's hour is its own event.
    :param key_segments: the composite key's columns in the order the consumer's
        ``ProductMapper`` lists its mappers (``["dt", "region"]`` gives
        ``2024-01-01T05:00:00|eu``); it must include the time column. Default: as above.
    """

    template_fields: Sequence[str] = (*_PartitionsOperator.template_fields, "location",
                                      "inputs_from")
    action = "register"
    ui_color = "#bbdefb"

    def __init__(self, *, location: str | None = None, overwrite: bool = False,
                 restate: bool = False, inputs_from: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(restate, bool):
            raise ValueError(f"restate must be True or False, not {restate!r}")
        self.location = location
        self.overwrite = overwrite
        self.restate = restate
        self.inputs_from = inputs_from
        self._inputs: list[Mapping[str, object]] | None = None

    def execute(self, context: Context) -> WrittenJson:
        self._inputs = None
        if self.inputs_from:
            pulled = context["ti"].xcom_pull(task_ids=self.inputs_from, key="inputs")
            if pulled is None:
                raise AirflowFailException(
                    f"{self.task_id}: task {self.inputs_from!r} pushed no 'inputs' to XCom; "
                    "inputs_from must name a CoveredSparkSubmitOperator that ran")
            self._inputs = list(pulled)
            self.log.info("lineage: %d input partition(s) from %s", len(self._inputs),
                          self.inputs_from)
        return super().execute(context)

    def get_openlineage_facets_on_complete(
            self, task_instance: object) -> Lineage | None:
        """The storage as the output dataset, with a subset facet listing exactly the
        partitions registered (``None`` when none were, or without the OpenLineage provider)."""
        if self.written is None:
            return None
        sdef, parts = self.written
        return registration_lineage(sdef, self.period, parts, self.location or None)

    def write(self, catalog: Catalog, parts: list[dict[str, str]]) -> WriteResult:
        return catalog.register(self.storage, self.period, parts, location=self.location or None,
                                overwrite=self.overwrite, restate=self.restate,
                                inputs=self._inputs)


class DropPartitionsOperator(_PartitionsOperator):
    """Drop partitions of a storage table from the catalog (idempotent; data is not deleted).

    Takes the same ``storage``, ``period``, ``values``, ``catalog_conn_id``, ``outage_timeout``,
    ``partition_key`` and ``key_segments`` arguments as :class:`RegisterPartitionsOperator`.
    """

    action = "drop"
    ui_color = "#ffcdd2"

    def write(self, catalog: Catalog, parts: list[dict[str, str]]) -> WriteResult:
        return catalog.drop(self.storage, self.period, parts)
