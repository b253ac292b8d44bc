"""The partition rows behind one run of a cover: read once, checked as runs, decoded on demand.

Why: building a :class:`~airflow_partitions.cover.CoverPartition` (two pendulum instants), a
location lookup and a :class:`.definitions.tables.Partition` for each of a ten-year hourly
cover's 87,000 hours to answer "is it all there?" costs about 40 µs a partition. Here the check
is one projected range scan of the run's rows (their location, version and value cells; on
HBase a short group's rows by key, one call instead of a scanner's three: :func:`_keys_of`), the
distinct time values of the run parsed by the arithmetic fast path, and one comparison with the
run's values: about 2 to 3 µs a row. The rows are kept packed (:class:`.rows.time_rows.TimeRows`,
about 100 bytes a row); partitions and locations are built from them only when a caller asks
(a manifest lists every partition; a sensor, a status line and ``missing`` never do).

Asked again, a group is not read again while the store's change feed names no key in its range
(:func:`_unchanged`), and a group of one row a time value is moved on from the rows kept
(:meth:`.rows.time_rows.TimeRows.advance`): only the rows written since, and what the group
adds, are read. HBase keeps no feed: there every call reads its rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.decode import LIST_BATCH, PartitionDecoder
from airflow_partitions.catalog.rows.run_rows import (
    RowValues,
    RunRows,
    changed_in,
    keeps,
    run_locator,
    strict_ordinals,
    whole_rows,
)
from airflow_partitions.catalog.rows.scan import list_whole_rows
from airflow_partitions.catalog.rows.time_rows import PATCH_MAX, TimeRows
from airflow_partitions.cover import CoverRun
from airflow_partitions.keys import encode_value, prefix_successor
from airflow_partitions.kv import CorruptCell, LatestMemo
from airflow_partitions.periods import UpdatePeriod, fast_value_bytes, zone

if TYPE_CHECKING:
    from airflow_partitions.catalog.rows.layout import CatalogRows

#: The stored time values of recent groups, joined by newlines (:func:`_expected_values`).
_VALUES: LatestMemo[tuple[UpdatePeriod, str, tuple[tuple[int, int], ...]], bytes] = LatestMemo(16)

#: The key range, decoder and row keys (:func:`_keys_of`) of recent groups (a sensor asks
#: the same runs at every poke), for the catalog rows (identity) and definition (equality)
#: they were worked out for.
_SCANS: LatestMemo[tuple[str, UpdatePeriod, str, tuple[CoverRun, ...]],
                   tuple[CatalogRows, StorageDef, bytes, bytes | None, PartitionDecoder,
                         tuple[bytes, ...] | None]] = LatestMemo()

#: The most rows a group reads by key where that saves round trips (HBase): a sensor's day
#: or week of hours in one call. A larger group is scanned: a multi-get costs the server a
#: lookup per row where a scan reads on.
KEYED_READ_MAX: Final = 256


#: The runs last read per group, with the change-feed position taken before their scan and
#: their key range: while the feed names no key in that range, they are the rows a scan would
#: return (:func:`_unchanged`). Only groups whose every row was whole are kept.
_FED: LatestMemo[tuple[str, UpdatePeriod, str, tuple[CoverRun, ...]],
                 tuple[CatalogRows, StorageDef, Hashable, tuple[RunRows, ...]]] = LatestMemo(64)


#: On a store without a change feed (HBase), the rows last read per group, as read, with the
#: runs checked from them: rows read again equal byte for byte are the same runs (the check is
#: a function of the bytes), handed back as the very objects, so an answer that rests on them
#: is known unchanged by identity. Only whole groups of at most :data:`AS_READ_MAX_ROWS` rows.
_AS_READ: LatestMemo[tuple[str, UpdatePeriod, str, tuple[CoverRun, ...]],
                     tuple[CatalogRows, StorageDef, list[tuple[bytes, RowValues]],
                           tuple[RunRows, ...]]] = LatestMemo(64)
#: The largest group :data:`_AS_READ` keeps: a day of hours of 85 slices.
AS_READ_MAX_ROWS: Final = 2_048


def _unchanged(rows: CatalogRows, sdef: StorageDef, key: tuple[str, UpdatePeriod, str,
               tuple[CoverRun, ...]], low: bytes, high: bytes | None) -> list[RunRows] | None:
    """The group's runs as last read, when the partitions table's change feed proves that no
    row of their key range was written since (by anyone: SQLite triggers record every write).
    Cost: one read of the feed, no row read. None when the feed cannot tell (HBase, an older
    file, a feed trimmed past the position) or a key in the range changed."""
    kept = _FED.get(key)
    if kept is None or kept[0] is not rows or kept[1] != sdef:
        return None
    changed = rows.partitions.changes_since(kept[2])
    if changed is None or changed_in(changed[1], low, high):
        return None
    _FED.remember(key, (rows, sdef, changed[0], kept[3]))
    return list(kept[3])


#: The packed rows of the last groups read per (storage, period, time column).
_TIMED: LatestMemo[tuple[str, UpdatePeriod, str], TimeRows] = LatestMemo(16)


def read_runs(rows: CatalogRows, defs: Mapping[str, StorageDef], runs: Sequence[CoverRun],
              column: str, *, merge: bool = True,
              read: Mapping[tuple[bytes, ...], list[tuple[bytes, RowValues]]] | None = None,
              ) -> list[RunRows]:
    """The rows behind each of ``runs`` (in order), and which of their ordinals none backs.

    With ``merge``, runs of one storage and period that follow each other in ``runs`` are read
    by one scan: in a cover's time order nothing but missing ranges separates them, and the
    timelines hold no partition there, so the scan reads exactly the runs' rows (a day with
    one hole is one round trip, not two). Pass ``merge=False`` when the gaps may hold rows
    the cover left out on purpose (a ``fresh_only`` cover skips stale partitions). ``read``:
    the rows of groups read by key (:func:`keyed_reads`) that the caller has read already,
    by their keys, checked as if read here.

    Cost: one projected scan per group of runs (of their key range when ``column`` leads the
    storage's key, else of the period's rows; a short group by key where that saves round
    trips), then O(rows) to check them, with one parse per
    distinct time value. A time value that does not parse strictly (a damaged or
    non-canonical cell) backs nothing: the strict value is what a cover names. So does a
    damaged row (:mod:`.rows.check`: a state not positively registered, a location that does
    not decode, value cells that are not its key, a blob that does not decode): checked in
    bulk, and row by row only when the bulk check fails.
    """
    out: list[RunRows] = []
    for group in _groups(runs, merge):
        out += _read_group(rows, defs[group[0].storage], group, column, read)
    return out


def keyed_reads(rows: CatalogRows, defs: Mapping[str, StorageDef], runs: Sequence[CoverRun],
                column: str) -> list[tuple[tuple[bytes, ...], tuple[bytes, ...]]] | None:
    """The keys and columns :func:`read_runs` reads ``runs`` by (one pair per group, in
    order), for a caller that asks them itself and hands the rows back (``read=``); None when
    a group is scanned, or the store does not read by key."""
    if not rows.partitions.keyed_reads_save_round_trips:
        return None
    out = []
    for group in _groups(runs, True):
        _low, _high, decoder, keys = _plan(rows, defs[group[0].storage], group, column)
        if not keys:
            return None
        out.append((keys, decoder.columns))
    return out


def same_runs(kept: Sequence[RunRows], runs: Sequence[RunRows]) -> bool:
    """Whether ``runs`` are the very objects ``kept`` (the rows' memo handed them back: rows
    read again equal byte for byte)."""
    return len(kept) == len(runs) and all(a is b for a, b in zip(kept, runs, strict=True))


def _groups(runs: Sequence[CoverRun], merge: bool) -> Iterator[Sequence[CoverRun]]:
    """``runs`` in groups read together: with ``merge``, runs of one storage and period that
    follow each other."""
    i = 0
    while i < len(runs):
        head = runs[i]
        j = i + 1
        while (merge and j < len(runs) and runs[j].storage == head.storage
               and runs[j].period is head.period):
            j += 1
        yield runs[i:j]
        i = j


def read_run(rows: CatalogRows, sdef: StorageDef, run: CoverRun, column: str) -> RunRows:
    """The rows behind one ``run``: :func:`read_runs` of a single run."""
    return _read_group(rows, sdef, [run], column)[0]


def _plan(rows: CatalogRows, sdef: StorageDef, group: Sequence[CoverRun], column: str
          ) -> tuple[bytes, bytes | None, PartitionDecoder, tuple[bytes, ...] | None]:
    """The group's key range, decoder and, on a store that reads by key, its row keys
    (:func:`_keys_of`); worked out once per group and kept in ``_SCANS``."""
    key = (sdef.name, group[0].period, column, tuple(group))
    plan = _SCANS.get(key)
    if plan is None or plan[0] is not rows or plan[1] != sdef:
        plan = (rows, sdef, *_scan_of(rows, sdef, group, column), None)
        _SCANS.remember(key, plan)
    low, high, decoder, keys = plan[2:]
    if keys is None and rows.partitions.keyed_reads_save_round_trips:
        keys = _keys_of(sdef, group, column, rows)
        _SCANS.remember(key, (*plan[:5], keys))
    return low, high, decoder, keys


def _read_group(rows: CatalogRows, sdef: StorageDef, group: Sequence[CoverRun],
                column: str, read: Mapping[tuple[bytes, ...], list[tuple[bytes, RowValues]]]
                | None = None) -> list[RunRows]:
    """One read (a scan, or by key: :func:`_keys_of`; none when ``read`` holds the keys'
    rows) for runs of one storage and period, in time order; or none, or a few rows, when the
    change feed says what changed since they were last read (:class:`TimeRows`)."""
    period = group[0].period
    key = (sdef.name, period, column, tuple(group))
    low, high, decoder, keys = _plan(rows, sdef, group, column)
    reused = _unchanged(rows, sdef, key, low, high)
    if reused is not None:
        return reused
    timed_key = (sdef.name, period, column)
    timed = _TIMED.get(timed_key)
    if timed is not None:
        got = timed.advance(rows, sdef, group)
        if got is not None:
            _FED.remember(key, (rows, sdef, timed.position, tuple(got)))
            return got
    position = rows.partitions.feed_position()  # before the scan: a write after it is seen
    scanned = None if read is None or not keys else read.get(keys)
    if scanned is None and keys:
        with contextlib.suppress(CorruptCell):  # a row that does not decode: the scan below
            scanned = rows.partitions.get_columns(keys, decoder.columns)  # reads on past it
    if scanned is None:
        scanned = list_whole_rows(rows.partitions, decoder.columns, low, high,
                                  batch_size=group_page(group), on_damaged=decoder.check.skip)
    as_read = position is None and len(scanned) <= AS_READ_MAX_ROWS
    if as_read:
        same = _AS_READ.get(key)
        if same is not None and same[0] is rows and same[1] == sdef and same[2] == scanned:
            return list(same[3])
    leading = sdef.column_names[0] == column
    expected = _expected_values(period, group, sdef.tz) if leading else None
    out, whole, timed = _check_group(sdef, group, column, decoder, scanned, expected)
    if not whole:  # a group with damaged rows is checked (and logged) at every read
        return [replace(r, whole=False) for r in out]
    if as_read and keeps(out):
        _AS_READ.remember(key, (rows, sdef, scanned, tuple(out)))
    del scanned
    if position is not None and keeps(out):
        _FED.remember(key, (rows, sdef, position, tuple(out)))
        if timed is not None:
            timed.rows, timed.sdef, timed.position = rows, sdef, position
            _TIMED.remember(timed_key, timed)
    return out


#: The largest page a cover's scan asks for: 100,000 rows of four cells, about 20 MB in one
#: Thrift reply (and several times that in the Thrift server's heap while it builds it); a
#: verified cover of eleven years of hours is still one page.
MAX_GROUP_PAGE: Final = 100_000


def group_page(group: Sequence[CoverRun]) -> int:
    """The page size of one group's scan: every row the runs hold, and one more, in one page
    (capped), so a verified cover costs round trips per group of runs, not per 5,000 rows.
    The rows are listed whole anyway, so a larger page holds nothing longer in memory.

    >>> group_page([CoverRun("s", UpdatePeriod.HOURLY, 0, 87_672)])
    87673
    >>> group_page([CoverRun("s", UpdatePeriod.HOURLY, 0, 10)])
    5000
    """
    rows = sum(run.count for run in group) + 1
    return min(MAX_GROUP_PAGE, max(LIST_BATCH, rows))


def _scan_of(rows: CatalogRows, sdef: StorageDef, group: Sequence[CoverRun], column: str
             ) -> tuple[bytes, bytes | None, PartitionDecoder]:
    """The key range holding the group's rows, and the decoder of its period."""
    period = group[0].period
    decoder = PartitionDecoder(sdef, period)
    leading = sdef.column_names[0] == column
    if leading:
        first = period.format_ordinal(group[0].first, sdef.tz)
        last = period.format_ordinal(group[-1].end - 1, sdef.tz)
        # The period's key prefix once, then the leading value: what period_prefix(sdef,
        # period, (value,)) returns, for two values.
        base, (name, ctype) = rows.period_prefix(sdef, period), sdef.columns[0]
        low = base + encode_value(ctype, first, column=name)
        high = prefix_successor(base + encode_value(ctype, last, column=name))
    else:
        low = rows.period_prefix(sdef, period)
        high = prefix_successor(low)
    return low, high, decoder


