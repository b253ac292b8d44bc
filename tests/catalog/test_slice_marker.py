"""The build marker says a storage's slice timelines are built, and one slice's cell is gone
while the rows have that slice: readers see the disagreement, read that slice from the rows
with a WARNING naming it, and ``reconcile`` (API and CLI) says which slice timeline it rebuilt.
On both backends (the ``store_url`` fixture)."""

from __future__ import annotations

import json
import logging

import pytest

from airflow_partitions.catalog import Catalog, complete_sources
from airflow_partitions.catalog.rows.layout import storage_row
from airflow_partitions.catalog.slices import completeness
from airflow_partitions.catalog.slices.cells import slice_cell
from airflow_partitions.cli import main
from airflow_partitions.cover import CoverRequest
from airflow_partitions.periods import UpdatePeriod
from tests.catalog.slice_truth import built, rows_slices, stored_slices
from tests.catalog.test_dimension_coverage import DAY, T0, lacking, regions_fact, register

EU = (("region", "eu"),)
HOURLY = UpdatePeriod.HOURLY


def lose_eu_cell(catalog: Catalog) -> str:
    """us and eu each have the whole day; eu's slice cell is deleted through the kv table API
    (the marker still says the HOURLY dt slice timelines are built)."""
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(24))
    assert built(catalog, raw)
    catalog.rows.catalog.delete(storage_row(raw), [slice_cell(HOURLY, "dt", EU)])
    catalog.cache.invalidate()
    return raw


def names_the_lost_slice(caplog: pytest.LogCaptureFixture, raw: str) -> bool:
    return any(r.levelno == logging.WARNING and raw in r.getMessage()
               and "HOURLY" in r.getMessage() and "dt" in r.getMessage()
               and "region=eu" in r.getMessage() for r in caplog.records)


def test_a_lost_slice_cell_is_read_from_the_rows_with_a_warning(
        catalog: Catalog, caplog: pytest.LogCaptureFixture) -> None:
    raw = lose_eu_cell(catalog)
    with caplog.at_level(logging.WARNING):
        _, checks = complete_sources(catalog.rows, catalog.fact_state("ev"),
                                     CoverRequest.of("ev", T0, DAY), "dt")
    check = checks[(raw, HOURLY)]
    assert len(check.complete) == 24 and not check.lacking
    assert names_the_lost_slice(caplog, raw)


def test_a_plan_does_not_rerun_a_slice_whose_cell_is_lost(
        catalog: Catalog, caplog: pytest.LogCaptureFixture) -> None:
    from airflow_partitions.planning import plan

    lose_eu_cell(catalog)
    with caplog.at_level(logging.WARNING):
        planned = plan(catalog, "ev", T0, DAY)
    assert planned.unfillable == () and planned.coverable_after()


def test_a_slice_never_registered_is_lacking_and_not_warned_about(
        catalog: Catalog, caplog: pytest.LogCaptureFixture) -> None:
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    catalog.cache.invalidate()
    with caplog.at_level(logging.WARNING):
        _, checks = complete_sources(catalog.rows, catalog.fact_state("ev"),
                                     CoverRequest.of("ev", T0, DAY), "dt")
    assert len(checks[(raw, HOURLY)].lacking[EU]) == 24
    assert not any(r.levelno >= logging.WARNING for r in caplog.records)


def test_with_every_cell_there_no_row_is_read(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check costs no scan in the normal case: every required slice has its cell."""
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(4))
    catalog.cache.invalidate()

    def no_scan(*_: object) -> None:
        raise AssertionError("the rows were scanned")

    monkeypatch.setattr(completeness, "slice_presence", no_scan)
    _, checks = complete_sources(catalog.rows, catalog.fact_state("ev"),
                                 CoverRequest.of("ev", T0, DAY), "dt")
    assert len(checks[(raw, HOURLY)].lacking[EU]) == 20
    state = catalog.fact_state("ev").storages[raw]
    stored = state.slice_timelines(HOURLY, "dt")
    assert stored is not None
    assert completeness.with_lost_slices(
        catalog.rows, state.definition, HOURLY, "dt", state.timelines[(HOURLY, "dt")], stored,
        CoverRequest.of("ev", T0, DAY)) is stored


def test_with_lost_slices_gives_the_slice_timelines_whole(
        catalog: Catalog, caplog: pytest.LogCaptureFixture) -> None:
    raw = lose_eu_cell(catalog)
    state = catalog.fact_state("ev").storages[raw]
    stored = state.slice_timelines(HOURLY, "dt")
    assert stored is not None and EU not in stored
    with caplog.at_level(logging.WARNING):
        found = completeness.with_lost_slices(
            catalog.rows, state.definition, HOURLY, "dt", state.timelines[(HOURLY, "dt")],
            stored, CoverRequest.of("ev", T0, DAY))
    assert len(found[EU]) == 24 and found[(("region", "us"),)] is stored[(("region", "us"),)]
    assert names_the_lost_slice(caplog, raw)


def test_the_cover_sees_a_slice_whose_cell_is_lost(
        catalog: Catalog, caplog: pytest.LogCaptureFixture) -> None:
    raw = lose_eu_cell(catalog)
    with caplog.at_level(logging.WARNING):
        cover = catalog.cover("ev", T0, DAY)
    assert lacking(cover) == {} and cover.coverable
    assert names_the_lost_slice(caplog, raw)


def test_reconcile_names_the_slice_timeline_it_rebuilt(catalog: Catalog) -> None:
    raw = lose_eu_cell(catalog)
    report = catalog.reconcile(raw)
    assert not report.consistent
    [repaired] = report.slice_repairs
    assert (repaired.storage, repaired.period, repaired.column, repaired.slice) == (
        raw, HOURLY, "dt", EU)
    doc = report.to_json()["slice_timelines"]
    assert [(d["storage"], d["period"], d["column"], d["slice"]) for d in doc] == [
        (raw, "HOURLY", "dt", {"region": "eu"})]
    assert "missing" in doc[0]["reason"]
    assert len(doc[0]["under_reported"]) == 24 and doc[0]["over_reported"] == []
    assert stored_slices(catalog, raw) == rows_slices(catalog, raw)

    again = catalog.reconcile(raw)  # clean now: lists none
    assert again.consistent and again.slice_repairs == []
    assert "slice_timelines" not in again.to_json()


def test_reconcile_of_a_clean_catalog_lists_no_slice_timeline(catalog: Catalog) -> None:
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(4))
    report = catalog.reconcile(raw)
    assert report.consistent and report.slice_repairs == []
    assert "slice_timelines" not in report.to_json()


def test_the_cli_reconcile_says_which_slice_timeline_it_rebuilt(
        catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    raw = lose_eu_cell(catalog)
    url = catalog.kv.url
    assert main(["--store", url, "reconcile", raw]) == 0
    out = capsys.readouterr().out
    assert "rebuilt the HOURLY dt slice timeline of region=eu" in out
    assert "24 under-reported" in out

    assert main(["--store", url, "reconcile", raw, "--json"]) == 0
    captured = capsys.readouterr()
    assert "slice_timelines" not in json.loads(captured.out)
    assert "slice timeline" not in captured.err
