"""A typo in a dimension never rewrites what the catalog requires, nor what a cover answers.

Retiring a value that is not declared is refused (it would declare the value required since
the beginning of time), a declared value must be one a partition location can hold (else it
is required forever and can never be registered), and a ``where`` that selects no declared
slice says so instead of answering from the time-only path (docs/dimensions.md).
"""

from __future__ import annotations

import json

import pytest

from airflow_partitions.catalog import Catalog, NotADimension, NothingSelected
from airflow_partitions.cover import Cover
from airflow_partitions.errors import InvalidInput
from airflow_partitions.planning import plan
from tests.helpers import T0, region_hours, regions_fact, run_cli

RETIRE_TYPO = "region=uss@..2030-01-01T00:00:00Z"
NO_SLICE = "where \"region = 'euu'\" matches no declared slice of ev (declared: region=eu,us)"


@pytest.fixture
def regions(catalog: Catalog) -> Catalog:
    """``ev``: ``ev_raw`` (dt, region) with the domain eu, us; us has hours 00..03, eu 00..01."""
    return regions_fact(catalog)


def domain(catalog: Catalog, storage: str) -> list[str]:
    """The stored domain of ``storage``'s dimensions, read afresh."""
    fresh = Catalog(catalog.kv.url, data_root=catalog.data_root)
    try:
        return [d.text() for d in fresh.get_storage(storage).dimensions]
    finally:
        fresh.close()


# -- retiring a value that is not declared ---------------------------------------------------


def test_retiring_a_value_that_is_not_declared_is_refused(regions: Catalog) -> None:
    with pytest.raises(InvalidInput) as refused:
        regions.set_dimension("ev_raw", RETIRE_TYPO)
    message = str(refused.value)
    assert "\n" not in message
    assert "uss" in message and "eu, us" in message, message
    assert domain(regions, "ev_raw") == ["region=eu,us"]  # nothing written
    assert regions.cover("ev", T0, T0.add(hours=2)).coverable  # the past still reads coverable


def test_retiring_on_a_column_that_is_not_a_dimension_is_refused(catalog: Catalog) -> None:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "ev_raw", ["HOURLY"], columns=["dt", "region", "source"],
                           dimensions=["region=eu"])
    with pytest.raises(InvalidInput, match="source is not a declared dimension of ev_raw"):
        catalog.set_dimension("ev_raw", "source=web@..2030-01-01T00:00:00Z")
    assert domain(catalog, "ev_raw") == ["region=eu"]


def test_retiring_a_declared_value_and_declaring_a_span_still_work(regions: Catalog) -> None:
    regions.set_dimension("ev_raw", "region=us@..2030-01-01T00:00:00Z")
    regions.set_dimension("ev_raw",
                          "region=apac@2031-01-01T00:00:00Z..2032-01-01T00:00:00Z")
    assert domain(regions, "ev_raw") == [
        "region=eu,us@..2030-01-01T00:00:00Z,"
        "apac@2031-01-01T00:00:00Z..2032-01-01T00:00:00Z"]


def test_the_cli_refuses_retiring_a_typo_in_one_line(
        regions: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(regions, capsys, "storage", "set-dimension", "ev_raw", RETIRE_TYPO)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "eu, us" in err, err
    assert domain(regions, "ev_raw") == ["region=eu,us"]


# -- a value no location can hold --------------------------------------------------------------


@pytest.mark.parametrize("value", ["a/b", "..", "~x", "a\\b"])
def test_a_declared_value_must_fit_a_location(catalog: Catalog, value: str) -> None:
    """The rule and message of registration (``check_safe_value``), at both declarations."""
    catalog.create_fact("ev")
    catalog.create_storage("ev", "plain", ["HOURLY"], columns=["dt", "region"])
    with pytest.raises(InvalidInput) as at_register:
        catalog.register("plain", "HOURLY", {"dt": "2024-01-01-00", "region": value})
    with pytest.raises(InvalidInput) as at_create:
        catalog.create_storage("ev", "typo", ["HOURLY"], columns=["dt", "region"],
                               dimensions=[f"region=eu,{value}"])
    assert str(at_create.value) == str(at_register.value)
    assert type(at_create.value) is type(at_register.value)
    catalog.create_storage("ev", "ev_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu"])
    with pytest.raises(InvalidInput) as at_set:
        catalog.set_dimension("ev_raw", f"region={value}@2030-01-01T00:00:00Z")
    assert str(at_set.value) == str(at_register.value)
    assert domain(catalog, "ev_raw") == ["region=eu"]


