"""The window a run of a coverage asset's consumer covers, from its partition key.

A consumer scheduled on ``PartitionedAssetTimetable(assets=CoverageAsset(...))`` gets
``dag_run.partition_key`` = the window's key; the covered operators read the asset from the
DAG's schedule and turn the key back into ``[start, end)`` and the slice (a run started by
hand may pass the key as ``conf={"partition_key": ...}``, as ``airflow dags test -c`` can).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pendulum

from airflow_partitions.catalog import Catalog
from airflow_partitions.coverage_events import CoverageAssetSpec, Window, slice_columns


@dataclass(frozen=True)
class RunWindow:
    """A consumer run's window of one coverage asset."""

    spec: CoverageAssetSpec
    start: pendulum.DateTime
    end: pendulum.DateTime
    where: str | None


def run_partition_key(context: Mapping[str, object]) -> str | None:
    """The run's partition key, or the one its conf names."""
    run = context.get("dag_run")
    key = getattr(run, "partition_key", None)
    if not key:
        conf = getattr(run, "conf", None) or {}
        key = conf.get("partition_key") if isinstance(conf, dict) else None
    return str(key) if key else None


def coverage_specs(dag: object) -> list[CoverageAssetSpec]:
    """The coverage assets a DAG is scheduled on (none for any other schedule)."""
    condition = getattr(getattr(dag, "timetable", None), "asset_condition", None)
    return [spec for uri in _uris(condition)
            if (spec := CoverageAssetSpec.from_uri(uri)) is not None]


def _uris(node: object) -> Iterator[str]:
    if node is None:
        return
    uri = getattr(node, "uri", None)
    if isinstance(uri, str):
        yield uri
    for child in getattr(node, "objects", ()) or ():
        yield from _uris(child)


def run_window(context: Mapping[str, object], catalog: Catalog) -> RunWindow | None:
    """The window of the run's partition key under the DAG's (one) coverage asset; None when
    the run has no key or the DAG is scheduled on no coverage asset."""
    key = run_partition_key(context)
    specs = coverage_specs(context.get("dag"))
    if key is None or not specs:
        return None
    spec = specs[0]
    tz = spec.check(catalog)
    start, end, slice_ = spec.window_of(key, tz, slice_columns(catalog, spec.fact))
    where = Window(key, start, end, slice_).where(spec)
    return RunWindow(spec, start, end, where)
