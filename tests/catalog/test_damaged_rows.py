"""A damaged partition row is never used, always named, and repairable (invariant 8).

Each case registers hours 00-08 of ``raw`` (region us) and damages the row of hour 03 behind
the catalog's back: on every backend through the store's own cells, and on SQLite also in the
row's blob (truncated, value offsets swapped), with the project's codec as an operator would.
Then: a cover never uses the row (the hour is missing, no location is empty), listing and
filters leave it out, a point read raises a typed error naming the storage, period and key,
``reconcile`` reports it under ``corrupt_rows`` and keeps it, ``reconcile --drop-corrupt``
deletes it, and registering it again makes the range coverable.
"""

from __future__ import annotations

import re
import sqlite3
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from airflow_partitions.catalog import Catalog
from airflow_partitions.catalog.cache import TimelineCache
from airflow_partitions.catalog.rows.check import DamagedPartitionRow
from airflow_partitions.catalog.rows.layout import LOC, STATE, VERSION, value_cell_column
from airflow_partitions.cli import main
from airflow_partitions.errors import CorruptPartitionRow
from airflow_partitions.kv import decode_cells, encode_cells

DAY = "2015-01-01"
HOURS = [f"{DAY}-{h:02d}" for h in range(9)]


def at(hour: int) -> str:
    return f"{DAY}T{hour:02d}:00:00+00:00"


@pytest.fixture
def ev(catalog: Catalog) -> Catalog:
    catalog.create_fact("ev")
    catalog.create_storage("ev", "raw", ["HOURLY", "DAILY"], columns=["dt", "region"])
    catalog.register("raw", "HOURLY", [{"dt": h, "region": "us"} for h in HOURS])
    return catalog


def key_of(cat: Catalog, hour: int) -> bytes:
    [(_, key)] = cat.keyed_specs(cat.get_storage("raw"), "HOURLY",
                                 {"dt": HOURS[hour], "region": "us"})
    return key


def _sqlite_blob(cat: Catalog, edit: Callable[[bytes], bytes]) -> None:
    if not cat.kv.url.startswith("sqlite:"):
        pytest.skip("a cell blob is SQLite's layout; HBase stores cells natively")
    path = Path(cat.kv.url.removeprefix("sqlite:///"))
    key = key_of(cat, 3)
    with sqlite3.connect(path) as conn:
        [(blob,)] = conn.execute("SELECT cells FROM kv_partitions WHERE row = ?", (key,))
        conn.execute("UPDATE kv_partitions SET cells = ? WHERE row = ?", (edit(blob), key))
    conn.close()


def truncate(blob: bytes) -> bytes:
    return blob[:-3]


def swap_offsets(blob: bytes) -> bytes:
    """Swap the offsets of ``p:loc`` and the cell after it (``p:state``)."""
    columns = list(decode_cells(blob))
    assert encode_cells(decode_cells(blob)) == blob
    [size] = struct.unpack_from(">H", blob, 1)
    at = size + 2 * columns.index(LOC)
    raw = bytearray(blob)
    raw[at:at + 2], raw[at + 2:at + 4] = blob[at + 2:at + 4], blob[at:at + 2]
    return bytes(raw)


def flip_version(blob: bytes) -> bytes:
    """Silent damage before the checksum: the version read as another number."""
    at = len(blob) - 4 - 8  # p:ver sorts last: its 8 bytes end where the CRC-32 starts
    assert blob[at:at + 8] == decode_cells(blob)[VERSION]
    raw = bytearray(blob)
    raw[at + 7] ^= 0x01
    return bytes(raw)


def put_cells(cells: dict[bytes, bytes]) -> Callable[[Catalog], None]:
    return lambda cat: cat.rows.partitions.put(key_of(cat, 3), cells)


def delete_cell(column: bytes) -> Callable[[Catalog], None]:
    return lambda cat: cat.rows.partitions.delete(key_of(cat, 3), [column])


@dataclass(frozen=True)
class Damage:
    name: str
    damage: Callable[[Catalog], None]
    reason: str  # a regex the finding matches


DAMAGES = [
    Damage("F1 unknown state", put_cells({STATE: b"weird"}), "state b'weird'"),
    Damage("F1 no state", delete_cell(STATE), "no state"),
    Damage("F3 swapped offsets", lambda cat: _sqlite_blob(cat, swap_offsets),
           r"checksum does not match"),
    Damage("a flipped byte in the version", lambda cat: _sqlite_blob(cat, flip_version),
           r"checksum does not match"),
    Damage("F6 text is not the key", put_cells({value_cell_column("dt"): b"2015-01-01-09"}),
           "dt=2015-01-01-09, region=us, which is not its key"),
    Damage("F6 region text is not the key", put_cells({value_cell_column("region"): b"eu"}),
           "region=eu, which is not its key"),
    Damage("F2 truncated blob", lambda cat: _sqlite_blob(cat, truncate), "corrupt cell blob"),
    Damage("F4 no location", delete_cell(LOC), "no location"),
    Damage("F5 location not UTF-8", put_cells({LOC: b"/data/\xff\xfe"}), "not UTF-8"),
    Damage("F5 value not UTF-8", put_cells({value_cell_column("region"): b"u\xffs"}),
           "p:v.region cell is not UTF-8"),
]
IDS = [d.name for d in DAMAGES]


