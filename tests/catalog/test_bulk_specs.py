"""The bulk spec builder answers exactly as make_spec + encode_key, or leaves it to them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import bulk_specs
from airflow_partitions.catalog.bulk_specs import UNSAFE_VALUE, SpecBuilder, keyed_specs, locator
from airflow_partitions.catalog.definitions.tables import (
    PartitionSpec,
    StorageDef,
    UnsafeLocation,
    check_safe_value,
    make_spec,
    render_location,
)
from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import ColumnType, KeyEncodingError, encode_key
from airflow_partitions.periods import UpdatePeriod
from tests.hypothesis_budget import examples

H, D = UpdatePeriod.HOURLY, UpdatePeriod.DAILY
S = ColumnType.STRING
STORAGES = {
    "hourly": StorageDef("raw", "events", (("dt", S),), ("dt",), (H, D), "/d/{storage}/{dt}"),
    "two": StorageDef("by_region", "events", (("dt", S), ("region", S)), ("dt",), (H, D),
                      "/d/{period}/{region}/dt={dt}"),
    "typed": StorageDef("typed", "events", (("dt", S), ("shard", ColumnType.INT)), ("dt",),
                        (H,), "/d/{dt}/{shard}"),
    "braces": StorageDef("braced", "events", (("dt", S), ("region", S)), ("dt",), (H, D),
                         "/d/{{literal}}/{region}/{dt}/{dt}-{region}"),
    "repeat": StorageDef("repeat", "events", (("dt", S),), ("dt",), (H, D),
                         "/d/{fact}/{dt}/again-{dt}"),
    "berlin": StorageDef("local", "events", (("dt", S),), ("dt",), (H,), "/d/{dt}",
                         tz="Europe/Berlin"),
}

hour_texts = st.integers(0, 10**6).map(
    lambda o: H.format_ordinal(H.parse_ordinal("2000-01-01-00") + o))
day_texts = st.integers(0, 10**4).map(
    lambda o: D.format_ordinal(D.parse_ordinal("2000-01-01") + o))
odd_texts = st.sampled_from(["", ".", "..", "~x", "a/b", "a\\b", "x\x00y", "x\ny", "\ud800",
                             "2015-01-01-24", "2015-02-29-00", "10000-01-01-00",
                             "٢٠١٥-01-01-00", "2015-01-01", "2015-01-01-00 ", "x" * 40000,
                             "eu", "us-east", "3", "-7", "+7", "07", "é", "a.b"])
texts = hour_texts | day_texts | odd_texts | st.text(max_size=6)


def column_texts(column: str, period: UpdatePeriod) -> st.SearchStrategy[str]:
    """Mostly values that pass (so batches take the column path), sometimes anything."""
    likely = (st.sampled_from(["eu", "us", "3"]) if column != "dt"
              else day_texts if period is D else hour_texts)
    return st.sampled_from([True] * 12 + [False]).flatmap(
        lambda good: likely if good else texts)


@st.composite
def value_maps(draw: st.DrawFn, sdef: StorageDef, period: UpdatePeriod) -> dict[Any, Any]:
    item: dict[Any, Any] = {name: draw(column_texts(name, period))
                            for name in sdef.column_names}
    mutation = draw(st.sampled_from(["none"] * 20 + ["missing", "extra", "not-text"]))
    if mutation == "missing":
        item.pop(sdef.column_names[-1])
    elif mutation == "extra":
        item["extra"] = "x"
    elif mutation == "not-text":
        item[sdef.column_names[0]] = 7
    return item


def reference(sdef: StorageDef, period: UpdatePeriod,
              items: Sequence[Mapping[str, str]]) -> list[tuple[PartitionSpec, bytes]] | Exception:
    """What keyed_specs did before: make_spec and encode_key per item, first seen kept."""
    seen: dict[bytes, PartitionSpec] = {}
    try:
        for item in items:
            spec, typed = make_spec(sdef, period, item)
            seen.setdefault(encode_key(sdef.key_schema, sdef.name, period.name, typed), spec)
    except (InvalidInput, KeyEncodingError) as exc:
        return exc
    return [(spec, key) for key, spec in seen.items()]


def built(sdef: StorageDef, period: UpdatePeriod,
          items: Sequence[Mapping[str, str]]) -> list[tuple[PartitionSpec, bytes]] | Exception:
    try:
        return keyed_specs(sdef, period, items)
    except (InvalidInput, KeyEncodingError) as exc:
        return exc


@settings(max_examples=examples(250), deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(STORAGES)),
       period=st.sampled_from([H, H, H, D, D, UpdatePeriod.MONTHLY]))
def test_keyed_specs_equal_make_spec_and_encode_key(data: st.DataObject, name: str,
                                                     period: UpdatePeriod) -> None:
    sdef = STORAGES[name]
    items = data.draw(st.lists(value_maps(sdef, period), max_size=5))
    if data.draw(st.booleans()) and items:
        items.append(dict(items[0]))  # a duplicate: the first one is kept
    expected, got = reference(sdef, period, items), built(sdef, period, items)
    if isinstance(expected, Exception):
        assert type(got) is type(expected) and str(got) == str(expected)
        return
    assert got == expected
    assert not isinstance(got, Exception)
    for (spec, _), (want, _) in zip(got, expected, strict=True):
        assert spec.ordinals == want.ordinals  # not part of equality, so checked apart
        assert spec.ordinals  # every storage here has a time column
    locate = locator(sdef)
    assert {key: locate(spec) for spec, key in got} == {
        key: render_location(sdef.location, sdef.fact, sdef.name, period, spec.value_map)
        for spec, key in expected}


@settings(max_examples=examples(150), deadline=None)
@given(value=texts)
def test_the_unsafe_pattern_is_check_safe_value(value: str) -> None:
    try:
        check_safe_value("c", value)
        refused = False
    except InvalidInput:
        refused = True
    assert (UNSAFE_VALUE.search(value) is not None) == refused


def test_a_batch_of_hours_takes_the_column_path() -> None:
    sdef = STORAGES["hourly"]
    items = [{"dt": H.format_ordinal(H.parse_ordinal("2015-01-01-00") + i)} for i in range(5000)]
    assert SpecBuilder(sdef, H).build_all(items) is not None
    assert keyed_specs(sdef, H, items) == reference(sdef, H, items)


@pytest.mark.parametrize("bad", ["2015-01-01-24", "a/b", "10000-01-01-00"])
def test_one_bad_value_in_a_batch_fails_it_with_make_specs_message(bad: str) -> None:
    sdef = STORAGES["hourly"]
    items = [{"dt": "2015-01-01-00"}] * 100 + [{"dt": bad}]
    expected = reference(sdef, H, items)
    assert isinstance(expected, InvalidInput)
    with pytest.raises(type(expected), match="^" + re.escape(str(expected)) + "$"):
        keyed_specs(sdef, H, items)


@pytest.mark.parametrize("region", ["", ".", "..", "~x", "a/b", "a\\b", "x\ny", "\ud800"])
def test_an_unsafe_value_of_another_column_fails_the_batch(region: str) -> None:
    sdef = STORAGES["two"]
    items = [{"dt": "2015-01-01-00", "region": "eu"}] * 3 + [{"dt": "2015-01-01-01",
                                                             "region": region}]
    expected = reference(sdef, H, items)
    assert isinstance(expected, InvalidInput | KeyEncodingError)
    assert SpecBuilder(sdef, H).build_all(items) is None
    with pytest.raises(type(expected)):
        keyed_specs(sdef, H, items)


@settings(max_examples=examples(100), deadline=None)
@given(data=st.data(), name=st.sampled_from(["hourly", "two"]))
def test_slices_answer_as_one_batch(data: st.DataObject, name: str) -> None:
    """Validated a slice at a time (here 3 items), duplicates across slices kept once."""
    sdef = STORAGES[name]
    items = data.draw(st.lists(value_maps(sdef, H), max_size=10))
    items += data.draw(st.lists(st.sampled_from(items), max_size=4)) if items else []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bulk_specs, "_SLICE", 3)
        got = built(sdef, H, items)
    expected = reference(sdef, H, items)
    if isinstance(expected, Exception):
        assert type(got) is type(expected) and str(got) == str(expected)
    else:
        assert got == expected


@pytest.mark.parametrize("template", ["/d/{dt}", "/d/{region}/{dt}", "/d/{{x}}/{dt}/{region}/{dt}",
                                      "s3://bucket/t/{dt}/{region}"])
def test_the_locator_still_refuses_a_location_outside_the_root(template: str) -> None:
    """Defence in depth: a spec that skipped validation cannot render outside the table."""
    sdef = StorageDef("t", "events", (("dt", S), ("region", S)), ("dt",), (H,), template)
    if "{region}" not in template:
        sdef = StorageDef("t", "events", (("dt", S),), ("dt",), (H,), template)
    forged = PartitionSpec(sdef.name, H, tuple((c, "..") for c in sdef.column_names))
    with pytest.raises(UnsafeLocation, match="escapes the table root"):
        locator(sdef)(forged)
    with pytest.raises(UnsafeLocation, match="is not allowed in a location"):
        render_location(template, "events", "t", H, forged.value_map)  # it checks values
