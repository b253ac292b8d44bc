"""The "not a dimension" notes of a catalog cover: a partition column that is not a declared
dimension is named in every answer, for the storages the request may read."""

from __future__ import annotations

import datetime as dt

from airflow_partitions.catalog import Catalog
from airflow_partitions.cover import CoverRequest
from airflow_partitions.watch import metrics_of, request_slices

T0 = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
NOTE = "region: not a dimension, any value counts"


def test_the_notes_name_each_undeclared_column(catalog: Catalog) -> None:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "raw", ["HOURLY"], columns=["dt", "region", "source"],
                           dimensions=["region=eu"])
    catalog.create_storage("ev", "agg", ["DAILY"], columns=["dt", "region"], priority=5)
    catalog.create_storage("ev", "total", ["DAILY"], priority=9)
    end = T0 + dt.timedelta(days=1)
    cover = catalog.cover("ev", T0, end)
    # region is declared by raw, not by agg; source by nobody; total has no such column
    assert cover.notes == ("region: not a dimension of agg, any value counts",
                           "source: not a dimension, any value counts")
    assert catalog.cover("ev", T0, end, verify=False).notes == cover.notes
    assert catalog.cover("ev", T0, end, storages=["raw"]).notes == (
        "source: not a dimension, any value counts",)
    assert catalog.cover("ev", T0, end, storages=["agg"]).notes == (NOTE,)
    assert catalog.cover("ev", T0, end, storages=["total"]).notes == ()
    assert cover.to_json()["notes"] == list(cover.notes)


def test_a_fully_declared_fact_has_no_notes(catalog: Catalog) -> None:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu"])
    catalog.register("raw", "HOURLY", {"dt": "2015-01-01-00", "region": "eu"})
    cover = catalog.cover("ev", T0, T0 + dt.timedelta(hours=1))
    assert cover.coverable and cover.notes == () and "notes" not in cover.to_json()


def test_the_required_slices_of_a_request_for_its_metrics(catalog: Catalog) -> None:
    """``request_slices``: each allowed dimensioned storage's slices required in the range,
    narrowed by ``where``; what the per-slice gauges are sent for (0 when complete)."""
    catalog.create_fact("ev")
    catalog.create_storage("ev", "raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu,us", "region=ap@2015-01-02T00:00:00Z"])
    catalog.create_storage("ev", "total", ["DAILY"], priority=9)
    catalog.register("raw", "HOURLY", [{"dt": f"2015-01-01-{h:02d}", "region": r}
                                       for h in range(24) for r in ("eu", "us")
                                       if (r, h) != ("eu", 7)])
    day = CoverRequest.of("ev", T0, T0 + dt.timedelta(days=1))
    state = catalog.fact_state("ev")
    # ap is required only from the second day
    assert request_slices(state, day) == [(("region", "eu"),), (("region", "us"),)]
    two = CoverRequest.of("ev", T0, T0 + dt.timedelta(days=2), where="region != 'us'")
    assert request_slices(state, two) == [(("region", "ap"),), (("region", "eu"),)]
    metrics = metrics_of(state, day, catalog.cover_with_partitions(day).cover, T0)
    assert metrics.slices is not None
    assert metrics.slices.per_slice == (((("region", "eu"),), 1), ((("region", "us"),), 0))
