"""What a coverage asset names: a fact, a window period, which slices, one key per window or per
slice of a window; its Airflow URI and name, and its partition keys.

Why a URI of our own: Airflow identifies an asset by name and URI, and the emitter (which sees
only the assets Airflow lists) must rebuild the whole definition from them. The ``x-`` scheme
is one Airflow keeps as written (it normalises no part of it).

Keys are what Airflow's temporal mappers parse (``%Y-%m-%dT%H:%M:%S``): the window's start as
wall time in the fact's zone. The one wall time that names two windows (the repeated hour of
an autumn DST change, for windows shorter than a day) carries its UTC offset,
``2015-10-25T02:00:00+01:00``; every other key has none. With ``per_slice`` the slice's values
come first, in the order of the columns' names, then the time: ``eu|2024-01-01T00:00:00``.
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
from dataclasses import dataclass
from typing import Final

import pendulum

from airflow_partitions.catalog import Catalog, UnknownFact, select_slices
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod, zone

SCHEME: Final = "x-airflow-partitions"
PREFIX: Final = f"{SCHEME}://coverage/"
KEY_FORMAT: Final = "%Y-%m-%dT%H:%M:%S"
SEPARATOR: Final = "|"

#: A slice: sorted (column, value) pairs; ``()`` for a window over every required slice.
Slice = tuple[tuple[str, str], ...]


class InvalidCoverageAsset(InvalidInput):
    """A coverage asset names an unknown fact, or a period the fact's storages cannot make."""


class InvalidWindowKey(InvalidInput):
    """A partition key that is not a window of the asset that emitted it."""


