"""What a cover lacks: the missing ranges and the absent partitions that would fill them.

Why apart from :mod:`.result`: the missing side of an answer has grown its own vocabulary with
dimensions (a per-slice entry for each slice that lacks partitions, docs/dimensions.md), and
its text must stay short for people however many slices lack something, while the JSON keeps
every entry. :meth:`MissingRange.describe` names at most :data:`SLICES_SHOWN` slices per
range; :mod:`.slices.summary` sums what each slice lacks over a whole cover.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, NotRequired, TypedDict, cast

import pendulum

from airflow_partitions.cover.instant_text import abbreviate, format_instant
from airflow_partitions.cover.json_fields import iso, json_field, parse_instant
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod

#: How many runs of absent partitions a :class:`NeededPartitions` keeps per period.
MAX_NEEDED_RUNS: Final = 3
#: How many per-slice entries a missing range's text names before ``and N more slices``.
SLICES_SHOWN: Final = 3


class ValueRunJson(TypedDict):
    """A run of absent partitions in JSON: first and last value (inclusive), how many."""

    first: str
    last: str
    count: int


class NeededJson(TypedDict):
    """:meth:`NeededPartitions.to_json`: ``dimensions`` only for a slice's entry."""

    period: str
    total: int
    runs: list[ValueRunJson]
    dimensions: NotRequired[dict[str, str]]


class MissingJson(TypedDict):
    """:meth:`MissingRange.to_json`: ISO instants and what would fill the range."""

    start: str
    end: str
    needed: list[NeededJson]


@dataclass(frozen=True)
class ValueRun:
    """Consecutive absent partitions of one period, by value (``last`` inclusive)."""

    first: str
    last: str
    count: int

    def describe(self) -> str:
        """``2015-02-10-12..17 (6)``, or just the value for a single partition."""
        text = abbreviate(self.first, self.last)
        return text if self.count == 1 else f"{text} ({self.count})"


@dataclass(frozen=True)
class NeededPartitions:
    """The absent partitions of one period that could have filled (part of) a missing range.

    ``runs`` holds at most :data:`MAX_NEEDED_RUNS` runs in time order; ``total`` counts all of
    them, so the text stays short however long the gap is.
    """

    period: UpdatePeriod
    runs: tuple[ValueRun, ...]
    total: int
    #: The slice these partitions lack (``(("region", "eu"),)``; docs/dimensions.md), or ().
    dimensions: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        """``no HOURLY 2015-02-10-12..17 (6)``, ``no HOURLY 2015-02-10-12 for region=eu``."""
        shown = ", ".join(r.describe() for r in self.runs)
        listed = sum(r.count for r in self.runs)
        more = f", ... ({self.total} in all)" if listed < self.total else ""
        of = (" for " + ",".join(f"{c}={v}" for c, v in self.dimensions)
              if self.dimensions else "")
        return f"no {self.period.name} {shown}{more}{of}"

    def to_json(self) -> NeededJson:
        """``{"period", "total", "runs": [...]}`` (``"dimensions": {...}`` for a slice)."""
        out: NeededJson = {
            "period": self.period.name,
            "total": self.total,
            "runs": [{"first": r.first, "last": r.last, "count": r.count} for r in self.runs],
        }
        if self.dimensions:
            out["dimensions"] = dict(self.dimensions)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, object]) -> NeededPartitions:
        """Read :meth:`to_json` back."""
        runs = tuple(
            ValueRun(str(r["first"]), str(r["last"]), int(r["count"]))
            for r in cast("Iterable[ValueRunJson]", json_field(d, "runs", "a needed entry"))
        )
        dims = d.get("dimensions") or {}
        if not isinstance(dims, Mapping):
            raise InvalidInput(f"cover JSON: needed dimensions must be an object, not {dims!r}")
        period = UpdatePeriod.of(cast(str, json_field(d, "period", "a needed entry")))
        return cls(period, runs, int(cast(int, d["total"])),
                   tuple(sorted((str(c), str(v)) for c, v in dims.items())))


@dataclass(frozen=True)
class MissingRange:
    """A maximal sub-range ``[start, end)`` that the chosen cover leaves uncovered.

    ``needed`` lists, finest period first, the absent partitions that lie inside the requested
    range and intersect this one: registering them is what would fill it.
    """

    start: pendulum.DateTime
    end: pendulum.DateTime
    needed: tuple[NeededPartitions, ...] = ()

    @property
    def duration(self) -> dt.timedelta:
        """The missing length."""
        return self.end - self.start

    def describe(self, slices_shown: int = SLICES_SHOWN) -> str:
        """``missing 2015-02-10T12:00/13:00: no HOURLY 2015-02-10-12, no DAILY 2015-02-10``.

        Per-slice entries (``no HOURLY 2015-02-10-12 for region=eu``) are named for at most
        ``slices_shown`` slices, then ``and N more slices``: a range a thousand regions lack
        stays one readable line (the JSON lists every entry).
        """
        span = f"{format_instant(self.start)}/{format_instant(self.end, self.start)}"
        if not self.needed:
            return f"missing {span}: no partition fits without overlapping the cover"
        shown: list[NeededPartitions] = []
        named: set[tuple[tuple[str, str], ...]] = set()
        hidden: set[tuple[tuple[str, str], ...]] = set()
        for n in self.needed:
            if n.dimensions and n.dimensions not in named:
                if len(named) >= slices_shown:
                    hidden.add(n.dimensions)
                    continue
                named.add(n.dimensions)
            shown.append(n)
        more = f" and {len(hidden)} more slice{'s' if len(hidden) != 1 else ''}" if hidden else ""
        return f"missing {span}: " + ", ".join(n.describe() for n in shown) + more

    @property
    def slices(self) -> tuple[tuple[tuple[str, str], ...], ...]:
        """The slices named by per-slice entries, in first-seen order (empty: time only)."""
        return tuple(dict.fromkeys(n.dimensions for n in self.needed if n.dimensions))

    def to_json(self) -> MissingJson:
        """``{"start", "end", "needed": [...]}``."""
        return {
            "start": iso(self.start),
            "end": iso(self.end),
            "needed": [n.to_json() for n in self.needed],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, object], tz: str | None = None) -> MissingRange:
        """Read :meth:`to_json` back."""
        return cls(
            parse_instant(json_field(d, "start", "a missing range"), "missing start", tz),
            parse_instant(json_field(d, "end", "a missing range"), "missing end", tz),
            tuple(NeededPartitions.from_json(n)
                  for n in cast("Iterable[Mapping[str, object]]", d.get("needed", ()))),
        )


__all__ = ["MAX_NEEDED_RUNS", "SLICES_SHOWN", "MissingJson", "MissingRange", "NeededJson",
           "NeededPartitions", "ValueRun", "ValueRunJson"]
