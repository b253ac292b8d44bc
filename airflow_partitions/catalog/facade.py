"""The partition catalog's front door: facts, storage tables, partitions, timelines, covers.

Thin on purpose: each job lives in its own module (see ``docs/architecture.md``): the row layout
in :mod:`.rows.layout`, the write protocols in :mod:`.writer`, the timeline cache in :mod:`.cache`,
verified covers in :mod:`.covers.verified`, repair in :mod:`.repair`, filters in :mod:`.query`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType

from airflow_partitions.arguments import (
    optional_int,
    optional_text,
    require_flag,
    require_int,
    require_names,
    require_text,
    require_value_maps,
    shown,
)
from airflow_partitions.catalog import bulk_specs, lens_table, writer
from airflow_partitions.catalog import query as filter_query
from airflow_partitions.catalog import repair as catalog_repair
from airflow_partitions.catalog.cache import (
    FactState,
    TimelineCache,
    TimelineKey,
    UnknownFact,
    UnknownStorage,
    loaded_timelines,
)
from airflow_partitions.catalog.covers.verified import VerifiedCover, verified_cover
from airflow_partitions.catalog.definitions import update as definition_update
from airflow_partitions.catalog.definitions.producers import Producer
from airflow_partitions.catalog.definitions.tables import (
    FactDef,
    Partition,
    PartitionSpec,
    StorageDef,
    check_location,
    check_name,
    encode_json,
    render_location,
)
from airflow_partitions.catalog.lineage import flag as lineage_flag
from airflow_partitions.catalog.lineage.inputs import (
    check_not_own_input,
    encode_inputs,
    parse_inputs,
)
from airflow_partitions.catalog.lineage.staleness import StalePartition, find_stale
from airflow_partitions.catalog.repair import ReconcileReport
from airflow_partitions.catalog.rows.decode import PartitionDecoder
from airflow_partitions.catalog.rows.layout import (
    DEF,
    CatalogRows,
    fact_row,
    member_column,
    storage_row,
)
from airflow_partitions.catalog.slices.build import created_marker, declare_dimension
from airflow_partitions.catalog.writer import WriteResult
from airflow_partitions.cover import Cover, CoverRequest
from airflow_partitions.defaults import default_data_root, default_store_url
from airflow_partitions.errors import InvalidInput, WrongType
from airflow_partitions.filters import Explain, QueryStats
from airflow_partitions.keys import ColumnType
from airflow_partitions.kv import Cells, KVStore, StoreStats, open_store
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline


class AlreadyExists(InvalidInput):
    """A fact or storage exists with a different definition."""


def period_list(what: str, periods: object) -> list[UpdatePeriod]:
    """Update periods from a list of names or :class:`UpdatePeriod` values (not one string)."""
    if isinstance(periods, str) or not isinstance(periods, Iterable):
        raise WrongType(f"{what} must be a list such as ['HOURLY', 'DAILY'], not "
                        f"{shown(periods)}")
    return [UpdatePeriod.of(p) for p in periods]


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
        self.rows = CatalogRows(self.kv)
        self.rows.ensure_tables()
        self.cache = cache if cache is not None else TimelineCache.for_store(self.kv.url)
        self.data_root = data_root or default_data_root()
        self._defs: dict[str, StorageDef] = {}

    @property
    def stats(self) -> StoreStats:
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
        fdef = FactDef(require_text("fact name", name), require_names("time_columns", time_columns),
                       require_text("tz", tz))
        exist_ok = require_flag("exist_ok", exist_ok)
        body = encode_json(fdef.to_json())
        if self.rows.catalog.check_and_put(fact_row(name), DEF, None, body):
            return fdef
        existing = self.get_fact(name)
        if exist_ok and existing == fdef:
            return existing
        raise AlreadyExists(f"fact {name!r} already exists: {existing.to_json()}")

    def get_fact(self, name: str) -> FactDef:
        require_text("fact", name)
        definition, _, _ = self.rows.read_fact(name)
        if definition is None:
            raise UnknownFact(f"fact {shown(name)} is not in the catalog")
        return definition

    def list_facts(self) -> list[FactDef]:
        return self.rows.list_facts()

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
        producers: Mapping[str, Producer] | None = None,
        dimensions: Iterable[str] = (),
    ) -> StorageDef:
        """Create a storage table of ``fact``; its time columns and zone come from the fact.

        ``producers`` name the DAG producing each period (docs/backfill.md); with ``exist_ok``
        and no ``producers``, an existing storage's producers are not compared.
        ``dimensions`` declare non-time columns whose values must all be present, in the
        ``--dimension`` spelling (``["region=eu,us"]``; docs/dimensions.md).
        """
        require_text("storage name", name)
        periods = period_list("periods", periods)
        optional_text("location", location)
        priority = require_int("priority", priority)
        exist_ok = require_flag("exist_ok", exist_ok)
        if timeline_classes is not None and not isinstance(timeline_classes, Mapping):
            raise WrongType(f"timeline_classes must map a period to a timeline class, not "
                            f"{shown(timeline_classes)}")
        if columns is not None and (isinstance(columns, str) or not isinstance(columns, Iterable)):
            raise WrongType(f"columns must be a list such as ['region', 'n:int'], not "
                            f"{shown(columns)}")
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
            priority=priority,
            timeline_classes=dict(timeline_classes or {}),
            producers=dict(producers or {}),
            dimensions=definition_update.declared_dimensions(
                require_names("dimensions", dimensions)),
        )
        body = encode_json(sdef.to_json())
        row = storage_row(name)
        created = self.rows.catalog.check_and_put(row, DEF, None, body)
        if not created:
            existing = self.get_storage(name)
            if producers is None:  # producers change after creation (set_producers)
                sdef = definition_update.apply_changes(sdef, existing.producers)
            if not (exist_ok and existing == sdef):
                raise AlreadyExists(f"storage {name!r} already exists: {existing.to_json()}")
        else:  # no rows can exist yet: empty timelines are the truth, and no row has lineage
            lineage_flag.created(self.rows, name, created_marker(sdef))
        member = member_column(name)
        # An identical re-create (exist_ok) changes nothing, so readers' caches stay warm; it
        # only finishes a create that stopped before the fact listed the storage.
        if created or member not in self.rows.catalog.get(fact_row(fact), [member]):
            self.rows.catalog.put(fact_row(fact), {member: b"1"})
            self.rows.bump_generation(fact)
        self._defs[name] = sdef
        return sdef

    def get_storage(self, name: str) -> StorageDef:
        """A storage definition (cached per catalog: only producers change, and readers of
        producers use :meth:`fact_state`, which sees a change at the next generation check)."""
        require_text("storage", name)
        sdef = self._defs.get(name)
        if sdef is None:
            sdef = self.rows.read_storage_def(name)
            if sdef is None:
                raise UnknownStorage(f"storage {shown(name)} is not in the catalog")
            self._defs[name] = sdef
        return sdef

    def set_producers(self, storage: str,
                      producers: Mapping[str, Producer | None]) -> StorageDef:
        """Set (a :class:`Producer`) or remove (``None``) the producers of a storage's periods.

        Safe against concurrent updates: check-and-put on the definition cell, retried; see
        :mod:`.definitions.update`. Returns the stored definition.
        """
        sdef = definition_update.set_producers(self.rows, require_text("storage", storage),
                                               producers)
        self._defs[storage] = sdef
        return sdef

    def set_dimension(self, storage: str, spec: str) -> StorageDef:
        """Add to a dimension's domain (``region=apac@2025-06-01T00:00:00Z``) or retire a declared
        value (``region=apac@..2026-01-01T00:00:00Z``), with check-and-put as :meth:`set_producers`;
        a new column's slice timelines are built from the rows (resumable, :mod:`.slices.build`)."""
        sdef = declare_dimension(self.rows, require_text("storage", storage),
                                 require_text("dimension", spec))
        self._defs[storage] = sdef
        return sdef

    def list_storages(self, fact: str | None = None) -> list[StorageDef]:
        return [s for s in self.rows.list_storage_defs() if fact is None or s.fact == fact]

    # -- partitions --------------------------------------------------------------------------------

    def keyed_specs(
        self, sdef: StorageDef, period: UpdatePeriod | str,
        values: Mapping[str, str] | Iterable[Mapping[str, str]],
    ) -> list[tuple[PartitionSpec, bytes]]:
        """Validate partition values and pair each distinct one with its row key.

        Everything is checked before anything is written, so a bad value in a batch of
        thousands fails the batch, not half of it.
        """
        batch = require_value_maps("partition values", values)
        return bulk_specs.keyed_specs(sdef, UpdatePeriod.of(period), batch)

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
        restate: bool = False,
        inputs: Iterable[Mapping[str, object]] | None = None,
    ) -> WriteResult:
        """Register one partition or many; idempotent. Everything is validated before writing.

        ``restate`` rewrites them with a new version (their data changed); ``inputs`` records
        the exact input partitions (``{storage, period, values, version}``) the job that built
        them read, for :meth:`stale`. See docs/catalog.md, "Versions, lineage and staleness".
        """
        sdef = self.get_storage(storage)
        overwrite = require_flag("overwrite", overwrite)
        restate = require_flag("restate", restate)
        if location is not None:
            location = check_location(location)
        with bulk_specs.collector_paused():
            specs = self.keyed_specs(sdef, period, values)
            if location is not None and len(specs) != 1:
                raise InvalidInput("an explicit location can only be given for a single "
                                   "partition")
            lineage = None if inputs is None else parse_inputs(inputs, self.get_storage)
            if lineage:
                check_not_own_input(lineage, specs)
            locate = (bulk_specs.locator(sdef) if location is None
                      else lambda _spec, given=location: given)
            return writer.register(self.rows, sdef, UpdatePeriod.of(period), specs, locate,
                                   overwrite=overwrite, restate=restate,
                                   inputs=None if lineage is None else encode_inputs(lineage))

    def drop(
        self,
        storage: str,
        period: UpdatePeriod | str,
        values: Mapping[str, str] | Iterable[Mapping[str, str]],
    ) -> WriteResult:
        """Drop one partition or many; dropping an absent partition is a no-op."""
        sdef = self.get_storage(storage)
        specs = self.keyed_specs(sdef, period, values)
        return writer.drop(self.rows, sdef, UpdatePeriod.of(period), specs)

    def get_partition(
        self, storage: str, period: UpdatePeriod | str, values: Mapping[str, str]
    ) -> Partition | None:
        """One live partition, or None."""
        sdef = self.get_storage(storage)
        if not isinstance(values, Mapping):
            raise WrongType(f"values must map each column to its value, not {shown(values)}")
        [(spec, key)] = self.keyed_specs(sdef, period, values)
        return PartitionDecoder(sdef, spec.period).get(self.rows.partitions, key)

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
            prefix = self.rows.period_prefix(sdef, period_)
            yield from PartitionDecoder(sdef, period_).scan(self.rows.partitions, prefix=prefix)

    # -- timelines ---------------------------------------------------------------------------------

    def fact_state(self, fact: str, *, refresh: bool = False,
                   read: dict[bytes, Cells] | None = None) -> FactState:
        """The cached timelines of a fact's storages, rebuilding any never stored. ``read``:
        catalog rows the caller just read (by row key), used instead of reading them again."""
        state = self.cache.fact(self.rows, fact, refresh=refresh, read=read)
        stale = [name for name, s in state.storages.items() if not s.present]
        if stale:
            for name in stale:
                self.rebuild(name)
            state = self.cache.fact(self.rows, fact, refresh=True)
        return state

    def timelines(self, storage: str) -> dict[TimelineKey, PartitionTimeline]:
        """Fully loaded timelines of one storage, from the cache."""
        sdef = self.get_storage(storage)
        return loaded_timelines(self.fact_state(sdef.fact), storage)

    def timeline(self, storage: str, period: UpdatePeriod | str, column: str | None = None
                 ) -> PartitionTimeline:
        """One fully loaded timeline."""
        sdef = self.get_storage(storage)
        period_ = UpdatePeriod.of(period)
        column = optional_text("column", column) or sdef.time_columns[0]
        try:
            return self.timelines(storage)[(period_, column)]
        except KeyError:
            raise InvalidInput(
                f"storage {storage!r} has no {period_.name} timeline for column {column!r}"
            ) from None

    def rebuild(self, storage: str) -> dict[TimelineKey, PartitionTimeline]:
        """Recompute every timeline of a storage from its partition rows and store them."""
        return catalog_repair.rebuild(self, self.get_storage(storage))[1]

    def reconcile(self, storage: str, *, drop_corrupt: bool = False) -> ReconcileReport:
        """Rebuild from the rows, report what the stored timelines got wrong, finish drops;
        damaged rows are reported and kept (deleted with ``drop_corrupt``)."""
        return catalog_repair.reconcile(self, self.get_storage(storage),
                                        drop_corrupt=drop_corrupt is True)

    def migrate_timeline(self, storage: str, period: UpdatePeriod | str, column: str | None,
                         to: str) -> PartitionTimeline:
        """Switch one timeline's implementation without reading the partitions."""
        optional_text("column", column)
        require_text("to", to)
        return catalog_repair.migrate_timeline(self, self.get_storage(storage), period, column, to)

    def cover(
        self,
        fact: str,
        start: dt.datetime | str,
        end: dt.datetime | str,
        *,
        time_column: str | None = None,
        periods: Iterable[UpdatePeriod | str] | None = None,
        storages: Iterable[str] | None = None,
        align: str | None = None,
        verify: bool = True,
        fresh_only: bool = False,
        where: str | None = None,
    ) -> Cover:
        """The fewest existing partitions whose union is ``[start, end)``, or what is missing.

        The convenient spelling of :class:`~airflow_partitions.cover.CoverRequest`: the
        arguments mean what its fields mean. With ``verify`` (the default) every chosen
        partition is checked against its rows in one batched read first; see
        :mod:`airflow_partitions.catalog.covers.verified`. With ``fresh_only`` stale partitions
        (:meth:`stale`) are not used; the cover falls back to fresh ones and says which it
        skipped (``Cover.skipped``). ``where`` picks the required slices (docs/dimensions.md).
        """
        verify = require_flag("verify", verify)
        if isinstance(periods, str) or isinstance(storages, str):  # docs/catalog.md
            raise WrongType(f"periods and storages must be lists of names, not the one string "
                            f"{shown(periods if isinstance(periods, str) else storages)}")
        request = CoverRequest.of(
            fact, start, end, time_column=time_column, periods=periods, storages=storages,
            align=align, fresh_only=require_flag("fresh_only", fresh_only), where=where)
        return verified_cover(self, request, verify=verify).cover

    def stale(
        self, fact: str, start: dt.datetime | str | None = None,
        end: dt.datetime | str | None = None, *, time_column: str | None = None,
    ) -> list[StalePartition]:
        """Derived partitions of ``fact``'s storages (overlapping ``[start, end)`` if given)
        whose recorded inputs were restated, dropped or are stale themselves, transitively;
        see :mod:`airflow_partitions.catalog.lineage.staleness`."""
        return find_stale(self, fact, start, end, time_column=time_column)

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
        require_text("filter", filter)
        optional_int("max_parts", max_parts)
        require_flag("allow_unknown", allow_unknown)
        return filter_query.get_partitions_by_filter(
            self, storage, filter, period, max_parts, stats=stats, allow_unknown=allow_unknown
        )

    def explain(self, storage: str, filter: str, period: UpdatePeriod | str | None = None,
                *, allow_unknown: bool = False) -> Explain:
        """How a filter is read: scans with server filters, gets, the residual."""
        require_text("filter", filter)
        return filter_query.explain(self, storage, filter, period, allow_unknown=allow_unknown)

    def timeline_properties(self, storage: str, period: UpdatePeriod | str,
                            column: str | None = None) -> dict[str, str]:
        """Lens-compatible properties of one timeline, whatever its storage layout."""
        return self.timeline(storage, period, column).to_properties()

    def import_lens_timelines(self, storage: str, parameters: Mapping[str, object], *,
                              dry_run: bool = False) -> lens_table.LensImportReport:
        """Store a Lens table's timelines, checked whole first (see :mod:`.lens_table`)."""
        return lens_table.import_lens_timelines(self, self.get_storage(storage), parameters,
                                                dry_run=dry_run)

    def lens_parameters(self, storage: str, warnings: list[str] | None = None
                        ) -> tuple[dict[str, str], list[TimelineKey]]:
        """The Lens table parameters of a storage's timelines, and the WEEKLY ones left out;
        ``warnings`` receives a line per timeline that keeps DST offsets (else it is logged)."""
        return lens_table.export_lens_parameters(self, self.get_storage(storage), warnings)


__all__ = ["AlreadyExists", "Catalog", "parse_columns"]
