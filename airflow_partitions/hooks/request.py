"""What the sensor, trigger and operators ask the catalog: a cover request, and its short text.

Pure (no ``airflow`` import): the sensor, the trigger and the Spark operator share it, and the
trigger serialises it as plain JSON.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pendulum

from airflow_partitions.catalog.facade import Catalog
from airflow_partitions.catalog.verified_cover import VerifiedCover
from airflow_partitions.cover.compute import Cover
from airflow_partitions.cover.model import format_instant
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod

#: How many missing ranges one log line shows.
MISSING_SHOWN = 3


def to_instant(value: Any, what: str) -> pendulum.DateTime:
    """An aware instant from a datetime or a rendered template (ISO-8601 text with an offset).

    ``{{ data_interval_start }}`` renders as ``2024-01-01 00:00:00+00:00``, which parses here.
    A naive value is refused: every instant in the API is time-zone aware.
    """
    if isinstance(value, str):
        text = value.strip()
        if text in ("", "None"):
            raise InvalidInput(f"{what} is empty (the run has no data interval?): pass it")
        try:
            parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"{what} {value!r} is not an ISO-8601 instant") from None
    elif isinstance(value, dt.datetime):
        parsed = value
    else:
        raise InvalidInput(f"{what} must be a datetime or ISO-8601 text, not {value!r}")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise InvalidInput(f"{what} {value!r} has no UTC offset; give one (e.g. +00:00)")
    return pendulum.instance(parsed)


def _names(values: Iterable[Any] | str | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    return [str(v).strip() for v in values]


@dataclass(frozen=True)
class CoverRequest:
    """``catalog.cover(fact, start, end, ...)`` as data."""

    fact: str
    start: pendulum.DateTime
    end: pendulum.DateTime
    time_column: str | None = None
    periods: tuple[str, ...] | None = None
    storages: tuple[str, ...] | None = None
    align: str | None = None

    @classmethod
    def of(
        cls,
        fact: str,
        start: Any,
        end: Any,
        *,
        time_column: str | None = None,
        periods: Iterable[UpdatePeriod | str] | str | None = None,
        storages: Iterable[str] | str | None = None,
        align: str | None = None,
    ) -> CoverRequest:
        """Validate rendered operator arguments (strings or lists, datetimes or ISO text)."""
        if not isinstance(fact, str) or not fact.strip():
            raise InvalidInput(f"fact must be a non-empty string, not {fact!r}")
        period_names = _names(
            [p.name if isinstance(p, UpdatePeriod) else p for p in periods]
            if periods is not None and not isinstance(periods, str) else periods
        )
        start_, end_ = to_instant(start, "start"), to_instant(end, "end")
        if end_ <= start_:
            raise InvalidInput(
                f"the range [{start_.isoformat()}, {end_.isoformat()}) is empty or reversed; a "
                "manual run's data interval is often empty: pass start= and end="
            )
        return cls(
            fact=fact.strip(),
            start=start_,
            end=end_,
            time_column=time_column or None,
            periods=tuple(UpdatePeriod.of(p).name for p in period_names)
            if period_names is not None else None,
            storages=tuple(_names(storages) or ()) if storages is not None else None,
            align=align or None,
        )

    def _kwargs(self) -> dict[str, Any]:
        return {
            "time_column": self.time_column,
            "periods": list(self.periods) if self.periods is not None else None,
            "storages": list(self.storages) if self.storages is not None else None,
            "align": self.align,
        }

    def cover(self, catalog: Catalog, *, verify: bool = True) -> Cover:
        return catalog.cover(self.fact, self.start, self.end, verify=verify, **self._kwargs())

    def cover_with_partitions(self, catalog: Catalog) -> VerifiedCover:
        return catalog.cover_with_partitions(
            self.fact, self.start, self.end, verify=True, **self._kwargs()
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": self.fact,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            **self._kwargs(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CoverRequest:
        return cls.of(
            data["fact"], data["start"], data["end"], time_column=data.get("time_column"),
            periods=data.get("periods"), storages=data.get("storages"), align=data.get("align"),
        )


def missing_text(cover: Cover, shown: int = MISSING_SHOWN) -> str:
    """``missing A; missing B; ... (+2 more)``, the first few missing ranges."""
    parts = [m.describe() for m in cover.missing[:shown]]
    hidden = len(cover.missing) - shown
    if hidden > 0:
        parts.append(f"... (+{hidden} more missing ranges)")
    return "; ".join(parts) if parts else "nothing missing"


def status_line(cover: Cover) -> str:
    """One compact line: the fact and range, the fraction covered, what is missing."""
    head = (
        f"{cover.fact} [{format_instant(cover.start)}, {format_instant(cover.end, cover.start)}): "
        f"{cover.covered_fraction:.1%} covered by {len(cover)} partition(s)"
    )
    if cover.coverable:
        return head + ", coverable"
    return f"{head}; {missing_text(cover)}"


def missing_list(cover: Cover | None, shown: int = 20) -> list[str]:
    """The missing ranges as short strings (for XCom-free messages and trigger events)."""
    if cover is None:
        return []
    out = [m.describe() for m in cover.missing[:shown]]
    if len(cover.missing) > shown:
        out.append(f"... (+{len(cover.missing) - shown} more missing ranges)")
    return out


class CoverageWatch:
    """The cover of one request, recomputed only when the fact's generation moves.

    :meth:`check` costs one round trip when the cache is warm and nothing changed (the
    generation read of ``catalog.fact_state``); otherwise it computes one verified cover.
    """

    def __init__(self, request: CoverRequest) -> None:
        self.request = request
        self.generation: int | None = None
        self.cover: Cover | None = None

    def check(self, catalog: Catalog) -> Cover:
        generation = catalog.fact_state(self.request.fact).generation
        if self.cover is None or generation != self.generation:
            self.cover = self.request.cover(catalog, verify=True)
            self.generation = generation
        return self.cover
