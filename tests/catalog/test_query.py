"""``catalog.query``: explain (JSON shape), several periods, max_parts, stats, residuals, and the
CLI's filter wiring over it, on sqlite and on the HBase test double.

The storages are built once per module, so this module brings its own module-scoped ``catalog``
(the folder's is per test and needs no fact).
"""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Iterator

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.query import explain, get_partitions_by_filter
from airflow_partitions.catalog.rows.layout import DROPPING, STATE
from airflow_partitions.cli import (
    Context,
    add_filter_arguments,
    add_filter_commands,
    filtered_partitions,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.filters import FilterSyntaxError, QueryStats, UnknownColumnError
from tests.helpers import module_catalog, unique


@pytest.fixture(scope="module", params=["sqlite", "hbase-testserver"])
def catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Catalog]:
    cat = module_catalog(request, tmp_path_factory, "query", request.param)
    yield cat
    cat.close()


@pytest.fixture(scope="module")
def shop(catalog: Catalog) -> str:
    """dt (DAILY: 4 days; MONTHLY: 2 months) x region (us, eu, us-east) x n (1..3)."""
    name = unique("shop")
    catalog.create_storage("ev", name, ["DAILY", "MONTHLY"], columns=["dt", "region", "n:int"])
    days = ["2015-01-01", "2015-01-02", "2015-01-03", "2015-01-04"]
    regions = ["us", "eu", "us-east"]
    catalog.register(name, "DAILY", [{"dt": d, "region": r, "n": str(n)} for d in days
                                     for r in regions for n in (1, 2, 3)])
    catalog.register(name, "MONTHLY", [{"dt": m, "region": r, "n": "1"}
                                       for m in ("2015-01", "2015-02") for r in regions])
    return name


def test_explain_json_shape(catalog: Catalog, shop: str) -> None:
    plan = explain(catalog, shop, "dt = '2015-01-02' and n > 1 and upper(region) = 'US'",
                   period="DAILY")
    data = plan.to_json()
    assert set(data) == {"full_scan", "scans", "gets", "residual"}
    assert data["full_scan"] is False and data["gets"] == []
    [scan] = data["scans"]
    assert set(scan) == {"start", "stop", "server_filter"}
    bytes.fromhex(scan["start"]), bytes.fromhex(scan["stop"])
    assert "SingleColumnValueFilter ('p', 'k.n', >" in scan["server_filter"]
    assert data["residual"] == "upper(region) = 'US'"
    json.dumps(data)  # serialisable as is
    text = plan.to_text()
    assert "period DAILY: 1 scan(s), 0 get(s)" in text and "residual (client)" in text


def test_explain_several_periods_merges_and_keeps_the_breakdown(catalog: Catalog, shop: str
                                                                ) -> None:
    plan = explain(catalog, shop, "dt >= '2015-01-02' and region = 'us' and n = 1")
    assert [p.period for p in plan.periods] == ["MONTHLY", "DAILY"] or \
        [p.period for p in plan.periods] == ["DAILY", "MONTHLY"]
    assert len(plan.scans) == sum(len(p.scans) for p in plan.periods)
    full = explain(catalog, shop, "region = 'us'")
    assert full.full_scan and all(p.full_scan for p in full.periods)
    assert all("leading key column 'dt'" in p.notes[0] for p in full.periods)


def test_results_periods_max_parts_and_stats(catalog: Catalog, shop: str) -> None:
    stats = QueryStats()
    got = get_partitions_by_filter(catalog, shop, "region = 'us' and n = 1", stats=stats)
    assert sorted((p.period.name, p.values["dt"]) for p in got) == sorted(
        [("DAILY", d) for d in ("2015-01-01", "2015-01-02", "2015-01-03", "2015-01-04")]
        + [("MONTHLY", "2015-01"), ("MONTHLY", "2015-02")]
    )
    assert stats.rows_returned == 6 and stats.full_scan and stats.round_trips >= 2
    only = get_partitions_by_filter(catalog, shop, "region = 'us' and n = 1", period="MONTHLY")
    assert {p.period.name for p in only} == {"MONTHLY"}
    capped = get_partitions_by_filter(catalog, shop, "n >= 1", period="DAILY", max_parts=5)
    assert len(capped) == 5
    assert get_partitions_by_filter(catalog, shop, "n >= 1", period="DAILY", max_parts=-1)
    with pytest.raises(InvalidInput, match="no WEEKLY partitions"):
        get_partitions_by_filter(catalog, shop, "n = 1", period="WEEKLY")


def test_a_tight_range_reads_only_what_it_returns(catalog: Catalog, shop: str) -> None:
    stats = QueryStats()
    got = get_partitions_by_filter(catalog, shop, "dt >= '2015-01-02' and dt < '2015-01-04'",
                                   period="DAILY", stats=stats)
    assert len(got) == 18 and stats.rows_fetched == 18 and stats.ratio == 1.0
    stats = QueryStats()
    got = get_partitions_by_filter(
        catalog, shop, "dt = '2015-01-02' and region = 'eu' and n in (1, 3)", period="DAILY",
        stats=stats)
    assert len(got) == 2 and stats.gets == 2 and stats.round_trips == 1


def test_residual_is_applied_on_the_client(catalog: Catalog, shop: str) -> None:
    stats = QueryStats()
    got = get_partitions_by_filter(
        catalog, shop, "dt = '2015-01-01' and upper(region) LIKE 'US%' and length(region) > 2",
        period="DAILY", stats=stats)
    assert {p.values["region"] for p in got} == {"us-east"}
    assert stats.rows_fetched == 9 and stats.rows_returned == 3


