"""A slice cover's input made ready to solve: checked, aligned, and slices grouped in classes.

Why classes: a thousand regions whose timelines look alike should cost one solve, not a
thousand. Two required slices are in one class when they have the same (aligned) spans, are
held by the same shared sources (those holding two or more required slices) and have private
sources (holding only them) of the same storages, periods and fixed columns with equal
availability inside the range. ``docs/dimensions.md`` and :mod:`.slices.compute`
say why one layout per class loses nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from airflow_partitions.cover.clock import Clock
from airflow_partitions.cover.request import CoverRequest
from airflow_partitions.cover.slices.ordinal_sets import OrdinalSet
from airflow_partitions.cover.slices.result import (
    RequiredSlice,
    Slice,
    SliceSource,
    Span,
    slice_of,
    slice_text,
)
from airflow_partitions.cover.slices.solver import Option, SliceClass
from airflow_partitions.cover.sources import CoverSource, prepare
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod


@dataclass(frozen=True)
class SliceProblem:
    """Everything the solvers and the answer need, in integers."""

    clock: Clock
    chain: tuple[UpdatePeriod, ...]
    nested: bool
    start_us: int
    end_us: int
    fact: str | None
    storages: tuple[str, ...]
    slices: tuple[Slice, ...]
    sources: tuple[SliceSource, ...]
    options: tuple[Option, ...]
    classes: tuple[SliceClass, ...]
    #: Per class: its member slices (indices into ``slices``).
    members: tuple[tuple[int, ...], ...]
    #: Per class: every option holding it (shared and private).
    class_options: tuple[tuple[int, ...], ...]
    #: Per option: the source of each member slice (one entry for a shared option).
    option_sources: tuple[dict[int, int], ...]

    def source_for(self, option: int, member: int) -> SliceSource:
        """The source that gives ``member`` the partitions of ``option``."""
        chosen = self.option_sources[option]
        return self.sources[chosen[member] if member in chosen else chosen[-1]]

    def timeline_of(self, option: int) -> SliceSource:
        """A source standing for ``option`` (its availability is the option's)."""
        return self.sources[next(iter(self.option_sources[option].values()))]

    def availability(self, k: int) -> dict[UpdatePeriod, OrdinalSet]:
        """Per period, the partitions any source holding class ``k`` has inside the range."""
        out: dict[UpdatePeriod, OrdinalSet] = {}
        for i in self.class_options[k]:
            option = self.options[i]
            known = out.get(option.period)
            out[option.period] = option.ordinals if known is None else known.union(
                option.ordinals)
        return out


def build_problem(sources: Sequence[SliceSource], required: Sequence[RequiredSlice],
                  request: CoverRequest, *, tz: str) -> SliceProblem:
    """Check the input, align the bounds and spans, read each timeline once, form classes.

    Cost: one ``ordinal_ranges`` per usable source, O(slices x sources) to match them.
    """
    _check(sources, required)
    plain = [CoverSource(s.storage, s.priority, s.period, s.timeline) for s in sources]
    prepared = prepare(plain, request, tz=tz)
    periods, storages = request.period_set, request.storages
    usable = tuple(s for s in sources if (periods is None or s.period in periods)
                   and (storages is None or s.storage in storages))
    ranks = {name: i for i, name in enumerate(prepared.storages)}
    clock = Clock(prepared.tz)
    start, end = prepared.start_us, prepared.end_us
    wanted = [(r.slice, _align(clock, prepared.finest, r.spans, start, end)) for r in required]
    wanted = [(s, spans) for s, spans in wanted if spans]
    ordinals = [_ordinals(clock, s, start, end) for s in usable]
    holders = _holders(usable, [sl for sl, _ in wanted])
    count = [0] * len(usable)
    for found in holders:
        for i in found:
            count[i] += 1
    ClassKey = tuple[tuple[Span, ...], tuple[int, ...], tuple[object, ...]]
    keys: dict[ClassKey, list[int]] = {}
    for n, (_, spans) in enumerate(wanted):
        shared = tuple(i for i in holders[n] if count[i] > 1)
        private = tuple(sorted((_identity(usable[i]), ordinals[i].ranges)
                               for i in holders[n] if count[i] == 1))
        keys.setdefault((spans, shared, private), []).append(n)
    options: list[Option] = []
    option_sources: list[dict[int, int]] = []
    shared_option: dict[int, int] = {}
    classes: list[SliceClass] = []
    class_options: list[tuple[int, ...]] = []
    for k, ((spans, shared, _), members) in enumerate(keys.items()):
        mine = []
        for i in shared:
            if i not in shared_option:
                shared_option[i] = len(options)
                options.append(Option(len(options), usable[i].period,
                                      ranks[usable[i].storage], ordinals[i], frozenset(), True))
                option_sources.append({-1: i})
            index = shared_option[i]
            option = options[index]
            options[index] = Option(index, option.period, option.rank, option.ordinals,
                                    option.classes | {k}, True)
            mine.append(index)
        private_ids = []
        by_identity: dict[tuple[object, ...], dict[int, int]] = {}
        for n in members:
            for i in holders[n]:
                if count[i] == 1:
                    by_identity.setdefault(_identity(usable[i]), {})[n] = i
        for identity in sorted(by_identity):
            chosen = by_identity[identity]
            first = chosen[members[0]]
            private_ids.append(len(options))
            options.append(Option(len(options), usable[first].period,
                                  ranks[usable[first].storage], ordinals[first],
                                  frozenset({k}), False))
            option_sources.append(chosen)
        classes.append(SliceClass(k, len(members), spans, tuple(private_ids)))
        class_options.append(tuple(mine + private_ids))
    chain = tuple(sorted({s.period for s in usable}, reverse=True))
    nested = all(f.nests_in(c) for f, c in combinations(sorted(chain), 2))
    return SliceProblem(clock, chain, nested, start, end, request.fact, prepared.storages,
                        tuple(s for s, _ in wanted), usable, tuple(options), tuple(classes),
                        tuple(tuple(m) for m in keys.values()), tuple(class_options),
                        tuple(option_sources))


def _holders(sources: Sequence[SliceSource], slices: Sequence[Slice]) -> list[list[int]]:
    """Per slice, the sources holding it: sources are indexed by their fixed values, so the
    cost is O(slices x distinct fixed column sets), not O(slices x sources)."""
    table: dict[tuple[str, ...], dict[tuple[str, ...], list[int]]] = {}
    for i, source in enumerate(sources):
        columns = tuple(c for c, _ in source.fixed)
        table.setdefault(columns, {}).setdefault(tuple(v for _, v in source.fixed), []).append(i)
    out = []
    for slice_ in slices:
        values = dict(slice_)
        found: list[int] = []
        for columns, by_values in table.items():
            if all(c in values for c in columns):
                found += by_values.get(tuple(values[c] for c in columns), ())
        out.append(sorted(found))
    return out


def _identity(source: SliceSource) -> tuple[str, str, tuple[str, ...]]:
    """What makes two slices' private sources comparable: storage, period, fixed columns."""
    return source.storage, source.period.name, tuple(c for c, _ in source.fixed)


def _ordinals(clock: Clock, source: SliceSource, start: int, end: int) -> OrdinalSet:
    """The source's partitions that lie inside ``[start, end)``: one timeline call."""
    lo, hi = clock.ceil(source.period, start), clock.floor(source.period, end)
    return OrdinalSet(source.timeline.ordinal_ranges(lo, hi) if lo < hi else [])


def _align(clock: Clock, finest: UpdatePeriod | None, spans: Sequence[Span], start: int,
           end: int) -> tuple[Span, ...]:
    """Spans clipped to ``[start, end)``, widened outward to ``finest``'s boundaries, merged."""
    out: list[Span] = []
    for a, b in sorted(spans):
        a, b = max(a, start), min(b, end)
        if a >= b:
            continue
        if finest is not None:
            a = max(start, clock.start(finest, clock.floor(finest, a)))
            b = min(end, clock.start(finest, clock.ceil(finest, b)))
        if out and out[-1][1] >= a:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def _check(sources: Sequence[SliceSource], required: Sequence[RequiredSlice]) -> None:
    """Typed, canonical, consistent input; each problem is an :class:`InvalidInput`."""
    columns: set[tuple[str, ...]] = set()
    seen: set[Slice] = set()
    for r in required:
        if not isinstance(r, RequiredSlice):
            raise InvalidInput(f"required slices must be RequiredSlice, not {r!r}")
        if slice_of(r.slice) != r.slice:
            raise InvalidInput(f"slice {r.slice!r} is not canonical: use slice_of()")
        if r.slice in seen:
            raise InvalidInput(f"slice {slice_text(r.slice)} is required twice")
        seen.add(r.slice)
        columns.add(tuple(c for c, _ in r.slice))
        for span in r.spans:
            if not (isinstance(span, tuple) and len(span) == 2 and span[0] <= span[1]):
                raise InvalidInput(f"slice {slice_text(r.slice)}: bad span {span!r}")
    if len(columns) > 1:
        raise InvalidInput(f"required slices name different columns: {sorted(columns)}")
    dimensions = set(next(iter(columns), ()))
    identities: set[tuple[str, UpdatePeriod, Slice]] = set()
    for s in sources:
        if not isinstance(s, SliceSource):
            raise InvalidInput(f"slice cover sources must be SliceSource, not {s!r}")
        if slice_of(s.fixed) != s.fixed:
            raise InvalidInput(f"source {s.storage} fixed values {s.fixed!r} are not canonical")
        extra = {c for c, _ in s.fixed} - dimensions
        if required and extra:
            raise InvalidInput(
                f"source {s.storage} {s.period.name} fixes {', '.join(sorted(extra))}, which "
                f"{'is' if len(extra) == 1 else 'are'} not a dimension of the request"
            )
        identity = (s.storage, s.period, s.fixed)
        if identity in identities:
            raise InvalidInput(f"source {s.storage} {s.period.name} {slice_text(s.fixed)} "
                               "is given twice")
        identities.add(identity)
