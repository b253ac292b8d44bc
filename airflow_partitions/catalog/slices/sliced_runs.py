"""The rows behind a slice cover's runs: each sliced run reads only the rows of its slice.

Why: a run chosen for ``region=eu`` (``CoverRun.dimensions``) stands for eu's rows of those
hours and nothing else; us may read the same hours through its own run, or through a rollup.
Verification (docs/design.md, invariant 2) must check that eu's rows are there, and the manifest
must list exactly them: every row of the hour would have the job read us twice.

How: runs without a slice are read as before (:func:`.rows.runs.read_runs`). The sliced runs of
one (storage, period) are read together: the union of their ordinals is read once, as time-only
runs (a hundred regions' runs over the same hours cost one scan, not a hundred), then the rows
are indexed once by their declared-column values (a slice) and ordinal, and each run takes its
slice's. An ordinal with no row of the slice is one the run's slice lacks (``RunRows.missing``).

Cost: one projected scan per (storage, period) and maximal stretch of sliced ordinals, as the
time-only read, then O(rows) to index them by slice and O(run) per run, no decoding.

Asked again (a sensor after each registration), the index and the runs taken from it are
kept with the partitions table's change-feed position taken before their read
(:meth:`KVTable.changes_since`, SQLite): the keys written since that fall in the stretch name
the time values to read again (one prefix scan each, every slice of that time value), and
only the runs of a slice whose rows at such a time value differ are taken again. Cost after
one registration: one feed read, one scan of one time value's rows, O(run) for one run.
Where the feed cannot tell (HBase, a feed trimmed past the position, a key that does not
decode, a damaged row), everything is read as above.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.runs import (
    PATCH_MAX,
    RowValues,
    RunRows,
    changed_in,
    keeps,
    read_runs,
)
from airflow_partitions.catalog.rows.scan import list_whole_rows
from airflow_partitions.cover import CoverRun, OrdinalSet
from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import KeyEncodingError, decode_key, encode_value, prefix_successor
from airflow_partitions.kv import LatestMemo, RowsMemo
from airflow_partitions.periods import UpdatePeriod

if TYPE_CHECKING:
    from airflow_partitions.catalog.rows.layout import CatalogRows


#: The sliced runs of one (storage, period) taken out of rows already checked: kept with the
#: :class:`RunRows` they came from, which :mod:`.rows.runs` hands back (the same objects) while
#: the store returns the same bytes.
_SLICED: RowsMemo[tuple[str, UpdatePeriod, str, tuple[CoverRun, ...]],
                  tuple[RunRows, ...]] = RowsMemo()


def read_slice_runs(rows: CatalogRows, defs: Mapping[str, StorageDef], runs: Sequence[CoverRun],
                    column: str, *, merge: bool = True) -> list[RunRows]:
    """The rows behind each of ``runs`` (in order): all of a plain run's, only its slice's for
    a run with ``dimensions``; ``missing`` names the ordinals none backs."""
    plain = [r for r in runs if not r.dimensions]
    found: dict[CoverRun, RunRows] = {
        r.run: r for r in read_runs(rows, defs, plain, column, merge=merge)}
    groups: dict[tuple[str, object], list[CoverRun]] = {}
    for run in runs:
        if run.dimensions:
            groups.setdefault((run.storage, run.period), []).append(run)
    for sliced in groups.values():
        head = sliced[0]
        union = OrdinalSet([(r.first, r.end) for r in sliced])
        spans = [CoverRun(head.storage, head.period, a, b) for a, b in union.ranges]
        sdef = defs[head.storage]
        state_key = (head.storage, head.period, column, tuple(union.ranges), merge)
        state = _STATES.get(state_key)
        if state is not None and all(tuple(c for c, _ in r.dimensions) in state.indexes
                                     for r in sliced) and state.current(rows, sdef):
            taken = [state.run_rows(r) for r in sliced]
            found.update((r, t) for r, t in zip(sliced, taken, strict=True) if t is not None)
            continue
        position = rows.partitions.feed_position()  # before the read: later writes are seen
        read = read_runs(rows, defs, spans, column, merge=merge)
        key = (head.storage, head.period, column, tuple(sliced))
        hit = _SLICED.get(key, read)  # the same checked rows (run_rows' memo): same answer
        names = sdef.column_names
        indexes: dict[tuple[str, ...], _SliceIndex] = {}
        if hit is not None:
            found.update(zip(sliced, hit, strict=True))
        else:
            for run in sliced:
                columns = tuple(c for c, _ in run.dimensions)
                index = indexes.get(columns)
                if index is None:
                    index = indexes[columns] = _index(read,
                                                      [2 + names.index(c) for c in columns])
                found[run] = _of_slice(run, read[0].decoder, index)
            _SLICED.put(key, read, tuple(found[r] for r in sliced),
                        size=sum(len(r.rows) for r in read))
        if (position is not None and indexes and names[0] == column and read
                and all(r.whole for r in read) and keeps(read)):
            _STATES.remember(state_key, _SliceState(
                rows, sdef, position, read[0].decoder, tuple(union.ranges),
                {r: found[r] for r in sliced}, indexes))
    return [found[r] for r in runs]


@dataclass(eq=False)
class _SliceState:
    """The rows of a stretch of sliced ordinals as last read and checked, indexed by slice
    (one index per set of dimension columns its runs name), with the change-feed position
    taken before that read and the runs taken from the indexes."""

    rows: CatalogRows
    sdef: StorageDef
    position: Hashable
    decoder: PartitionDecoder
    spans: tuple[tuple[int, int], ...]
    runs: dict[CoverRun, RunRows]
    indexes: dict[tuple[str, ...], _SliceIndex] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def current(self, rows: CatalogRows, sdef: StorageDef) -> bool:
        """:meth:`_advance` under the state's lock (threads share it)."""
        with self._lock:
            return self._advance(rows, sdef)

    def _advance(self, rows: CatalogRows, sdef: StorageDef) -> bool:
        """Bring the state up to the store's feed; False when it cannot (read everything).

        Cost: one feed read; per changed time value in the stretch, one prefix scan of its
        rows and O(slices) comparisons; the runs of a slice whose rows there changed are
        dropped (taken again, O(run), by :meth:`run_rows`).
        """
        if self.rows is not rows or self.sdef != sdef:
            return False
        table = rows.partitions
        changed = table.changes_since(self.position)
        if changed is None:
            return False
        position, keys = changed
        period, tz = self.decoder.period, sdef.tz
        base = rows.period_prefix(sdef, period)
        (name, ctype) = sdef.columns[0]

        def prefix(ordinal: int) -> bytes:
            return base + encode_value(ctype, period.format_ordinal(ordinal, tz), column=name)

        touched = changed_in(keys, prefix(self.spans[0][0]),
                             prefix_successor(prefix(self.spans[-1][1] - 1)))
        if len(touched) > PATCH_MAX:
            return False
        ordinals: set[int] = set()
        for key in touched:
            try:
                _, _, values = decode_key(sdef.key_schema, key)
                ordinal = period.parse_ordinal(str(values[0]), tz)
            except (KeyEncodingError, InvalidInput, IndexError):
                return False  # a key no writer of the catalog makes: read it all, check it
            if any(a <= ordinal < b for a, b in self.spans):
                ordinals.add(ordinal)
        for ordinal in sorted(ordinals):
            low = prefix(ordinal)
            damaged: list[bytes] = []

            def seen(key: bytes, why: str, damaged: list[bytes] = damaged) -> None:
                damaged.append(key)

            scanned = list_whole_rows(table, self.decoder.columns, low, prefix_successor(low),
                                      on_damaged=seen)
            if damaged or not self.decoder.check.whole([v for _, v in scanned],
                                                       [k for k, _ in scanned]):
                return False  # the full read logs the damaged rows and leaves them out
            self._replace(ordinal, [v for _, v in scanned])
        self.position = position
        return True

    def _replace(self, ordinal: int, fresh: list[RowValues]) -> None:
        """The rows of one time value, read again, in every index; the runs of each slice
        whose rows there differ are dropped. O(slices + rows of the time value)."""
        names = self.sdef.column_names
        dropped: set[tuple[tuple[str, ...], tuple[bytes | None, ...]]] = set()
        for columns, index in self.indexes.items():
            at = [2 + names.index(c) for c in columns]
            slots: dict[tuple[bytes | None, ...], list[RowValues]] = {}
            for v in fresh:
                slots.setdefault(tuple(v[i] for i in at), []).append(v)
            for mine in {*slots, *(k for k, by in index.items() if ordinal in by)}:
                now = slots.get(mine)
                by = index.setdefault(mine, {})
                if by.get(ordinal) == now:
                    continue
                if now is None:
                    del by[ordinal]
                else:
                    by[ordinal] = now
                dropped.add((columns, mine))
        if dropped:
            for run in [r for r in self.runs if r.first <= ordinal < r.end]:
                if (tuple(c for c, _ in run.dimensions),
                        tuple(v.encode() for _, v in run.dimensions)) in dropped:
                    del self.runs[run]

    def run_rows(self, run: CoverRun) -> RunRows | None:
        """The run's rows: kept, or taken from its index (None: no index for its columns)."""
        with self._lock:
            got = self.runs.get(run)
            if got is None:
                index = self.indexes.get(tuple(c for c, _ in run.dimensions))
                if index is None:
                    return None
                got = self.runs[run] = _of_slice(run, self.decoder, index)
            return got