def test_unknown_columns(catalog: Catalog, shop: str) -> None:
    with pytest.raises(UnknownColumnError):
        get_partitions_by_filter(catalog, shop, "colour = 'red'")
    got = get_partitions_by_filter(catalog, shop, "n = 2 and colour = 'red'", period="DAILY",
                                   allow_unknown=True)
    assert len(got) == 12  # the unknown term is the caller's residual
    plan = explain(catalog, shop, "n = 2 and colour = 'red'", allow_unknown=True)
    assert plan.residual == "colour = 'red'"
    got = get_partitions_by_filter(
        catalog, shop, "n = 2 and (colour = 'red' or size > 3) and upper(region) = 'EU'",
        period="DAILY", allow_unknown=True)
    assert {p.values["region"] for p in got} == {"eu"} and len(got) == 4


def test_rows_being_dropped_are_still_registered(catalog: Catalog) -> None:
    name = unique("dropping")
    catalog.create_storage("ev", name, ["DAILY"], columns=["dt", "region"])
    catalog.register(name, "DAILY", [{"dt": "2015-01-01", "region": r} for r in ("a", "b")])
    sdef = catalog.get_storage(name)
    key = catalog.rows.partition_key(sdef, sdef.periods[0], ("2015-01-01", "a"))
    catalog.rows.partitions.put(key, {STATE: DROPPING})
    got = get_partitions_by_filter(catalog, name, "region = 'a'")
    assert [p.values["region"] for p in got] == ["a"]
    assert len(list(catalog.list_partitions(name))) == 2


def test_parse_errors_surface_before_any_read(catalog: Catalog, shop: str) -> None:
    before = catalog.stats.round_trips
    with pytest.raises(FilterSyntaxError):
        get_partitions_by_filter(catalog, shop, "n = = 1")
    assert catalog.stats.round_trips - before <= 1  # at most the storage definition


# ------------------------------------------------------------------------------------- CLI
def _ctx(catalog: Catalog) -> Context:
    ctx = Context(store_url=catalog.kv.url, stdout=io.StringIO(), stderr=io.StringIO())
    ctx._catalog = catalog
    return ctx


def test_cli_explain(catalog: Catalog, shop: str) -> None:
    parser = argparse.ArgumentParser()
    add_filter_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["explain", shop, "--filter", "n = 1 and dt = '2015-01-01'",
                              "--period", "DAILY", "--json", "--stats"])
    ctx = _ctx(catalog)
    assert args.handler(args, ctx) == 0
    assert set(json.loads(ctx.stdout.getvalue())) == {"full_scan", "scans", "gets", "residual"}
    stats_line = ctx.stderr.getvalue().strip()
    assert stats_line.startswith("stats: ")
    assert json.loads(stats_line[7:])["rows_returned"] == 3
    args = parser.parse_args(["explain", shop, "--filter", "region = 'us'"])
    ctx = _ctx(catalog)
    assert args.handler(args, ctx) == 0
    assert "full scan" in ctx.stdout.getvalue()
    assert "\\x01" in ctx.stdout.getvalue()  # raw key bytes are escaped for terminals


def test_cli_partition_list_filter(catalog: Catalog, shop: str) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("storage")
    parser.add_argument("--period")
    add_filter_arguments(parser)
    args = parser.parse_args([shop, "--filter", "n = 3", "--period", "DAILY", "--max-parts",
                              "2", "--stats"])
    ctx = _ctx(catalog)
    assert len(filtered_partitions(args, ctx)) == 2
    assert "rows_fetched" in ctx.stderr.getvalue()


# ------------------------------------------------------------ the same shapes, on a store
def test_shapes_on_the_store(catalog: Catalog) -> None:
    name = unique("shape")
    catalog.create_storage("ev", name, ["DAILY"], columns=["dt", "p1:int", "c1:int"])
    catalog.register(name, "DAILY", [
        {"dt": "2015-01-01", "p1": str(p1), "c1": str(c1)} for p1 in range(0, 12)
        for c1 in range(3)
    ])

    def run(text: str) -> tuple[list[tuple[int, int]], QueryStats]:
        stats = QueryStats()
        got = get_partitions_by_filter(catalog, name, text, stats=stats)
        return [(int(p.values["p1"]), int(p.values["c1"])) for p in got], stats

    rows, stats = run("dt = '2015-01-01' and p1 < 10 and p1 <= 10 and c1 = 1")
    assert rows == [(p, 1) for p in range(10)]
    rows, stats = run("dt = '2015-01-01' and p1 >= 5 and (p1 < 8 or p1 < 3)")
    assert rows == [(p, c) for p in range(5, 8) for c in range(3)]
    assert stats.rows_fetched == len(rows) and stats.scans == 1
    rows, stats = run("dt = '2015-01-01' and p1 in (3, 4) and c1 in (0, 2)")
    assert rows == [(3, 0), (3, 2), (4, 0), (4, 2)]
    assert stats.gets == 4 and stats.scans == 0 and stats.round_trips == 1
    rows, stats = run("dt = '2015-01-01' and p1 >= 5 and p1 < 3")
    assert rows == [] and stats.round_trips == 0
    rows, stats = run("dt = '2015-01-01' and p1 = 3 and c1 = 1 or dt = '2015-01-01' and p1 = 3")
    assert rows == [(3, 0), (3, 1), (3, 2)] and stats.rows_fetched == 3
