"""Turn ``col=value`` words, ``--range A B`` and ``--file`` lines into validated partitions.

Everything here runs before the first write, so a bad line or value fails the whole command
with a message naming it, and nothing is half-registered.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from airflow_partitions.catalog import Catalog, StorageDef, make_spec, partition_range
from airflow_partitions.cli.base import UsageError
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod


@dataclass(frozen=True)
class Item:
    """One requested partition and where it came from (for error messages)."""

    values: dict[str, str]
    origin: str  # "" for the command line, "line N" for a file


def parse_pairs(words: Iterable[str], origin: str = "") -> dict[str, str]:
    """``["dt=2015-01-30", "region=us"]`` -> a mapping; a column given twice is an error."""
    where = f"{origin}: " if origin else ""
    values: dict[str, str] = {}
    for word in words:
        column, sep, value = word.partition("=")
        column = column.strip()
        if not sep or not column:
            raise UsageError(f"{where}expected COLUMN=VALUE, got {word!r}")
        if column in values:
            raise UsageError(f"{where}column {column!r} is given twice")
        values[column] = value
    return values


def read_lines(path: str) -> list[str]:
    """The text of ``--file`` (``-`` is stdin); an unreadable file is bad input."""
    if path == "-":
        return sys.stdin.read().splitlines()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read --file {path!r}: {exc}") from None


def items_from_lines(lines: Sequence[str]) -> list[Item]:
    """One partition per ``col=value ...`` line, shell-quoted; blanks and ``#`` comments skip."""
    items = []
    for number, line in enumerate(lines, start=1):
        origin = f"line {number}"
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise UsageError(f"{origin}: {exc}: {line.strip()!r}") from None
        if words:
            items.append(Item(parse_pairs(words, origin), origin))
    if not items:
        raise UsageError("the --file holds no partitions (only blank or comment lines)")
    return items


@dataclass(frozen=True)
class Selection:
    """The partitions ``partition add|drop`` writes: their count, known before any is listed,
    and the partitions themselves, validated, in batches of bounded size."""

    total: int
    batches: Callable[[int], Iterator[list[dict[str, str]]]]
    #: Whether a registered partition's values are among those selected (canonical text).
    selects: Callable[[Mapping[str, str]], bool]


def listed_selection(batch: list[dict[str, str]], sdef: StorageDef) -> Selection:
    """Partitions given one by one (words or ``--file``), already validated and distinct."""
    keys = {tuple(values[c] for c in sdef.column_names) for values in batch}

    def batches(size: int) -> Iterator[list[dict[str, str]]]:
        for i in range(0, len(batch), size):
            yield batch[i : i + size]

    return Selection(len(batch), batches,
                     lambda values: tuple(values[c] for c in sdef.column_names) in keys)


def range_selection(
    catalog: Catalog, sdef: StorageDef, period: UpdatePeriod, bounds: tuple[str, str],
    column: str | None, others: dict[str, str], *, limit: int, locations: bool,
) -> Selection:
    """Every partition of ``period`` in ``[begin, end)``, each with the other given values.

    Counted first (refused above ``limit``), then listed a batch at a time as it is written, so
    a range of millions never sits in memory. Every partition differs from the first only in its
    time value, which the calendar produces canonically, so validating the first and the last in
    full before anything is written is validating them all.
    """
    begin, end = bounds
    column = column or sdef.time_columns[0]
    span = partition_range(sdef, period, begin, end, column, option="--column", limit=limit,
                           raise_limit="pass --max-partitions N to allow more, or split the "
                                       "range")
    if column in others:
        raise UsageError(f"{column}={others[column]} conflicts with --range, which sets {column}")
    if span.is_empty():
        raise UsageError(f"--range {begin} {end} is empty: [{begin}, {end}) holds no partition")
    last = span.end.previous()
    [first, _] = validate(catalog, sdef, period, [Item({**others, column: span.begin.value}, ""),
                                                  Item({**others, column: last.value}, "")],
                          locations=locations)
    fixed = {c: v for c, v in first.items() if c != column}

    def batches(size: int) -> Iterator[list[dict[str, str]]]:
        for start in range(span.begin.ordinal, span.end.ordinal, size):
            stop = min(start + size, span.end.ordinal)
            yield [{**fixed, column: period.format_ordinal(o, sdef.tz)}
                   for o in range(start, stop)]

    def selects(values: Mapping[str, str]) -> bool:
        if any(values.get(c) != v for c, v in fixed.items()):
            return False
        try:
            return span.begin.ordinal <= period.parse_ordinal(values[column], sdef.tz) \
                < span.end.ordinal
        except InvalidInput:
            return False

    return Selection(len(span), batches, selects)


def validate(catalog: Catalog, sdef: StorageDef, period: UpdatePeriod, items: Sequence[Item],
             *, locations: bool) -> list[dict[str, str]]:
    """Check every item as the catalog will (and its location when adding), before any write."""
    out = []
    for item in items:
        try:
            spec, _ = make_spec(sdef, period, item.values)
            if locations:
                catalog.location_of(sdef, spec)
        except InvalidInput as exc:
            if not item.origin:
                raise
            raise UsageError(f"{item.origin}: {exc}") from exc
        out.append(spec.value_map)
    return out


def conflicts(catalog: Catalog, sdef: StorageDef, period: UpdatePeriod,
              selection: Selection) -> str | None:
    """The first selected partition registered at another location, for adds split into chunks.

    The catalog checks conflicts per ``register`` call, so a bulk add written in chunks checks the
    whole selection first (one scan of the period, in constant memory) rather than failing after
    some chunks were written.
    """
    for part in catalog.list_partitions(sdef.name, period):
        if selection.selects(part.values):
            spec, _ = make_spec(sdef, period, part.values)
            location = catalog.location_of(sdef, spec)
            if location != part.location:
                return f"{part.values} at {part.location!r}"
    return None
