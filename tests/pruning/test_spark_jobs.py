"""The bundled jobs on the shared local SparkSession: collect_keys and the regional join."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import CoverRequest
from airflow_partitions.demo.pruning import ensure_catalog
from airflow_partitions.pruning import JoinSpec, prune
from airflow_partitions.pruning.values import key_sets_from_json
from airflow_partitions.spark import Source, build_manifest, collect, join_totals
from tests.pruning.data import expected, write_dimension, write_regional

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def test_collect_reads_distinct_keys_nulls_and_overflow(spark: Any, tmp_path: Path) -> None:
    dim = tmp_path / "dim"
    write_dimension(dim, [{"region": r, "shop": s, "day": dt.date(2024, 1, s), "other": "x"}
                          for r, s in (("eu", 1), ("us", 2), ("eu", 3), (None, 4))])
    doc = collect(spark, [Source(str(dim), ["region", "shop", "day"], "dim")], max_values=3)
    json.dumps(doc)
    cols = doc["sources"][0]["columns"]
    assert cols["region"] == {"type": "string", "values": ["eu", "us"], "distinct": 2,
                              "has_null": True, "overflow": False}
    assert cols["shop"]["overflow"] and cols["shop"]["values"] == []  # 4 > 3 values
    assert cols["day"]["type"] == "date" and cols["day"]["overflow"]
    sets = key_sets_from_json(doc)
    assert sets["dim"]["region"].values == ("eu", "us") and sets["dim"]["region"].nulls == 1
    assert sets["dim"]["shop"].overflow
    days = key_sets_from_json(collect(spark, [Source(str(dim), ["day"], "dim")]))
    assert days["dim"]["day"].values == tuple(dt.date(2024, 1, d) for d in range(1, 5))


def test_pruned_join_equals_unpruned_join_in_process(
        spark: Any, catalog: Catalog, tmp_path: Path) -> None:
    template = str(tmp_path / "ev/dt={dt}/region={region}")
    end = T0 + dt.timedelta(hours=2)
    ensure_catalog(catalog, template)
    catalog.register("events_by_region", "HOURLY", write_regional(template, T0, end))
    dim = tmp_path / "dim"
    write_dimension(dim, [{"region": "eu-west"}, {"region": "ap-east"}, {"region": None}])
    values = key_sets_from_json(collect(spark, [Source(str(dim), ["region"],
                                                       "regions_of_interest")]))
    verified = catalog.cover_with_partitions(CoverRequest.of("events_regional", T0, end))
    result = prune(catalog, JoinSpec.of("regions_of_interest", "region"), values,
                   cover=verified)
    assert len(verified.partitions) == 16 and len(result.partitions) == 4

    def run(parts: Any) -> dict[str, Any]:
        manifest = build_manifest("events_regional", T0.isoformat(), end.isoformat(),
                                  (p.to_json() for p in parts), "dt")
        return join_totals(spark, manifest, str(dim))

    pruned, full = run(result.partitions), run(verified.partitions)
    assert pruned["totals"] == full["totals"] == expected(T0, end, ("eu-west", "ap-east"))
    assert len(pruned["input_files"]) == 4 and len(full["input_files"]) == 16
    assert all("region=eu-west" in f or "region=ap-east" in f for f in pruned["input_files"])
    assert 0 < pruned["bytes_read"] < full["bytes_read"]