#: The kept stretches, by (storage, period, column, their ordinal ranges, merge).
_STATES: LatestMemo[tuple[str, UpdatePeriod, str, tuple[tuple[int, int], ...], bool],
                    _SliceState] = LatestMemo(16)


def _index_of(by_ordinal: Mapping[int, list[RowValues]], at: Sequence[int]) -> _SliceIndex:
    """:func:`_index` from rows by ordinal: O(rows)."""
    index: _SliceIndex = {}
    for ordinal, values in by_ordinal.items():
        for v in values:
            index.setdefault(tuple(v[i] for i in at), {}).setdefault(ordinal, []).append(v)
    return index


_SliceIndex = dict[tuple[bytes | None, ...], dict[int, list[RowValues]]]


def _index(read: Sequence[RunRows], at: Sequence[int]) -> _SliceIndex:
    """The rows read, by their values at ``at`` (a slice, encoded) then by ordinal: O(rows)."""
    index: _SliceIndex = {}
    for got in read:
        for ordinal, values in got.by_ordinal():
            for v in values:
                index.setdefault(tuple(v[i] for i in at), {}).setdefault(ordinal, []).append(v)
    return index


def _of_slice(run: CoverRun, decoder: PartitionDecoder, index: _SliceIndex) -> RunRows:
    """The run's rows whose declared-column values are the run's slice, grouped by ordinal:
    O(run), whatever the number of other slices."""
    mine = index.get(tuple(v.encode() for _, v in run.dimensions), {})
    ordered: list[RowValues] = []
    starts = [0]
    missing = []
    for ordinal in range(run.first, run.end):
        got = mine.get(ordinal)
        if not got:
            missing.append(ordinal)
            continue
        ordered.extend(got)
        starts.append(len(ordered))
    return RunRows(run, decoder, tuple(ordered), tuple(starts), tuple(missing))


__all__ = ["read_slice_runs"]
