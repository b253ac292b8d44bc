"""Slice timelines: one per (storage, period, time column, slice), kept by the write protocol,
equal to a recount of the rows, read by covers instead of the rows."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.layout import storage_row
from airflow_partitions.catalog.slices import completeness as dimension_coverage
from airflow_partitions.catalog.slices.cells import (
    MARKER,
    parse_slice_cell,
    slice_cell,
    slice_key,
)
from airflow_partitions.catalog.slices.writer import update_slice
from airflow_partitions.periods import UpdatePeriod
from tests.catalog.slice_truth import built, rows_slices, stored_slices
from tests.catalog.test_dimension_coverage import DAY, T0, hour, lacking, regions_fact, register
from tests.hypothesis_budget import examples

EU, US = (("region", "eu"),), (("region", "us"),)


def _no_row_scan(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the row scans of the completeness fallback (slice timelines must not need one)."""
    calls: list[int] = []

    class Counted(PartitionDecoder):
        def rows(self, *args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            return super().rows(*args, **kwargs)

    monkeypatch.setattr(dimension_coverage, "PartitionDecoder", Counted)
    return calls


def test_register_and_drop_keep_one_timeline_per_slice(catalog: Catalog,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(48))
    register(catalog, raw, "eu", range(5))
    assert stored_slices(catalog, raw) == {
        ("HOURLY", "dt", US): {hour(h) for h in range(48)},
        ("HOURLY", "dt", EU): {hour(h) for h in range(5)},
    }
    catalog.drop(raw, "HOURLY", [{"dt": hour(2), "region": "eu"}])
    assert stored_slices(catalog, raw) == rows_slices(catalog, raw)
    assert built(catalog, raw)
    scans = _no_row_scan(monkeypatch)
    cover = catalog.cover("ev", T0, DAY)
    assert lacking(cover) == {"region=eu": [hour(2), hour(5)]}
    assert not scans, "a built storage's cover read the rows instead of its slice timelines"


def test_slice_cells_do_not_collide_and_lens_export_is_the_union(catalog: Catalog) -> None:
    """Values with the characters the cell name uses round-trip; Lens sees no slice."""
    catalog.create_fact("ev")
    catalog.create_storage("ev", "odd", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu"])
    catalog.create_fact("plain")
    catalog.create_storage("plain", "flat", ["HOURLY"], columns=["dt", "region"])
    values = [{"dt": hour(h), "region": r} for h in range(3) for r in ("a=b,c@d%", "eu")]
    catalog.register("odd", "HOURLY", values)
    catalog.register("flat", "HOURLY", values)
    odd = (("region", "a=b,c@d%"),)
    assert parse_slice_cell(slice_cell(UpdatePeriod.HOURLY, "dt", odd)) == ("HOURLY", "dt", odd)
    assert stored_slices(catalog, "odd")[("HOURLY", "dt", odd)] == {hour(h) for h in range(3)}
    exported, _ = catalog.lens_parameters("odd")
    plain, _ = catalog.lens_parameters("flat")
    assert exported == plain and exported
    assert not any("region" in k or "@" in k for k in exported)


def test_a_dimension_declared_later_builds_its_slice_timelines(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "ev_raw", ["HOURLY"], columns=["dt", "region"])
    register(catalog, "ev_raw", "us", range(24))
    register(catalog, "ev_raw", "eu", range(20))
    assert catalog.cover("ev", T0, DAY).coverable  # not a dimension: any region counts
    said: list[str] = []
    monkeypatch.setattr("airflow_partitions.catalog.slices.build.PROGRESS_ROWS", 10)
    catalog.set_dimension("ev_raw", "region=eu,us")
    assert built(catalog, "ev_raw")
    assert stored_slices(catalog, "ev_raw") == rows_slices(catalog, "ev_raw")
    scans = _no_row_scan(monkeypatch)
    assert lacking(catalog.cover("ev", T0, DAY)) == {"region=eu": [hour(20)]}
    assert not scans
    # Progress on long runs: the build says where it is (here every 10 rows).
    from airflow_partitions.catalog.slices import build as slice_build
    sdef = catalog.get_storage("ev_raw")
    assert slice_build.build_slices(catalog.rows, sdef, again=True, progress=said.append) == 1
    assert any("read 40 HOURLY rows" in s for s in said), said
    assert any("built the HOURLY dt slice timelines (2 slices" in s for s in said), said


def test_unbuilt_slice_timelines_fall_back_to_the_rows(catalog: Catalog,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A catalog from before slice timelines (no marker) reads the rows, and reconcile builds."""
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(3))
    catalog.rows.catalog.delete(storage_row(raw), [MARKER])
    assert not built(catalog, raw)
    scans = _no_row_scan(monkeypatch)
    assert lacking(catalog.cover("ev", T0, DAY)) == {"region=eu": [hour(3)]}
    assert scans, "without the marker the cover must read the rows"
    catalog.reconcile(raw)
    assert built(catalog, raw)
    scans.clear()
    assert lacking(catalog.cover("ev", T0, DAY)) == {"region=eu": [hour(3)]}
    assert not scans


def test_an_over_reporting_slice_timeline_is_repaired_by_the_cover(catalog: Catalog) -> None:
    """Invariant 2 stays with the verification read: a slice cell that advertises an hour no
    row has (e.g. a drop by a process that never saw the dimension) is caught and settled."""
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(23))
    sdef = catalog.get_storage(raw)
    update_slice(catalog.rows, sdef, UpdatePeriod.HOURLY, "dt", EU,
                 add={UpdatePeriod.HOURLY.parse_ordinal(hour(23), "UTC")})
    catalog.rows.bump_generation("ev")
    cover = catalog.cover("ev", T0, DAY)
    assert not cover.coverable and lacking(cover) == {"region=eu": [hour(23)]}
    assert stored_slices(catalog, raw) == rows_slices(catalog, raw)


OPS = st.lists(st.tuples(st.booleans(), st.sets(st.tuples(st.integers(0, 7),
                                                            st.sampled_from(("eu", "us", "ap"))),
                                                  min_size=1, max_size=6)),
               min_size=1, max_size=8)


@settings(max_examples=examples(30), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=OPS)
def test_slice_timelines_equal_a_recount_after_any_registers_and_drops(
        catalog: Catalog, ops: list[tuple[bool, set[tuple[int, str]]]]) -> None:
    name = f"p{len(catalog.list_facts())}"
    raw = regions_fact(catalog, name)
    for adds, batch in ops:
        values = [{"dt": hour(h), "region": r} for h, r in sorted(batch)]
        if adds:
            catalog.register(raw, "HOURLY", values)
        else:
            catalog.drop(raw, "HOURLY", values)
    assert stored_slices(catalog, raw) == rows_slices(catalog, raw)
    # and the cover agrees with a recount
    have = rows_slices(catalog, raw)
    complete = [h for h in range(8) if all(hour(h) in have.get(("HOURLY", "dt", s), ())
                                           for s in (EU, US))]
    cover = catalog.cover(name, T0, T0 + dt.timedelta(hours=8))
    assert cover.coverable == (len(complete) == 8)
    for s in (EU, US):  # each region its own hours (per-slice covers)
        assert [p.value for p in cover.partitions if p.dimensions == s] == sorted(
            v for v in have.get(("HOURLY", "dt", s), ()) if v < hour(8))


def test_slice_key_is_unambiguous() -> None:
    assert slice_key((("region", "eu"), ("source", "w,=b"))) == "region=eu,source=w%2C%3Db"


def test_a_corrupt_slice_cell_is_never_used_and_reconcile_rebuilds_it(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant 8: the damaged timeline's covers read the rows; reconcile replaces the cell."""
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(4))
    catalog.rows.catalog.put(storage_row(raw), {slice_cell(UpdatePeriod.HOURLY, "dt", EU):
                                                b'{"version": 3, "properties": 7}'})
    catalog.rows.bump_generation("ev")
    assert not built(catalog, raw)
    scans = _no_row_scan(monkeypatch)
    assert lacking(catalog.cover("ev", T0, DAY)) == {"region=eu": [hour(4)]}
    assert scans
    catalog.reconcile(raw)
    assert built(catalog, raw)
    assert stored_slices(catalog, raw) == rows_slices(catalog, raw)
