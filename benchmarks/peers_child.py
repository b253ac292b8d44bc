"""One tool's answer to "which hours of the range are missing?", timed in a fresh process.

``benchmarks/peers.py`` runs this script once per tool, dataset and round, each time in a new
process and with the tool's own Python: ours with ``.venv/bin/python``, Luigi's and Dagster's
with the virtual environments ``make bench-peers`` creates under ``benchmarks/.peers/``. So this
module imports only the standard library at the top; each tool's package is imported by its
setup function, in the process that runs it.

    python benchmarks/peers_child.py SPEC.json   # prints one JSON object on stdout
    python benchmarks/peers_child.py --writer DATASET_JSON   # the registering process

For each range of the spec the tool answers once untimed (the warm-up: caches, imports, Luigi's
task instances), then answers again until it has at least ``min_repeats`` timings and has spent
``budget_s`` (at most ``max_repeats``), with a ``gc.collect()`` before each timed call; the range's
time is the median of those calls. With ``memory`` one more call runs under ``tracemalloc``
(the peak growth of Python allocations during a warm call; SQLite's own memory is not in it).
Every answer is a sorted list of ``YYYY-MM-DD-HH`` strings (``YYYY-MM-DD-HH region=r007``
with a region dimension), checked by the parent; a tool whose own answer is something else
(a cover, Luigi's datetimes, Dagster's keys) is read into it after the timer
(:class:`ReadLater`). Each timed call records wall and CPU time (``time.process_time``: this
process only, so a writer process's work is not in it).

Options of the spec for the questions the parent asks beside the ranges:

- ``register``: before each timed call (untimed), one new hourly partition of the same fact,
  the hour after the data's end (then the next one: an append, as a producer writes): for us
  registered by a writer process (``--writer``) in the catalog, for the others its directory
  created. Everything written is removed when the child ends, so the dataset is unchanged;
- ``batch``: each timed figure is the mean of that many consecutive calls (GC off), for calls
  of a few microseconds;
- ``first_memory``: no warm-up and no repeats: the RSS growth (``VmRSS``) across the first
  question after imports and setup, the peak RSS during it, and with ``traced`` the
  tracemalloc peak instead (a separate process: tracing inflates the RSS).
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

HOUR = dt.timedelta(hours=1)
#: The answer's format, and the hour directories' names under the hourly root.
KEY_FORMAT = "%Y-%m-%d-%H"
DIR_FORMAT = "dt=%Y-%m-%d-%H"
#: Dagster's HourlyPartitionsDefinition keys.
DAGSTER_FORMAT = "%Y-%m-%d-%H:%M"

Query = Callable[[dt.datetime, dt.datetime], list[str]]


class ReadLater:
    """A query whose call returns the tool's own answer (a cover, Luigi's missing datetimes,
    Dagster's keys, a bool) and whose ``read`` turns it into the missing hours after the timer
    stopped: the harness's reading of an answer into its ``YYYY-MM-DD-HH`` strings is not the
    tool's cost. A tool whose own work builds those strings (the ``os.path.exists`` loop
    formats each hour to name its directory) answers with them directly."""

    def __init__(self, call: Callable[[dt.datetime, dt.datetime], Any],
                 read: Callable[[Any, dt.datetime, dt.datetime], list[str]]) -> None:
        self.call, self.read = call, read

    def __call__(self, start: dt.datetime, end: dt.datetime) -> Any:
        return self.call(start, end)


def answered(query: Query, raw: Any, start: dt.datetime, end: dt.datetime) -> list[str]:
    """The missing hours from what ``query`` returned: read now when it has a ``read``
    (:class:`ReadLater`, :class:`OursQuery`, or either with hooks)."""
    read = getattr(query, "read", None)
    return raw if read is None else read(raw, start, end)


def parse_hour(text: str) -> dt.datetime:
    """``2015-01-01-00`` as an aware UTC datetime."""
    return dt.datetime.strptime(text, KEY_FORMAT).replace(tzinfo=dt.UTC)


def hours_of(ranges: Iterable[tuple[dt.datetime, dt.datetime]]) -> list[str]:
    """Every hour of the ``[start, end)`` ranges as ``YYYY-MM-DD-HH``: O(hours).

    The bounds are made plain UTC datetimes first: a cover's are pendulum instants, whose
    arithmetic costs about 10 µs an hour, which would charge the harness's own reading of our
    answer to us (the peers' answers are read from plain datetimes and strings)."""
    out = []
    for first, last in ranges:
        t = dt.datetime.fromtimestamp(first.timestamp(), dt.UTC)
        end = dt.datetime.fromtimestamp(last.timestamp(), dt.UTC)
        while t < end:
            out.append(t.strftime(KEY_FORMAT))
            t += HOUR
    return out


def slice_hours(hour: dt.datetime, region: str) -> str:
    """One (hour, region) partition as the answers spell it: ``2015-01-01-05 region=r007``."""
    return f"{hour.strftime(KEY_FORMAT)} region={region}"


def extra_partition(ds: dict[str, Any], k: int) -> tuple[dt.datetime, str | None]:
    """The ``k``-th partition the ``register`` option writes: the hours after the data's end in
    order, each for every region in turn (``(hour, None)`` without regions). Outside every
    asked range, so the expected answers do not change."""
    regions = ds.get("regions") or []
    end = parse_hour(ds["end"])
    if not regions:
        return end + k * HOUR, None
    return end + (k // len(regions)) * HOUR, regions[k % len(regions)]


def partition_dir(ds: dict[str, Any], hour: dt.datetime, region: str | None) -> str:
    """The directory of one partition: ``<hourly_root>/dt=.../`` (``region=.../`` below it)."""
    path = os.path.join(ds["hourly_root"], hour.strftime(DIR_FORMAT))
    return path if region is None else os.path.join(path, f"region={region}")


def read_rss() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in bytes, from ``/proc/self/status``."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (``/proc/self/clear_refs``, Linux 4.0+)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


# --- the tools: each setup returns the query and the tool's version -------------------------------


def setup_exists(ds: dict[str, Any], _options: dict[str, Any]) -> tuple[Query, str]:
    """One ``os.path.exists`` per hour directory: the baseline without any metadata."""
    root = ds["hourly_root"]
    join, exists = os.path.join, os.path.exists
    regions = ds.get("regions") or []
    subdirs = [f"region={r}" for r in regions]

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        missing = []
        t = start
        while t < end:
            if regions:  # one directory per (hour, region)
                hour_dir, key = join(root, t.strftime(DIR_FORMAT)), t.strftime(KEY_FORMAT)
                for region, sub in zip(regions, subdirs, strict=True):
                    if not exists(join(hour_dir, sub)):
                        missing.append(f"{key} region={region}")
            elif not exists(join(root, t.strftime(DIR_FORMAT))):
                missing.append(t.strftime(KEY_FORMAT))
            t += HOUR
        return missing

    return with_dir_writer(query, ds, _options), f"Python {sys.version.split()[0]}"


def setup_sqlite_keys(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """SQLite's own floor for a question: one indexed SELECT of the range's keys in the
    catalog file's partitions table on a plain ``sqlite3`` connection, and the hours it does
    not list. Nothing else: no change stamp, no timeline, no row checked (a row marked
    ``dropping`` or damaged counts as there), so it is not a way to ask the catalog; right
    after another process's commit it pays what SQLite charges any reader then (every page
    read again), which no answer read from the file can avoid."""
    import sqlite3

    from airflow_partitions.keys import ColumnType, encode_value, table_prefix

    conn = sqlite3.connect(ds["catalog_url"].removeprefix("sqlite:///"), isolation_level=None)
    prefix = table_prefix(ds["hourly_storage"], "HOURLY")
    text_at = len(prefix) + 1  # after the string field's marker byte
    sql = 'SELECT row FROM "kv_partitions" WHERE row >= ? AND row < ?'

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        low = prefix + encode_value(ColumnType.STRING, start.strftime(KEY_FORMAT))
        high = prefix + encode_value(ColumnType.STRING, end.strftime(KEY_FORMAT))
        present = {bytes(row[text_at:text_at + 13]).decode()
                   for (row,) in conn.execute(sql, (low, high))}
        missing = []
        t = start
        while t < end:
            if (key := t.strftime(KEY_FORMAT)) not in present:
                missing.append(key)
            t += HOUR
        return missing

    version = f"SQLite {sqlite3.sqlite_version}"
    if options.get("register"):
        writer = CatalogWriter(ds)
        return WithHooks(query, writer.register_next, writer.close), version
    return query, version


class HBaseFloor:
    """What our answer reads on HBase, through happybase with nothing checked: the fact's and
    its storages' catalog rows in one call, then a range's hour rows (the four cells a verified
    cover reads of each) in one call; without ``with_catalog`` only the hour rows' locations,
    the one request no answer read from HBase can do without. ``catalog``'s store holds this
    one fact. Each range's row keys are worked out once, on its first read."""

    #: The cells a verified cover reads of each partition row.
    COLUMNS = [b"p:loc", b"p:ver", b"p:v.dt", b"p:state"]

    def __init__(self, catalog: Any, hourly_storage: str, *, with_catalog: bool = True) -> None:
        import happybase

        kv: Any = catalog.rows.kv
        connection = happybase.Connection(kv.config.host, kv.config.port)
        self.catalog_table = connection.table(kv.full_name(catalog.rows.catalog.name))
        self.partitions = connection.table(kv.full_name(catalog.rows.partitions.name))
        self.catalog_keys = [key for key, _ in self.catalog_table.scan(columns=[b"m:def"])]
        self.rows, self.sdef = catalog.rows, catalog.get_storage(hourly_storage)
        self.keys: dict[tuple[dt.datetime, dt.datetime], dict[bytes, str]] = {}
        self.with_catalog = with_catalog

    def missing(self, start: dt.datetime, end: dt.datetime) -> list[str]:
        """The hours of ``[start, end)`` without a row, after the reads."""
        from airflow_partitions.periods import UpdatePeriod

        hours = self.keys.get((start, end))
        if hours is None:
            texts = [(start + i * HOUR).strftime(KEY_FORMAT)
                     for i in range(int((end - start) / HOUR))]
            hours = self.keys[(start, end)] = {
                self.rows.partition_key(self.sdef, UpdatePeriod.HOURLY, (t,)): t for t in texts}
        if self.with_catalog:
            self.catalog_table.rows(self.catalog_keys, columns=[b"m", b"t"])
        columns = self.COLUMNS if self.with_catalog else self.COLUMNS[:1]
        present = {key for key, _ in self.partitions.rows(list(hours), columns=columns)}
        return [text for key, text in hours.items() if key not in present]


def setup_hbase_keys(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """The reads our answer makes on HBase, nothing checked (:class:`HBaseFloor`): the hours
    without a row are missing. With ``day_only``, the range's rows alone, one request: HBase's
    own floor for a question, as one SELECT is SQLite's (``setup_sqlite_keys``)."""
    from airflow_partitions.catalog import Catalog

    ds = {**ds, "catalog_url": options["catalog_url"]}
    floor = HBaseFloor(Catalog(ds["catalog_url"], data_root=ds["root"]), ds["hourly_storage"],
                       with_catalog=not options.get("day_only"))
    version = f"happybase {metadata.version('happybase')}"
    if options.get("register"):
        writer = CatalogWriter(ds)
        return WithHooks(floor.missing, writer.register_next, writer.close), version
    return floor.missing, version


def setup_watch(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """A sensor's check of the fact: :class:`~airflow_partitions.watch.CoverageWatch`, what
    ``PartitionCoverageSensor.poke`` and the deferrable trigger run, one per range and kept as
    a sensor keeps it; timed to its cover, the missing hours read after the timer."""
    from airflow_partitions.catalog import Catalog
    from airflow_partitions.cover import CoverRequest
    from airflow_partitions.watch import CoverageWatch

    catalog = Catalog(ds["catalog_url"], data_root=ds["root"])
    watches: dict[tuple[dt.datetime, dt.datetime], Any] = {}

    def call(start: dt.datetime, end: dt.datetime) -> Any:
        watch = watches.get((start, end))
        if watch is None:
            watch = watches[(start, end)] = CoverageWatch(CoverRequest.of(ds["fact"], start, end))
        return watch.check(catalog)

    def read(cover: Any, _start: dt.datetime, _end: dt.datetime) -> list[str]:
        return hours_of((m.start, m.end) for m in cover.missing)

    query = ReadLater(call, read)
    if options.get("register"):
        writer = CatalogWriter(ds)
        query.before, query.close = writer.register_next, writer.close  # type: ignore[attr-defined]
    return query, f"airflow-partitions {metadata.version('airflow-partitions')}"


def setup_luigi(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """Luigi's range tools over an external hourly task whose output is the hour directory.

    ``RangeHourlyBase.missing_datetimes`` calls ``complete()`` on one task instance per hour
    (Luigi caches the instances, so the warm repeats reuse them); ``RangeHourly`` (``glob``
    option) infers completeness from one file-system listing instead."""
    import logging

    import luigi  # type: ignore[import-not-found]
    from luigi.tools.range import RangeHourly, RangeHourlyBase  # type: ignore[import-not-found]

    logging.getLogger("luigi-interface").setLevel(logging.WARNING)
    root = ds["hourly_root"]

    class Hour(luigi.ExternalTask):  # type: ignore[misc]
        date_hour = luigi.DateHourParameter()

        def output(self) -> Any:
            return luigi.LocalTarget(os.path.join(root, self.date_hour.strftime(DIR_FORMAT)))

    range_cls = RangeHourly if options.get("glob") else RangeHourlyBase

    def call(start: dt.datetime, end: dt.datetime) -> Any:
        naive_start, naive_end = (x.astimezone(dt.UTC).replace(tzinfo=None) for x in (start, end))
        task = range_cls(of=Hour, start=naive_start, stop=naive_end)
        return task.missing_datetimes(task.finite_datetimes(naive_start, naive_end))

    def read(missing: Any, _start: dt.datetime, _end: dt.datetime) -> list[str]:
        return [d.strftime(KEY_FORMAT) for d in sorted(missing)]

    return (with_dir_writer(ReadLater(call, read), ds, options),
            f"luigi {metadata.version('luigi')}")


def setup_dagster(ds: dict[str, Any], _options: dict[str, Any]) -> tuple[Query, str]:
    """Dagster's partition subsets: the subset of present hours built from their key set (as
    an asset's materialized keys), then the range's keys minus it."""
    import dagster  # type: ignore[import-not-found]

    first, end_all = parse_hour(ds["start"]), parse_hour(ds["end"])
    pdef = dagster.HourlyPartitionsDefinition(
        start_date=first.strftime(DAGSTER_FORMAT), end_date=end_all.strftime(DAGSTER_FORMAT),
        timezone="UTC",
    )
    present = Path(ds["present_keys"]).read_text().split()

    def call(start: dt.datetime, end: dt.datetime) -> Any:
        materialized = pdef.empty_subset().with_partition_keys(present)
        wanted = pdef.empty_subset().with_partition_key_range(
            pdef, dagster.PartitionKeyRange(start.strftime(DAGSTER_FORMAT),
                                            (end - HOUR).strftime(DAGSTER_FORMAT)))
        return (wanted - materialized).get_partition_keys()

    def read(keys: Any, _start: dt.datetime, _end: dt.datetime) -> list[str]:
        return sorted(k[:13] for k in keys)

    return ReadLater(call, read), f"dagster {metadata.version('dagster')}"


def setup_ours(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """Our ``Catalog.cover`` on the SQLite catalog: verified (the normal path) or not, over the
    hourly storage alone or with the daily rollups (``mixed``). Unverified, every call
    computes the cover afresh (the memos are emptied first): that is the baseline verifying is
    measured against, and a kept answer would measure nothing."""
    from airflow_partitions.catalog import Catalog

    if options.get("catalog_url"):  # the same data in another store (HBase)
        ds = {**ds, "catalog_url": options["catalog_url"]}
    catalog = Catalog(ds["catalog_url"], data_root=ds["root"])
    storages: list[str] | None = (
        None if options.get("fact") or ds.get("regions")  # the fact's cover, as a user asks
        else [ds["hourly_storage"]] + ([ds["daily_storage"]] if options.get("mixed") else []))
    verify = bool(options.get("verify", True))
    query = OursQuery(catalog, ds["fact"], storages, verify, sliced=bool(ds.get("regions")))
    if options.get("moved"):
        catalog.kv.create_table("peers_scratch", ("cf",), exist_ok=True)
        query.before = query.write_elsewhere
    if options.get("register"):
        writer = CatalogWriter(ds)
        query.before, query.close = writer.register_next, writer.close
    return query, f"airflow-partitions {metadata.version('airflow-partitions')}"


class OursQuery:
    """One ``Catalog.cover`` per call, its missing hours read after the timer (:meth:`read`).
    ``before`` (untimed, before each timed call), when
    set: a write to another table of the same SQLite file, so the store's change stamp moves
    and the verified cover reads its rows again, as after any registration elsewhere."""

    def __init__(self, catalog: Any, fact: str, storages: list[str] | None, verify: bool, *,
                 sliced: bool = False) -> None:
        from airflow_partitions.kv import forget_all  # here: this file runs under peers too

        self.catalog, self.fact, self.storages, self.verify = catalog, fact, storages, verify
        self.sliced = sliced
        self.forget_all = forget_all  # imported once, not in the timed call
        self.before: Callable[[], None] | None = None
        self.close: Callable[[], None] | None = None
        self.writes = 0

    def write_elsewhere(self) -> None:
        self.writes += 1
        self.catalog.kv.table("peers_scratch").put(b"w", {b"cf:n": str(self.writes).encode()})

    def __call__(self, start: dt.datetime, end: dt.datetime) -> Any:
        if not self.verify:  # the computation itself, every time: not the answer kept for
            self.forget_all()  # the request (a warm verified call reuses what its read proves)
        return self.catalog.cover(self.fact, start, end, storages=self.storages,
                                  verify=self.verify)

    def read(self, cover: Any, _start: dt.datetime, _end: dt.datetime) -> list[str]:
        """The cover's missing hours (or slices), read after the timer (:class:`ReadLater`)."""
        if self.sliced:
            return missing_slices(cover)
        return hours_of((m.start, m.end) for m in cover.missing)


def missing_slices(cover: Any) -> list[str]:
    """The (hour, region) partitions a cover of a fact with a region dimension names as
    missing (its per-slice needed entries), sorted. Fails when an entry lists fewer runs than
    it counts (the text keeps the first runs only): the answer could not be checked."""
    out = set()
    for missing in cover.missing:
        for needed in missing.needed:
            region = dict(needed.dimensions).get("region")
            if region is None or needed.period.name != "HOURLY":
                raise SystemExit(f"an entry without a region slice: {needed.describe()}")
            if sum(r.count for r in needed.runs) != needed.total:
                raise SystemExit(f"a truncated entry: {needed.describe()}")
            for run in needed.runs:
                first = parse_hour(run.first)
                out.update(slice_hours(first + i * HOUR, region) for i in range(run.count))
    return sorted(out)


class CatalogWriter:
    """Another process that registers one partition of the fact per :meth:`register_next`
    (``peers_child.py --writer``): the registrations a sensor sees from a producer. Dropped
    again by :meth:`close`, in the writer, so the catalog ends as it began."""

    def __init__(self, ds: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--writer", json.dumps(ds)], text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.expect("ready")

    def expect(self, word: str) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != word:
            raise SystemExit(f"the writer process said {line!r}, not {word!r}")

    def register_next(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("next\n")
        self.proc.stdin.flush()
        self.expect("ok")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.expect("dropped")
        if self.proc.wait(timeout=120) != 0:
            raise SystemExit("the writer process failed")


def writer_main(ds: dict[str, Any]) -> int:
    """``--writer``: register :func:`extra_partition` ``k`` for each ``next`` line read, then at
    the end of the input drop them all. One registration per line, as a producer does."""
    from airflow_partitions.catalog import Catalog

    catalog = Catalog(ds["catalog_url"], data_root=ds["root"])
    written: list[dict[str, str]] = []
    print("ready", flush=True)
    try:
        for _ in sys.stdin:
            hour, region = extra_partition(ds, len(written))
            values = {"dt": hour.strftime(KEY_FORMAT)} | ({"region": region} if region else {})
            catalog.register(ds["hourly_storage"], "HOURLY", values)
            written.append(values)
            print("ok", flush=True)
    finally:
        if written:
            catalog.drop(ds["hourly_storage"], "HOURLY", written)
        catalog.close()
    print("dropped", flush=True)
    return 0


class DirWriter:
    """The ``register`` option for the tools that read directories: before each timed call,
    the next :func:`extra_partition`'s directory and ``_SUCCESS`` file, created in this
    process; all removed by :meth:`close`."""

    def __init__(self, ds: dict[str, Any]) -> None:
        self.ds, self.made = ds, 0

    def register_next(self) -> None:
        path = Path(partition_dir(self.ds, *extra_partition(self.ds, self.made)))
        path.mkdir(parents=True, exist_ok=True)
        (path / "_SUCCESS").touch()
        self.made += 1

    def close(self) -> None:
        hours = {extra_partition(self.ds, k)[0] for k in range(self.made)}
        for hour in hours:
            shutil.rmtree(partition_dir(self.ds, hour, None), ignore_errors=True)


class WithHooks:
    """A query with ``before`` (untimed, before each timed call) and ``close`` attached."""

    def __init__(self, query: Query, before: Callable[[], None] | None,
                 close: Callable[[], None] | None) -> None:
        self.query, self.before, self.close = query, before, close
        self.read = getattr(query, "read", None)  # a query that reads later still does

    def __call__(self, start: dt.datetime, end: dt.datetime) -> list[str]:
        return self.query(start, end)


def with_dir_writer(query: Query, ds: dict[str, Any], options: dict[str, Any]) -> Query:
    """``query`` itself, or with a :class:`DirWriter` before each call (``register``)."""
    if not options.get("register"):
        return query
    writer = DirWriter(ds)
    return WithHooks(query, writer.register_next, writer.close)


# --- the one-hour checks: sensors, the docs' hook call, single targets ----------------------------


def airflow_env(ds: dict[str, Any], options: dict[str, Any]) -> None:
    """Airflow as in a task process, before it is imported: ``AIRFLOW_HOME`` (the parent's
    scratch folder), our catalog as JSON connections (``bench_catalog`` and
    ``partitions_default``), ``fs_default`` at the hourly root, and the SDK's JSON task logging
    to /dev/null (as ``benchmarks/poke.py`` does)."""
    os.environ["AIRFLOW_HOME"] = options["airflow_home"]
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    sqlite_path = ds["catalog_url"].removeprefix("sqlite:///")
    conn = json.dumps({"conn_type": "partition_catalog",
                       "extra": {"sqlite_path": sqlite_path, "data_root": ds["root"]}})
    os.environ["AIRFLOW_CONN_BENCH_CATALOG"] = conn
    os.environ["AIRFLOW_CONN_PARTITIONS_DEFAULT"] = conn
    os.environ["AIRFLOW_CONN_FS_DEFAULT"] = json.dumps(
        {"conn_type": "fs", "extra": {"path": ds["hourly_root"]}})
    from airflow.sdk.log import configure_logging

    configure_logging(json_output=True, output=open(os.devnull, "wb"),
                      sending_to_supervisor=True)
    sys.excepthook = sys.__excepthook__


def one_hour(start: dt.datetime, end: dt.datetime) -> str:
    """The range's one hour as ``YYYY-MM-DD-HH`` (the one-hour checks answer no other)."""
    if end - start != HOUR:
        raise SystemExit(f"a one-hour check asked {start}..{end}")
    return start.strftime(KEY_FORMAT)


def setup_sensor(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """``PartitionCoverageSensor.poke`` on the fact, ``poke`` mode, its connection from a JSON
    ``AIRFLOW_CONN_BENCH_CATALOG``: one sensor per range, built (and poked once, the first
    poke computing the cover) outside the timings. False is "the hour is missing"."""
    airflow_env(ds, options)
    from airflow_partitions.sensors.coverage import PartitionCoverageSensor

    sensors: dict[tuple[dt.datetime, dt.datetime], Any] = {}

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        sensor = sensors.get((start, end))
        if sensor is None:
            sensor = sensors[(start, end)] = PartitionCoverageSensor(
                task_id=f"wait_{len(sensors)}", fact=ds["fact"], start=start.isoformat(),
                end=end.isoformat(), catalog_conn_id="bench_catalog", poke_interval=0)
        return [] if sensor.poke({}) else [one_hour(start, end)]

    return query, f"airflow-partitions {metadata.version('airflow-partitions')}"


def docs_snippet(code: str) -> tuple[str, str]:
    """Split the docs' example into its imports (run once) and the rest (run per call), the
    last expression's value kept as ``_answer``."""
    import ast

    tree = ast.parse(code)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    if not body or not isinstance(body[-1], ast.Expr):
        raise SystemExit(f"the docs' example does not end with an expression:\n{code}")
    last = body[-1]
    body[-1] = ast.Assign(targets=[ast.Name("_answer", ast.Store())], value=last.value)
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    return (ast.unparse(ast.Module(body=list(imports), type_ignores=[])), ast.unparse(module))


def answer_of(value: Any, start: dt.datetime, end: dt.datetime) -> list[str]:
    """The missing hours in what the docs' example returns: a cover (its missing ranges) or
    a bool (True: covered)."""
    if isinstance(value, bool):
        return [] if value else hours_of([(start, end)])
    if hasattr(value, "missing"):
        return hours_of((m.start, m.end) for m in value.missing)
    raise SystemExit(f"the docs' hook example returns {type(value).__name__}: teach "
                     "benchmarks/peers_child.py's answer_of to read it")


def setup_hook(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """The ``PartitionCatalogHook`` example of docs/airflow.md, as the spec carries it
    (``snippet``): its imports once, then the rest per call with ``start`` and ``end`` bound and
    the fact renamed to ours. ``partitions_default`` is a JSON ``AIRFLOW_CONN_...``."""
    airflow_env(ds, options)
    imports, body = docs_snippet(options["snippet"].replace('"events"', repr(ds["fact"])))
    scope: dict[str, Any] = {}
    # The project's own docs/airflow.md example, run as written so the benchmark measures
    # exactly what the docs show (nothing from outside the repository is executed).
    exec(imports, scope)
    code = compile(body, "<docs/airflow.md>", "exec")

    def call(start: dt.datetime, end: dt.datetime) -> Any:
        local = {**scope, "start": start, "end": end}
        exec(code, local)
        return local["_answer"]

    return (ReadLater(call, answer_of),
            f"airflow-partitions {metadata.version('airflow-partitions')}")


def setup_filesensor(ds: dict[str, Any], options: dict[str, Any]) -> tuple[Query, str]:
    """Airflow's ``FileSensor.poke`` on the hour's directory (``fs_default`` at the hourly
    root): a log line, a glob, a file test, a walk. False is "missing". The sensor resolves its
    connection once (``path`` is a cached property); with ``fresh`` a new sensor per call, so
    each call resolves it, as the docs' hook call resolves its hook's."""
    airflow_env(ds, options)
    from airflow.providers.standard.sensors.filesystem import FileSensor

    sensors: dict[tuple[dt.datetime, dt.datetime], Any] = {}
    fresh = bool(options.get("fresh"))

    def call(start: dt.datetime, end: dt.datetime) -> bool:
        sensor = None if fresh else sensors.get((start, end))
        if sensor is None:
            sensor = sensors[(start, end)] = FileSensor(
                task_id="file", filepath=start.strftime(DIR_FORMAT), poke_interval=0)
        return bool(sensor.poke({}))

    provider = "apache-airflow-providers-standard"
    return ReadLater(call, answer_of), f"{provider} {metadata.version(provider)}"


def setup_luigi_target(ds: dict[str, Any], _options: dict[str, Any]) -> tuple[Query, str]:
    """``luigi.LocalTarget(path).exists()`` on the hour's directory, the target made per call
    (as a task's ``output()`` does)."""
    import luigi

    root = ds["hourly_root"]

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        hour = one_hour(start, end)
        target = luigi.LocalTarget(os.path.join(root, start.strftime(DIR_FORMAT)))
        return [] if target.exists() else [hour]

    return query, f"luigi {metadata.version('luigi')}"


def setup_glob(ds: dict[str, Any], _options: dict[str, Any]) -> tuple[Query, str]:
    """``glob.glob`` of the files in the hour's directory (``dt=.../*``)."""
    import glob

    root = ds["hourly_root"]

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        hour = one_hour(start, end)
        found = glob.glob(os.path.join(root, start.strftime(DIR_FORMAT), "*"))
        return [] if found else [hour]

    return query, f"Python {sys.version.split()[0]}"


def setup_exists_one(ds: dict[str, Any], _options: dict[str, Any]) -> tuple[Query, str]:
    """One ``os.path.exists`` of the hour's directory."""
    root = ds["hourly_root"]

    def query(start: dt.datetime, end: dt.datetime) -> list[str]:
        hour = one_hour(start, end)
        return [] if os.path.exists(os.path.join(root, start.strftime(DIR_FORMAT))) else [hour]

    return query, f"Python {sys.version.split()[0]}"


def source_fingerprint(package: str = "airflow_partitions") -> str:
    """A short hash of every source file of ``package`` (where this process imported it
    from), whichever modules a tool imported: the parent notes it when rounds ran different
    code (the work tree changed during the run). Costs a read of those files (about 3 MB),
    after the timings."""
    import hashlib

    module = sys.modules.get(package)
    found = getattr(module, "__file__", None)
    digest = hashlib.sha256()
    root = Path(found).parent if found else None
    for path in sorted(root.rglob("*.py")) if root else []:
        assert root is not None
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


SETUPS: dict[str, Callable[[dict[str, Any], dict[str, Any]], tuple[Query, str]]] = {
    "exists": setup_exists,
    "luigi": setup_luigi,
    "dagster": setup_dagster,
    "ours": setup_ours,
    "sqlite_keys": setup_sqlite_keys,
    "hbase_keys": setup_hbase_keys,
    "watch": setup_watch,
    "sensor": setup_sensor,
    "hook": setup_hook,
    "filesensor": setup_filesensor,
    "luigi_target": setup_luigi_target,
    "glob": setup_glob,
    "exists_one": setup_exists_one,
}
#: The tools whose version line names our package's sources (see source_fingerprint).
OUR_TOOLS = {"ours", "sensor", "hook", "watch"}


# --- the harness ----------------------------------------------------------------------------------


def timed_call(query: Query, start: dt.datetime, end: dt.datetime,
               batch: int) -> tuple[float, float, list[str]]:
    """(wall, CPU) seconds per call and the answer: one call after a ``gc.collect()``, or with
    ``batch`` > 1 the mean of that many consecutive calls with GC off."""
    gc.collect()
    if batch <= 1:
        w0, c0 = time.perf_counter(), time.process_time()
        raw = query(start, end)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        return wall, cpu, answered(query, raw, start, end)
    gc.disable()
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(batch):
            raw = query(start, end)
        wall, cpu = (time.perf_counter() - w0) / batch, (time.process_time() - c0) / batch
    finally:
        gc.enable()
    return wall, cpu, answered(query, raw, start, end)


def time_range(query: Query, start: dt.datetime, end: dt.datetime, *, min_repeats: int,
               max_repeats: int, budget_s: float, memory: bool,
               batch: int = 1) -> dict[str, Any]:
    """Warm-up, timed repeats and optionally a traced call of one range (see the module doc)."""
    t0 = time.perf_counter()
    answer = answered(query, query(start, end), start, end)
    first_s = time.perf_counter() - t0
    times: list[float] = []
    cpu: list[float] = []
    before = getattr(query, "before", None)
    while len(times) < min_repeats or (sum(times) * max(batch, 1) < budget_s
                                       and len(times) < max_repeats):
        if before is not None:
            before()
        wall, cpu_s, again = timed_call(query, start, end, batch)
        times.append(wall)
        cpu.append(cpu_s)
        if again != answer:
            raise SystemExit(f"the answer changed between calls ({len(answer)} -> {len(again)})")
    traced = None
    if memory:
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            query(start, end)
            traced = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    return {
        "first_s": first_s,
        "times": times,
        "cpu_times": cpu,
        "median_s": statistics.median(times) if times else first_s,
        "median_cpu_s": statistics.median(cpu) if cpu else None,
        "missing": answer,
        "traced_peak_bytes": traced,
    }


def first_memory(query: Query, start: dt.datetime, end: dt.datetime, *,
                 traced: bool) -> dict[str, Any]:
    """The first question of a fresh process, after its imports and setup: the RSS growth
    across it and the peak RSS during it (above the RSS before), or with ``traced`` the
    tracemalloc peak (the Python allocations only; tracing itself costs memory and time)."""
    gc.collect()
    if traced:
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            c0 = time.process_time()
            raw = query(start, end)
            cpu_s = time.process_time() - c0
            peak = tracemalloc.get_traced_memory()[1] - base
            answer = answered(query, raw, start, end)
        finally:
            tracemalloc.stop()
        return {"missing": answer, "traced_peak_bytes": peak, "first_cpu_s": cpu_s}
    reset = reset_peak_rss()
    rss0, _ = read_rss()
    c0 = time.process_time()
    raw = query(start, end)
    cpu_s = time.process_time() - c0
    rss1, hwm = read_rss()
    answer = answered(query, raw, start, end)
    return {"missing": answer, "rss_growth_bytes": rss1 - rss0,
            "rss_peak_growth_bytes": hwm - rss0 if reset else None, "first_cpu_s": cpu_s,
            "rss_before_bytes": rss0}


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Set up the tool once, then time each range in order (or, ``first_memory``, measure the
    first question only)."""
    ds = json.loads(Path(spec["dataset"]).read_text())
    options = spec.get("options", {})
    t0 = time.perf_counter()
    query, version = SETUPS[spec["tool"]](ds, options)
    setup_s = time.perf_counter() - t0
    ranges = {}
    try:
        for r in spec["ranges"]:
            start, end = parse_hour(r["start"]), parse_hour(r["end"])
            if options.get("first_memory"):
                ranges[r["name"]] = first_memory(query, start, end,
                                                 traced=bool(options.get("traced")))
                continue
            ranges[r["name"]] = time_range(
                query, start, end,
                min_repeats=spec["min_repeats"], max_repeats=spec["max_repeats"],
                budget_s=spec["budget_s"], memory=bool(spec.get("memory")),
                batch=int(options.get("batch", 1)),
            )
    finally:
        close = getattr(query, "close", None)
        if close is not None:
            close()
    if spec["tool"] in OUR_TOOLS:
        version += f" (source {source_fingerprint()})"
    return {"tool": spec["tool"], "version": version, "setup_s": setup_s, "ranges": ranges}


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--writer":
        return writer_main(json.loads(argv[1]))
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(run(json.loads(Path(argv[0]).read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
