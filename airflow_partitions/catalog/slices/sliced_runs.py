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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.runs import RowValues, RunRows, read_runs
from airflow_partitions.cover import CoverRun, OrdinalSet
from airflow_partitions.kv import RowsMemo
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
        read = read_runs(rows, defs, spans, column, merge=merge)
        key = (head.storage, head.period, column, tuple(sliced))
        hit = _SLICED.get(key, read)  # the same checked rows (run_rows' memo): same answer
        if hit is not None:
            found.update(zip(sliced, hit, strict=True))
            continue
        names = defs[head.storage].column_names
        indexes: dict[tuple[str, ...], _SliceIndex] = {}
        for run in sliced:
            columns = tuple(c for c, _ in run.dimensions)
            index = indexes.get(columns)
            if index is None:
                index = indexes[columns] = _index(read, [2 + names.index(c) for c in columns])
            found[run] = _of_slice(run, read[0].decoder, index)
        _SLICED.put(key, read, tuple(found[r] for r in sliced),
                    size=sum(len(r.rows) for r in read))
    return [found[r] for r in runs]


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
