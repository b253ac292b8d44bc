"""OpenLineage datasets for partitioned storage tables: names and partition subsets, pure.

Why a storage table is ONE dataset and a run a *subset* of it: a job that reads 720 hourly
partitions reads one table, not 720 datasets. OpenLineage says which part it read (or wrote)
with a subset facet listing the partitions, each as its dimensions (partition column -> value);
that is what :class:`StorageSubset` holds, for ``operators/openlineage_facets.py`` to turn into
facets when the OpenLineage provider is installed. Nothing here imports ``airflow`` or
``openlineage``.

The dataset is the storage's root: its location template with ``{fact}`` and ``{storage}``
filled in, up to the directory before the first other placeholder
(``/data/{fact}/{storage}/{period}/dt={dt}`` -> ``/data/events/raw``). Its namespace and name
follow OpenLineage's naming spec for the location's scheme, as its Spark integration names
paths (``FilesystemDatasetUtils``), so the same table gets the same name from both:

=========================  ==========================  ==============================
location                   namespace                   name
=========================  ==========================  ==============================
``/data/t``, ``file:/t``   ``file``                    ``/data/t`` (absolute path)
``file://host/t``          ``file://host``             ``/t``
``s3://b/k``, ``s3a``...   ``s3://b``                  ``k`` (object key)
``gs://b/k``               ``gs://b``                  ``k``
``hdfs://nn:8020/p``       ``hdfs://nn:8020``          ``/p`` (any other scheme alike)
=========================  ==========================  ==============================
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from airflow_partitions.catalog import (
    StorageDef,
    render_location,
    template_root,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.spark import ManifestPartition

#: Object stores: the bucket is the namespace, the key (no leading '/') the name. Hadoop's
#: s3a/s3n are S3, as OpenLineage's Spark integration names them.
OBJECT_STORES: Final = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs",
                        "wasbs": "wasbs"}
#: The namespace of a storage whose template has no fixed root (it starts with a placeholder).
FALLBACK_NAMESPACE: Final = "airflow-partitions"
#: Counting files stops here (the statistics are then left out): a sanity bound, not a budget.
MAX_COUNTED_FILES: Final = 200_000


@dataclass(frozen=True)
class DatasetName:
    """An OpenLineage dataset identifier."""

    namespace: str
    name: str


def dataset_name(location: str) -> DatasetName:
    """The OpenLineage namespace and name of a storage location (see the module's table).

    >>> dataset_name("/data/events/raw/")
    DatasetName(namespace='file', name='/data/events/raw')
    >>> dataset_name("s3a://lake/events/raw")
    DatasetName(namespace='s3://lake', name='events/raw')
    >>> dataset_name("hdfs://namenode:8020/warehouse/events")
    DatasetName(namespace='hdfs://namenode:8020', name='/warehouse/events')
    """
    scheme, sep, rest = location.partition("://")
    if not sep:  # a plain path, or Hadoop's file:/path
        path = location[len("file:"):] if location.startswith("file:") else location
        return DatasetName("file", _clean_path(path))
    scheme = scheme.lower()
    authority, slash, path = rest.partition("/")
    if scheme == "file":
        return DatasetName(f"file://{authority}" if authority else "file",
                           _clean_path(slash + path))
    if scheme in OBJECT_STORES:
        return DatasetName(f"{OBJECT_STORES[scheme]}://{authority}", path.strip("/") or "/")
    return DatasetName(f"{scheme}://{authority}" if authority else scheme,
                       (slash + path).rstrip("/") or "/")


def _clean_path(path: str) -> str:
    return posixpath.normpath(path) if path else "/"


def storage_root(sdef: StorageDef) -> str:
    """The storage table's root: its template with the fact and storage names filled in, up to
    the directory before the first other placeholder ('' when the template starts with one).

    >>> from airflow_partitions.catalog import StorageDef
    >>> from airflow_partitions.periods import UpdatePeriod
    >>> storage_root(StorageDef("raw", "events", (), (), (UpdatePeriod.of("DAILY"),),
    ...                         "/data/{fact}/{storage}/{period}"))
    '/data/events/raw'
    """
    filled = sdef.location.replace("{fact}", sdef.fact).replace("{storage}", sdef.name)
    return template_root(filled)


def storage_dataset(sdef: StorageDef) -> DatasetName:
    """The dataset a storage table is: its root, named per the spec."""
    root = storage_root(sdef)
    if not root:
        return DatasetName(FALLBACK_NAMESPACE, f"{sdef.fact}.{sdef.name}")
    return dataset_name(root)


@dataclass(frozen=True)
class SubsetPartition:
    """One partition of a subset: its partition columns' values, and where its data lives."""

    dimensions: Mapping[str, str]
    location: str | None = None


@dataclass(frozen=True)
class StorageSubset:
    """The partitions of one storage table a run read or wrote, with what is known of their
    files (``None``: not known, e.g. not on a local file system)."""

    storage: str
    dataset: DatasetName
    columns: tuple[str, ...]
    periods: tuple[str, ...]
    partitions: tuple[SubsetPartition, ...]
    files: int | None = None
    size: int | None = None

    def to_json(self) -> dict[str, object]:
        """The subset as plain JSON (what the facets carry), for logs and tests."""
        return {"storage": self.storage, "namespace": self.dataset.namespace,
                "name": self.dataset.name, "periods": list(self.periods),
                "partitions": [{"dimensions": dict(p.dimensions), "location": p.location}
                               for p in self.partitions],
                "files": self.files, "size": self.size}


def _dimensions(values: Mapping[str, str], columns: Sequence[str]) -> dict[str, str]:
    """Values in the storage's column order; a value of a column the storage lacks is kept."""
    out = {c: values[c] for c in columns if c in values}
    out.update((c, v) for c, v in values.items() if c not in out)
    return out


def manifest_subsets(partitions: Iterable[ManifestPartition], storages: Mapping[str, StorageDef],
                     *, file_stats: bool = True) -> list[StorageSubset]:
    """One subset per storage of a manifest's partitions (in first-seen order), listing
    exactly those partitions; ``storages`` must hold every storage they name."""
    groups: dict[str, list[ManifestPartition]] = {}
    for part in partitions:
        groups.setdefault(part.storage, []).append(part)
    subsets = []
    for name, parts in groups.items():
        sdef = storages[name]
        dataset = storage_dataset(sdef)
        stats = local_file_stats([p.location for p in parts]) if file_stats else None
        subsets.append(StorageSubset(
            name, dataset, sdef.column_names,
            tuple(sorted({p.period for p in parts}, key=_period_order)),
            tuple(SubsetPartition(_dimensions(p.values, sdef.column_names), p.location)
                  for p in parts),
            *(stats or (None, None)),
        ))
    return subsets


def registered_subset(sdef: StorageDef, period: str, parts: Sequence[Mapping[str, str]],
                      location: str | None = None, *, file_stats: bool = True
                      ) -> StorageSubset:
    """The subset a registration wrote: ``parts`` (column -> text) of ``period``, at the
    explicit ``location`` or where the storage's template puts them (``None`` if a value does
    not render: the catalog's own check will have refused it)."""
    upd = UpdatePeriod.of(period)
    located = []
    for part in parts:
        where = location
        if where is None:
            try:
                where = render_location(sdef.location, sdef.fact, sdef.name, upd, part)
            except (InvalidInput, KeyError, ValueError, IndexError):
                where = None
        located.append(SubsetPartition(_dimensions(part, sdef.column_names), where))
    known = [p.location for p in located if p.location is not None]
    stats = (local_file_stats(known) if file_stats and len(known) == len(located) else None)
    return StorageSubset(sdef.name, storage_dataset(sdef), sdef.column_names, (upd.name,),
                         tuple(located), *(stats or (None, None)))


def _period_order(name: str) -> int:
    try:
        return list(UpdatePeriod).index(UpdatePeriod.of(name))
    except (InvalidInput, ValueError):
        return len(UpdatePeriod)


def local_file_stats(locations: Sequence[str]) -> tuple[int, int] | None:
    """``(files, bytes)`` of the data files under ``locations``, when all of them are on the
    local file system and readable; else ``None`` (unknown, never a guess). Hidden files
    (``.crc``, ``_SUCCESS``: names starting with ``.`` or ``_``) are not data and not counted.
    """
    files = size = 0
    for location in locations:
        named = dataset_name(location)
        if named.namespace != "file":
            return None
        try:
            if os.path.isfile(named.name):
                files, size = files + 1, size + os.path.getsize(named.name)
                continue
            if not os.path.isdir(named.name):
                return None
            for root, dirs, names in os.walk(named.name):
                dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
                for name in names:
                    if name.startswith((".", "_")):
                        continue
                    files, size = files + 1, size + os.path.getsize(os.path.join(root, name))
                    if files > MAX_COUNTED_FILES:
                        return None
        except OSError:
            return None
    return files, size
