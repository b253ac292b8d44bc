"""How a planned run names the slices it must produce: its run conf (docs/backfill.md, "Slices").

Why the run conf and not a partition key: Airflow 3.3's backfill (``_create_backfill``, the REST
API's ``POST /api/v2/backfills``, ``airflow backfill create``) takes a date range and one
``dag_run_conf`` for every run it creates; a partitioned DAG's backfill runs get the partition
keys its *timetable* generates for the range (``CronPartitionTimetable``: time only), and a
``PartitionedAssetTimetable`` (where ``ProductMapper`` splits composite keys) is not periodic,
so Airflow refuses to backfill it. The conf is the one per-run value a backfill carries, and
Airflow validates it against the DAG's params before it creates anything.

Two forms, chosen by the producer (:class:`~airflow_partitions.catalog.Producer`):

* ``slice_conf=KEY``: one run per (DAG, logical date) takes every slice it must produce,
  ``{KEY: ["eu", "us"]}`` with one dimension, ``{KEY: [{"region": "eu", "source": "web"}, ...]}``
  with several;
* no ``slice_conf`` (the default): one run per missing slice, ``{"partition_slice":
  {"region": "eu"}}``.

Pure and O(slices).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, TypeAlias

from airflow_partitions.cover import Slice, slice_text
from airflow_partitions.json_value import JsonValue

#: The run-conf key of the default form: one run per slice, the slice as a JSON object.
DEFAULT_CONF_KEY: Final = "partition_slice"
#: A run's ``dag_run_conf``: its key names the slices (a mapping, or a list of values or mappings).
RunConf: TypeAlias = dict[str, JsonValue]


def run_groups(slices: Sequence[Slice], key: str | None) -> list[tuple[Slice, ...]]:
    """The slices each run takes: all in one run when the producer names a conf key, else one
    run per slice; no slice at all (a storage without dimensions) is one run.

    >>> eu, us = (("region", "eu"),), (("region", "us"),)
    >>> run_groups([eu, us], "regions"), run_groups([eu, us], None)
    ([((('region', 'eu'),), (('region', 'us'),))], [((('region', 'eu'),),), ((('region', 'us'),),)])
    """
    if not slices:
        return [()]
    if key is not None:
        return [tuple(slices)]
    return [(s,) for s in slices]


def run_conf(slices: Sequence[Slice], key: str | None) -> RunConf | None:
    """The ``dag_run_conf`` of a run producing ``slices`` (None when it names none).

    >>> run_conf([(("region", "eu"),), (("region", "us"),)], "regions")
    {'regions': ['eu', 'us']}
    >>> run_conf([(("region", "eu"), ("source", "web"))], None)
    {'partition_slice': {'region': 'eu', 'source': 'web'}}
    """
    if not slices:
        return None
    if key is None:
        if len(slices) != 1:
            raise ValueError(f"the default conf names one slice, not {len(slices)}")
        return {DEFAULT_CONF_KEY: dict(slices[0])}
    columns = {column for slice_ in slices for column, _ in slice_}
    if len(columns) == 1:
        return {key: [value for slice_ in slices for _, value in slice_]}
    return {key: [dict(slice_) for slice_ in slices]}


def conf_text(conf: RunConf | None) -> str | None:
    """Canonical JSON of a conf (sorted keys): equal confs have equal text, so runs group by
    it and stay hashable."""
    return None if conf is None else json.dumps(conf, sort_keys=True, separators=(", ", ": "))


def slices_text(slices: Sequence[Slice]) -> str:
    """``region=eu; region=us`` (``;`` because a slice of two columns holds a comma)."""
    return "; ".join(slice_text(s) for s in slices)


__all__ = ["DEFAULT_CONF_KEY", "RunConf", "conf_text", "run_conf", "run_groups", "slices_text"]
