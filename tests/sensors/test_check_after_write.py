"""A sensor's check right after another process's registration, on HBase: what it reads.

HBase has no change stamp, so each check reads the fact's generation. When it moved, the
verified cover asks the fact's and its storage's catalog rows and the last answer's
partition rows by key in one write (two calls: the proof of the last answer, or what it is
worked out from): three round trips after a write outside the range. A write inside it
changes the answer's runs, whose rows are then read by key once more. On SQLite the store's
stamp and change feeds answer instead (``tests/catalog/test_answer_basis.py``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.cover import CoverRequest
from airflow_partitions.watch import CoverageWatch

T0 = dt.datetime(2015, 3, 1, tzinfo=dt.UTC)


def hour(h: int) -> str:
    return (T0 + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H")


def test_a_check_after_a_write_reads_each_row_once_and_an_idle_one_reads_the_generation(
        hbase_server_factory: Any, tmp_path: Path) -> None:
    server = hbase_server_factory()
    url = f"{server.url}?table_prefix=after_"
    reader = Catalog(url, data_root=str(tmp_path), cache=TimelineCache())
    writer = Catalog(url, data_root=str(tmp_path), cache=TimelineCache())
    reader.create_fact("ev")
    reader.create_storage("ev", "raw", ["HOURLY"], columns=["dt"])
    reader.register("raw", "HOURLY", [{"dt": hour(h)} for h in range(24) if h != 7])
    watch = CoverageWatch(CoverRequest.of("ev", T0, T0 + dt.timedelta(days=1)))
    assert [m.start.hour for m in watch.check(reader).missing] == [7]

    # The generation; the fact's and its storage's catalog rows with the last answer's rows
    # by key; in the range, the new answer's rows (hour 7 with them) by key.
    for h, reads in ((7, 3), (30, 2)):  # in the range: the answer changes; after it: not
        writer.register("raw", "HOURLY", {"dt": hour(h)})
        reader.stats.reset()
        missing = [m.start.hour for m in watch.check(reader).missing]
        assert missing == [], missing
        assert dict(reader.stats.ops) == {"get": 1, "get_many": reads}, reader.stats.ops

    reader.stats.reset()
    watch.check(reader)  # idle: the generation read alone
    assert dict(reader.stats.ops) == {"get": 1}, reader.stats.ops
    reader.close()
    writer.close()
