"""prune() against a real (sqlite) catalog: queries, cover intersection, records."""

from __future__ import annotations

import json

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import CoverRequest
from airflow_partitions.pruning import JoinSpec, analyse, prune, prune_partitions
from tests.helpers import T0
from tests.pruning.conftest import hourly_storage

REGION = JoinSpec.of("dim", "region")


def regions(parts: list) -> set[str]:  # type: ignore[type-arg]
    return {p.values["region"] for p in parts}


def test_no_cover_prunes_by_the_in_list(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=3)
    result = prune(catalog, REGION, {"dim": {"region": ["eu", "us", "xx"]}}, storage=name,
                   count_before=True)
    assert regions(result.partitions) == {"eu", "us"} and len(result.partitions) == 6
    rec = result.record
    assert rec.pruned and rec.before == 12 and rec.after == 6 and rec.bail_out is None
    query = rec.storages[0].query
    assert query is not None and query["strategy"] == "in-lists"
    assert query["rows_returned"] == 6 and query["scans"] == 1  # one scan, server filter
    json.dumps(rec.to_json())
    text = rec.to_text()
    assert "12 -> 6 partition(s) (50.0% pruned)" in text and "region IN 3 value(s)" in text


def test_bail_out_returns_every_partition_and_says_why(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=2)
    result = prune(catalog, JoinSpec.of("dim", "region", how="left"),
                   {"dim": {"region": ["eu"]}}, storage=name)
    assert len(result.partitions) == 8 and not result.record.pruned
    assert result.record.before == 8 and result.record.after == 8
    assert "outer_join_preserves_big" in (result.record.bail_out or "")
    assert "BAILED OUT, reading all 8 partition(s)" in result.record.to_text()


def test_cover_restricts_time_and_keeps_cover_order(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=6)
    request = CoverRequest.of("ev", T0.add(hours=1), T0.add(hours=4), storages=[name])
    verified = catalog.cover_with_partitions(request)
    assert len(verified.partitions) == 12
    result = prune(catalog, REGION, {"dim": {"region": ["us", "ap"]}}, cover=verified)
    expected = [p for p in verified.partitions if p.values["region"] in ("us", "ap")]
    assert result.partitions == expected
    rec = result.record.to_json()
    assert rec["partitions_before"] == 12 and rec["partitions_after"] == 6
    assert rec["cover"]["partitions"] == 12 and rec["cover"]["fact"] == "ev"
    query = rec["storages"][0]["query"]  # 6 keys < 12 rows in the cover's range: gets
    assert "dt IN ('2024-01-01-01', '2024-01-01-02', '2024-01-01-03')" in query["filter"]
    assert (query["gets"], query["scans"], query["rows_fetched"]) == (6, 0, 6)
    in_memory = prune(catalog, REGION, {"dim": {"region": ["us", "ap"]}}, cover=verified,
                      query_catalog=False)
    assert in_memory.partitions == expected


def test_cover_with_holes_uses_one_range_per_run(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=6, extra=["shop:int"])  # shop unbound: range scans
    request = CoverRequest.of("ev", T0, T0.add(hours=6), storages=[name])
    verified = catalog.cover_with_partitions(request)
    parts = [p for p in verified.partitions if p.values["dt"] not in ("2024-01-01-02",)]
    result = prune(catalog, REGION, {"dim": {"region": ["eu"]}}, cover=parts)
    assert [p.values["dt"] for p in result.partitions] == [
        "2024-01-01-00", "2024-01-01-01", "2024-01-01-03", "2024-01-01-04", "2024-01-01-05"]
    query = result.record.storages[0].query or {}
    assert "dt BETWEEN '2024-01-01-00' AND '2024-01-01-01' OR dt BETWEEN" in query["filter"]
    assert query["gets"] == 0 and query["rows_fetched"] == 5


def test_all_key_columns_bound_is_a_multi_get(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=4)
    specs = [JoinSpec.of("hours", "dt"), REGION]
    values = {"hours": {"dt": ["2024-01-01-01", "2024-01-01-03"]}, "dim": {"region": ["eu"]}}
    result = prune(catalog, specs, values, storage=name)
    assert [(p.values["dt"], p.values["region"]) for p in result.partitions] == [
        ("2024-01-01-01", "eu"), ("2024-01-01-03", "eu")]
    query = result.record.storages[0].query or {}
    assert query["gets"] == 2 and query["scans"] == 0 and query["rows_fetched"] == 2


