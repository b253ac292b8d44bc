"""The rows of one cover run as a verified cover keeps them, and the checks every reader of
runs shares: which rows are whole, which time values parse, which changed keys fall in a range.

Why its own module: :mod:`.rows.runs` (the full read of a group of runs) and
:mod:`.rows.time_rows` (the rows kept between reads, moved on with the change feed) both build
and check :class:`RunRows`. Cost: see each function.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from airflow_partitions.catalog.definitions.tables import Partition
from airflow_partitions.catalog.rows.check import RowCheck
from airflow_partitions.catalog.rows.decode import LIST_BATCH, PartitionDecoder
from airflow_partitions.cover import CoverRun, RunLocator
from airflow_partitions.errors import InvalidInput
from airflow_partitions.kv import MAX_ROWS
from airflow_partitions.periods import UpdatePeriod, fast_ordinals, zone

RowValues = tuple[bytes | None, ...]

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
    rows: Sequence[RowValues]
    starts: tuple[int, ...] | None
    missing: tuple[int, ...] = ()
    #: Whether every row the run's scan read was whole (a damaged row is left out, and its
    #: reader reads and logs it again next time instead of reusing these rows).
    whole: bool = field(default=True, compare=False)
    _partitions: list[tuple[Partition, ...]] = field(default_factory=list, compare=False,
                                                     repr=False)

    def partitions(self) -> tuple[Partition, ...]:
        """Every row as a :class:`Partition`, in cover order; built once, O(rows)."""
        if not self._partitions:
            decode = self.decoder.decode
            self._partitions.append(tuple(decode(v) for v in self.rows))
        return self._partitions[0]

    def by_ordinal(self) -> list[tuple[int, Sequence[RowValues]]]:
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


def keeps(runs: Sequence[RunRows]) -> bool:
    """Whether the rows of ``runs`` may be kept: at most ``MAX_ROWS``
    (``$AIRFLOW_PARTITIONS_VERIFY_MEMO_ROWS``; 0 keeps none)."""
    return sum(len(r.rows) for r in runs) <= MAX_ROWS and MAX_ROWS > 0


def changed_in(keys: Iterable[bytes], low: bytes, high: bytes | None) -> list[bytes]:
    """The keys of ``keys`` in ``[low, high)`` (``high`` None: no upper bound), distinct."""
    return list(dict.fromkeys(k for k in keys if low <= k and (high is None or k < high)))


def whole_rows(check: RowCheck, scanned: list[tuple[bytes, RowValues]], *, with_keys: bool
           ) -> bool:
    """``check.whole`` of the scan, a page-sized chunk at a time (bounded temporary lists;
    whole is a conjunction over rows). O(rows)."""
    for lo in range(0, max(len(scanned), 1), LIST_BATCH):
        chunk = scanned[lo:lo + LIST_BATCH]
        if not check.whole([v for _, v in chunk], [k for k, _ in chunk] if with_keys else None):
            return False
    return True



def strict_ordinals(period: UpdatePeriod, texts: Sequence[bytes | None], tz: str
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


__all__ = ["RowValues", "RunRows", "changed_in", "keeps", "run_locator", "strict_ordinals",
           "whole_rows"]
