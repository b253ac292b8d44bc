"""A Lens table's timeline parameters in and out of the catalog (``timeline import|export``).

Import brings a Lens storage table's timelines across without scanning Hive's partitions:
the whole input is checked first (:func:`airflow_partitions.timelines.read_lens_table`), and
nothing is written unless all of it is sound. Each timeline is then stored through the
rebuild protocol (check-and-put against the bytes read, retried on a lost race) in the
implementation Lens named, holding Lens's partitions **plus** those of the live partition
rows: the rows stay the truth, so an import never hides a registered partition.

What happens next to a Lens partition that has no row here (the report counts them):
a cover that picks it verifies it against the rows, finds none, and withdraws it from the
timeline (docs/design.md, invariant 2), and ``reconcile`` rebuilds from the rows and removes
every one of them (reporting them as over-reported). Register the partitions (``partition add
--file``), before or after the import, for them to stay.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from airflow_partitions.catalog.cache import TimelineKey, loaded_timelines
from airflow_partitions.catalog.definitions.tables import StorageDef
from airflow_partitions.catalog.repair import rebuild, seeded, timelines_from_rows
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    OrdinalRange,
    PartitionTimeline,
    difference_ranges,
    lens_table_parameters,
    read_lens_table,
    runs,
)

if TYPE_CHECKING:
    from airflow_partitions.catalog.core import CatalogCore

log = logging.getLogger(__name__)


class LensInputError(InvalidInput):
    """The Lens parameters given to import are not a JSON object of table parameters."""


# "class" is a keyword: the functional form.
ImportedTimelineJson = TypedDict("ImportedTimelineJson", {
    "period": str,
    "column": str,
    "class": str,
    "lens_partitions": int,
    "first": str | None,
    "latest": str | None,
    "stored_partitions": int,
    "without_rows": int,
    "without_rows_ranges": list[list[str]],
    "rows_not_in_lens": int,
    "rows_not_in_lens_ranges": list[list[str]],
})
"""One imported timeline in ``timeline import --json``."""


class SkippedTimelineJson(TypedDict):
    """A timeline an import left to the rows (``WEEKLY``)."""

    period: str
    column: str


class LensImportReportJson(TypedDict):
    """``timeline import --json``."""

    storage: str
    dry_run: bool
    timelines: list[ImportedTimelineJson]
    without_rows: int
    skipped: list[SkippedTimelineJson]
    ignored_keys: list[str]
    other_parameters: int
    ambiguous: list[str]


@dataclass
class ImportedTimeline:
    """One timeline as Lens listed it, as stored, and how it compares with the rows."""

    period: UpdatePeriod
    column: str
    tz: str
    lens: PartitionTimeline
    stored: PartitionTimeline
    without_rows: list[OrdinalRange]  # Lens's partitions no live row backs
    rows_not_in_lens: list[OrdinalRange]  # live rows Lens did not list (kept)

    def ranges_json(self, ranges: list[OrdinalRange]) -> list[list[str]]:
        return [[self.period.format_ordinal(b, self.tz), self.period.format_ordinal(e, self.tz)]
                for b, e in ranges]

    def to_json(self) -> ImportedTimelineJson:
        first, latest = self.lens.first(), self.lens.latest()
        return {
            "period": self.period.name,
            "column": self.column,
            "class": self.lens.kind,
            "lens_partitions": len(self.lens),
            "first": first.value if first else None,
            "latest": latest.value if latest else None,
            "stored_partitions": len(self.stored),
            "without_rows": sum(e - b for b, e in self.without_rows),
            "without_rows_ranges": self.ranges_json(self.without_rows),
            "rows_not_in_lens": sum(e - b for b, e in self.rows_not_in_lens),
            "rows_not_in_lens_ranges": self.ranges_json(self.rows_not_in_lens),
        }


@dataclass
class LensImportReport:
    """What an import read, stored (nothing with ``dry_run``) and left aside."""

    storage: str
    dry_run: bool
    timelines: list[ImportedTimeline]
    skipped: list[TimelineKey] = field(default_factory=list)  # WEEKLY: rows only
    ignored: list[str] = field(default_factory=list)  # other implementations' keys
    others: int = 0  # parameters outside the timeline cache
    ambiguous: list[str] = field(default_factory=list)  # fall-back values and their reading

    @property
    def without_rows(self) -> int:
        """How many imported partitions no registered row backs (covers withdraw them)."""
        return sum(e - b for t in self.timelines for b, e in t.without_rows)

    def to_json(self) -> LensImportReportJson:
        return {
            "storage": self.storage,
            "dry_run": self.dry_run,
            "timelines": [t.to_json() for t in self.timelines],
            "without_rows": self.without_rows,
            "skipped": [{"period": p.name, "column": c} for p, c in self.skipped],
            "ignored_keys": self.ignored,
            "other_parameters": self.others,
            "ambiguous": self.ambiguous,
        }


def parse_parameters(text: str, source: str) -> dict[str, object]:
    """A JSON object of table parameters (``{"key": "value", ...}``) from ``source``."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LensInputError(f"{source} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise LensInputError(f"{source} holds a JSON {type(data).__name__}, not an object of "
                             "table parameters ({\"key\": \"value\", ...})")
    return data


def import_lens_timelines(catalog: CatalogCore, sdef: StorageDef, params: Mapping[str, object],
                          *, dry_run: bool = False) -> LensImportReport:
    """Check every timeline in ``params``, then store them all (see the module doc)."""
    wanted = [(p, c) for p in sdef.periods for c in sdef.time_columns]
    table = read_lens_table(params, wanted, sdef.tz)  # raises before anything is written
    if dry_run:
        found = timelines_from_rows(catalog, sdef).found
        stored = {key: seeded(sdef, key, lens.kind, found[key], lens)
                  for key, lens in table.timelines.items()}
    else:
        result = rebuild(catalog, sdef, seed=table.timelines)
        found, stored = result.rows.found, result.after
    imported = []
    for key, lens in table.timelines.items():
        rows = runs(sorted(found[key]))
        imported.append(ImportedTimeline(
            key[0], key[1], sdef.tz, lens, stored[key],
            without_rows=difference_ranges(lens.ordinal_ranges(), rows),
            rows_not_in_lens=difference_ranges(rows, lens.ordinal_ranges()),
        ))
    return LensImportReport(sdef.name, dry_run, imported, list(table.skipped),
                            list(table.ignored), table.others, list(table.ambiguous))


def export_lens_parameters(catalog: CatalogCore, sdef: StorageDef,
                           warnings: list[str] | None = None,
                           ) -> tuple[dict[str, str], list[TimelineKey]]:
    """The Lens table parameters of a storage's timelines, and the WEEKLY ones left out.

    A timeline that keeps DST offsets (no form without them names exactly its partitions for
    Lens, docs/timelines.md) gets a line in ``warnings``, or, when the caller collects none, a
    WARNING log line with the storage's name: Lens cannot parse the offsets and rebuilds from
    its partitions.
    """
    said: list[str] = []
    out = lens_table_parameters(loaded_timelines(catalog.fact_state(sdef.fact), sdef.name),
                                said)
    if warnings is not None:
        warnings.extend(said)
    else:
        for line in said:
            log.warning("storage %r: %s", sdef.name, line)
    return out
