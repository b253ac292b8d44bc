"""The rows behind a slice cover's runs: each sliced run reads only the rows of its slice.

Why: a run chosen for ``region=eu`` (``CoverRun.dimensions``) stands for eu's rows of those
hours and nothing else; us may read the same hours through its own run, or through a rollup.
Verification (DESIGN.md invariant 1) must check that eu's rows are there, and the manifest
must list exactly them: every row of the hour would have the job read us twice.

How: runs without a slice are read as before (:func:`.run_rows.read_runs`). The sliced runs of
one (storage, period) are read together: the union of their ordinals is read once, as
time-only runs (a hundred regions' runs over the same hours cost one scan, not a hundred),
then each run keeps the rows whose declared-column values equal its ``dimensions``. An ordinal
with no row of the slice is one the run's slice lacks (``RunRows.missing``).

Cost: one projected scan per (storage, period) and maximal stretch of sliced ordinals, as the
time-only read, then O(rows x sliced runs over them) comparisons of encoded values, no decoding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from airflow_partitions.catalog.model import StorageDef
from airflow_partitions.catalog.row_decode import PartitionDecoder
from airflow_partitions.catalog.run_rows import RowValues, RunRows, read_runs
from airflow_partitions.cover import CoverRun
from airflow_partitions.cover.ordinal_sets import OrdinalSet

if TYPE_CHECKING:
    from airflow_partitions.catalog.rows import CatalogRows


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
        by_ordinal: dict[int, tuple[RowValues, ...]] = {}
        read = read_runs(rows, defs, spans, column, merge=merge)
        for got in read:
            by_ordinal.update(got.by_ordinal())
        sdef = defs[head.storage]
        for run in sliced:
            found[run] = _of_slice(run, sdef, read[0].decoder, by_ordinal)
    return [found[r] for r in runs]


def _of_slice(run: CoverRun, sdef: StorageDef, decoder: PartitionDecoder,
              by_ordinal: Mapping[int, tuple[RowValues, ...]]) -> RunRows:
    """The run's rows whose declared-column values are the run's slice, grouped by ordinal."""
    names = sdef.column_names
    wanted = [(2 + names.index(c), v.encode()) for c, v in run.dimensions]
    ordered: list[RowValues] = []
    starts = [0]
    missing = []
    for ordinal in range(run.first, run.end):
        mine = [v for v in by_ordinal.get(ordinal, ()) if all(v[i] == b for i, b in wanted)]
        if not mine:
            missing.append(ordinal)
            continue
        ordered.extend(mine)
        starts.append(len(ordered))
    return RunRows(run, decoder, tuple(ordered), tuple(starts), tuple(missing))


__all__ = ["read_slice_runs"]
