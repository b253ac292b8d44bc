"""The partition rows behind one run of a cover: read once, checked as runs, decoded on demand.

Why: building a :class:`~airflow_partitions.cover.CoverPartition` (two pendulum instants), a
location lookup and a :class:`.definitions.tables.Partition` for each of a ten-year hourly
cover's 87,000 hours to answer "is it all there?" costs about 40 µs a partition. Here the check
is one projected range scan of the run's rows (their location, version and value cells, kept
as the raw tuples the store returns), the distinct time values of the run parsed by the
arithmetic fast path, and one list comparison with the run's ordinals: about 1 to 2 µs a row.
Partitions and locations are built from the kept tuples only when a caller asks (a manifest
lists every partition; a sensor, a status line and ``missing`` never do).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from airflow_partitions.catalog.definitions.tables import Partition, StorageDef
from airflow_partitions.catalog.rows.check import RowCheck
from airflow_partitions.catalog.rows.decode import LIST_BATCH, PartitionDecoder
from airflow_partitions.catalog.rows.scan import list_whole_rows
from airflow_partitions.cover import CoverRun, RunLocator
from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import encode_value, prefix_successor
from airflow_partitions.kv import LatestMemo, RowsMemo
from airflow_partitions.periods import UpdatePeriod, fast_ordinals, fast_value_bytes, zone

if TYPE_CHECKING:
    from airflow_partitions.catalog.rows.layout import CatalogRows

RowValues = tuple[bytes | None, ...]

#: Groups of runs already checked, with the rows they were checked against: a group whose
#: scan returns equal rows (the same objects, when the store's page memo reused its page) is
#: not checked again. Only groups whose every row was whole are kept, so a damaged row is
#: logged at every read.
_CHECKED: RowsMemo[tuple[str, UpdatePeriod, str, tuple[CoverRun, ...]],
                   tuple[StorageDef, tuple[RunRows, ...]]] = RowsMemo()


@dataclass(frozen=True)
class RunRows:
    """The rows of one cover run, in cover order (time order, then key order within a time).

    ``rows`` are the projected cells of :class:`.rows.decode.PartitionDecoder` (location,
    version, each value as text) of every registered row whose time value lies in the run;
    ``starts`` the index in ``rows`` where each ordinal's rows begin (one more entry at the
    end), or None when each ordinal has exactly one row, in order. ``missing`` lists the run's
    ordinals that no row backs: empty when the run is verified.
    """

    run: CoverRun
    decoder: PartitionDecoder
    rows: tuple[RowValues, ...]
    starts: tuple[int, ...] | None
    missing: tuple[int, ...] = ()
    _partitions: list[tuple[Partition, ...]] = field(default_factory=list, compare=False,
                                                     repr=False)

    def partitions(self) -> tuple[Partition, ...]:
        """Every row as a :class:`Partition`, in cover order; built once, O(rows)."""
        if not self._partitions:
            decode = self.decoder.decode
            self._partitions.append(tuple(decode(v) for v in self.rows))
        return self._partitions[0]

    def by_ordinal(self) -> list[tuple[int, tuple[RowValues, ...]]]:
        """Each backed ordinal of the run with its rows, in order: O(rows)."""
        if self.starts is None:
            return [(self.run.first + i, (v,)) for i, v in enumerate(self.rows)]
        missing = set(self.missing)
        backed = [o for o in range(self.run.first, self.run.end) if o not in missing]
        return [(o, self.rows[lo:hi])
                for o, lo, hi in zip(backed, self.starts, self.starts[1:], strict=False)]

    def locations(self) -> list[str]:
        """One location per ordinal of the run: its row's, or the directory its rows share.

        Only meaningful for a verified run (every ordinal backed); O(rows).
        """
        if self.starts is None:
            return [v[0].decode() for v in self.rows if v[0] is not None]
        out = []
        for lo, hi in zip(self.starts, self.starts[1:], strict=False):
            locs = [v[0].decode() for v in self.rows[lo:hi] if v[0] is not None]
            out.append(locs[0] if len(locs) == 1 else posixpath.commonpath(locs))
        return out


def run_locator(runs: Sequence[RunRows]) -> RunLocator:
    """Each run's locations from its rows, computed only when a cover's partitions are
    built (the verified cover's ``locator``; a sliced run's rows are its slice's)."""
    by_run = {rows.run: rows for rows in runs}

    def locations(run: CoverRun) -> list[str]:
        return by_run[run].locations()

    return locations

#: Page-sized chunks of scans found whole (:func:`_whole`), with the definition they were
#: checked under, and the stored time values of recent runs (:func:`_expected_values`).
_WHOLE: RowsMemo[tuple[str, UpdatePeriod, bool, bytes, bytes, int], StorageDef] = RowsMemo()
_VALUES: RowsMemo[tuple[UpdatePeriod, str, int, int], list[bytes]] = RowsMemo()

#: The key range and decoder of recent groups (a sensor asks the same runs at every poke),
#: for the catalog rows (identity) and definition (equality) they were worked out for.
_SCANS: LatestMemo[tuple[str, UpdatePeriod, str, tuple[CoverRun, ...]],
                   tuple[CatalogRows, StorageDef, bytes, bytes | None, PartitionDecoder]] = (
                       LatestMemo())


def read_runs(rows: CatalogRows, defs: Mapping[str, StorageDef], runs: Sequence[CoverRun],
              column: str, *, merge: bool = True) -> list[RunRows]:
    """The rows behind each of ``runs`` (in order), and which of their ordinals none backs.

    With ``merge``, runs of one storage and period that follow each other in ``runs`` are read
    by one scan: in a cover's time order nothing but missing ranges separates them, and the
    timelines hold no partition there, so the scan reads exactly the runs' rows (a day with
    one hole is one round trip, not two). Pass ``merge=False`` when the gaps may hold rows
    the cover left out on purpose (a ``fresh_only`` cover skips stale partitions).

    Cost: one projected scan per group of runs (of their key range when ``column`` leads the
    storage's key, else of the period's rows), then O(rows) to check them, with one parse per
    distinct time value. A time value that does not parse strictly (a damaged or
    non-canonical cell) backs nothing: the strict value is what a cover names. So does a
    damaged row (:mod:`.rows.check`: a state not positively registered, a location that does
    not decode, value cells that are not its key, a blob that does not decode): checked in
    bulk, and row by row only when the bulk check fails.
    """
    out: list[RunRows] = []
    i = 0
    while i < len(runs):
        head = runs[i]
        j = i + 1
        while (merge and j < len(runs) and runs[j].storage == head.storage
               and runs[j].period is head.period):
            j += 1
        out += _read_group(rows, defs[head.storage], runs[i:j], column)
        i = j
    return out


def read_run(rows: CatalogRows, sdef: StorageDef, run: CoverRun, column: str) -> RunRows:
    """The rows behind one ``run``: :func:`read_runs` of a single run."""
    return _read_group(rows, sdef, [run], column)[0]


def _read_group(rows: CatalogRows, sdef: StorageDef, group: Sequence[CoverRun],
                column: str) -> list[RunRows]:
    """One scan for runs of one storage and period, in time order."""
    period = group[0].period
    key = (sdef.name, period, column, tuple(group))
    known = _SCANS.get(key)
    if known is not None and known[0] is rows and known[1] == sdef:
        low, high, decoder = known[2:]
    else:
        low, high, decoder = _scan_of(rows, sdef, group, column)
        _SCANS.remember(key, (rows, sdef, low, high, decoder))
    scanned = list_whole_rows(rows.partitions, decoder.columns, low, high,
                              batch_size=group_page(group), on_damaged=decoder.check.skip)
    hit = _CHECKED.get(key, scanned)
    if hit is not None and hit[0] == sdef:
        return list(hit[1])
    leading = sdef.column_names[0] == column
    expected = _expected_values(period, group, sdef.tz) if leading else None
    out, whole = _check_group(sdef, group, column, decoder, scanned, expected)
    if whole:  # a group with damaged rows is checked (and logged) at every read
        _CHECKED.put(key, scanned, (sdef, tuple(out)))
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


def _check_group(sdef: StorageDef, group: Sequence[CoverRun], column: str,
                 decoder: PartitionDecoder, scanned: list[tuple[bytes, RowValues]],
                 expected: list[bytes] | None) -> tuple[list[RunRows], bool]:
    """The runs' rows out of the scan, and whether every row scanned was whole."""
    period = group[0].period
    at = 2 + sdef.column_names.index(column)
    found = [v for _, v in scanned]
    texts = [v[at] for v in found]
    check = decoder.check
    # The common case: one row a value, in order. With one column and one run the keys need no check
    # here: the scan's key range holds exactly len(expected) distinct keys whose texts are the
    # expected values in order, so each key is its text (the catalog writes canonical keys only);
    # the rest of the row is checked in bulk (rows/check.py). A merged group's range also spans its
    # holes, where a damaged row could carry an absent hour's text: there the keys are checked too.
    keys_proven = check.width == 1 and len(group) == 1
    if expected is not None and texts == expected and _whole(
            sdef, period, check, scanned, with_keys=not keys_proven):
        out, lo = [], 0
        for run in group:
            out.append(RunRows(run, decoder, tuple(found[lo:lo + run.count]), None))
            lo += run.count
        return out, True
    whole = _whole(sdef, period, check, scanned, with_keys=True)
    if not whole:  # damaged rows back nothing
        found = [v for _, v in decoder.whole(scanned)]
        texts = [v[at] for v in found]
    distinct = list(dict.fromkeys(texts))
    ordinals = _ordinals(period, distinct, sdef.tz)
    if (sdef.column_names[0] == column and len(group) == 1 and len(found) == len(distinct)
            and ordinals == list(range(group[0].first, group[0].end))):
        return [RunRows(group[0], decoder, tuple(found), None)], whole
    ordinal_of = dict(zip(distinct, ordinals, strict=True))
    by_ordinal: dict[int, list[RowValues]] = {}
    for values, text in zip(found, texts, strict=True):
        ordinal = ordinal_of[text]
        if ordinal is not None:
            by_ordinal.setdefault(ordinal, []).append(values)
    return [_grouped(run, decoder, by_ordinal) for run in group], whole


def _whole(sdef: StorageDef, period: UpdatePeriod, check: RowCheck,
           scanned: list[tuple[bytes, RowValues]], *, with_keys: bool) -> bool:
    """``check.whole`` of the scan, a page-sized chunk at a time: a chunk equal to one found
    whole before (the very row objects, when the store's page memo handed its page back) is
    not checked again, so after a write only the pages it changed are (whole is a conjunction
    over rows, so chunks answer what the whole list does). O(rows) comparisons by identity,
    and the checks of the chunks that changed."""
    if not scanned:
        return check.whole([], [] if with_keys else None)
    for lo in range(0, len(scanned), LIST_BATCH):
        chunk = scanned[lo:lo + LIST_BATCH]
        key = (sdef.name, period, with_keys, chunk[0][0], chunk[-1][0], len(chunk))
        if _WHOLE.get(key, chunk) == sdef:
            continue
        if not check.whole([v for _, v in chunk], [k for k, _ in chunk] if with_keys else None):
            return False
        _WHOLE.put(key, chunk, sdef)
    return True


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
                     ) -> list[bytes] | None:
    """The time values the runs name, as stored (ASCII bytes), in order; None where the
    arithmetic fast path does not apply (calendar periods, other zones)."""
    tzinfo = zone(tz)
    out: list[bytes] = []
    for run in group:
        key = (period, tz, run.first, run.end)
        values = _VALUES.get(key, ())  # a sensor asks the same runs again after each write
        if values is None:
            values = fast_value_bytes(period.value, run.first, run.end, tzinfo)
            if values is None:
                return None
            _VALUES.put(key, (), values, size=len(values))
        out += values
    return out


def _ordinals(period: UpdatePeriod, texts: Sequence[bytes | None], tz: str
              ) -> list[int | None]:
    """The strict ordinal of each time value text, None where there is none."""
    decoded = [t.decode("utf-8", "replace") if t is not None else "" for t in texts]
    fast = fast_ordinals(period.value, decoded, zone(tz))
    if fast is not None:
        return list(fast)
    out: list[int | None] = []
    for text in decoded:
        try:
            out.append(period.parse_ordinal(text, tz))
        except InvalidInput:
            out.append(None)
    return out


__all__ = ["RunRows", "read_run", "read_runs", "run_locator"]
