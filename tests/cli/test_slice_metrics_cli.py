"""``metrics --where`` over declared dimensions: the incomplete slices and the worst one,
printed and in the JSON."""

from __future__ import annotations

from tests.cli.conftest import Run

RANGE = ("--start", "2015-01-01T00:00:00Z", "--end", "2015-01-01T04:00:00Z")


def test_metrics_name_the_worst_slice_and_take_where(run: Run) -> None:
    assert run("fact", "create", "ev", "--time-column", "dt").code == 0
    created = run("storage", "create", "ev", "raw", "--periods", "HOURLY",
                  "--partition-columns", "dt,region", "--dimension", "region=eu,us")
    assert created.code == 0, created.err
    for region, last in (("us", "2015-01-01-04"), ("eu", "2015-01-01-01")):
        added = run("partition", "add", "raw", "--period", "HOURLY", "--range",
                    "2015-01-01-00", last, f"region={region}")
        assert added.code == 0, added.err
    printed = run("metrics", "ev", *RANGE)
    assert printed.code == 0, printed.err
    assert "  incomplete slices   1 of 2" in printed.out
    assert "  worst slice         region=eu: 3 partition(s) missing" in printed.out
    doc = run("metrics", "ev", *RANGE, "--json").json()
    assert doc["slices"]["worst"] == "region=eu" and doc["missing_partitions"] == 3
    us = run("metrics", "ev", *RANGE, "--where", "region = 'us'", "--json").json()
    assert us["slices"] == {"required": 1, "incomplete": 0, "worst": None, "worst_missing": 0,
                            "per_slice": [{"slice": "region=us", "dimensions": {"region": "us"},
                                           "missing": 0}]}
    assert us["covered_fraction"] == 1.0