def test_the_cli_refuses_a_value_no_location_can_hold(
        catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    catalog.create_fact("ev")
    code, _, err = run_cli(catalog, capsys, "storage", "create", "ev", "ev_raw", "--periods",
                           "HOURLY", "--partition-columns", "dt,region:string",
                           "--dimension", "region=eu,a/b")
    assert code == 2 and "not allowed in a location" in err, err
    catalog.create_storage("ev", "ev_raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu"])
    code, _, err = run_cli(catalog, capsys, "storage", "set-dimension", "ev_raw", "region=..")
    assert code == 2 and "not allowed in a location" in err, err
    assert domain(catalog, "ev_raw") == ["region=eu"]


# -- a where that selects no declared slice ----------------------------------------------------


def test_a_where_selecting_no_declared_slice_is_not_coverable(regions: Catalog) -> None:
    """eu has hours 00..01 only; ``euu`` is no declared value, so the cover must not answer
    "coverable" from the hours some region has."""
    for verify in (True, False):
        cover = regions.cover("ev", T0, T0.add(hours=2), where="region = 'euu'", verify=verify)
        assert not cover.coverable
        assert cover.unselected == NO_SLICE
        assert NO_SLICE in cover.notes and len(cover) == 0
        data = cover.to_json()
        assert data["coverable"] is False and NO_SLICE in data["notes"]
    assert regions.cover("ev", T0, T0.add(hours=2), where="region = 'eu'").coverable
    # a where over a value declared later than the range keeps the time-only path
    regions.set_dimension("ev_raw", "region=apac@2030-01-01T00:00:00Z")
    later = regions.cover("ev", T0, T0.add(hours=2), where="region = 'apac'")
    assert later.coverable and later.unselected is None


def test_the_cover_json_keeps_the_unselected_note(regions: Catalog) -> None:
    cover = regions.cover("ev", T0, T0.add(hours=2), where="region = 'euu'")
    back = Cover.from_json(json.loads(json.dumps(cover.to_json())))
    assert not back.coverable and back.unselected == NO_SLICE and back.notes == cover.notes


def test_a_where_over_an_undeclared_column_keeps_its_error(regions: Catalog) -> None:
    with pytest.raises(NotADimension, match="dt is not a declared dimension"):
        regions.cover("ev", T0, T0.add(hours=2), where="dt = '2024-01-01-00'")


def test_cover_exits_non_zero_and_says_the_where_selects_nothing(
        regions: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("cover", "ev", "--start", T0.isoformat(), "--end", T0.add(hours=2).isoformat(),
            "--where", "region = 'euu'")
    code, out, err = run_cli(regions, capsys, *args)
    assert code == 1, (out, err)
    assert NO_SLICE in out, out
    code, out, _ = run_cli(regions, capsys, *args, "--json")
    assert code == 1 and NO_SLICE in json.loads(out)["notes"]
    region_hours(regions, "eu", 2, 3)
    code, out, _ = run_cli(regions, capsys, *args[:-1], "region = 'eu'")
    assert code == 0, out


def test_metrics_say_the_where_selects_nothing(
        regions: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("metrics", "ev", "--start", T0.isoformat(), "--end", T0.add(hours=2).isoformat(),
            "--where", "region = 'euu'")
    code, out, err = run_cli(regions, capsys, *args)
    assert code == 1 and NO_SLICE in out, (out, err)
    code, out, _ = run_cli(regions, capsys, *args, "--json")
    assert code == 1 and NO_SLICE in json.loads(out)["notes"]


def test_a_plan_over_a_where_selecting_nothing_is_refused(
        regions: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(NothingSelected, match=r"matches no declared slice of ev"):
        plan(regions, "ev", T0, T0.add(hours=2), where="region = 'euu'")
    args = ("plan", "ev", "--start", T0.isoformat(), "--end", T0.add(hours=2).isoformat(),
            "--where", "region = 'euu'")
    code, out, err = run_cli(regions, capsys, *args)
    assert code == 2 and NO_SLICE in err, (out, err)
    assert plan(regions, "ev", T0, T0.add(hours=2), where="region = 'eu'").runs == ()