def _keys_of(sdef: StorageDef, group: Sequence[CoverRun], column: str, rows: CatalogRows
             ) -> tuple[bytes, ...]:
    """The row key of each ordinal of the group, in order, to read them by key where the store
    says that saves round trips: when the time column is the storage's only key column (so an
    ordinal names exactly one key) and the group holds at most :data:`KEYED_READ_MAX`
    ordinals; else ``()``, and its range is scanned. The two read the same: a row of the
    range at another key (a hole's, a non-canonical text's) backs no ordinal of the group
    either. Cost: one key encoding per ordinal, once per group (kept in ``_SCANS``)."""
    if list(sdef.column_names) != [column] or sum(run.count for run in group) > KEYED_READ_MAX:
        return ()
    period = group[0].period
    return tuple(rows.partition_key(sdef, period, (period.format_ordinal(ordinal, sdef.tz),))
                 for run in group for ordinal in range(run.first, run.end))


def _check_group(sdef: StorageDef, group: Sequence[CoverRun], column: str,
                 decoder: PartitionDecoder, scanned: list[tuple[bytes, RowValues]],
                 expected: bytes | None) -> tuple[list[RunRows], bool, TimeRows | None]:
    """The runs' rows out of the scan, whether every row scanned was whole, and, in the
    common case (one row a time value, in order), those rows packed by time value."""
    period = group[0].period
    at = 2 + sdef.column_names.index(column)
    check = decoder.check
    # The common case: one row a value, in order. With one column and one run the keys need no check
    # here: the scan's key range holds exactly len(expected) distinct keys whose texts are the
    # expected values in order, so each key is its text (the catalog writes canonical keys only);
    # the rest of the row is checked in bulk (rows/check.py). A merged group's range also spans its
    # holes, where a damaged row could carry an absent hour's text: there the keys are checked too.
    keys_proven = check.width == 1 and len(group) == 1
    count = sum(r.count for r in group)
    if expected is not None and _texts_are(scanned, at, expected, count) and whole_rows(
            check, scanned, with_keys=not keys_proven):
        timed = TimeRows(decoder, group[0].first, group[-1].end)
        timed.fill([o for run in group for o in range(run.first, run.end)],
                   [v for _, v in scanned])
        out = timed.take(group)
        assert out is not None  # every ordinal of every run has its row
        return out, True, timed
    found = [v for _, v in scanned]
    texts = [v[at] for v in found]
    whole = whole_rows(check, scanned, with_keys=True)
    if not whole:  # damaged rows back nothing
        found = [v for _, v in decoder.whole(scanned)]
        texts = [v[at] for v in found]
    distinct = list(dict.fromkeys(texts))
    ordinals = strict_ordinals(period, distinct, sdef.tz)
    if (sdef.column_names[0] == column and len(group) == 1 and len(found) == len(distinct)
            and ordinals == list(range(group[0].first, group[0].end))):
        return [RunRows(group[0], decoder, tuple(found), None)], whole, None
    ordinal_of = dict(zip(distinct, ordinals, strict=True))
    by_ordinal: dict[int, list[RowValues]] = {}
    for values, text in zip(found, texts, strict=True):
        ordinal = ordinal_of[text]
        if ordinal is not None:
            by_ordinal.setdefault(ordinal, []).append(values)
    return [_grouped(run, decoder, by_ordinal) for run in group], whole, None