def test_many_leading_values_use_one_range_scan(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=12, regions=("eu", "us"))
    hours = [f"2024-01-01-{h:02d}" for h in range(0, 12, 2)]
    specs = [JoinSpec.of("hours", "dt")]
    few = prune(catalog, specs, {"hours": {"dt": hours}}, storage=name, max_scans=64)
    many = prune(catalog, specs, {"hours": {"dt": hours}}, storage=name, max_scans=2)
    assert few.partitions == many.partitions and len(few.partitions) == 12
    q_few, q_many = few.record.storages[0].query or {}, many.record.storages[0].query or {}
    assert q_few["strategy"] == "in-lists" and q_few["scans"] == 6
    assert q_many["strategy"] == "ranges+client filter" and q_many["scans"] == 1
    assert "one range scan instead" in q_many["notes"][0]
    wide = prune(catalog, specs, {"hours": {"dt": hours}}, storage=name, max_disjuncts=3)
    assert wide.partitions == few.partitions
    assert (wide.record.storages[0].query or {})["strategy"] == "ranges+client filter"


def test_values_with_quotes_are_exact(catalog: Catalog) -> None:
    odd = ("it's", 'say "hi"', "a AND b) OR (1", "back\\slash-free")
    name = hourly_storage(catalog, hours=1, regions=("plain", *odd[:3]))
    result = prune(catalog, REGION, {"dim": {"region": list(odd)}}, storage=name)
    assert regions(result.partitions) == set(odd[:3])


def test_int_column_and_cascade_on_two_keys(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=2, extra=["shop:int"])
    catalog.register(name, "HOURLY", [{"dt": "2024-01-01-00", "region": r, "shop": s}
                                      for r in ("eu", "us") for s in ("2", "3", "10")])
    specs = [REGION, JoinSpec.of("shops", {"shop": "id"}, how="left_semi")]
    values = {"dim": {"region": ["eu"]}, "shops": {"id": ["3", 10, None]}}
    result = prune(catalog, specs, values, storage=name)
    assert sorted((p.values["region"], p.values["shop"]) for p in result.partitions) == [
        ("eu", "10"), ("eu", "3")]
    cols = {c.column: c.values for c in result.record.storages[0].columns}
    assert cols == {"region": 1, "shop": 2}
    assert result.record.storages[0].pairs[1].nulls == 1


def test_empty_intersection_reads_nothing(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=2)
    specs = [REGION, JoinSpec.of("dim2", "region")]
    result = prune(catalog, specs, {"dim": {"region": ["eu"]}, "dim2": {"region": ["us"]}},
                   storage=name)
    assert result.partitions == [] and result.record.storages[0].query["strategy"] == "none"  # type: ignore[index]


def test_mixed_cover_prunes_each_storage_by_its_own_columns(catalog: Catalog) -> None:
    raw = hourly_storage(catalog, hours=3)
    daily = "daily_" + raw
    catalog.create_storage("ev", daily, ["DAILY"], columns=["dt"])
    catalog.register(daily, "DAILY", {"dt": "2023-12-31"})
    request = CoverRequest.of("ev", T0.subtract(days=1), T0.add(hours=3), storages=[raw, daily])
    verified = catalog.cover_with_partitions(request)
    result = prune(catalog, REGION, {"dim": {"region": ["eu"]}}, cover=verified)
    assert [(p.storage, p.values.get("region")) for p in result.partitions] == [
        (daily, None), (raw, "eu"), (raw, "eu"), (raw, "eu")]
    by_storage = {s.storage: s for s in result.record.storages}
    assert not by_storage[daily].pruned and "not_a_partition_column" in (
        by_storage[daily].bail_out or "")
    assert by_storage[raw].pruned and result.record.pruned
    only_raw = prune(catalog, REGION, {"dim": {"region": ["eu"]}}, cover=verified, storage=daily)
    assert len(only_raw.partitions) == len(verified.partitions)


def test_prune_partitions_in_memory_matches_the_catalog(catalog: Catalog) -> None:
    name = hourly_storage(catalog, hours=3)
    everything = list(catalog.list_partitions(name))
    analysis = analyse(REGION, catalog.get_storage(name), {"dim": {"region": ["sa"]}})
    assert prune_partitions(everything, analysis) == prune(
        catalog, REGION, {"dim": {"region": ["sa"]}}, storage=name).partitions