@pytest.mark.parametrize("case", DAMAGES, ids=IDS)
def test_a_damaged_row_is_never_used(ev: Catalog, case: Damage) -> None:
    case.damage(ev)
    ev.cache.invalidate()
    cover = ev.cover("ev", at(0), at(9), periods=["HOURLY"])
    assert not cover.coverable
    assert [(m.start.hour, m.end.hour) for m in cover.missing] == [(3, 4)]
    assert all(p.location for p in ev.cover("ev", at(0), at(3), periods=["HOURLY"]).partitions)
    listed = [p.values["dt"] for p in ev.list_partitions("raw")]
    assert listed == HOURS[:3] + HOURS[4:]
    filtered = ev.get_partitions_by_filter("raw", "region = 'us'")
    assert [p.values["dt"] for p in filtered] == HOURS[:3] + HOURS[4:]
    with pytest.raises(DamagedPartitionRow, match=case.reason) as caught:
        ev.get_partition("raw", "HOURLY", {"dt": HOURS[3], "region": "us"})
    assert isinstance(caught.value, CorruptPartitionRow)
    message = str(caught.value)
    assert "storage 'raw'" in message and "HOURLY" in message
    assert "dt=2015-01-01-03, region=us" in message and "reconcile raw" in message


@pytest.mark.parametrize("case", DAMAGES, ids=IDS)
def test_a_row_damaged_after_a_verified_cover_is_never_used(ev: Catalog, case: Damage) -> None:
    """The verification reads the rows again after damage nobody announced (no write, no new
    generation): what was checked and remembered before (the page and row memos) is not
    reused for bytes that changed."""
    for _ in range(2):  # the second cover answers from the memos
        assert ev.cover("ev", at(0), at(9), periods=["HOURLY"]).coverable
    case.damage(ev)
    for _ in range(2):
        cover = ev.cover("ev", at(0), at(9), periods=["HOURLY"])
        assert not cover.coverable
        assert [(m.start.hour, m.end.hour) for m in cover.missing] == [(3, 4)]


@pytest.mark.parametrize("case", DAMAGES, ids=IDS)
def test_reconcile_quarantines_a_damaged_row_and_drop_corrupt_repairs_it(
        ev: Catalog, case: Damage) -> None:
    case.damage(ev)
    report = ev.reconcile("raw")
    [row] = report.corrupt_rows
    assert (row.storage, row.period.name) == ("raw", "HOURLY")
    assert row.values == {"dt": HOURS[3], "region": "us"}
    assert re.search(case.reason, row.reason) and not row.dropped
    assert not report.consistent
    assert ev.reconcile("raw").corrupt_rows, "kept, and reported again"
    # the rest keeps working
    assert ev.cover("ev", at(4), at(9), periods=["HOURLY"]).coverable
    ev.register("raw", "HOURLY", {"dt": f"{DAY}-09", "region": "us"})
    dropped = ev.reconcile("raw", drop_corrupt=True)
    assert [r.dropped for r in dropped.corrupt_rows] == [True]
    assert ev.reconcile("raw").consistent
    ev.register("raw", "HOURLY", {"dt": HOURS[3], "region": "us"})
    cover = ev.cover("ev", at(0), at(10), periods=["HOURLY"])
    assert cover.coverable and len(cover.partitions) == 10


def test_partition_add_replaces_a_row_without_location(ev: Catalog) -> None:
    """``partition add`` replaces a live row missing ``p:loc`` (no ``KeyError: b'p:loc'``)."""
    delete_cell(LOC)(ev)
    # HBase stamps cells with the server's millisecond, and a delete masks a put of the same
    # millisecond (docs/hbase.md): the damage must land before the repair, as an operator's
    # does, not in its millisecond.
    time.sleep(0.002)
    result = ev.register("raw", "HOURLY", {"dt": HOURS[3], "region": "us"})
    assert result.changed == 1
    assert ev.cover("ev", at(0), at(9), periods=["HOURLY"]).coverable


def test_the_cli_lists_and_drops_a_damaged_row(ev: Catalog,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    put_cells({STATE: b"weird"})(ev)

    def cli(*args: str) -> tuple[int, str]:
        TimelineCache.for_store(ev.kv.url).invalidate()
        code = main(["--store", ev.kv.url, "--data-root", ev.data_root, *args])
        return code, capsys.readouterr().out

    code, out = cli("reconcile", "raw")
    assert code == 0
    assert ("kept a HOURLY partition row it cannot read (dt=2015-01-01-03, region=us): "
            "state b'weird'") in out and "--drop-corrupt deletes it" in out
    code, out = cli("reconcile", "raw", "--drop-corrupt")
    assert code == 0 and "deleted a damaged HOURLY partition row (dt=2015-01-01-03" in out
    code, out = cli("partition", "add", "raw", "--period", "HOURLY", "dt=2015-01-01-03",
                    "region=us")
    assert code == 0
    code, out = cli("cover", "ev", "--start", at(0), "--end", at(9), "--periods", "HOURLY",
                    "--json")
    assert code == 0 and '"coverable": true' in out


def test_partition_add_over_an_undecodable_row_names_it(ev: Catalog) -> None:
    """``partition add`` of a truncated row names the row, not just ``corrupt cell blob``."""
    _sqlite_blob(ev, truncate)
    for write in (lambda: ev.register("raw", "HOURLY", {"dt": HOURS[3], "region": "us"}),
                  lambda: ev.drop("raw", "HOURLY", {"dt": HOURS[3], "region": "us"})):
        with pytest.raises(DamagedPartitionRow, match=r"\(dt=2015-01-01-03, region=us\).*"
                           r"--drop-corrupt"):
            write()
    ev.reconcile("raw", drop_corrupt=True)
    ev.register("raw", "HOURLY", {"dt": HOURS[3], "region": "us"})
    assert ev.cover("ev", at(0), at(9), periods=["HOURLY"]).coverable
