"""Covers drawn from the catalog's cached timelines, verified against the partition rows.

DESIGN.md invariant 1: a cover is checked against the partition rows in one batched read before
anyone acts on it. A value the cache advertises but no row backs means the cache is stale (then
it is refreshed) or the stored timeline over-reports (then it is repaired, the first reader that
sees it fixes it); either way the cover is recomputed, never returned wrong.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

from airflow_partitions.catalog import writer
from airflow_partitions.catalog.fresh_cover import fresh_sources
from airflow_partitions.catalog.model import Partition, StorageDef
from airflow_partitions.catalog.row_decode import PartitionDecoder
from airflow_partitions.cover import Cover, CoverPartition, CoverSource, compute_cover
from airflow_partitions.cover.request import CoverRequest
from airflow_partitions.cover.skipped import SkippedPartition
from airflow_partitions.errors import InvalidInput, PartitionsError
from airflow_partitions.keys import prefix_successor
from airflow_partitions.periods import UpdatePeriod

if TYPE_CHECKING:
    from airflow_partitions.catalog.facade import Catalog
    from airflow_partitions.catalog.model import Partition

log = logging.getLogger(__name__)
MAX_VERIFY_ROUNDS = 3
PartKey = tuple[str, str, str]  # (storage, period name, time value)


class CoverVerificationError(PartitionsError):
    """The cached timelines and the partition rows kept disagreeing."""


@dataclass(frozen=True)
class VerifiedCover:
    """A cover plus every registered partition row behind it, in cover order."""

    cover: Cover
    partitions: tuple[Partition, ...]


def verified_cover(
    catalog: Catalog, request: CoverRequest, *, verify: bool = True
) -> VerifiedCover:
    """The best cover of the request from every storage of its fact, checked against the rows.

    Cost: one generation read when the cache is warm, the cover itself, and one batched read of
    the chosen partitions' rows (``verify=False`` skips it, for diagnostics only). A
    ``fresh_only`` request also reads the lineage in the range (:mod:`.fresh_cover`).
    """
    fact = request.require_fact()
    refresh = False
    for _ in range(MAX_VERIFY_ROUNDS):
        state = catalog.fact_state(fact, refresh=refresh)
        column = request.time_column or state.definition.time_columns[0]
        if column not in state.definition.time_columns:
            raise InvalidInput(
                f"{column!r} is not a time column of fact {fact!r} "
                f"({', '.join(state.definition.time_columns)})"
            )
        sources = [
            CoverSource(name, s.definition.priority, period, s.timelines[(period, column)])
            for name, s in sorted(state.storages.items())
            if column in s.definition.time_columns
            for period in s.definition.periods
        ]
        skipped: tuple[SkippedPartition, ...] = ()
        if request.fresh_only:
            sources, skipped = fresh_sources(catalog, request, column, state.definition.tz,
                                             sources)
        cover = compute_cover(sources, request, tz=state.definition.tz)
        if skipped:
            cover = cover.with_skipped(skipped)
        defs = {name: s.definition for name, s in state.storages.items()}
        if not verify:
            return VerifiedCover(cover, ())
        rows = _read_rows(catalog, defs, cover, column)
        unbacked = [p for p in cover.partitions if not rows.get(_key(p))]
        if not unbacked:
            located = cover.with_locations({k: _common_location(v) for k, v in rows.items()})
            ordered = tuple(part for p in cover.partitions for part in rows[_key(p)])
            return VerifiedCover(located, ordered)
        if refresh:  # fresh timelines still advertise them: repair the over-report
            _repair(catalog, defs, column, unbacked)
        log.warning(
            "cover of %s: %d partition(s) advertised without a registered row (e.g. %s %s %s); "
            "%s and recomputing",
            fact, len(unbacked), unbacked[0].storage, unbacked[0].period.name, unbacked[0].value,
            "repairing the timeline" if refresh else "refreshing the cache",
        )
        refresh = True
    raise CoverVerificationError(
        f"the timelines of {fact!r} and its partition rows kept disagreeing; run "
        "`airflow-partitions reconcile` on its storages"
    )


def _key(part: CoverPartition) -> PartKey:
    return (part.storage, part.period.name, part.value)


def _common_location(partitions: list[Partition]) -> str:
    """One location for a time value: the row's, or the directory all its rows share."""
    if len(partitions) == 1:
        return partitions[0].location
    return posixpath.commonpath([p.location for p in partitions])


def _read_rows(
    catalog: Catalog, defs: dict[str, StorageDef], cover: Cover, column: str
) -> dict[PartKey, list[Partition]]:
    """Every registered row behind the cover: one range scan per run of consecutive values
    when the time column leads the key (a run's rows are adjacent), else a scan of the period.

    Why scans, even when the key is the time value alone: a run's rows are one key range, and
    a projected scan of it (:class:`.row_decode.PartitionDecoder`) costs far less than a get
    per partition (issue 18: a month of hours is one scan, not 744 keys in IN lists).
    """
    found: dict[PartKey, list[Partition]] = {}
    for run in cover.runs:
        sdef = defs[run.storage]
        decoder = PartitionDecoder(sdef, run.period)
        if sdef.column_names[0] == column:
            first = run.period.format_ordinal(run.first, sdef.tz)
            last = run.period.format_ordinal(run.end - 1, sdef.tz)
            low = catalog.rows.period_prefix(sdef, run.period, (first,))
            high = prefix_successor(catalog.rows.period_prefix(sdef, run.period, (last,)))
            parts = decoder.scan(catalog.rows.partitions, start=low, stop=high)
        else:
            parts = decoder.scan(catalog.rows.partitions,
                                 prefix=catalog.rows.period_prefix(sdef, run.period))
        for part in parts:
            found.setdefault((sdef.name, run.period.name, part.values[column]), []).append(part)
    return found


def _repair(catalog: Catalog, defs: dict[str, StorageDef], column: str,
            unbacked: list[CoverPartition]) -> None:
    """Un-advertise values that no row backs (the stored timeline over-reported)."""
    by_timeline: dict[tuple[str, UpdatePeriod], set[int]] = {}
    for part in unbacked:
        storage, period_name, value = _key(part)
        period = UpdatePeriod.of(period_name)
        by_timeline.setdefault((storage, period), set()).add(
            period.parse_ordinal(value, defs[storage].tz)
        )
    for (storage, period), ordinals in by_timeline.items():
        sdef = defs[storage]
        values = {period.format_ordinal(o, sdef.tz) for o in ordinals}
        _, changed = writer.unadvertise(catalog.rows, sdef, period, column, values)
        if changed:
            catalog.rows.bump_generation(sdef.fact)
