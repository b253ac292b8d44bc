"""Turn ``col=value`` words, ``--range A B`` and ``--file`` lines into validated partitions.

Everything here runs before the first write, so a bad line or value fails the whole command
with a message naming it, and nothing is half-registered.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from airflow_partitions.catalog.facade import Catalog
from airflow_partitions.catalog.model import StorageDef, make_spec, range_values
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


def items_from_range(
    sdef: StorageDef, period: UpdatePeriod, begin: str, end: str, column: str | None,
    others: dict[str, str],
) -> list[Item]:
    """Every partition of ``period`` in ``[begin, end)``, each with the other given values."""
    column = column or sdef.time_columns[0]
    values = range_values(sdef, period, begin, end, column, option="--column")
    if column in others:
        raise UsageError(f"{column}={others[column]} conflicts with --range, which sets {column}")
    if not values:
        raise UsageError(f"--range {begin} {end} is empty: [{begin}, {end}) holds no partition")
    return [Item({**others, column: value}, "") for value in values]


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
              batch: Sequence[dict[str, str]]) -> str | None:
    """The first partition registered at another location, for adds split into chunks.

    The catalog checks conflicts per ``register`` call, so a bulk add written in chunks checks the
    whole batch first (one scan of the period) rather than failing after some chunks were written.
    """
    wanted = {tuple(v[c] for c in sdef.column_names): v for v in batch}
    for part in catalog.list_partitions(sdef.name, period):
        key = tuple(part.values[c] for c in sdef.column_names)
        if key in wanted:
            spec, _ = make_spec(sdef, period, wanted[key])
            location = catalog.location_of(sdef, spec)
            if location != part.location:
                return f"{part.values} at {part.location!r}"
    return None
