"""The "not a dimension" notes of a catalog cover (issue 28, item 1): a partition column that
is not a declared dimension is named in every answer, for the storages the request may read."""

from __future__ import annotations

import datetime as dt

from airflow_partitions.catalog import Catalog

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
    assert catalog.cover("ev", T0, end, storages="raw").notes == (
        "source: not a dimension, any value counts",)
    assert catalog.cover("ev", T0, end, storages="agg").notes == (NOTE,)
    assert catalog.cover("ev", T0, end, storages="total").notes == ()
    assert cover.to_json()["notes"] == list(cover.notes)


def test_a_fully_declared_fact_has_no_notes(catalog: Catalog) -> None:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "raw", ["HOURLY"], columns=["dt", "region"],
                           dimensions=["region=eu"])
    catalog.register("raw", "HOURLY", {"dt": "2015-01-01-00", "region": "eu"})
    cover = catalog.cover("ev", T0, T0 + dt.timedelta(hours=1))
    assert cover.coverable and cover.notes == () and "notes" not in cover.to_json()
