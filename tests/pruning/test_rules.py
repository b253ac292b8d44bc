"""Join specs and the pruning bail-out rules, pair by pair (pure: no catalog)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from airflow_partitions.catalog import StorageDef
from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import ColumnType
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.pruning import (
    InvalidJoinSpec,
    JoinSpec,
    KeyValues,
    analyse,
    col,
    fn,
    keys_to_collect,
    parse_key,
)

SDEF = StorageDef(
    name="big", fact="ev",
    columns=(("dt", ColumnType.STRING), ("region", ColumnType.STRING), ("shop", ColumnType.INT)),
    time_columns=("dt",), periods=(UpdatePeriod.HOURLY,), location="/d/{dt}/{region}/{shop}",
)
VALUES = {"dim": {"region": ["eu", "us"], "shop": [1, 2, 3], "name": ["x"]},
          "dim2": {"region": ["us", "ap"], "day": ["2024-01-01-00"]}}


def test_parse_key_bare_and_wrapped() -> None:
    assert parse_key("Region") == col("Region")
    assert not parse_key("region").wrapped
    wrapped = parse_key("upper(region)")
    assert wrapped.wrapped and wrapped.column == "region" and str(wrapped) == "upper(region)"
    assert parse_key("cast(shop AS string)").wrapped
    assert parse_key("`date`").column == "date"
    assert fn("to_date(ts)", "ts").wrapped
    with pytest.raises(InvalidJoinSpec):
        parse_key("'eu'")
    with pytest.raises(InvalidJoinSpec):
        parse_key("concat(a, b)")
    with pytest.raises(InvalidInput):
        parse_key("region = 'x' OR 1")
    with pytest.raises(InvalidInput):
        parse_key("nosuchfn(region)")


def test_spec_of_and_json_round_trip() -> None:
    spec = JoinSpec.of("dim", {"region": "region", "upper(dt)": "day"}, how="LEFT OUTER",
                       big_side="right")
    assert spec.how == "left" and spec.big_side == "right"
    assert JoinSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    assert JoinSpec.of("dim", "region").on == ((col("region"), col("region")),)
    with pytest.raises(InvalidJoinSpec):
        JoinSpec.of("dim", "region", how="cross")
    with pytest.raises(InvalidJoinSpec):
        JoinSpec.of("dim", "region", big_side="middle")
    with pytest.raises(InvalidJoinSpec):
        JoinSpec.from_json({"small": "dim", "on": "region", "typo": 1})


@pytest.mark.parametrize(("how", "side", "preserved"), [
    ("inner", "left", False), ("inner", "right", False),
    ("left", "left", True), ("left", "right", False),
    ("right", "right", True), ("right", "left", False),
    ("full", "left", True), ("full", "right", True),
    ("left_semi", "left", False),
])
def test_outer_side_rule(how: str, side: str, preserved: bool) -> None:
    result = analyse(JoinSpec.of("dim", "region", how, side), SDEF, VALUES)
    if preserved:
        assert result.bail_out is not None and "outer_join_preserves_big" in result.bail_out
        assert result.columns == {}
    else:
        assert result.bail_out is None and result.columns == {"region": {"eu", "us"}}


def test_function_on_either_key_bails_out() -> None:
    big = analyse(JoinSpec.of("dim", {"upper(region)": "region"}), SDEF, VALUES)
    assert big.bail_out is not None and "function_on_big_key" in big.bail_out
    small = analyse(JoinSpec.of("dim", {"region": "lower(region)"}), SDEF, VALUES)
    assert small.bail_out is not None and "function_on_small_key" in small.bail_out
    explicit = analyse(JoinSpec("dim", ((fn("trim(region)", "region"), col("region")),)),
                       SDEF, VALUES)
    assert explicit.bail_out is not None and "function_on_big_key" in explicit.bail_out


def test_non_partition_column_bails_out() -> None:
    result = analyse(JoinSpec.of("dim", {"country": "name"}), SDEF, VALUES)
    assert result.bail_out is not None and "not_a_partition_column" in result.bail_out
    assert "'country' is not a partition column" in result.bail_out


def test_value_set_limit_bails_out() -> None:
    big = {"dim": {"region": [f"r{i}" for i in range(11)]}}
    result = analyse(JoinSpec.of("dim", "region"), SDEF, big, max_values=10)
    assert result.bail_out is not None and "value_set_too_large" in result.bail_out
    assert "11 distinct values (limit 10)" in result.bail_out
    assert analyse(JoinSpec.of("dim", "region"), SDEF, big, max_values=11).bail_out is None
    overflow = {"dim": {"region": KeyValues("dim", "region", ("a",), overflow=True)}}
    flagged = analyse(JoinSpec.of("dim", "region"), SDEF, overflow, max_values=10)
    assert flagged.bail_out is not None and "more than 10" in flagged.bail_out


def test_default_limit_is_ten_thousand() -> None:
    many = {"dim": {"region": [f"r{i}" for i in range(10_000)]}}
    assert analyse(JoinSpec.of("dim", "region"), SDEF, many).bail_out is None
    many["dim"]["region"].append("one-more")
    assert analyse(JoinSpec.of("dim", "region"), SDEF, many).bail_out is not None


def test_missing_value_set_is_a_skip() -> None:
    result = analyse(JoinSpec.of("nowhere", "region"), SDEF, VALUES)
    assert result.bail_out is not None and "no_value_set" in result.bail_out


def test_a_bad_pair_leaves_the_good_one_pruning() -> None:
    spec = JoinSpec.of("dim", {"region": "region", "upper(dt)": "name"})
    result = analyse(spec, SDEF, VALUES)
    assert result.bail_out is None and set(result.columns) == {"region"}
    used = [p.used for p in result.pairs]
    assert used == [True, False] and result.pairs[1].check.code == "function_on_big_key"


def test_cascade_same_key_intersects_and_other_keys_and_together() -> None:
    specs = [JoinSpec.of("dim", "region"), JoinSpec.of("dim2", "region"),
             JoinSpec.of("dim", "shop")]
    result = analyse(specs, SDEF, VALUES)
    assert result.columns == {"region": {"us"}, "shop": {1, 2, 3}}


def test_cascade_with_an_outer_join_keeps_the_inner_ones() -> None:
    specs = [JoinSpec.of("dim", "region"), JoinSpec.of("dim", "shop", how="left")]
    result = analyse(specs, SDEF, VALUES)
    assert result.columns == {"region": {"eu", "us"}}
    assert [p.check.code for p in result.pairs] == [None, "outer_join_preserves_big"]


def test_nulls_never_match_and_are_counted() -> None:
    result = analyse(JoinSpec.of("dim", "region"), SDEF, {"dim": {"region": ["eu", None, None]}})
    assert result.columns == {"region": {"eu"}} and result.pairs[0].nulls == 2
    only_nulls = analyse(JoinSpec.of("dim", "region"), SDEF, {"dim": {"region": [None]}})
    assert only_nulls.columns == {"region": set()}  # prunes everything: nothing can match


def test_keys_to_collect_skips_pairs_that_cannot_prune() -> None:
    specs = [JoinSpec.of("dim", {"region": "region", "upper(dt)": "day", "country": "c"}),
             JoinSpec.of("dim2", "region", how="full"), JoinSpec.of("dim3", {"shop": "id"})]
    assert keys_to_collect(specs, SDEF.column_names) == {"dim": ["region"], "dim3": ["id"]}
    assert keys_to_collect(specs) == {"dim": ["region", "c"], "dim3": ["id"]}


def test_small_column_names_match_case_insensitively() -> None:
    result = analyse(JoinSpec.of("dim", {"region": "REGION"}), SDEF, VALUES)
    assert result.columns == {"region": {"eu", "us"}}


def test_date_typed_values() -> None:
    sdef = StorageDef(name="d", fact="ev", columns=(("dt", ColumnType.STRING),
                                                    ("day", ColumnType.DATE)),
                      time_columns=("dt",), periods=(UpdatePeriod.HOURLY,), location="/{dt}/{day}")
    result = analyse(JoinSpec.of("dim", "day"), sdef,
                     {"dim": {"day": [dt.date(2024, 1, 2), "2024-01-03"]}})
    assert result.columns == {"day": {dt.date(2024, 1, 2), dt.date(2024, 1, 3)}}