def _texts_are(scanned: Sequence[tuple[bytes, RowValues]], at: int, expected: bytes,
               count: int) -> bool:
    """Whether the scan holds ``count`` rows whose time texts, joined by newlines, are
    ``expected`` (the canonical values, none holding a newline): then each text is its value,
    in order. One join and one ``memcmp``, no list of expected values kept."""
    if len(scanned) != count:
        return False
    try:
        return b"\n".join([v[at] for _, v in scanned]) == expected  # type: ignore[misc]
    except TypeError:  # a row without the value cell
        return False


def _grouped(run: CoverRun, decoder: PartitionDecoder,
             by_ordinal: Mapping[int, list[RowValues]]) -> RunRows:
    """The run's rows grouped by ordinal (stable), and the ordinals none backs: O(run)."""
    ordered: list[RowValues] = []
    starts = [0]
    missing = []
    for ordinal in range(run.first, run.end):
        group = by_ordinal.get(ordinal)
        if group is None:
            missing.append(ordinal)
            continue
        ordered.extend(group)
        starts.append(len(ordered))
    return RunRows(run, decoder, tuple(ordered), tuple(starts), tuple(missing))


def _expected_values(period: UpdatePeriod, group: Sequence[CoverRun], tz: str
                     ) -> bytes | None:
    """The time values the runs name, as stored (ASCII bytes), in order, joined by newlines;
    None where the arithmetic fast path does not apply (calendar periods, other zones).
    About 14 bytes a value, kept for the last groups (a sensor asks them after each write)."""
    key = (period, tz, tuple((run.first, run.end) for run in group))
    joined = _VALUES.get(key)
    if joined is None:
        tzinfo = zone(tz)
        out: list[bytes] = []
        for run in group:
            values = fast_value_bytes(period.value, run.first, run.end, tzinfo)
            if values is None:
                return None
            out += values
        joined = b"\n".join(out)
        _VALUES.remember(key, joined)
    return joined


__all__ = ["PATCH_MAX", "RowValues", "RunRows", "changed_in", "keeps", "keyed_reads", "read_run",
           "read_runs", "run_locator", "same_runs"]
