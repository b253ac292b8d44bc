"""``CoveredSparkSubmitOperator``: spark-submit on a verified cover, passed as a manifest file.

The cover comes from an upstream ``PartitionCoverageSensor`` (``cover_from``) or from the
operator's own ``fact``/``start``/``end``. Either way it is recomputed and verified against the
partition rows right before launch (docs/design.md, invariants), then written as a manifest (see
:mod:`airflow_partitions.spark.manifest`) whose path reaches the application as
``--partitions-manifest PATH``: never a partition list on the command line. With
``manifest_conf`` (or ``AIRFLOW_PARTITIONS_MANIFEST_CONF=true`` on the worker) the path travels
as the spark conf ``spark.airflow_partitions.manifest`` instead, which the bundled jobs read
(:func:`airflow_partitions.spark.manifest_location`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk.exceptions import AirflowException, AirflowFailException

from airflow_partitions.assets.run_window import run_partition_key, run_window
from airflow_partitions.catalog import StorageDef
from airflow_partitions.cover import Cover, CoverRequest, missing_list, skipped_text, status_line
from airflow_partitions.defaults import (
    default_manifest_dir,
    manifest_by_conf,
    manifest_retention_days,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.hooks.catalog import PartitionCatalogHook
from airflow_partitions.operators.cover_arguments import COVER_TEMPLATE_FIELDS, CoverArguments
from airflow_partitions.operators.openlineage_facets import manifest_lineage
from airflow_partitions.operators.spark_provider import rebuild_hook_on_execute
from airflow_partitions.spark import (
    MANIFEST_ARG,
    MANIFEST_CONF,
    Manifest,
    build_manifest,
    prune_manifests,
    write_manifest,
)

if TYPE_CHECKING:
    import jinja2
    from airflow.sdk import Context

    from airflow_partitions.operators.openlineage_facets import Lineage


class UncoverableRange(AirflowException):
    """The catalog cannot cover the range (and ``allow_partial`` is off, or nothing is covered)."""


class CoveredSparkSubmitOperator(CoverArguments, SparkSubmitOperator):
    """Run ``spark-submit`` on exactly the registered partitions that cover a time range.

    :param cover_from: task id of an upstream ``PartitionCoverageSensor`` whose XCom cover
        gives the range (and, unless given here, the storages and periods). (templated)
    :param fact: the fact, when not taken from ``cover_from``. (templated)
    :param start: range start; default the data interval start. (templated)
    :param end: range end (exclusive); default the data interval end. (templated)
    :param time_column: the time partition column (default: the fact's first). (templated)
    :param periods: restrict the cover to these update periods. (templated)
    :param storages: restrict the cover to these storage tables. (templated)
    :param align: the cover's alignment policy. (templated)
    :param where: which slices of the fact's declared dimensions must be present, a filter
        over dimension columns (``"region IN ('eu', 'us')"``); default: the ``where`` of the
        ``cover_from`` sensor's cover, else every value each domain requires
        (docs/dimensions.md). The manifest lists every row behind each chosen partition, so a
        storage's other slices are in it too. A ``where`` that selects no declared slice
        (a value no domain has) fails the task at once, ``allow_partial`` or not. (templated)
    :param fresh_only: use fresh partitions only: stale ones (built from inputs restated or
        dropped since, see ``Catalog.stale``) are skipped and finer fresh ones used instead.
    :param allow_partial: launch on the covered part of an uncoverable range (logged, and the
        manifest lists what is missing) instead of failing.
    :param residual_filter: the filter the job must still apply, written into the manifest.
        (templated)
    :param manifest_dir: where the manifest file goes (default:
        ``$AIRFLOW_PARTITIONS_MANIFEST_DIR``, else ``$AIRFLOW_HOME/partitions-manifests``); it
        must be readable by the Spark driver. (templated)
    :param keep_manifest: keep the manifest after the job succeeded (default: remove it; a
        failed job's manifest is kept for a person to read).
    :param manifest_retention_days: manifests in ``manifest_dir`` older than this are removed
        when the next one is written (default ``$AIRFLOW_PARTITIONS_MANIFEST_RETENTION_DAYS``,
        else 7).
    :param manifest_conf: pass the path as the spark conf ``spark.airflow_partitions.manifest``
        instead of ``--partitions-manifest PATH`` (the job reads it with
        ``manifest_location``); default ``$AIRFLOW_PARTITIONS_MANIFEST_CONF``, else no.
    :param catalog_conn_id: the ``partition_catalog`` connection. (templated)

    Every other argument is ``SparkSubmitOperator``'s. The manifest path is also pushed to
    XCom under the key ``manifest``, and the partitions it lists, with their versions, under
    the key ``inputs`` (``[{storage, period, values, version}]``), which a
    ``RegisterPartitionsOperator(inputs_from=<this task>)`` records as the output's lineage.

    With the OpenLineage provider installed (the ``lineage`` extra), the task's OpenLineage
    events carry one input dataset per storage table read, with a subset facet listing exactly
    the manifest's partitions (:meth:`get_openlineage_facets_on_complete`).
    """

    template_fields: Sequence[str] = (
        *SparkSubmitOperator.template_fields,
        "cover_from", *COVER_TEMPLATE_FIELDS, "residual_filter", "manifest_dir",
        "catalog_conn_id",
    )

    def __init__(
        self,
        *,
        cover_from: str | None = None,
        fact: str | None = None,
        start: str | dt.datetime | None = None,
        end: str | dt.datetime | None = None,
        time_column: str | None = None,
        periods: Sequence[str] | str | None = None,
        storages: Sequence[str] | str | None = None,
        align: str | None = None,
        where: str | None = None,
        fresh_only: bool = False,
        allow_partial: bool = False,
        residual_filter: str | None = None,
        manifest_dir: str | None = None,
        manifest_conf: bool | None = None,
        keep_manifest: bool = False,
        manifest_retention_days: float | None = None,
        catalog_conn_id: str = PartitionCatalogHook.default_conn_name,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if cover_from is None and fact is None:
            raise ValueError("CoveredSparkSubmitOperator needs cover_from= or fact=")
        self.cover_from = cover_from
        #: A coverage asset's consumer covers its run's window (docs/airflow.md).
        self.window_from_run = cover_from is None and start is None and end is None
        if cover_from is None:
            start = "{{ data_interval_start }}" if start is None else start
            end = "{{ data_interval_end }}" if end is None else end
        self.keep_cover_arguments(
            fact=fact, start=start, end=end, time_column=time_column, periods=periods,
            storages=storages, align=align, where=where, fresh_only=fresh_only,
        )
        self.allow_partial = allow_partial
        self.residual_filter = residual_filter
        self.manifest_dir = manifest_dir
        self.manifest_conf = manifest_conf
        self.keep_manifest = keep_manifest
        self.manifest_retention_days = manifest_retention_days
        self.catalog_conn_id = catalog_conn_id
        self.manifest_path: str | None = None
        #: The manifest the job was launched on and its storages' definitions, kept for
        #: OpenLineage after the file is gone (read at launch: the listener reports from a
        #: forked process with a deadline, no place for catalog reads).
        self.manifest: Manifest | None = None
        self.manifest_storages: dict[str, StorageDef] = {}

    @cached_property
    def catalog_hook(self) -> PartitionCatalogHook:
        return PartitionCatalogHook(self.catalog_conn_id)

    def render_template_fields(self, context: Context,
                               jinja_env: jinja2.Environment | None = None) -> None:
        """A run with a partition key takes its window from the key: its default
        ``{{ data_interval_start }}`` is not rendered (an asset-triggered run of Airflow 3.3
        has no data interval: rendering failed with UndefinedError before the window)."""
        if self.window_from_run and run_partition_key(context) is not None:
            self.start = self.end = None
        super().render_template_fields(context, jinja_env)

    def _request(self, context: Context) -> CoverRequest:
        """The rendered arguments, completed from the upstream sensor's cover if asked."""
        fact, start, end = self.fact, self.start, self.end
        periods, storages, where = self.periods, self.storages, self.where
        if self.cover_from:
            pushed = context["ti"].xcom_pull(task_ids=self.cover_from)
            if not pushed:
                raise AirflowFailException(f"task {self.cover_from!r} pushed no cover to XCom")
            upstream = Cover.from_json(pushed)
            self.log.info("cover from %s: %s", self.cover_from, status_line(upstream))
            fact = fact or upstream.fact
            start = upstream.start if start is None else start
            end = upstream.end if end is None else end
            if periods is None and upstream.partitions:
                periods = sorted({p.period.name for p in upstream.partitions})
            if storages is None and upstream.partitions:
                storages = sorted({p.storage for p in upstream.partitions})
            if where is None:  # the slices the sensor waited for (its XCom says which)
                where = pushed.get("where")
        elif self.window_from_run:
            window = run_window(context, self.catalog_hook.get_conn())
            if window is not None:
                self.log.info("window of partition key %s: [%s, %s)%s",
                              run_partition_key(context), window.start, window.end,
                              f" where {window.where}" if window.where else "")
                fact = fact or window.spec.fact
                start, end = window.start, window.end
                if window.where is not None:
                    where = window.where if where is None else f"({where}) AND ({window.where})"
        return self.cover_request(fact=fact or "", start=start, end=end, periods=periods,
                                  storages=storages, where=where)

    def build_manifest(self, context: Context) -> Manifest:
        """Compute and verify the cover now, and turn it into a manifest (or fail)."""
        try:
            request = self._request(context)
            catalog = self.catalog_hook.get_conn()
            verified = catalog.cover_with_partitions(request)
            fact = request.require_fact()
            column = request.time_column or catalog.get_fact(fact).time_columns[0]
        except InvalidInput as exc:
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc
        cover = verified.cover
        self.log.info("%s (verified)", status_line(cover))
        if cover.unselected is not None:  # no registration can help, nor a retry, nor a part
            raise AirflowFailException(f"{self.task_id}: {fact}: {cover.unselected}")
        missing = missing_list(cover, shown=50)
        if not cover.coverable:
            if not self.allow_partial:
                raise UncoverableRange(
                    f"{self.task_id}: {fact} cannot be covered; missing: "
                    + "; ".join(missing) + (f"; {skipped_text(cover.skipped)}" if cover.skipped
                                            else "")
                    + " (allow_partial=True launches on the covered part)"
                )
            if not verified.partitions:
                raise UncoverableRange(f"{self.task_id}: nothing of {fact} is covered")
            self.log.warning(
                "allow_partial: launching on %.1f%% of the range; missing: %s",
                100 * cover.covered_fraction, "; ".join(missing),
            )
        return build_manifest(
            fact, request.start.isoformat(), request.end.isoformat(),
            (p.to_json() for p in verified.partitions), column,
            residual=self.residual_filter or None, missing=missing if missing else (),
        )

    def prepare_submit(self, context: Context) -> str:
        """Write the manifest and point ``application_args`` (and ``conf``) at it."""
        manifest = self.build_manifest(context)
        ti = context["ti"]
        prefix = f"{ti.dag_id}.{ti.task_id}.{ti.run_id}.{ti.try_number}"
        directory = self.manifest_dir or default_manifest_dir()
        path = write_manifest(manifest, directory, prefix)
        self.manifest_path, self.manifest = path, manifest
        catalog = self.catalog_hook.get_conn()
        self.manifest_storages = {name: catalog.get_storage(name) for name in dict.fromkeys(
            p.storage for p in manifest.partitions)}
        self.log.info("manifest: %s (%d partition(s))", path, len(manifest.partitions))
        self.prune_old_files(directory, now=os.path.getmtime(path))
        args = [str(a) for a in (self.application_args or [])]
        if MANIFEST_ARG in args:  # a retry of the same operator instance: replace, not append
            i = args.index(MANIFEST_ARG)
            del args[i : i + 2]
        by_conf = manifest_by_conf() if self.manifest_conf is None else self.manifest_conf
        if by_conf:
            self.application_args = args
            self.conf = {**(self.conf or {}), MANIFEST_CONF: path}
            self.log.info("manifest passed as spark conf %s", MANIFEST_CONF)
        else:
            self.application_args = [*args, MANIFEST_ARG, path]
        rebuild_hook_on_execute(self)  # execute builds it from the arguments above
        ti.xcom_push(key="manifest", value=path)
        ti.xcom_push(key="inputs", value=manifest.inputs)
        return path

    def prune_old_files(self, directory: str, now: float) -> None:
        """Remove manifests and key files older than the retention: failed runs keep theirs
        for a person to read, but not forever."""
        retention = self.manifest_retention_days
        old = prune_manifests(directory, manifest_retention_days() if retention is None
                              else retention, now=now)
        if old:
            self.log.info("removed %d file(s) older than the retention from %s", len(old),
                          directory)

    def get_openlineage_facets_on_complete(
            self, task_instance: object) -> Lineage | None:
        """The storages the job read, each with exactly the manifest's partitions of it (the
        pruned ones for ``PrunedSparkSubmitOperator``); ``None`` before a launch or without the
        OpenLineage provider. Also what a failed task reports: the job was given those."""
        if self.manifest is None:
            return None
        return manifest_lineage(self.manifest, self.manifest_storages)

    def execute(self, context: Context) -> None:
        self.manifest = None
        path = self.prepare_submit(context)
        super().execute(context)
        if not self.keep_manifest:  # the job read it; a failure above keeps it for a person
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
            self.log.info("removed the manifest %s (keep_manifest=True keeps it)", path)
