"""The partition rows behind one run of a cover: read once, checked as runs, decoded on demand.

Why: a verified ten-year hourly cover built a :class:`~airflow_partitions.cover.CoverPartition`
(two pendulum instants), a location lookup and a :class:`.model.Partition` for each of its
87,000 hours to answer "is it all there?", about 40 µs a partition (issue 33). Here the check
is one projected range scan of the run's rows (their location, version and value cells, kept
as the raw tuples the store returns), the distinct time values of the run parsed by the
arithmetic fast path, and one list comparison with the run's ordinals: about 1 to 2 µs a row.
Partitions and locations are built from the kept tuples only when a caller asks (a manifest
lists every partition; a sensor, a status line and ``missing`` never do).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from airflow_partitions.catalog.model import Partition, StorageDef
from airflow_partitions.catalog.row_decode import LIST_BATCH, PartitionDecoder
from airflow_partitions.catalog.row_scan import list_whole_rows
from airflow_partitions.cover import CoverRun
from airflow_partitions.errors import InvalidInput
from airflow_partitions.keys import prefix_successor
from airflow_partitions.periods import UpdatePeriod, zone
from airflow_partitions.periods.fast_parse import fast_ordinals, fast_value_bytes

if TYPE_CHECKING:
    from airflow_partitions.catalog.rows import CatalogRows

RowValues = tuple[bytes | None, ...]


@dataclass(frozen=True)
class RunRows:
    """The rows of one cover run, in cover order (time order, then key order within a time).

    ``rows`` are the projected cells of :class:`.row_decode.PartitionDecoder` (location,
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


def read_run(rows: CatalogRows, sdef: StorageDef, run: CoverRun, column: str) -> RunRows:
    """The rows behind ``run``, and which of its ordinals none backs.

    Cost: one projected scan of the run's key range when ``column`` leads the storage's key
    (a run's rows are adjacent), else of the period's rows; then O(rows) to check them, with
    one parse per distinct time value. A time value that does not parse strictly (a damaged
    or non-canonical cell) backs nothing, as before: the strict value is what a cover names.
    So does a damaged row (:mod:`.row_check`: a state not positively registered, a location
    that does not decode, value cells that are not its key): checked in bulk, with one
    ``startswith`` per row, and row by row only when the bulk check fails.
    """
    period = run.period
    decoder = PartitionDecoder(sdef, period)
    at = 2 + sdef.column_names.index(column)
    leading = sdef.column_names[0] == column
    if leading:
        first = period.format_ordinal(run.first, sdef.tz)
        last = period.format_ordinal(run.end - 1, sdef.tz)
        low = rows.period_prefix(sdef, period, (first,))
        high = prefix_successor(rows.period_prefix(sdef, period, (last,)))
    else:
        low = rows.period_prefix(sdef, period)
        high = prefix_successor(low)
    scanned = list_whole_rows(rows.partitions, decoder.columns, low, high,
                              batch_size=LIST_BATCH, on_damaged=decoder.check.skip)
    found = [v for _, v in scanned]
    texts = [v[at] for v in found]
    check = decoder.check
    if leading and len(found) == run.count:  # the common case: one row a value, in order
        expected = fast_value_bytes(period.value, run.first, run.end, zone(sdef.tz))
        # With one column, the keys need no check here: the run's key range holds exactly
        # run.count distinct keys and their texts are its values in order, so each key is
        # its text (the catalog writes canonical keys only).
        if expected is not None and texts == expected and check.whole(
                found, None if check.width == 1 else [k for k, _ in scanned]):
            return RunRows(run, decoder, tuple(found), None)
    if not check.whole(found, [k for k, _ in scanned]):  # damaged rows back nothing
        found = [v for _, v in decoder.whole(scanned)]
        texts = [v[at] for v in found]
    distinct = list(dict.fromkeys(texts))
    ordinals = _ordinals(period, distinct, sdef.tz)
    if leading and len(found) == len(distinct) and ordinals == list(range(run.first, run.end)):
        return RunRows(run, decoder, tuple(found), None)
    return _grouped(run, decoder, found, texts, dict(zip(distinct, ordinals, strict=True)))


def _grouped(run: CoverRun, decoder: PartitionDecoder, found: list[RowValues],
             texts: list[bytes | None], ordinal_of: dict[bytes | None, int | None]) -> RunRows:
    """Rows of the run's ordinals grouped by ordinal (stable), and the ordinals none backs."""
    by_ordinal: dict[int, list[RowValues]] = {}
    for values, text in zip(found, texts, strict=True):
        ordinal = ordinal_of[text]
        if ordinal is not None and run.first <= ordinal < run.end:
            by_ordinal.setdefault(ordinal, []).append(values)
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


__all__ = ["RunRows", "read_run"]
