"""The partition manifest: the contract between ``CoveredSparkSubmitOperator`` and a Spark job.

Version 1 (JSON, UTF-8)::

    {
      "version": 1,
      "fact": "events",
      "start": "2024-01-01T00:00:00+00:00",          # the covered range, [start, end)
      "end": "2024-01-02T00:00:00+00:00",
      "partitions": [                                # one entry per registered partition row
        {"storage": "raw", "period": "HOURLY", "value": "2024-01-01-00",
         "values": {"dt": "2024-01-01-00", "region": "eu"},
         "location": "/data/events/raw/HOURLY/dt=2024-01-01-00/region=eu",
         "version": 1},                              # the partition's version
        ...
      ],
      "residual": "country = 'FR'" | null,           # the filter the job must still apply
      "missing": ["missing 2024-01-01T23:00/...", ...]  # non-empty only with allow_partial
    }

``value`` is the time partition value of the cover's time column; ``values`` holds every
partition column (as text); ``version`` is the partition's version when the manifest was
written (absent in manifests written before versions existed: read as 1). Readers ignore keys
they do not know; a new layout bumps the manifest's ``version``. Pure: no ``airflow``, no
``pyspark``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, NotRequired, TypedDict

from airflow_partitions.defaults import default_manifest_dir
from airflow_partitions.errors import InvalidInput

MANIFEST_VERSION: Final = 1
SUPPORTED_VERSIONS: Final = frozenset({1})
MANIFEST_ARG: Final = "--partitions-manifest"
MANIFEST_CONF: Final = "spark.airflow_partitions.manifest"
#: The ending of every manifest file this package writes (and the only files it prunes).
MANIFEST_SUFFIX: Final = ".manifest.json"
#: The ending of the join-key files PrunedSparkSubmitOperator has collect_keys write.
KEYS_SUFFIX: Final = ".keys.json"


class ManifestError(InvalidInput):
    """A manifest is unreadable or malformed; the message names the bad part."""


class UnsupportedManifestVersion(ManifestError):
    """The manifest was written by a newer (or unknown) layout."""


class ManifestPartitionJson(TypedDict):
    """One partition in a manifest's JSON: the row's values, its location and version."""

    storage: str
    period: str
    value: str
    values: dict[str, str]
    location: str
    version: int


class PartitionRowJson(TypedDict):
    """A registered partition as ``Partition.to_json()`` gives it (the catalog's
    ``PartitionJson``, which this layer cannot import): what :func:`build_manifest` reads."""

    storage: str
    period: str
    values: dict[str, str]
    location: str
    version: int


class InputJson(TypedDict):
    """A partition as a recorded lineage input (``Catalog.register(inputs=...)``)."""

    storage: str
    period: str
    values: dict[str, str]
    version: int


class ManifestJson(TypedDict):
    """The manifest file: ``missing`` lists what a partial cover lacks (empty when whole)."""

    version: int
    fact: str
    start: str
    end: str
    partitions: list[ManifestPartitionJson]
    residual: str | None
    missing: list[str]
    #: The pruned operator's decision record (docs/pruning.md); readers ignore it.
    pruning: NotRequired[Mapping[str, object] | None]


@dataclass(frozen=True)
class ManifestPartition:
    """One registered partition row to read."""

    storage: str
    period: str
    value: str
    values: Mapping[str, str]
    location: str
    version: int = 1

    def to_json(self) -> ManifestPartitionJson:
        return {
            "storage": self.storage,
            "period": self.period,
            "value": self.value,
            "values": dict(self.values),
            "location": self.location,
            "version": self.version,
        }

    def input_json(self) -> InputJson:
        """This partition as a lineage input: ``{storage, period, values, version}``."""
        return {"storage": self.storage, "period": self.period, "values": dict(self.values),
                "version": self.version}


@dataclass(frozen=True)
class Manifest:
    """A validated manifest."""

    fact: str
    start: str
    end: str
    partitions: tuple[ManifestPartition, ...]
    residual: str | None = None
    missing: tuple[str, ...] = ()
    version: int = MANIFEST_VERSION

    @property
    def locations(self) -> list[str]:
        return [p.location for p in self.partitions]

    @property
    def partial(self) -> bool:
        return bool(self.missing)

    @property
    def inputs(self) -> list[InputJson]:
        """The partitions as lineage inputs for ``Catalog.register(inputs=...)``."""
        return [p.input_json() for p in self.partitions]

    def to_json(self) -> ManifestJson:
        return {
            "version": self.version,
            "fact": self.fact,
            "start": self.start,
            "end": self.end,
            "partitions": [p.to_json() for p in self.partitions],
            "residual": self.residual,
            "missing": list(self.missing),
        }

    @classmethod
    def from_json(cls, data: object, where: str = "manifest") -> Manifest:
        if not isinstance(data, Mapping):
            raise ManifestError(f"{where}: expected a JSON object, got {type(data).__name__}")
        version = data.get("version")
        if version not in SUPPORTED_VERSIONS:
            raise UnsupportedManifestVersion(
                f"{where}: version {version!r} is not supported (this reader knows "
                f"{sorted(SUPPORTED_VERSIONS)}); upgrade airflow-partitions on the Spark side"
            )
        fact, start, end = (_text(data, k, where) for k in ("fact", "start", "end"))
        parts = data.get("partitions")
        if not isinstance(parts, list):
            raise ManifestError(f"{where}: 'partitions' must be a list")
        residual = data.get("residual")
        if residual is not None and not isinstance(residual, str):
            raise ManifestError(f"{where}: 'residual' must be a string or null")
        missing = data.get("missing") or []
        if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
            raise ManifestError(f"{where}: 'missing' must be a list of strings")
        return cls(
            fact, start, end,
            tuple(_partition(p, f"{where}: partitions[{i}]") for i, p in enumerate(parts)),
            residual, tuple(missing), int(version),
        )


def _text(data: Mapping[str, object], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ManifestError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
    return value


def _partition(data: object, where: str) -> ManifestPartition:
    if not isinstance(data, Mapping):
        raise ManifestError(f"{where}: expected an object")
    values = data.get("values")
    if not isinstance(values, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in values.items()
    ):
        raise ManifestError(f"{where}: 'values' must map column names to strings")
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ManifestError(f"{where}: 'version' must be a positive integer, got {version!r}")
    return ManifestPartition(
        _text(data, "storage", where), _text(data, "period", where),
        _text(data, "value", where), dict(values), _text(data, "location", where), version,
    )


def build_manifest(
    fact: str, start: str, end: str, partitions: Iterable[PartitionRowJson],
    time_column: str, *, residual: str | None = None, missing: Iterable[str] = (),
) -> Manifest:
    """A manifest from ``Partition.to_json()`` rows (``value`` = the time column's value)."""
    rows = tuple(
        ManifestPartition(
            p["storage"], p["period"], p["values"][time_column], dict(p["values"]), p["location"],
            int(p.get("version", 1)),
        )
        for p in partitions
    )
    return Manifest(fact, start, end, rows, residual, tuple(missing))


def write_manifest(manifest: Manifest, directory: str | None = None, prefix: str = "") -> str:
    """Write the manifest to a new file in ``directory`` (default: this installation's, see
    :func:`~airflow_partitions.defaults.default_manifest_dir`); return its path."""
    directory = directory or default_manifest_dir()
    os.makedirs(directory, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in prefix)[:120]
    fd, path = tempfile.mkstemp(prefix=f"{safe}-" if safe else "manifest-",
                                suffix=MANIFEST_SUFFIX, dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(manifest.to_json(), out, indent=1, sort_keys=True)
        out.write("\n")
    os.chmod(path, 0o644)
    return path


def prune_manifests(directory: str, older_than_days: float, *, now: float | None = None
                    ) -> list[str]:
    """Remove this package's manifests and key files (``*.manifest.json``, ``*.keys.json``)
    last written more than ``older_than_days`` ago from ``directory``; return their paths.
    Other files are never touched, and a file another process removes first is not an error.
    """
    cutoff = (time.time() if now is None else now) - older_than_days * 86400
    removed = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    for entry in entries:
        if (not entry.name.endswith((MANIFEST_SUFFIX, KEYS_SUFFIX))
                or not entry.is_file(follow_symlinks=False)):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.remove(entry.path)
                removed.append(entry.path)
        except FileNotFoundError:
            continue
    return removed


def load_manifest(path: str) -> Manifest:
    """Read and validate a manifest file; raises :class:`ManifestError`."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise ManifestError(f"cannot read manifest {path!r}: {exc}") from exc
    except ValueError as exc:
        raise ManifestError(f"manifest {path!r} is not valid JSON: {exc}") from exc
    return Manifest.from_json(data, where=f"manifest {path!r}")