@dataclass(frozen=True)
class CoverageAssetSpec:
    """One coverage asset: windows of ``period`` over ``fact``, restricted by ``where``.

    >>> spec = CoverageAssetSpec("events", UpdatePeriod.DAILY, per_slice=True)
    >>> spec.uri
    'x-airflow-partitions://coverage/events/DAILY?per_slice=true'
    >>> CoverageAssetSpec.from_uri(spec.uri) == spec
    True
    """

    fact: str
    period: UpdatePeriod
    where: str | None = None
    per_slice: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.fact, str) or not self.fact.strip():
            raise InvalidCoverageAsset(f"a coverage asset needs a fact name, not {self.fact!r}")
        if self.where is not None and not self.where.strip():
            object.__setattr__(self, "where", None)

    @classmethod
    def of(cls, fact: str, period: UpdatePeriod | str, where: str | None = None,
           per_slice: bool = False) -> CoverageAssetSpec:
        """From loose input; a period name that is no period is :class:`InvalidCoverageAsset`."""
        try:
            period_ = UpdatePeriod.of(period)
        except (ValueError, KeyError, InvalidInput) as exc:
            raise InvalidCoverageAsset(
                f"coverage asset of {fact!r}: {period!r} is not an update period "
                f"({', '.join(p.name for p in UpdatePeriod)})") from exc
        if not isinstance(per_slice, bool):
            raise InvalidCoverageAsset(f"per_slice must be True or False, not {per_slice!r}")
        if where is not None and not isinstance(where, str):
            raise InvalidCoverageAsset(f"where must be a filter text, not {where!r}")
        return cls(fact, period_, where, per_slice)

    @property
    def uri(self) -> str:
        query = []
        if self.per_slice:
            query.append(("per_slice", "true"))
        if self.where is not None:
            query.append(("where", self.where))
        tail = f"?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}" if query else ""
        return f"{PREFIX}{urllib.parse.quote(self.fact, safe='')}/{self.period.name}{tail}"

    @property
    def name(self) -> str:
        """The Airflow asset name, readable in Airflow's asset list."""
        name = f"{self.fact} {self.period.name.lower()} coverage"
        if self.per_slice:
            name += " per slice"
        return f"{name} where {self.where}" if self.where is not None else name

    @classmethod
    def from_uri(cls, uri: str) -> CoverageAssetSpec | None:
        """The asset a URI names; None for a URI that is not a coverage asset's."""
        if not uri.startswith(PREFIX):
            return None
        parts = urllib.parse.urlsplit(uri)
        path = parts.path.strip("/").split("/")
        if parts.netloc != "coverage" or len(path) != 2:
            return None
        query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        try:
            return cls.of(urllib.parse.unquote(path[0]), path[1], query.get("where"),
                          query.get("per_slice") == "true")
        except InvalidInput:
            return None

    def check(self, catalog: Catalog) -> str:
        """The fact's zone, after checking that some storage period nests in the window
        period (:class:`InvalidCoverageAsset` names the fact's periods otherwise) and that
        ``where`` names only declared dimensions (``NotADimension``). Cost: the fact's and
        its storages' definitions (cached)."""
        try:
            fdef = catalog.get_fact(self.fact)
        except UnknownFact as exc:
            known = ", ".join(f.name for f in catalog.list_facts()) or "none"
            raise InvalidCoverageAsset(
                f"coverage asset: the catalog has no fact {self.fact!r} (facts: {known})"
            ) from exc
        storages = catalog.list_storages(self.fact)
        periods = sorted({p for s in storages for p in s.periods}, key=lambda p: p.approx_seconds)
        if not any(p.nests_in(self.period) for p in periods):
            have = ", ".join(p.name for p in periods) or "no storage"
            raise InvalidCoverageAsset(
                f"coverage asset: fact {self.fact!r} cannot make {self.period.name} windows "
                f"from its periods ({have}); pick a period they nest in")
        if self.where is not None:  # parsed, and only dimension columns: NotADimension
            dimensions = {d.column: d for s in storages for d in s.dimensions}
            select_slices([], list(dimensions.values()), self.where)
        return fdef.tz

    def key(self, start: dt.datetime, tz: str, slice_: Slice = ()) -> str:
        """The partition key of the window starting at ``start`` (of ``slice_``)."""
        local = pendulum.instance(start).in_timezone(tz)
        text = local.strftime(KEY_FORMAT)
        if self.period.spec.fixed and _is_repeated(local, tz):
            text += local.strftime("%z")[:3] + ":" + local.strftime("%z")[3:]
        if not self.per_slice:
            return text
        return SEPARATOR.join([*(value for _, value in slice_), text])

    def window_of(self, key: str, tz: str, columns: tuple[str, ...] = ()
                  ) -> tuple[pendulum.DateTime, pendulum.DateTime, Slice]:
        """The window ``[start, end)`` and slice a key names; ``columns`` are the slice's
        columns in key order (the sorted dimension columns). :class:`InvalidWindowKey` when
        the key is not one this asset emits."""
        parts = key.split(SEPARATOR)
        if (self.per_slice and len(parts) != len(columns) + 1) or (not self.per_slice and len(
                parts) != 1):
            raise InvalidWindowKey(f"partition key {key!r} is not a window key of {self.name}")
        text = parts[-1]
        try:
            if len(text) > 19:
                start = pendulum.parse(text)
            else:
                naive = dt.datetime.strptime(text, KEY_FORMAT)
                start = pendulum.instance(naive.replace(tzinfo=zone(tz)))
        except ValueError as exc:
            raise InvalidWindowKey(f"partition key {key!r}: {text!r} is not "
                                   f"{KEY_FORMAT} wall time in {tz}") from exc
        assert isinstance(start, pendulum.DateTime)
        if not self.period.is_aligned(start, tz):
            raise InvalidWindowKey(f"partition key {key!r} does not start a {self.period.name}"
                                   f" window in {tz}")
        slice_ = tuple(zip(columns, parts[:-1], strict=True)) if self.per_slice else ()
        return start, self.period.next(start, tz), slice_


def _is_repeated(local: pendulum.DateTime, tz: str) -> bool:
    """Whether the wall time of ``local`` occurs twice in ``tz`` (an autumn DST change)."""
    naive = local.naive()
    zone_ = zone(tz)
    first = naive.replace(tzinfo=zone_, fold=0).utcoffset()
    second = naive.replace(tzinfo=zone_, fold=1).utcoffset()
    return first != second
