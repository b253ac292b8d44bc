"""The covered operators over declared dimensions: they refuse while a required
slice lacks an hour (naming it), take a ``where`` slice filter, and inherit the sensor's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.operators.pruned_spark import PrunedSparkSubmitOperator
from airflow_partitions.operators.spark import CoveredSparkSubmitOperator, UncoverableRange
from airflow_partitions.sensors.coverage import PartitionCoverageSensor
from airflow_partitions.spark import load_manifest
from tests.helpers import T0, FakeTI, regions_fact

EU_ONLY = "region = 'eu'"
US_ONLY = "region = 'us'"


@pytest.fixture
def regions(catalog: Catalog) -> Catalog:
    """``ev``: us has hours 00..03, eu 00..01 (``tests.helpers.regions_fact``)."""
    return regions_fact(catalog)


def covered(tmp_path: Path, cls: type[CoveredSparkSubmitOperator] = CoveredSparkSubmitOperator,
            **kwargs: Any) -> CoveredSparkSubmitOperator:
    args: dict[str, Any] = {"task_id": "spark", "application": "job.py", "fact": "ev",
                            "start": T0, "end": T0.add(hours=4), "keep_manifest": True,
                            "manifest_dir": str(tmp_path / "manifests")}
    return cls(**{**args, **kwargs})


def test_the_covered_operator_refuses_while_a_region_lacks_hours(
        regions: Catalog, tmp_path: Path, launched: list[Any]) -> None:
    with pytest.raises(UncoverableRange, match=r"no HOURLY 2024-01-01-02\.\.03 \(2\) "
                                               r"for region=eu"):
        covered(tmp_path).execute({"ti": FakeTI()})  # type: ignore[arg-type]
    assert not launched
    ti = FakeTI()
    op = covered(tmp_path, where=US_ONLY)
    assert "where" in op.template_fields
    op.execute({"ti": ti})  # type: ignore[arg-type]
    assert launched == [op]
    manifest = load_manifest(ti.pushed["manifest"])
    # us alone is required: the manifest lists us's rows only (per-slice covers; before
    # them it also listed eu's rows of the hours 00..01)
    assert sorted((p.value, p.values["region"]) for p in manifest.partitions) == sorted(
        [(f"2024-01-01-{h:02d}", "us") for h in range(4)])


def test_cover_from_takes_the_sensors_where(regions: Catalog, tmp_path: Path,
                                            launched: list[Any]) -> None:
    """The sensor waited for us alone; the operator recomputes the cover for the same slices
    (without the filter it would refuse: eu lacks two hours)."""
    pushed = PartitionCoverageSensor(task_id="wait", fact="ev", start=T0, end=T0.add(hours=4),
                                     where=US_ONLY, timeout=0).execute({})
    ti = FakeTI({"wait": pushed})
    op = covered(tmp_path, cover_from="wait", fact=None, start=None, end=None)
    op.execute({"ti": ti})  # type: ignore[arg-type]
    assert launched == [op]
    ti = FakeTI({"wait": pushed})
    with pytest.raises(UncoverableRange, match="for region=eu"):  # its own where wins
        covered(tmp_path, cover_from="wait", fact=None, start=None, end=None,
                where=EU_ONLY).execute({"ti": ti})  # type: ignore[arg-type]


def test_the_pruned_operator_takes_where_too(regions: Catalog, tmp_path: Path,
                                             launched: list[Any]) -> None:
    """The pruned operator builds its request the same way (it inherits the argument). A left
    join keeps every big-table row, so nothing is collected or pruned: no Spark here."""
    joins = [{"small": "dim", "on": {"region": "region"}, "how": "left", "big_side": "left"}]
    op = covered(tmp_path, PrunedSparkSubmitOperator, joins=joins, small_tables={"dim": "/d"})
    assert "where" in op.template_fields
    with pytest.raises(UncoverableRange, match="for region=eu"):
        op.execute({"ti": FakeTI()})  # type: ignore[arg-type]
    op = covered(tmp_path, PrunedSparkSubmitOperator, joins=joins, small_tables={"dim": "/d"},
                 where=US_ONLY)
    op.execute({"ti": FakeTI()})  # type: ignore[arg-type]
    assert launched == [op]


def test_a_coverage_asset_consumer_covers_its_keys_window_and_slice(
        regions: Catalog, tmp_path: Path, launched: list[Any]) -> None:
    """Scheduled on a coverage asset, the operator covers the window of the run's partition
    key (per slice: that slice only); its own ``where`` still applies."""
    from airflow.sdk import DAG, PartitionedAssetTimetable

    from airflow_partitions.assets import CoverageAsset
    from tests.helpers import region_hours

    region_hours(regions, "us", 4, 23)

    class Run:
        def __init__(self, key: str) -> None:
            self.partition_key, self.conf = key, {}

    for per_slice, key, where in ((True, "us|2024-01-01T00:00:00", None),
                                  (False, "2024-01-01T00:00:00", US_ONLY)):
        with DAG(f"consumer_{per_slice}", schedule=PartitionedAssetTimetable(
                assets=CoverageAsset("ev", "DAILY", per_slice=per_slice))) as dag:
            op = covered(tmp_path, start=None, end=None, where=where)
        ti = FakeTI()
        op.execute({"ti": ti, "dag": dag, "dag_run": Run(key)})  # type: ignore[arg-type]
        manifest = load_manifest(ti.pushed["manifest"])
        assert (manifest.start, manifest.end) == ("2024-01-01T00:00:00+00:00",
                                                  "2024-01-02T00:00:00+00:00")
        assert sorted({p.values["region"] for p in manifest.partitions}) == ["us"]
        assert len(manifest.partitions) == 24
    with DAG("consumer_eu", schedule=PartitionedAssetTimetable(
            assets=CoverageAsset("ev", "DAILY", per_slice=True))) as dag:
        op = covered(tmp_path, start=None, end=None)
    with pytest.raises(UncoverableRange, match="for region=eu"):
        op.execute({"ti": FakeTI(), "dag": dag,  # type: ignore[arg-type]
                    "dag_run": Run("eu|2024-01-01T00:00:00")})
