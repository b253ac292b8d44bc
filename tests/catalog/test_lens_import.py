"""Importing a Lens table's timelines into the catalog, and exporting them.

On sqlite and the HBase test double: everything is checked before anything is written; each
timeline is stored as Lens's implementation, holding Lens's partitions plus the live rows';
what has no row is reported, and covers and reconcile withdraw it; export gives back what Lens
holds.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.lens_table import LensInputError, parse_parameters
from airflow_partitions.catalog.rows.layout import GEN, fact_row, storage_row
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    PRESENT_KEY,
    LensParameterError,
    lens_table_parameters,
    new_timeline,
    timeline_prefix,
)

H, D, W = UpdatePeriod.HOURLY, UpdatePeriod.DAILY, UpdatePeriod.WEEKLY
HP, DP = timeline_prefix("HOURLY", "dt"), timeline_prefix("DAILY", "dt")


@pytest.fixture
def lens(catalog: Catalog) -> Catalog:
    """A fact ``events`` with a storage ``raw`` (HOURLY, DAILY; dt, region)."""
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["HOURLY", "DAILY"], columns=["dt", "region"])
    return catalog


def lens_params() -> dict[str, str]:
    """What Lens holds: HOURLY 00-05 but 02 (StoreAll), DAILY 01-01..01-03 and 01-10 (Ranges)."""
    hourly = new_timeline("StoreAll", H)
    base = H.parse_ordinal("2015-01-01-00")
    hourly.add_ordinal_ranges([(base, base + 2), (base + 3, base + 6)])
    daily = new_timeline("Ranges", D)
    day = D.parse_ordinal("2015-01-01")
    daily.add_ordinal_ranges([(day, day + 3), (day + 9, day + 10)])
    params, _ = lens_table_parameters({(H, "dt"): hourly, (D, "dt"): daily})
    return {**params, "transient_lastDdlTime": "1420070400"}


def values(catalog: Catalog, period: UpdatePeriod) -> list[str]:
    catalog.cache.invalidate()
    return [p.value for p in catalog.timeline("raw", period)]


def snapshot(catalog: Catalog) -> dict[bytes, Any]:
    """Every cell of the storage row and the fact row: what 'nothing written' compares."""
    return {**catalog.rows.catalog.get(storage_row("raw")),
            **catalog.rows.catalog.get(fact_row("events"))}


def test_import_stores_lens_timelines_and_export_gives_them_back(lens: Catalog) -> None:
    generation = lens.rows.read_generation("events")
    report = lens.import_lens_timelines("raw", lens_params())
    assert values(lens, H) == ["2015-01-01-00", "2015-01-01-01", "2015-01-01-03",
                               "2015-01-01-04", "2015-01-01-05"]
    assert values(lens, D) == ["2015-01-01", "2015-01-02", "2015-01-03", "2015-01-10"]
    assert lens.timeline("raw", H).kind == "StoreAll" and lens.timeline("raw", D).kind == "Ranges"
    assert lens.rows.read_generation("events") > generation  # warm caches see it
    expected = {k: v for k, v in lens_params().items() if k.startswith(HP) or k.startswith(DP)}
    assert {**lens.timeline_properties("raw", H), **lens.timeline_properties("raw", D)} == \
        expected
    params, skipped = lens.lens_parameters("raw")
    assert params == {**expected, PRESENT_KEY: "true"} and skipped == []
    # no row backs any of them: the report says so, per timeline, as ranges
    doc = report.to_json()
    assert doc["without_rows"] == 9 and not doc["dry_run"] and doc["other_parameters"] == 1
    hourly, daily = doc["timelines"]
    assert hourly["class"] == "StoreAll" and hourly["lens_partitions"] == 5
    assert hourly["without_rows_ranges"] == [["2015-01-01-00", "2015-01-01-02"],
                                             ["2015-01-01-03", "2015-01-01-06"]]
    assert daily["first"] == "2015-01-01" and daily["latest"] == "2015-01-10"
    assert daily["rows_not_in_lens"] == 0


def test_an_import_never_hides_a_registered_partition(lens: Catalog) -> None:
    lens.register("raw", "DAILY", [{"dt": "2015-01-02", "region": "eu"},
                                   {"dt": "2015-01-20", "region": "us"}])
    report = lens.import_lens_timelines("raw", lens_params())
    assert values(lens, D) == ["2015-01-01", "2015-01-02", "2015-01-03", "2015-01-10",
                               "2015-01-20"]
    daily = report.to_json()["timelines"][1]
    assert daily["lens_partitions"] == 4 and daily["stored_partitions"] == 5
    assert daily["without_rows_ranges"] == [["2015-01-01", "2015-01-02"],
                                            ["2015-01-03", "2015-01-04"],
                                            ["2015-01-10", "2015-01-11"]]
    assert daily["rows_not_in_lens_ranges"] == [["2015-01-20", "2015-01-21"]]


def test_covers_and_reconcile_withdraw_what_has_no_row(lens: Catalog) -> None:
    lens.register("raw", "DAILY", {"dt": "2015-01-02", "region": "eu"})
    lens.import_lens_timelines("raw", lens_params())
    cover = lens.cover("events", "2015-01-01T00:00:00+00:00", "2015-01-04T00:00:00+00:00",
                       periods=["DAILY"])
    assert [p.value for p in cover.partitions] == ["2015-01-02"]  # verified against the rows
    report = lens.reconcile("raw")
    daily = next(d for d in report.diffs if d.period is D)
    assert daily.over_reported == ["2015-01-10"]  # the cover already withdrew 01-01 and 01-03
    assert values(lens, D) == ["2015-01-02"]
    hourly = next(d for d in report.diffs if d.period is H)
    assert len(hourly.over_reported) == 5 and values(lens, H) == []
    # registering the rows instead keeps them: the import is then what the rows say
    lens.import_lens_timelines("raw", lens_params())
    lens.register("raw", "DAILY", [{"dt": f"2015-01-{d:02d}", "region": "eu"}
                                   for d in (1, 2, 3, 10)])
    assert lens.reconcile("raw").diffs[1].consistent
    assert values(lens, D) == ["2015-01-01", "2015-01-02", "2015-01-03", "2015-01-10"]


@pytest.mark.parametrize(("edit", "key"), [
    (lambda p: p.pop(DP + "ranges0"), DP + "ranges0"),
    (lambda p: p.update({DP + "ranges0": "[2015-01-01, 2015-01-04),[2015-01-10"}),
     DP + "ranges0"),
    (lambda p: p.pop(PRESENT_KEY), PRESENT_KEY),
    (lambda p: p.update({timeline_prefix("MONTHLY", "dt") + "first": "2015-01"}),
     timeline_prefix("MONTHLY", "dt") + "first"),
    (lambda p: [p.pop(k) for k in list(p) if k.startswith(DP)],
     DP + "storage.class"),
])
def test_bad_input_writes_nothing(lens: Catalog, edit: Any, key: str) -> None:
    lens.register("raw", "HOURLY", {"dt": "2015-01-01-07", "region": "eu"})
    before = snapshot(lens)
    params = lens_params()
    edit(params)
    with pytest.raises(LensParameterError) as caught:
        lens.import_lens_timelines("raw", params)
    assert caught.value.key == key
    assert snapshot(lens) == before  # the valid HOURLY timeline was not written either
    assert values(lens, H) == ["2015-01-01-07"]


def test_dry_run_reports_and_writes_nothing(lens: Catalog) -> None:
    lens.register("raw", "DAILY", {"dt": "2015-01-20", "region": "eu"})
    before = snapshot(lens)
    report = lens.import_lens_timelines("raw", lens_params(), dry_run=True)
    assert snapshot(lens) == before and before[GEN] == snapshot(lens)[GEN]
    daily = report.to_json()["timelines"][1]
    assert report.dry_run and daily["stored_partitions"] == 5 and report.without_rows == 9


def test_weekly_is_rebuilt_from_rows_not_imported(catalog: Catalog) -> None:
    catalog.create_fact("events")
    catalog.create_storage("events", "raw", ["DAILY", "WEEKLY"])
    catalog.register("raw", "WEEKLY", {"dt": "2015-W07"})
    weekly = new_timeline("EndsAndHoles", W)
    weekly.add_ordinal(W.parse_ordinal("2015-W01"))
    daily = new_timeline("EndsAndHoles", D)
    params, skipped = lens_table_parameters({(D, "dt"): daily, (W, "dt"): weekly})
    assert skipped == [(W, "dt")]
    params = {**params, **weekly.to_properties(), PRESENT_KEY: "true"}
    report = catalog.import_lens_timelines("raw", params)
    assert report.to_json()["skipped"] == [{"period": "WEEKLY", "column": "dt"}]
    assert [p.value for p in catalog.timeline("raw", W)] == ["2015-W07"]
    exported, skipped = catalog.lens_parameters("raw")
    assert skipped == [(W, "dt")] and PRESENT_KEY not in exported
    assert not any(".WEEKLY." in k for k in exported)


def test_import_while_partitions_are_registered(lens: Catalog, store_url: str) -> None:
    """Concurrent registers: every registered partition stays advertised."""
    errors: list[BaseException] = []

    def register_days() -> None:
        try:
            with Catalog(store_url, cache=TimelineCache()) as other:
                for day in range(11, 31):
                    other.register("raw", "DAILY", {"dt": f"2015-01-{day:02d}", "region": "eu"})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=register_days)
    thread.start()
    for _ in range(5):
        lens.import_lens_timelines("raw", lens_params())
    thread.join()
    assert not errors
    shown = set(values(lens, D))
    assert {f"2015-01-{day:02d}" for day in range(11, 31)} <= shown
    assert {"2015-01-01", "2015-01-10"} <= shown


def test_parameters_must_be_a_json_object() -> None:
    assert parse_parameters('{"a": "b"}', "t.json") == {"a": "b"}
    with pytest.raises(LensInputError, match=r"t\.json is not JSON"):
        parse_parameters("{", "t.json")
    with pytest.raises(LensInputError, match=r"t\.json holds a JSON list"):
        parse_parameters("[]", "t.json")
