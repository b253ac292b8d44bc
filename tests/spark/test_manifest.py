"""The manifest contract: round trip, validation with typed errors, bundled job lookup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.spark import (
    Manifest,
    ManifestError,
    UnsupportedManifestVersion,
    build_manifest,
    load_manifest,
    write_manifest,
)
from airflow_partitions.spark.jobs import job_path

ROWS = [
    {"storage": "raw", "period": "HOURLY", "values": {"dt": "2024-01-01-00", "region": "eu"},
     "location": "/d/raw/dt=2024-01-01-00/region=eu"},
    {"storage": "rollup", "period": "DAILY", "values": {"dt": "2024-01-02"},
     "location": "/d/rollup/dt=2024-01-02"},
]


def manifest() -> Manifest:
    return build_manifest("events", "2024-01-01T00:00:00+00:00", "2024-01-03T00:00:00+00:00",
                          ROWS, "dt", residual="region = 'eu'")


def test_write_and_load_round_trip(tmp_path: Path) -> None:
    path = write_manifest(manifest(), str(tmp_path), prefix="dag.task/run:1")
    assert Path(path).parent == tmp_path and "/" not in Path(path).name
    loaded = load_manifest(path)
    assert loaded == manifest()
    assert loaded.locations == [r["location"] for r in ROWS]
    assert [p.value for p in loaded.partitions] == ["2024-01-01-00", "2024-01-02"]
    assert json.loads(Path(path).read_text())["partitions"][1] == {
        **ROWS[1], "value": "2024-01-02", "version": 1}


def test_partition_versions_travel_and_old_manifests_read_as_version_1(tmp_path: Path) -> None:
    """Each partition carries its version; a manifest written before versions (no
    per-partition ``version``) still loads, each partition at version 1."""
    rows: list[dict[str, Any]] = [{**ROWS[0], "version": 3}, ROWS[1]]
    built = build_manifest("events", "2024-01-01T00:00:00+00:00", "2024-01-03T00:00:00+00:00",
                           rows, "dt")
    assert [p.version for p in built.partitions] == [3, 1]
    assert built.inputs[0] == {"storage": "raw", "period": "HOURLY", "version": 3,
                               "values": {"dt": "2024-01-01-00", "region": "eu"}}
    path = write_manifest(built, str(tmp_path))
    assert [p.version for p in load_manifest(path).partitions] == [3, 1]
    old = manifest().to_json()
    for part in old["partitions"]:
        del part["version"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert load_manifest(str(tmp_path / "old.json")) == manifest()


def test_unknown_keys_are_ignored(tmp_path: Path) -> None:
    data = {**manifest().to_json(), "written_by": "a newer minor release"}
    (tmp_path / "m.json").write_text(json.dumps(data))
    assert load_manifest(str(tmp_path / "m.json")) == manifest()


@pytest.mark.parametrize("change, error, match", [
    ({"version": 2}, UnsupportedManifestVersion, "version 2"),
    ({"version": None}, UnsupportedManifestVersion, "version None"),
    ({"fact": ""}, ManifestError, "'fact'"),
    ({"partitions": {}}, ManifestError, "'partitions' must be a list"),
    ({"partitions": [{"storage": "raw"}]}, ManifestError, r"partitions\[0\]: 'values'"),
    ({"partitions": [{**ROWS[1], "value": "x", "values": {"dt": 1}}]}, ManifestError, "strings"),
    ({"residual": 3}, ManifestError, "residual"),
    ({"partitions": [{**ROWS[1], "value": "x", "version": "2"}]}, ManifestError,
     "'version' must be a positive integer"),
])
def test_malformed_manifests(tmp_path: Path, change: dict[str, Any], error: type[Exception],
                             match: str) -> None:
    (tmp_path / "m.json").write_text(json.dumps({**manifest().to_json(), **change}))
    with pytest.raises(error, match=match):
        load_manifest(str(tmp_path / "m.json"))


def test_unreadable_manifests(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="cannot read"):
        load_manifest(str(tmp_path / "absent.json"))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ManifestError, match="not valid JSON"):
        load_manifest(str(tmp_path / "bad.json"))
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(ManifestError, match="JSON object"):
        load_manifest(str(tmp_path / "list.json"))


def test_bundled_job_paths() -> None:
    assert Path(job_path("count_rows")).is_file()
    with pytest.raises(ValueError, match="no bundled"):
        job_path("nope")
