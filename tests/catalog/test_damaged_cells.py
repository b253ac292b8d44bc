"""One flipped byte inside one slice timeline cell of a real SQLite file costs only that cell:
the storage row's other cells read, covers read the damaged slice from the rows, a direct
read names the table, row and cell, and reconcile rebuilds the slice timeline."""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.rows.layout import storage_row
from airflow_partitions.catalog.slices.cells import slice_cell
from airflow_partitions.cli import main
from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.kv import DamagedCells
from airflow_partitions.periods import UpdatePeriod
from tests.catalog.slice_truth import built, rows_slices, stored_slices
from tests.catalog.test_dimension_coverage import DAY, T0, hour, lacking, regions_fact, register

EU = (("region", "eu"),)


def flip_in_cell(cat: Catalog, row: bytes, column: bytes) -> None:
    """Flip one byte in the middle of ``column``'s value, found through the blob's directory."""
    if not cat.kv.url.startswith("sqlite:"):
        pytest.skip("a cell blob is SQLite's layout; HBase stores cells natively")
    path = Path(cat.kv.url.removeprefix("sqlite:///"))
    with sqlite3.connect(path) as conn:
        [(blob,)] = conn.execute("SELECT cells FROM kv_catalog WHERE row = ?", (row,))
        assert blob[0] == 5, "a storage row spans families: the per-cell form"
        size, n = struct.unpack_from(">II", blob, 1)
        lengths = struct.unpack_from(f">{n}I", blob, 9)
        at, names = 9 + 4 * n, []
        for length in lengths:
            names.append(blob[at:at + length])
            at += length
        offsets = struct.unpack_from(f">{n + 1}I", blob, size)
        i = names.index(column)
        middle = (offsets[i] + offsets[i + 1]) // 2
        damaged = bytearray(blob)
        damaged[middle] ^= 0x01
        conn.execute("UPDATE kv_catalog SET cells = ? WHERE row = ?", (bytes(damaged), row))
    conn.close()


def test_a_flipped_byte_in_a_slice_cell_costs_only_that_cell(
        catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(4))
    cell = slice_cell(UpdatePeriod.HOURLY, "dt", EU)
    flip_in_cell(catalog, storage_row(raw), cell)
    catalog.cache.invalidate()

    with pytest.raises(DamagedCells) as caught:  # a direct read names table, row and cell
        catalog.rows.catalog.get(storage_row(raw), [cell])
    message = str(caught.value)
    assert "'catalog'" in message and raw in message and "region=eu" in message

    assert catalog.get_storage(raw).name == raw
    assert lacking(catalog.cover("ev", T0, DAY)) == {"region=eu": [hour(4)]}
    url = catalog.kv.url
    for argv in (["fact", "list"], ["storage", "list"], ["storage", "show", raw]):
        assert main(["--store", url, *argv]) == 0, (argv, capsys.readouterr())
    cover = ["cover", "ev", "--start", T0.isoformat(), "--end", DAY.isoformat()]
    assert main(["--store", url, *cover]) == 1  # not coverable: eu lacks hours 04..23
    assert "HOURLY 2015-01-01-04..23 (20) for region=eu" in capsys.readouterr().out

    report = catalog.reconcile(raw)
    assert built(catalog, raw)
    assert stored_slices(catalog, raw) == rows_slices(catalog, raw)
    assert catalog.rows.catalog.get(storage_row(raw), [cell])  # sound again
    assert report is not None


def test_reconcile_reports_the_damaged_slice_cell_it_rebuilt(
        catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(24))
    register(catalog, raw, "eu", range(4))
    flip_in_cell(catalog, storage_row(raw), slice_cell(UpdatePeriod.HOURLY, "dt", EU))
    catalog.cache.invalidate()

    assert main(["--store", catalog.kv.url, "reconcile", raw, "--json"]) == 0
    [repaired] = json.loads(capsys.readouterr().out)["slice_timelines"]
    assert (repaired["storage"], repaired["period"], repaired["column"], repaired["slice"]) == (
        raw, "HOURLY", "dt", {"region": "eu"})
    assert "damaged" in repaired["reason"]
    assert main(["--store", catalog.kv.url, "reconcile", raw]) == 0  # sound now: none listed
    assert "slice timeline" not in capsys.readouterr().out


def test_writes_of_other_slices_go_on_and_the_damaged_slice_is_named(catalog: Catalog) -> None:
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(4))
    register(catalog, raw, "eu", range(4))
    flip_in_cell(catalog, storage_row(raw), slice_cell(UpdatePeriod.HOURLY, "dt", EU))
    catalog.cache.invalidate()

    register(catalog, raw, "us", [4])  # another slice's cell: written as before
    with pytest.raises(CorruptTimeline, match=r"cell\(s\) t:HOURLY.dt@region=eu of 'ev_raw' "
                       r"are damaged .* run 'airflow-partitions reconcile ev_raw'"):
        register(catalog, raw, "eu", [4])  # refused before its rows are written
    catalog.reconcile(raw)
    register(catalog, raw, "eu", [5])
    assert stored_slices(catalog, raw) == rows_slices(catalog, raw)


def test_reconcile_drop_corrupt_rebuilds_a_damaged_slice_cell(
        catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    raw = regions_fact(catalog)
    register(catalog, raw, "us", range(2))
    register(catalog, raw, "eu", range(2))
    flip_in_cell(catalog, storage_row(raw), slice_cell(UpdatePeriod.HOURLY, "dt", EU))
    catalog.cache.invalidate()

    assert main(["--store", catalog.kv.url, "reconcile", raw, "--drop-corrupt"]) == 0
    assert "slice timeline of region=eu" in capsys.readouterr().out
    assert stored_slices(catalog, raw) == rows_slices(catalog, raw)
