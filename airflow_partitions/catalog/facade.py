"""The partition catalog: facts, storage tables, partitions and their timelines.

Write protocols hold DESIGN.md's invariants on any store with one-row atomicity and single-cell
check-and-put:

* register: write the partition rows, then add their time values to the timelines (CAS loop),
  then bump the fact's generation. A crash in between under-reports, never over-reports.
* drop: mark the rows ``dropping`` (so concurrent droppers of siblings do not count them; a
  partition stays registered until its row is deleted), remove time values that no other live
  row still has (CAS loop), bump the generation, re-check for live rows added meanwhile and
  re-advertise them, and only then delete the rows.
* rebuild: read the timeline cells, scan the rows, and swap each cell only if it is unchanged
  since it was read; a concurrent writer makes the swap fail and the rebuild retry.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final

from airflow_partitions.catalog import query as filter_query
from airflow_partitions.catalog import repair as catalog_repair
from airflow_partitions.catalog.cache import (
    FactState,
    SlicedStoreAllTimeline,
    TimelineCache,
    TimelineKey,
    UnknownFact,
    UnknownStorage,
    timeline_from_cell,
)
from airflow_partitions.catalog.model import (
    FactDef,
    InvalidDefinition,
    PartitionSpec,
    StorageDef,
    check_name,
    encode_json,
    make_spec,
    render_location,
)
from airflow_partitions.catalog.repair import ReconcileReport, TimelineDiff
from airflow_partitions.catalog.rows import (
    DEF,
    DROPPING,
    LIVE,
    LOC,
    MAX_SWAP_ATTEMPTS,
    STAMP,
    STATE,
    CatalogStore,
    backoff,
    encoded_cell_column,
    fact_row,
    member_column,
    storage_row,
    value_cell_column,
)
from airflow_partitions.catalog.verified_cover import VerifiedCover, verified_cover
from airflow_partitions.cover.compute import Cover
from airflow_partitions.cover.request import CoverRequest
from airflow_partitions.defaults import GET_BATCH, default_data_root, default_store_url
from airflow_partitions.errors import ConcurrentUpdateError, InvalidInput
from airflow_partitions.filters import Explain, QueryStats
from airflow_partitions.keys import FIRST_VALUE_FIELD, ColumnType, field_bytes
from airflow_partitions.kv import open_store
from airflow_partitions.kv.base import Cells, KVStore
from airflow_partitions.kv.scan_filters import SingleColumnValue
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    PartitionTimeline,
    StoreAllTimeline,
    timeline_class,
)

CRASH_ENV: Final = "AIRFLOW_PARTITIONS_CRASH_AT"


class AlreadyExists(InvalidInput):
    """A fact or storage exists with a different definition."""


class PartitionConflict(InvalidInput):
    """A partition is registered with another location and ``overwrite`` was not given."""


#: In-process observers of write steps, for tests that break the store at an exact step.
STEP_HOOKS: list[Callable[[str], None]] = []


def crash_point(step: str) -> None:
    """Test hook: ``AIRFLOW_PARTITIONS_CRASH_AT=<step>`` kills the process right here."""
    for hook in STEP_HOOKS:
        hook(step)
    wanted = os.environ.get(CRASH_ENV)
    if wanted and step in wanted.split(","):
        os._exit(86)


@dataclass(frozen=True)
class Partition:
    """A registered partition as listed by the catalog."""

    storage: str
    period: UpdatePeriod
    values: dict[str, str]
    location: str

    def to_json(self) -> dict[str, Any]:
        return {
            "storage": self.storage,
            "period": self.period.name,
            "values": dict(self.values),
            "location": self.location,
        }


@dataclass(frozen=True)
class WriteResult:
    """What a bulk register or drop did."""

    changed: int
    unchanged: int


ColumnArg = str | tuple[str, str | ColumnType]


def parse_columns(columns: Iterable[ColumnArg]) -> list[tuple[str, ColumnType]]:
    """``["dt", "region:string", ("n", "int")]`` -> typed columns (string by default)."""
    out: list[tuple[str, ColumnType]] = []
    for item in columns:
        if isinstance(item, tuple):
            name, ctype = item
        else:
            name, _, ctype = item.partition(":")
            ctype = ctype or "string"
        out.append((check_name("partition column", name.strip()), ColumnType.parse(ctype)))
    return out


class Catalog:
    """Facts, storage tables, partitions and timelines on one key/value store."""

    def __init__(
        self,
        store: KVStore | str | None = None,
        *,
        data_root: str | None = None,
        cache: TimelineCache | None = None,
    ) -> None:
        self.kv = store if isinstance(store, KVStore) else open_store(store or default_store_url())
        self.io = CatalogStore(self.kv)
        self.io.ensure_tables()
        self.cache = cache if cache is not None else TimelineCache.for_store(self.kv.url)
        self.data_root = data_root or default_data_root()
        self._defs: dict[str, StorageDef] = {}

    @property
    def stats(self) -> Any:
        """Round trips made to the store (``stats.round_trips``)."""
        return self.kv.stats

    def close(self) -> None:
        self.kv.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- definitions -------------------------------------------------------------------------------

    def create_fact(
        self, name: str, time_columns: Sequence[str] = ("dt",), tz: str = "UTC",
        *, exist_ok: bool = False,
    ) -> FactDef:
        """Create a fact; with ``exist_ok`` an identical existing one is fine."""
        fdef = FactDef(name, tuple(time_columns), tz)
        body = encode_json(fdef.to_json())
        if self.io.catalog.check_and_put(fact_row(name), DEF, None, body):
            return fdef
        existing = self.get_fact(name)
        if exist_ok and existing == fdef:
            return existing
        raise AlreadyExists(f"fact {name!r} already exists: {existing.to_json()}")

    def get_fact(self, name: str) -> FactDef:
        definition, _, _ = self.io.read_fact(name)
        if definition is None:
            raise UnknownFact(f"fact {name!r} is not in the catalog")
        return definition

    def list_facts(self) -> list[FactDef]:
        return self.io.list_facts()

    def create_storage(
        self,
        fact: str,
        name: str,
        periods: Iterable[UpdatePeriod | str],
        *,
        columns: Iterable[ColumnArg] | None = None,
        location: str | None = None,
        priority: int = 0,
        timeline_classes: Mapping[str, str] | None = None,
        exist_ok: bool = False,
    ) -> StorageDef:
        """Create a storage table of ``fact``; its time columns and zone come from the fact."""
        fdef = self.get_fact(fact)
        typed = parse_columns(columns) if columns is not None else []
        names = [c for c, _ in typed]
        typed = [(c, ColumnType.STRING) for c in fdef.time_columns if c not in names] + typed
        column_names = [c for c, _ in typed]
        if location is None:
            location = "/".join(
                [self.data_root.rstrip("/"), "{fact}", "{storage}", "{period}"]
                + [f"{c}={{{c}}}" for c in column_names]
            )
        sdef = StorageDef(
            name=name,
            fact=fact,
            columns=tuple(typed),
            time_columns=tuple(c for c in fdef.time_columns if c in column_names),
            periods=tuple(sorted({UpdatePeriod.of(p) for p in periods})),
            location=location,
            tz=fdef.tz,
            priority=int(priority),
            timeline_classes=dict(timeline_classes or {}),
        )
        body = encode_json(sdef.to_json())
        row = storage_row(name)
        created = self.io.catalog.check_and_put(row, DEF, None, body)
        if not created:
            existing = self.get_storage(name)
            if not (exist_ok and existing == sdef):
                raise AlreadyExists(f"storage {name!r} already exists: {existing.to_json()}")
        else:  # no partition rows can exist yet, so empty timelines are the truth
            self.io.set_present(name, True)
        member = member_column(name)
        # An identical re-create (exist_ok) changes nothing, so readers' caches stay warm; it
        # only finishes a create that stopped before the fact listed the storage.
        if created or member not in self.io.catalog.get(fact_row(fact), [member]):
            self.io.catalog.put(fact_row(fact), {member: b"1"})
            self.io.bump_generation(fact)
        self._defs[name] = sdef
        return sdef

    def get_storage(self, name: str) -> StorageDef:
        """A storage definition (cached per catalog: definitions never change)."""
        sdef = self._defs.get(name)
        if sdef is None:
            sdef = self.io.read_storage_def(name)
            if sdef is None:
                raise UnknownStorage(f"storage {name!r} is not in the catalog")
            self._defs[name] = sdef
        return sdef

    def list_storages(self, fact: str | None = None) -> list[StorageDef]:
        return [s for s in self.io.list_storage_defs() if fact is None or s.fact == fact]

    # -- partitions --------------------------------------------------------------------------------

    def _specs(
        self, sdef: StorageDef, period: UpdatePeriod | str,
        values: Mapping[str, str] | Iterable[Mapping[str, str]],
    ) -> list[tuple[PartitionSpec, bytes]]:
        batch = [values] if isinstance(values, Mapping) else list(values)
        seen: dict[bytes, PartitionSpec] = {}
        for item in batch:
            spec, typed = make_spec(sdef, period, item)
            seen.setdefault(self.io.partition_key(sdef, spec.period, typed), spec)
        return [(spec, key) for key, spec in seen.items()]

    def _value_cells(self, sdef: StorageDef, key: bytes) -> dict[bytes, bytes]:
        """Each value as text (``p:v.<col>``) and as order-preserving bytes (``p:k.<col>``).

        The encoded copies let HBase compare typed values server-side with binary comparators.
        """
        cells: dict[bytes, bytes] = {}
        for index, (column, _) in enumerate(sdef.columns):
            cells[encoded_cell_column(column)] = field_bytes(key, FIRST_VALUE_FIELD + index)
        return cells

    def location_of(self, sdef: StorageDef, spec: PartitionSpec) -> str:
        return render_location(sdef.location, sdef.fact, sdef.name, spec.period, spec.value_map)

    def register(
        self,
        storage: str,
        period: UpdatePeriod | str,
        values: Mapping[str, str] | Iterable[Mapping[str, str]],
        *,
        location: str | None = None,
        overwrite: bool = False,
    ) -> WriteResult:
        """Register one partition or many; idempotent. Everything is validated before writing."""
        sdef = self.get_storage(storage)
        specs = self._specs(sdef, period, values)
        if location is not None and len(specs) != 1:
            raise InvalidInput("an explicit location can only be given for a single partition")
        locations = {key: location or self.location_of(sdef, spec) for spec, key in specs}
        existing = self._get_rows([key for _, key in specs])
        conflicts = [
            f"{spec.value_map} at {existing[key][LOC].decode()!r}"
            for spec, key in specs
            if existing.get(key, {}).get(STATE) == LIVE
            and existing[key].get(LOC, b"").decode() != locations[key]
        ]
        if conflicts and not overwrite:
            raise PartitionConflict(
                f"{len(conflicts)} partition(s) of {storage!r} are registered elsewhere, e.g. "
                f"{conflicts[0]}; pass overwrite=True (--overwrite) to move them"
            )
        now = str(int(time.time())).encode()
        writes = []
        for spec, key in specs:
            old = existing.get(key, {})
            if old.get(STATE) == LIVE and old.get(LOC, b"").decode() == locations[key]:
                continue
            cells = {LOC: locations[key].encode(), STATE: LIVE, STAMP: now}
            cells.update({value_cell_column(c): v.encode() for c, v in spec.values})
            cells.update(self._value_cells(sdef, key))
            writes.append((key, cells))
        crash_point("register:before-rows")
        if writes:
            self.io.partitions.put_many(writes)
        crash_point("register:after-rows")
        period_ = specs[0][0].period if specs else UpdatePeriod.of(period)
        changed = False
        for column in sdef.time_columns:
            ordinals = {period_.parse_ordinal(spec.value_map[column], sdef.tz) for spec, _ in specs}
            changed |= self._update_timeline(sdef, period_, column, add=ordinals)
            crash_point("register:after-timeline")
        if changed:
            self.io.bump_generation(sdef.fact)
        crash_point("register:after-generation")
        return WriteResult(len(writes), len(specs) - len(writes))

    def drop(
        self,
        storage: str,
        period: UpdatePeriod | str,
        values: Mapping[str, str] | Iterable[Mapping[str, str]],
    ) -> WriteResult:
        """Drop one partition or many; dropping an absent partition is a no-op."""
        sdef = self.get_storage(storage)
        specs = self._specs(sdef, period, values)
        existing = self._get_rows([key for _, key in specs])
        present = [(spec, key) for spec, key in specs if key in existing]
        if not present:
            return WriteResult(0, len(specs))
        period_ = present[0][0].period
        marks = [(key, {STATE: DROPPING}) for _, key in present if existing[key].get(STATE) == LIVE]
        if marks:
            self.io.partitions.put_many(marks)
        crash_point("drop:after-mark")
        touched: dict[str, set[int]] = {}
        for column in sdef.time_columns:
            values_ = {spec.value_map[column] for spec, _ in present}
            still_live = self._live_time_values(sdef, period_, column, values_)
            gone = {period_.parse_ordinal(v, sdef.tz) for v in values_ - still_live}
            self._update_timeline(sdef, period_, column, remove=gone)
            touched[column] = gone
            crash_point("drop:after-timeline")
        self.io.bump_generation(sdef.fact)
        crash_point("drop:after-generation")
        for column, gone in touched.items():
            texts = {period_.format_ordinal(o, sdef.tz) for o in gone}
            back = self._live_time_values(sdef, period_, column, texts)
            if back:  # a concurrent register of a sibling partition: re-advertise it
                ordinals = {period_.parse_ordinal(v, sdef.tz) for v in back}
                if self._update_timeline(sdef, period_, column, add=ordinals):
                    self.io.bump_generation(sdef.fact)
        for _, key in present:
            self.io.partitions.delete(key)
        crash_point("drop:after-delete")
        return WriteResult(len(present), len(specs) - len(present))

    def _get_rows(self, keys: list[bytes]) -> dict[bytes, Cells]:
        out: dict[bytes, Cells] = {}
        for i in range(0, len(keys), GET_BATCH):
            out.update(self.io.partitions.get_many(keys[i : i + GET_BATCH], [LOC, STATE]))
        return out

    def _live_time_values(
        self, sdef: StorageDef, period: UpdatePeriod, column: str, values: set[str]
    ) -> set[str]:
        """Which of these time values still have a live partition row (any other columns)."""
        if not values:
            return set()
        live = SingleColumnValue(STATE, "=", LIVE, filter_if_missing=True)
        vcol = value_cell_column(column)
        found: set[str] = set()
        if sdef.column_names[0] == column and len(values) <= 16:
            for value in values:
                prefix = self.io.period_prefix(sdef, period, (value,))
                for _ in self.io.partitions.scan(prefix=prefix, columns=[STATE], filter=live,
                                                 limit=1):
                    found.add(value)
            return found
        prefix = self.io.period_prefix(sdef, period)
        for _, cells in self.io.partitions.scan(prefix=prefix, columns=[STATE, vcol], filter=live):
            value = cells.get(vcol, b"").decode()
            if value in values:
                found.add(value)
        return found

    def get_partition(
        self, storage: str, period: UpdatePeriod | str, values: Mapping[str, str]
    ) -> Partition | None:
        """One live partition, or None."""
        sdef = self.get_storage(storage)
        [(spec, key)] = self._specs(sdef, period, values)
        cells = self.io.partitions.get(key, [LOC, STATE])
        if LOC not in cells:
            return None
        return Partition(storage, spec.period, spec.value_map, cells[LOC].decode())

    def list_partitions(
        self, storage: str, period: UpdatePeriod | str | None = None
    ) -> Iterator[Partition]:
        """Registered partitions of a storage (optionally one period), in key order.

        A partition whose drop was interrupted is still registered until its row is deleted:
        the timelines may have stopped advertising it (an under-report), never the reverse.
        """
        sdef = self.get_storage(storage)
        periods = [UpdatePeriod.of(period)] if period is not None else list(sdef.periods)
        for period_ in periods:
            prefix = self.io.period_prefix(sdef, period_)
            for _, cells in self.io.partitions.scan(prefix=prefix):
                if LOC in cells:
                    yield self.partition_from_cells(sdef, period_, cells)

    def partition_from_cells(
        self, sdef: StorageDef, period: UpdatePeriod, cells: Cells
    ) -> Partition:
        """A Partition from the cells of its row (for readers of raw scans: filters, covers)."""
        values = {c: cells.get(value_cell_column(c), b"").decode() for c in sdef.column_names}
        return Partition(sdef.name, period, values, cells[LOC].decode())

    # -- timelines ---------------------------------------------------------------------------------

    def _update_timeline(
        self, sdef: StorageDef, period: UpdatePeriod, column: str,
        add: set[int] | None = None, remove: set[int] | None = None,
    ) -> bool:
        """Apply adds/removes to one stored timeline with check-and-put; returns if it changed."""
        add, remove = add or set(), remove or set()
        if not add and not remove:
            return False
        for attempt in range(MAX_SWAP_ATTEMPTS):
            cell = self.io.read_timeline_cell(sdef.name, period, column)
            kind = cell.kind or sdef.timeline_kind(period, column)
            if timeline_class(kind) is StoreAllTimeline:
                formatted = {o: period.format_ordinal(o, sdef.tz) for o in add}
                self.io.write_values(sdef.name, period, column, add, remove, formatted)
                new = cell.encode_next(kind, {})
                changed = True
            else:
                timeline = timeline_from_cell(self.io, sdef, period, column, cell)
                changed = False
                for o in sorted(add):
                    changed |= timeline.add_ordinal(o)
                for o in sorted(remove):
                    changed |= timeline.drop_ordinal(o)
                if not changed:
                    return False
                new = cell.encode_next(kind, timeline.to_properties())
            if self.io.swap_timeline_cell(sdef.name, period, column, cell, new):
                return changed
            self.stats.note("swap_retry")
            backoff(attempt)
        raise ConcurrentUpdateError(
            f"the {period.name} {column} timeline of {sdef.name!r} kept changing during "
            f"{MAX_SWAP_ATTEMPTS} attempts; the partition rows are safe, retry the operation"
        )

    def fact_state(self, fact: str, *, refresh: bool = False) -> FactState:
        """The cached timelines of a fact's storages, rebuilding any never stored."""
        state = self.cache.fact(self.io, fact, refresh=refresh)
        stale = [name for name, s in state.storages.items() if not s.present]
        if stale:
            for name in stale:
                self.rebuild(name)
            state = self.cache.fact(self.io, fact, refresh=True)
        return state

    def timelines(self, storage: str) -> dict[TimelineKey, PartitionTimeline]:
        """Fully loaded timelines of one storage, from the cache."""
        sdef = self.get_storage(storage)
        state = self.fact_state(sdef.fact).storages.get(storage)
        if state is None:
            raise UnknownStorage(f"storage {storage!r} is not a member of fact {sdef.fact!r}")
        out: dict[TimelineKey, PartitionTimeline] = {}
        for key, timeline in state.timelines.items():
            out[key] = timeline.load_all() if isinstance(timeline, SlicedStoreAllTimeline) \
                else timeline
        return out

    def timeline(self, storage: str, period: UpdatePeriod | str, column: str | None = None
                 ) -> PartitionTimeline:
        """One fully loaded timeline."""
        sdef = self.get_storage(storage)
        period_ = UpdatePeriod.of(period)
        column = column or sdef.time_columns[0]
        try:
            return self.timelines(storage)[(period_, column)]
        except KeyError:
            raise InvalidInput(
                f"storage {storage!r} has no {period_.name} timeline for column {column!r}"
            ) from None

    def rebuild(self, storage: str) -> dict[TimelineKey, PartitionTimeline]:
        """Recompute every timeline of a storage from its partition rows and store them."""
        return catalog_repair.rebuild(self, self.get_storage(storage))[1]

    def reconcile(self, storage: str) -> ReconcileReport:
        """Rebuild from the rows, report what the stored timelines got wrong, finish drops."""
        return catalog_repair.reconcile(self, self.get_storage(storage))

    def migrate_timeline(self, storage: str, period: UpdatePeriod | str, column: str | None,
                         to: str) -> PartitionTimeline:
        """Switch one timeline's implementation without reading the partitions."""
        return catalog_repair.migrate_timeline(self, self.get_storage(storage), period, column, to)

    def cover(
        self,
        fact: str,
        start: dt.datetime | str,
        end: dt.datetime | str,
        *,
        time_column: str | None = None,
        periods: Iterable[UpdatePeriod | str] | str | None = None,
        storages: Iterable[str] | str | None = None,
        align: str | None = None,
        verify: bool = True,
    ) -> Cover:
        """The fewest existing partitions whose union is ``[start, end)``, or what is missing.

        The convenient spelling of :class:`~airflow_partitions.cover.CoverRequest`: the
        arguments mean what its fields mean. With ``verify`` (the default) every chosen
        partition is checked against its rows in one batched read first; see
        :mod:`airflow_partitions.catalog.verified_cover`.
        """
        request = CoverRequest.of(
            fact, start, end, time_column=time_column, periods=periods, storages=storages,
            align=align,
        )
        return self.cover_with_partitions(request, verify=verify).cover

    def cover_with_partitions(
        self, request: CoverRequest, *, verify: bool = True
    ) -> VerifiedCover:
        """The cover of ``request`` plus every registered partition row behind it (manifests)."""
        return verified_cover(self, request, verify=verify)

    def get_partitions_by_filter(
        self, storage: str, filter: str, period: UpdatePeriod | str | None = None,
        max_parts: int | None = None, *, stats: QueryStats | None = None,
        allow_unknown: bool = False,
    ) -> list[Partition]:
        """Registered partitions matching a filter string (docs/filters.md); the residual is
        applied here, so the answer always equals a full-scan evaluation."""
        return filter_query.get_partitions_by_filter(
            self, storage, filter, period, max_parts, stats=stats, allow_unknown=allow_unknown
        )

    def explain(self, storage: str, filter: str, period: UpdatePeriod | str | None = None,
                *, allow_unknown: bool = False) -> Explain:
        """How a filter is read: scans with server filters, gets, the residual."""
        return filter_query.explain(self, storage, filter, period, allow_unknown=allow_unknown)

    def timeline_properties(self, storage: str, period: UpdatePeriod | str,
                            column: str | None = None) -> dict[str, str]:
        """Lens-compatible properties of one timeline, whatever its storage layout."""
        return self.timeline(storage, period, column).to_properties()



__all__ = [
    "AlreadyExists",
    "Catalog",
    "ConcurrentUpdateError",
    "InvalidDefinition",
    "Partition",
    "PartitionConflict",
    "ReconcileReport",
    "TimelineDiff",
    "WriteResult",
]
