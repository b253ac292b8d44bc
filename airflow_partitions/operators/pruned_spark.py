"""``PrunedSparkSubmitOperator``: a covered Spark job that reads only partitions its joins can use.

Dynamic partition pruning as three steps before the launch (see docs/pruning.md):

1. collect the DISTINCT join-key values of the small tables: the bundled ``collect_keys`` job,
   spark-submitted through the same connection as the main job (``collect_in_process=True``
   uses a local SparkSession instead, for tests and tiny dimensions);
2. prune the verified cover with :func:`airflow_partitions.pruning.prune.prune` (catalog IN-set
   query intersected with the cover), or bail out to the whole cover, saying why;
3. write the manifest with the decision record under ``"pruning"`` and launch the job on it.

The decision record is logged as one block and pushed to XCom under ``pruning``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.sdk.exceptions import AirflowFailException

from airflow_partitions.catalog import Partition
from airflow_partitions.defaults import default_manifest_dir
from airflow_partitions.errors import InvalidInput
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator
from airflow_partitions.operators.spark_provider import build_hook
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.pruning import (
    DEFAULT_MAX_VALUES,
    JoinSpec,
    KeyValues,
    PruneResult,
    join_specs,
    key_sets_from_json,
    keys_to_collect,
    load_key_file,
    part_key,
    prune,
)
from airflow_partitions.spark import (
    KEYS_SUFFIX,
    KeyDocumentJson,
    Manifest,
    ManifestJson,
    Source,
    collect,
    job_path,
)

if TYPE_CHECKING:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
    from airflow.sdk import Context

PRUNING_KEY = "pruning"
#: A small table of ``small_tables``: its path or table, or ``{"source", "format", "kind"}``.
SmallTable = str | Mapping[str, str]


@dataclass(frozen=True)
class PrunedManifest(Manifest):
    """A version 1 manifest plus the decision record (readers ignore unknown keys)."""

    pruning: Mapping[str, object] | None = None

    def to_json(self) -> ManifestJson:
        out = super().to_json()
        out["pruning"] = None if self.pruning is None else dict(self.pruning)
        return out


def small_sources(small_tables: Mapping[str, SmallTable], wanted: Mapping[str, Sequence[str]]
                  ) -> list[Source]:
    """``{"dim": "/path" | {"source", "format", "kind"}}`` -> collect_keys sources."""
    out = []
    for name, columns in wanted.items():
        if name not in small_tables:
            raise InvalidInput(f"join with {name!r}: give its source in small_tables")
        spec = small_tables[name]
        if isinstance(spec, str):
            spec = {"source": spec}
        if not isinstance(spec, Mapping) or not isinstance(spec.get("source"), str):
            raise InvalidInput(f"small_tables[{name!r}] must be a path/table or "
                               "{'source': ..., 'format': ..., 'kind': ...}")
        out.append(Source(spec["source"], list(columns), name, spec.get("format", "parquet"),
                          spec.get("kind", "auto")))
    return out


def collect_args(sources: Sequence[Source], output: str, max_values: int) -> list[str]:
    """The ``collect_keys`` command line (an argument list, never a shell string)."""
    args: list[str] = []
    for src in sources:
        args += ["--source", src.source, "--name", src.label, "--format", src.format,
                 "--kind", src.kind]
        for column in src.columns:
            args += ["--column", column]
    return [*args, "--output", output, "--max-values", str(max_values)]


class PrunedSparkSubmitOperator(CoveredSparkSubmitOperator):
    """``CoveredSparkSubmitOperator`` whose cover is pruned by the small tables' join keys.

    :param joins: the joins of the big table, as :class:`~airflow_partitions.pruning.prune.JoinSpec`
        or their JSON (``{"small": "dim", "on": {"region": "region"}, "how": "inner",
        "big_side": "left"}``). (templated)
    :param small_tables: small table name -> a path or table, or ``{"source", "format",
        "kind"}``. (templated)
    :param collect_in_process: collect keys with a local SparkSession in the task process
        instead of a spark-submit (tests, tiny dimensions).
    :param keys_dir: where the collected key sets go (default: the manifest's folder); the
        file is removed once read unless ``keep_manifest``. On a cluster (deploy-mode
        cluster), the driver writes it: use a shared path. (templated)
    :param prune_storage: prune only this storage of the cover (default: every one). (templated)
    :param max_values: the value-set limit per key (default 10,000).
    :param query_catalog: ask the catalog (IN-set query) rather than prune the cover in memory.

    Every other argument is ``CoveredSparkSubmitOperator``'s.
    """

    template_fields: Sequence[str] = (
        *CoveredSparkSubmitOperator.template_fields,
        "joins", "small_tables", "keys_dir", "prune_storage",
    )
    template_fields_renderers = {"joins": "json", "small_tables": "json"}

    def __init__(
        self,
        *,
        joins: Sequence[JoinSpec | Mapping[str, object]] | JoinSpec,
        small_tables: Mapping[str, SmallTable],
        collect_in_process: bool = False,
        keys_dir: str | None = None,
        prune_storage: str | None = None,
        max_values: int = DEFAULT_MAX_VALUES,
        query_catalog: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        items = [joins] if isinstance(joins, JoinSpec) else list(joins)
        self.joins = [j.to_json() if isinstance(j, JoinSpec) else j for j in items]
        if "{{" not in json.dumps(self.joins, default=str):
            join_specs(self.joins)  # a malformed spec fails when the DAG is parsed
        self.small_tables = small_tables
        self.collect_in_process = collect_in_process
        self.keys_dir = keys_dir
        self.prune_storage = prune_storage
        self.max_values = max_values
        self.query_catalog = query_catalog
        self.pruning: PruneResult | None = None

    def build_manifest(self, context: Context) -> Manifest:
        manifest = super().build_manifest(context)
        try:
            result = self.prune(context, manifest)
        except InvalidInput as exc:
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc
        self.pruning = result
        kept = {part_key(p) for p in result.partitions}
        result.record.cover = {"fact": manifest.fact, "start": manifest.start,
                               "end": manifest.end, "partitions": len(manifest.partitions)}
        record = result.record.to_json()
        self.log.info("%s", result.record.to_text())
        context["ti"].xcom_push(key=PRUNING_KEY, value=record)
        return PrunedManifest(
            manifest.fact, manifest.start, manifest.end,
            tuple(p for p in manifest.partitions if part_key(_partition(p)) in kept),
            manifest.residual, manifest.missing, manifest.version, record,
        )

    def prune(self, context: Context, manifest: Manifest) -> PruneResult:
        """Collect the key sets the joins can use, then prune the manifest's partitions."""
        specs = join_specs(self.joins)
        catalog = self.catalog_hook.get_conn()
        parts = [_partition(p) for p in manifest.partitions]
        columns = sorted({c for s in {p.storage for p in parts}
                          for c in catalog.get_storage(s).column_names})
        wanted = keys_to_collect(specs, columns)
        values = self.collect_keys(context, wanted) if wanted and parts else {}
        time_column = self.time_column or catalog.get_fact(manifest.fact).time_columns[0]
        return prune(catalog, specs, values, storage=self.prune_storage, cover=parts,
                     time_column=time_column, max_values=self.max_values,
                     query_catalog=self.query_catalog)

    def collect_keys(self, context: Context, wanted: Mapping[str, Sequence[str]]
                     ) -> dict[str, dict[str, KeyValues]]:
        """Step 1: the distinct key values of every small table worth reading."""
        sources = small_sources(self.small_tables, wanted)
        if self.collect_in_process:
            return key_sets_from_json(self._collect_locally(sources))
        ti = context["ti"]
        folder = self.keys_dir or self.manifest_dir or default_manifest_dir()
        os.makedirs(folder, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_"
                       for c in f"{ti.dag_id}.{ti.task_id}.{ti.run_id}.{ti.try_number}")[:120]
        output = os.path.join(folder, f"{safe}{KEYS_SUFFIX}")
        if os.path.exists(output):
            os.remove(output)
        self.prune_old_files(folder, now=time.time())
        args = collect_args(sources, output, self.max_values)
        self.log.info("collecting join keys: %s", json.dumps(
            {s.label: s.columns for s in sources}))
        self._collect_hook(args).submit(job_path("collect_keys"))
        keys = load_key_file(output)
        if not self.keep_manifest:
            os.remove(output)
        return keys

    def _collect_hook(self, args: list[str]) -> SparkSubmitHook:
        """The main job's hook settings (connection, conf, binary...) for the collect job."""
        saved = (self.application_args, self.name)
        self.application_args, self.name = args, f"{self.name or self.task_id}-collect-keys"
        try:
            return build_hook(self)
        finally:
            self.application_args, self.name = saved

    def _collect_locally(self, sources: Sequence[Source]) -> KeyDocumentJson:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        spark = active
        if spark is None:
            builder = SparkSession.builder.master("local[1]").appName("collect_keys")
            for key, value in (self.conf or {}).items():
                builder = builder.config(key, value)
            spark = builder.getOrCreate()
        try:
            return collect(spark, sources, self.max_values)
        finally:
            if active is None:
                spark.stop()


def _partition(part: Any) -> Partition:
    return Partition(part.storage, UpdatePeriod.of(part.period), dict(part.values),
                     part.location)
