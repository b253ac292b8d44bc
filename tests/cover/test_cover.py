"""COVER: exact, minimal covers, the missing ranges, and the cost, held to a brute-force oracle."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
from collections.abc import Iterable, Sequence
from typing import Any

import pendulum
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from airflow_partitions.cover import (
    Cover,
    CoverPartition,
    CoverRequest,
    CoverSource,
    MisalignedBound,
    NaiveInstant,
    compute_cover,
    cover_key,
)
from airflow_partitions.errors import InvalidInput, InvalidRange, MisalignedTime
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import PartitionTimeline, RangesTimeline, new_timeline, runs
from tests.cover.naive_cover import NaiveCover, WallClock, coarseness, naive_cover_slots, us_of
from tests.hypothesis_budget import examples


def cover_of(
    sources: Sequence[CoverSource], start: Any, end: Any, *, tz: str = "UTC",
    fact: str | None = None, **options: Any,
) -> Cover:
    """The tests' shorthand: :func:`compute_cover` of ``CoverRequest.of(fact, start, end, ...)``."""
    return compute_cover(sources, CoverRequest.of(fact, start, end, **options), tz=tz)


def naive_of(
    sources: Sequence[CoverSource], start: Any, end: Any, *, tz: str = "UTC", **options: Any
) -> NaiveCover:
    """The same shorthand for the Lens-style oracle."""
    return naive_cover_slots(sources, CoverRequest.of(None, start, end, **options), tz=tz)

Y, Q, M, W, D, H, MI = (
    UpdatePeriod.YEARLY,
    UpdatePeriod.QUARTERLY,
    UpdatePeriod.MONTHLY,
    UpdatePeriod.WEEKLY,
    UpdatePeriod.DAILY,
    UpdatePeriod.HOURLY,
    UpdatePeriod.MINUTELY,
)
KINDS = ("StoreAll", "EndsAndHoles", "Ranges")
COARSEST_FIRST = (Y, Q, M, W, D, H, MI, UpdatePeriod.SECONDLY)


def t(text: str, tz: str = "UTC") -> pendulum.DateTime:
    """An aware instant from ISO text (no offset means ``tz``)."""
    parsed = pendulum.parse(text, tz=tz)
    assert isinstance(parsed, pendulum.DateTime)
    return parsed


def timeline(
    period: UpdatePeriod,
    spans: Iterable[tuple[str, str]] = (),
    holes: Iterable[str] = (),
    *,
    tz: str = "UTC",
    kind: str = "EndsAndHoles",
) -> PartitionTimeline:
    """A timeline holding the partitions in ``[a, b)`` of each span (values), minus holes."""
    tl = new_timeline(kind, period, tz=tz)
    tl.add_ordinal_ranges(
        [(period.parse_ordinal(a, tz), period.parse_ordinal(b, tz)) for a, b in spans]
    )
    for value in holes:
        assert tl.drop_ordinal(period.parse_ordinal(value, tz))
    return tl


def listing(cover: Cover) -> list[tuple[str, str]]:
    return [(p.period.name, p.value) for p in cover.partitions]


def values(period: UpdatePeriod, first: str, count: int, tz: str = "UTC") -> list[tuple[str, str]]:
    o = period.parse_ordinal(first, tz)
    return [(period.name, period.format_ordinal(o + i, tz)) for i in range(count)]


# -- the Lens example's table ----------------------------------------------------------------------

LENS_START, LENS_END = t("2015-01-29T06:00:00Z"), t("2015-03-01T06:00:00Z")


def lens_example_sources(
    *, monthly: bool, daily: bool, daily_holes: Sequence[str] = ()
) -> list[CoverSource]:
    out = [CoverSource("f_hourly", 0, H, timeline(H, [("2015-01-01-00", "2015-04-01-00")]))]
    if daily:
        tl = timeline(D, [("2015-01-01", "2015-04-01")], daily_holes)
        out.append(CoverSource("f_rollup", 0, D, tl))
    if monthly:
        out.append(CoverSource("f_rollup", 0, M, timeline(M, [("2015-02", "2015-03")])))
    return out


LENS_HEAD = values(H, "2015-01-29-06", 18)
LENS_TAIL = values(H, "2015-03-01-00", 6)


def test_lens_example_best_case_all_rollups() -> None:
    cover = cover_of(lens_example_sources(monthly=True, daily=True), LENS_START, LENS_END)
    expected = [*LENS_HEAD, ("DAILY", "2015-01-30"), ("DAILY", "2015-01-31")]
    expected += [("MONTHLY", "2015-02"), *LENS_TAIL]
    assert listing(cover) == expected
    assert len(cover) == len(cover.partitions) == 27
    assert cover.coverable and cover.covered_fraction == 1.0


def test_lens_example_worst_case_hourly_only() -> None:
    """31 days of hours: 18 + 2 * 24 + 28 * 24 + 6 = 744 (not 720: the range is 31 days)."""
    cover = cover_of(lens_example_sources(monthly=False, daily=False), LENS_START, LENS_END)
    assert listing(cover) == values(H, "2015-01-29-06", 744)
    assert cover.coverable


def test_lens_example_monthly_and_hourly_without_daily() -> None:
    cover = cover_of(lens_example_sources(monthly=True, daily=False), LENS_START, LENS_END)
    expected = [*values(H, "2015-01-29-06", 18 + 48), ("MONTHLY", "2015-02"), *LENS_TAIL]
    assert listing(cover) == expected


def test_lens_example_daily_and_hourly_without_monthly() -> None:
    cover = cover_of(lens_example_sources(monthly=False, daily=True), LENS_START, LENS_END)
    assert listing(cover) == LENS_HEAD + values(D, "2015-01-30", 30) + LENS_TAIL


def test_lens_example_one_daily_missing_falls_back_to_hourly() -> None:
    sources = lens_example_sources(monthly=False, daily=True, daily_holes=["2015-02-10"])
    cover = cover_of(sources, LENS_START, LENS_END)
    expected = LENS_HEAD + values(D, "2015-01-30", 11) + values(H, "2015-02-10-00", 24)
    expected += values(D, "2015-02-11", 18) + LENS_TAIL
    assert listing(cover) == expected
    assert [p.storage for p in cover.partitions if p.period is D] == ["f_rollup"] * 29


def test_lens_example_scenarios_match_the_lens_baseline() -> None:
    for monthly in (False, True):
        for daily in (False, True):
            sources = lens_example_sources(monthly=monthly, daily=daily, daily_holes=["2015-02-10"])
            cover = cover_of(sources, LENS_START, LENS_END)
            naive = naive_of(sources, LENS_START, LENS_END)
            assert [(p.storage, p.period, p.ordinal) for p in cover.partitions] == list(
                naive.partitions
            )


# -- the cost ----------------------------------------------------------------------------------


class CountingTimeline(RangesTimeline):
    """Counts the questions the cover asks."""

    def __init__(self, period: UpdatePeriod | str, column: str = "dt", tz: str = "UTC"):
        super().__init__(period, column, tz)
        self.range_calls = 0
        self.exists_calls = 0

    def ordinal_ranges(
        self, lo: int | None = None, hi: int | None = None
    ) -> list[tuple[int, int]]:
        self.range_calls += 1
        return super().ordinal_ranges(lo, hi)

    def exists_ordinal(self, ordinal: int) -> bool:
        self.exists_calls += 1
        return super().exists_ordinal(ordinal)


def test_lens_example_worst_case_costs_one_range_query_per_source_and_no_slot_lookups() -> None:
    periods = (Y, M, D, H, MI)
    sources = [CoverSource("facts", 0, p, CountingTimeline(p)) for p in periods]
    start, end = t("2015-01-01T00:00:00Z"), t("2016-01-01T00:00:00Z")
    cover = cover_of(sources, start, end)
    timelines = [s.timeline for s in sources]
    assert all(isinstance(tl, CountingTimeline) for tl in timelines)
    counted = [tl for tl in timelines if isinstance(tl, CountingTimeline)]
    assert sum(tl.range_calls for tl in counted) == len(periods)
    assert sum(tl.exists_calls for tl in counted) == 0
    assert not cover.coverable and len(cover) == 0
    [gap] = cover.missing
    assert (gap.start, gap.end) == (start, end)
    assert [(n.period, n.total) for n in gap.needed] == [
        (MI, 525600), (H, 8760), (D, 365), (M, 12), (Y, 1)
    ]
    naive = naive_of(sources, start, end)
    assert naive.exists_calls == 1 + 12 + 365 + 8760 + 525600 == 534738
    assert sum(tl.exists_calls for tl in counted) == 534738
    assert naive.missing == ((start, end),)


def test_cost_grows_with_holes_not_with_slots() -> None:
    """A complete minutely decade costs one range query, and the answer is kept as one run."""
    tl = CountingTimeline(MI)
    start, end = t("2010-01-01T00:00:00Z"), t("2020-01-01T00:00:00Z")
    tl.add_ordinal_ranges([(MI.ordinal(start), MI.ordinal(end))])
    tl.range_calls = 0
    cover = cover_of([CoverSource("m", 0, MI, tl)], start, end)
    assert (tl.range_calls, tl.exists_calls) == (1, 0)
    assert len(cover.runs) == 1 and len(cover) == MI.ordinal(end) - MI.ordinal(start)


# -- the oracle --------------------------------------------------------------------------------


def ranked_storages(sources: Sequence[CoverSource]) -> list[str]:
    priority = {s.storage: s.priority for s in sources}
    return sorted(priority, key=lambda name: (-priority[name], name))


def oracle(
    sources: Sequence[CoverSource], start: pendulum.DateTime, end: pendulum.DateTime, tz: str
) -> tuple[tuple[int, ...], set[int]]:
    """Brute force: DP over unit slots (hours or days), every existing partition an edge.

    Returns the best objective vector and the start instants (µs) of the unit slots that some
    usable partition contains. Partition bounds and ordinals come from :class:`WallClock`
    (``datetime`` and ``zoneinfo`` only), never from the package's period arithmetic, so a bug
    there cannot be in both the cover and its check.
    """
    clock = WallClock(tz)
    unit = H if max(coarseness(s.period) for s in sources) >= coarseness(H) else D
    # Instants (microseconds), never datetimes: same-zone datetimes compare and hash by wall
    # clock, so the two 01:00s of a DST fall-back would collide.
    start_us, end_us = us_of(start), us_of(end)
    unit_slots = clock.slots(unit, start_us, end_us)
    bounds = [start_us, *(slot.end for slot in unit_slots)]
    assert [slot.start for slot in unit_slots] == bounds[:-1] and bounds[-1] == end_us
    index = {b: i for i, b in enumerate(bounds)}
    ranks = {name: i for i, name in enumerate(ranked_storages(sources))}
    width = 2 + len(COARSEST_FIRST) + len(ranks)
    edges: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    usable: set[int] = set()
    for s in sources:
        p = s.period
        for slot in clock.slots(p, start_us, end_us):  # wholly inside [start, end)
            if not s.timeline.exists_ordinal(slot.ordinal):
                continue
            cost = [0] * width
            cost[1] = 1
            cost[2 + coarseness(p)] = -1
            cost[2 + len(COARSEST_FIRST) + ranks[s.storage]] = -1
            edges.setdefault(index[slot.start], []).append((index[slot.end], tuple(cost)))
            usable.update(bounds[index[slot.start]:index[slot.end]])
    best: list[tuple[int, ...] | None] = [None] * len(bounds)
    best[0] = (0,) * width
    for i in range(len(bounds) - 1):
        here = best[i]
        assert here is not None
        length = bounds[i + 1] - bounds[i]
        skip = (length,) + (0,) * (width - 1)
        for j, step in [(i + 1, skip), *edges.get(i, [])]:
            candidate = tuple(x + y for x, y in zip(here, step, strict=True))
            known = best[j]
            if known is None or candidate < known:
                best[j] = candidate
    final = best[-1]
    assert final is not None
    return final, usable


def independent_key(cover: Cover, storages: Sequence[str]) -> tuple[int, ...]:
    """The cover's objective vector (as :func:`cover_key`), from its parts with plain
    arithmetic: missing microseconds, count, then minus the count per period and per storage."""
    ranks = {name: i for i, name in enumerate(storages)}
    key = [0] * (2 + len(COARSEST_FIRST) + len(ranks))
    key[0] = sum(us_of(m.end) - us_of(m.start) for m in cover.missing)
    for p in cover.partitions:
        key[1] += 1
        key[2 + coarseness(p.period)] -= 1
        key[2 + len(COARSEST_FIRST) + ranks[p.storage]] -= 1
    return tuple(key)


def nests(finer: UpdatePeriod, coarser: UpdatePeriod) -> bool:
    """Whether every ``coarser`` partition is a union of ``finer`` ones, by the calendar: only
    ISO weeks cross the boundaries of months, quarters and years."""
    return not (finer.name == "WEEKLY" and coarser.name in ("MONTHLY", "QUARTERLY", "YEARLY"))


def check_cover(
    cover: Cover, sources: Sequence[CoverSource], start: pendulum.DateTime,
    end: pendulum.DateTime, tz: str,
) -> None:
    """Exactness, existence, minimality (the oracle's full objective) and ``missing``.

    Every bound and ordinal the check relies on comes from :class:`WallClock`, not from the
    package's period arithmetic.
    """
    clock = WallClock(tz)
    by_key = {(s.storage, s.period): s.timeline for s in sources}
    pieces: list[tuple[int, int, str]] = []
    for p in cover.partitions:
        assert by_key[p.storage, p.period].exists_ordinal(p.ordinal)
        slot = clock.slot_at(p.period, us_of(p.start))
        assert (slot.ordinal, slot.start, slot.end) == (p.ordinal, us_of(p.start), us_of(p.end))
        assert p.value == p.period.format_ordinal(p.ordinal, tz)
        pieces.append((slot.start, slot.end, "p"))
    # Compare instants, not datetimes: within one zone Python compares wall clocks and ignores
    # ``fold``, so a DST fall-back hour 01:00 (fold 0) -> 01:00 (fold 1) would look empty.
    pieces += [(us_of(m.start), us_of(m.end), "m") for m in cover.missing]
    spans = sorted(pieces)
    cursor = us_of(start)
    for a, b, _ in spans:  # disjoint, no holes, union exactly [start, end)
        assert a == cursor and a < b
        cursor = b
    assert cursor == us_of(end)
    for (_, b1, k1), (a2, _, k2) in itertools.pairwise(spans):
        assert not (k1 == k2 == "m" and b1 == a2), "missing ranges must be maximal"
    starts = [us_of(p.start) for p in cover.partitions]
    assert starts == sorted(starts)
    ranked = ranked_storages(sources)
    expected, usable = oracle(sources, start, end, tz)
    assert independent_key(cover, ranked) == expected
    assert cover_key(cover, ranked) == expected
    assert cover.coverable == (expected[0] == 0)
    periods = {s.period for s in sources}
    nested = all(nests(f, c) for f in periods for c in periods if coarseness(f) > coarseness(c))
    if nested:  # missing = exactly the points no usable partition holds
        unit = H if max(coarseness(p) for p in periods) >= coarseness(H) else D
        missing = {
            slot.start
            for m in cover.missing
            for slot in clock.slots(unit, us_of(m.start), us_of(m.end))
        }
        everything = {slot.start for slot in clock.slots(unit, us_of(start), us_of(end))}
        assert missing == everything - usable
        naive = naive_of(sources, start, end, tz=tz)
        chosen = [(p.storage, p.period, p.ordinal) for p in cover.partitions]
        assert list(naive.partitions) == chosen
        assert list(naive.missing) == [(m.start, m.end) for m in cover.missing]


PERIOD_SETS = st.sampled_from(
    [
        (D, W, M),
        (W, M),
        (H, D, W, M),
        (D, W, Q),
        (D, W, M, Q, Y),
        (H, D, M),
        (D, M, Q, Y),
        (H, W),
        (D, W),
        (W, M, Y),
        (H, D, W, M, Q, Y),
    ]
)
ZONES = st.sampled_from(["UTC", "UTC", "Europe/Berlin", "Asia/Kolkata", "America/St_Johns"])
MAX_UNITS = {H: 24 * 40, D: 420, W: 60}


@st.composite
def scenarios(
    draw: st.DrawFn,
) -> tuple[list[CoverSource], pendulum.DateTime, pendulum.DateTime, str]:
    periods = draw(PERIOD_SETS)
    tz = draw(ZONES)
    finest = min(periods)
    day = pendulum.datetime(2014, 6, 1, tz=tz).add(days=draw(st.integers(0, 700)))
    start = finest.start_of(finest.ordinal(day, tz), tz)
    units = draw(st.integers(0, MAX_UNITS[finest]))
    end = finest.start_of(finest.ordinal(start, tz) + units, tz)
    names = draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=3, unique=True))
    priorities = {n: draw(st.integers(0, 2)) for n in names}
    held = {n: draw(st.sets(st.sampled_from(periods), min_size=1)) for n in names}
    held[names[0]] |= set(periods) - set().union(*held.values())  # every period is held
    sources = []
    for name in names:
        for p in sorted(held[name]):
            density = draw(st.sampled_from([0.0, 0.3, 0.7, 0.9, 1.0]))
            rng = random.Random(draw(st.integers(0, 2**16)))
            tl = new_timeline(draw(st.sampled_from(KINDS)), p, tz=tz)
            lo, hi = p.ordinal(start, tz) - 2, p.ordinal(end, tz) + 3
            tl.add_ordinal_ranges(runs(o for o in range(lo, hi) if rng.random() < density))
            sources.append(CoverSource(name, priorities[name], p, tl))
    return sources, start, end, tz


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_cover_matches_the_oracle(
    scenario: tuple[list[CoverSource], pendulum.DateTime, pendulum.DateTime, str],
) -> None:
    sources, start, end, tz = scenario
    cover = cover_of(sources, start, end, tz=tz)
    periods = {s.period for s in sources}
    event("crossing periods" if W in periods and periods & {M, Q, Y} else "nested periods")
    event("coverable" if cover.coverable else "uncoverable")
    event(f"zone {tz}")
    event("coarse partition used" if any(r.period >= W for r in cover.runs) else "fine only")
    check_cover(cover, sources, start, end, tz)
    again = Cover.from_json(json.loads(json.dumps(cover.to_json())), tz=tz)
    assert again.to_json() == cover.to_json()


@settings(max_examples=examples(40), deadline=None)
@given(scenarios(), st.data())
def test_restricting_periods_and_storages_equals_dropping_sources(
    scenario: tuple[list[CoverSource], pendulum.DateTime, pendulum.DateTime, str],
    data: st.DataObject,
) -> None:
    sources, start, end, tz = scenario
    periods = data.draw(st.sets(st.sampled_from(sorted({s.period for s in sources}))))
    storages = data.draw(st.sets(st.sampled_from(sorted({s.storage for s in sources}))))
    kept = [s for s in sources if s.period in periods and s.storage in storages]
    try:
        restricted = cover_of(
            sources, start, end, tz=tz, periods=periods, storages=storages
        )
    except MisalignedBound:  # the finest allowed period is coarser than the bounds
        with pytest.raises(MisalignedBound):
            cover_of(kept, start, end, tz=tz)
        return
    assert restricted == cover_of(kept, start, end, tz=tz)


# -- hand-written cases -------------------------------------------------------------------------


def test_dst_spring_day_is_23_hours_in_berlin() -> None:
    tz = "Europe/Berlin"
    hourly = timeline(H, [("2015-03-28-00", "2015-03-31-00")], tz=tz)
    daily = timeline(D, [("2015-03-29", "2015-03-30")], tz=tz)
    start, end = t("2015-03-28T00:00:00", tz), t("2015-03-31T00:00:00", tz)
    only_hours = cover_of([CoverSource("h", 0, H, hourly)], start, end, tz=tz)
    assert len(only_hours) == 24 + 23 + 24
    both = [CoverSource("h", 0, H, hourly), CoverSource("d", 0, D, daily)]
    cover = cover_of(both, start, end, tz=tz)
    assert len(cover) == 24 + 1 + 24
    [day] = [p for p in cover.partitions if p.period is D]
    assert day.value == "2015-03-29" and day.end - day.start == dt.timedelta(hours=23)
    check_cover(cover, both, start, end, tz)


def test_dst_autumn_day_is_25_hours_in_berlin() -> None:
    tz = "Europe/Berlin"
    hourly = timeline(H, [("2015-10-25-00", "2015-10-26-00")], tz=tz)
    start, end = t("2015-10-25T00:00:00", tz), t("2015-10-26T00:00:00", tz)
    cover = cover_of([CoverSource("h", 0, H, hourly)], start, end, tz=tz)
    assert len(cover) == 25
    twice = ["2015-10-25-02+02:00", "2015-10-25-02+01:00"]
    assert [p.value for p in cover.partitions][2:4] == twice
    again = Cover.from_json(json.loads(json.dumps(cover.to_json())))
    assert again.to_json() == cover.to_json()
    assert [p.ordinal for p in again.partitions] == [p.ordinal for p in cover.partitions]


def test_storage_priority_then_name() -> None:
    start, end = t("2015-01-01T00:00:00Z"), t("2015-01-01T03:00:00Z")
    spans = [("2015-01-01-00", "2015-01-01-03")]
    low = CoverSource("low", 1, H, timeline(H, spans))
    high = CoverSource("high", 5, H, timeline(H, spans))
    assert {p.storage for p in cover_of([low, high], start, end).partitions} == {"high"}
    zed = CoverSource("zed", 1, H, timeline(H, spans))
    assert {p.storage for p in cover_of([zed, low], start, end).partitions} == {"low"}
    partial = CoverSource("high", 5, H, timeline(H, [("2015-01-01-01", "2015-01-01-02")]))
    mixed = cover_of([low, partial], start, end)
    assert [p.storage for p in mixed.partitions] == ["low", "high", "low"]
    assert "low HOURLY 2015-01-01-00" in str(mixed) and "high HOURLY" in str(mixed)


def test_fewer_partitions_beat_storage_priority() -> None:
    start, end = t("2015-01-01T00:00:00Z"), t("2015-01-02T00:00:00Z")
    hours = CoverSource("raw", 9, H, timeline(H, [("2015-01-01-00", "2015-01-02-00")]))
    days = CoverSource("rollup", 0, D, timeline(D, [("2015-01-01", "2015-01-02")]))
    assert listing(cover_of([hours, days], start, end)) == [("DAILY", "2015-01-01")]


def test_leap_day() -> None:
    start, end = t("2016-02-01T00:00:00Z"), t("2016-03-01T00:00:00Z")
    daily = CoverSource("d", 0, D, timeline(D, [("2016-01-01", "2016-04-01")]))
    cover = cover_of([daily], start, end)
    assert len(cover) == 29 and cover.partitions[-1].value == "2016-02-29"
    monthly = CoverSource("m", 0, M, timeline(M, [("2016-02", "2016-03")]))
    [month] = cover_of([daily, monthly], start, end).partitions
    assert month.value == "2016-02" and month.end == end


@pytest.mark.parametrize(("week", "monday", "next_monday"), [
    ("2015-W53", "2015-12-28", "2016-01-04"),
    ("2020-W53", "2020-12-28", "2021-01-04"),
])
def test_iso_week_53(week: str, monday: str, next_monday: str) -> None:
    start, end = t(monday + "T00:00:00Z"), t(next_monday + "T00:00:00Z")
    following = W.format_ordinal(W.parse_ordinal(week) + 1)
    weekly = CoverSource("w", 0, W, timeline(W, [(week, following)]))
    daily = CoverSource("d", 0, D, timeline(D, [(monday, next_monday)]))
    assert listing(cover_of([weekly, daily], start, end)) == [("WEEKLY", week)]
    yearly = CoverSource("y", 0, Y, timeline(Y, [("2015", "2022")]))
    assert len(cover_of([daily, yearly], start, end)) == 7  # a year sticks out


def weeks_and_month() -> list[CoverSource]:
    return [
        CoverSource("d", 0, D, timeline(D, [("2015-01-01", "2015-04-01")])),
        CoverSource("w", 0, W, timeline(W, [("2015-W01", "2015-W20")])),
        CoverSource("m", 0, M, timeline(M, [("2015-02", "2015-03")])),
    ]


def test_weekly_next_to_monthly_is_minimal_where_largest_first_is_not() -> None:
    start, end = t("2015-01-26T00:00:00Z"), t("2015-03-02T00:00:00Z")  # W05..W09
    sources = weeks_and_month()
    cover = cover_of(sources, start, end)
    assert listing(cover) == [("WEEKLY", f"2015-W0{i}") for i in range(5, 10)]
    naive = naive_of(sources, start, end)
    assert len(naive.partitions) == 6 + 1 + 1  # Lens: days Jan 26..31, MONTHLY 2015-02, Mar 1
    check_cover(cover, sources, start, end, "UTC")


def test_ties_go_to_the_coarser_period_before_storage_priority() -> None:
    """ISO 2015 = 53 weeks; YEARLY 2015 plus 52 finer pieces is just as few: YEARLY wins."""
    start, end = t("2014-12-29T00:00:00Z"), t("2016-01-04T00:00:00Z")
    sources = [
        CoverSource("weeks", 9, W, timeline(W, [("2015-W01", "2016-W01")])),
        CoverSource("years", 0, Y, timeline(Y, [("2015", "2016")])),
        CoverSource("years", 0, D, timeline(D, [("2014-12-31", "2016-01-04")])),
        CoverSource("years", 0, H, timeline(H, [("2014-12-29-00", "2014-12-31-00")])),
    ]
    cover = cover_of(sources, start, end)
    assert len(cover) == 53
    assert ("YEARLY", "2015") in listing(cover)
    assert all(p.period is not W for p in cover.partitions)
    check_cover(cover, sources, start, end, "UTC")
    # Without DAILY 2014-12-31 a cover using YEARLY 2015 leaves Dec 31 uncovered: weeks win.
    fewer_days = timeline(D, [("2015-01-01", "2016-01-04")])
    without = [*sources[:2], CoverSource("years", 0, D, fewer_days), sources[3]]
    assert {p.period for p in cover_of(without, start, end).partitions} == {W}


def test_missing_when_weeks_overlap_the_chosen_month() -> None:
    """Jan (31 days) beats W05 (7 days); Feb 1..7 stay missing although W05 holds Feb 1."""
    start, end = t("2015-01-01T00:00:00Z"), t("2015-02-08T00:00:00Z")
    sources = [
        CoverSource("m", 0, M, timeline(M, [("2015-01", "2015-02")])),
        CoverSource("w", 0, W, timeline(W, [("2015-W05", "2015-W06")])),
        CoverSource("d", 0, D, timeline(D)),
    ]
    cover = cover_of(sources, start, end)
    assert listing(cover) == [("MONTHLY", "2015-01")]
    [gap] = cover.missing
    assert (gap.start, gap.end) == (t("2015-02-01T00:00:00Z"), end)
    assert gap.describe() == (
        "missing 2015-02-01T00:00/2015-02-08T00:00: no DAILY 2015-02-01..07 (7)"
    )
    check_cover(cover, sources, start, end, "UTC")


def test_missing_lists_what_would_fill_it() -> None:
    sources = lens_example_sources(monthly=False, daily=True, daily_holes=["2015-02-10"])
    hours = sources[0].timeline
    hours.drop_ordinal(H.parse_ordinal("2015-02-10-12"))
    sources.append(CoverSource("f_rollup", 0, M, timeline(M)))
    cover = cover_of(sources, LENS_START, LENS_END)
    [gap] = cover.missing
    assert gap.describe() == (
        "missing 2015-02-10T12:00/13:00: no HOURLY 2015-02-10-12, no DAILY 2015-02-10, "
        "no MONTHLY 2015-02"
    )
    assert not cover.coverable
    assert cover.covered_fraction == pytest.approx(1 - 1 / 744)
    text = str(cover)
    assert "NOT coverable" in text and gap.describe() in text


def test_needed_stays_short() -> None:
    start, end = t("2015-01-01T00:00:00Z"), t("2015-01-02T00:00:00Z")
    odd_hours = [f"2015-01-01-{h:02d}" for h in range(1, 24, 2)]
    tl = timeline(H, [("2015-01-01-00", "2015-01-02-00")], odd_hours)
    sources = [CoverSource("h", 0, H, tl), CoverSource("d", 0, D, timeline(D))]
    cover = cover_of(sources, start, end)
    assert len(cover.missing) == 12
    assert cover.missing[0].describe() == (
        "missing 2015-01-01T01:00/02:00: no HOURLY 2015-01-01-01, no DAILY 2015-01-01"
    )
    empty = cover_of([CoverSource("h", 0, H, timeline(H)), sources[1]], start, end)
    [gap] = empty.missing
    assert gap.describe() == (
        "missing 2015-01-01T00:00/2015-01-02T00:00: no HOURLY 2015-01-01-00..23 (24), "
        "no DAILY 2015-01-01"
    )


def test_right_hand_remainder_is_covered() -> None:
    """The sub-range after a missing middle is still covered (a naive recursion drops it)."""
    start, end = t("2015-01-31T22:00:00Z"), t("2015-02-02T03:00:00Z")
    sources = [
        CoverSource("h", 0, H, timeline(H, [("2015-01-31-00", "2015-02-03-00")])),
        CoverSource("d", 0, D, timeline(D, [("2015-02-01", "2015-02-02")])),
    ]
    expected = [*values(H, "2015-01-31-22", 2), ("DAILY", "2015-02-01")]
    expected += values(H, "2015-02-02-00", 3)
    assert listing(cover_of(sources, start, end)) == expected
    naive = naive_of(sources, start, end)
    assert [(p.name, p.format_ordinal(o)) for _, p, o in naive.partitions] == expected


def test_bounds_misaligned_naive_reversed_and_empty() -> None:
    sources = lens_example_sources(monthly=True, daily=True)
    with pytest.raises(MisalignedBound) as err:
        cover_of(sources, t("2015-01-29T06:30:00Z"), LENS_END)
    assert isinstance(err.value, MisalignedTime) and isinstance(err.value, InvalidInput)
    message = str(err.value)
    assert "start 2015-01-29T06:30:00+00:00" in message and "HOURLY" in message
    with pytest.raises(MisalignedBound, match=r"start .* DAILY"):  # finest ALLOWED period
        cover_of(sources, LENS_START, LENS_END, periods=["daily", "monthly"])
    with pytest.raises(NaiveInstant):
        cover_of(sources, dt.datetime(2015, 1, 29, 6), LENS_END)
    with pytest.raises(InvalidRange):
        cover_of(sources, LENS_END, LENS_START)
    empty = cover_of(sources, LENS_START, LENS_START)
    assert empty.coverable and len(empty) == 0 and empty.partitions == ()
    with pytest.raises(InvalidInput, match="align"):
        cover_of(sources, LENS_START, LENS_END, align="wide")
    with pytest.raises(InvalidInput, match="unknown storage"):
        cover_of(sources, LENS_START, LENS_END, storages=["nope"])
    berlin = CoverSource("b", 0, H, new_timeline(None, H, tz="Europe/Berlin"))
    with pytest.raises(InvalidInput, match="zone"):
        cover_of([berlin], LENS_START, LENS_END)


def test_align_outer_and_inner() -> None:
    sources = lens_example_sources(monthly=True, daily=True)
    start, end = t("2015-01-29T06:30:00Z"), t("2015-03-01T05:10:00Z")
    outer = cover_of(sources, start, end, align="outer")
    assert (outer.start, outer.end) == (LENS_START, LENS_END) and len(outer) == 27
    inner = cover_of(sources, start, end, align="inner")
    assert (inner.start, inner.end) == (t("2015-01-29T07:00:00Z"), t("2015-03-01T05:00:00Z"))
    assert len(inner) == 17 + 2 + 1 + 5
    daily = cover_of(sources, start, end, periods=[D, M], align="inner")
    assert (daily.start, daily.end) == (t("2015-01-30T00:00:00Z"), t("2015-03-01T00:00:00Z"))
    assert listing(daily) == [*values(D, "2015-01-30", 2), ("MONTHLY", "2015-02")]
    nothing = cover_of(sources, start, t("2015-01-29T06:45:00Z"), align="inner")
    assert nothing.start == nothing.end and nothing.coverable


def test_no_usable_source_leaves_everything_missing() -> None:
    cover = cover_of([], LENS_START, LENS_END)
    [gap] = cover.missing
    assert (gap.start, gap.end, gap.needed) == (LENS_START, LENS_END, ())
    assert cover.covered_fraction == 0.0


def test_str_groups_runs() -> None:
    cover = cover_of(lens_example_sources(monthly=True, daily=True), LENS_START, LENS_END)
    assert str(cover).splitlines() == [
        "[2015-01-29T06:00, 2015-03-01T06:00): 27 partitions, coverable",
        "  f_hourly HOURLY 2015-01-29-06..23 (18)",
        "  f_rollup DAILY 2015-01-30..31 (2)",
        "  f_rollup MONTHLY 2015-02",
        "  f_hourly HOURLY 2015-03-01-00..05 (6)",
    ]
    one = cover_of(lens_example_sources(monthly=False, daily=False), LENS_START, LENS_END,
                   fact="events")
    assert str(one).splitlines()[1:] == ["  HOURLY 2015-01-29-06..03-01-05 (744)"]
    assert str(one).startswith("events [2015-01-29T06:00")
    holes = [f"2015-02-{d:02d}" for d in range(2, 28, 2)]
    sources = lens_example_sources(monthly=False, daily=True, daily_holes=holes)
    many = cover_of(sources, LENS_START, LENS_END)
    lines = str(many).splitlines()
    assert len(many.runs) > 20 and len(lines) == 1 + 12 + 1
    assert any("more runs" in x for x in lines)


def test_json_round_trip_and_locations() -> None:
    sources = lens_example_sources(monthly=True, daily=True, daily_holes=["2015-01-31"])
    sources[0].timeline.drop_ordinal(H.parse_ordinal("2015-01-31-05"))
    cover = cover_of(sources, LENS_START, LENS_END, fact="events")
    data = cover.to_json()
    assert set(data) == {"fact", "start", "end", "coverable", "partitions", "missing"}
    assert set(data["partitions"][0]) == {"storage", "period", "value", "start", "end", "location"}
    assert set(data["missing"][0]) == {"start", "end", "needed"}
    assert data["start"] == "2015-01-29T06:00:00+00:00" and data["coverable"] is False
    text = json.dumps(data)
    again = Cover.from_json(json.loads(text))
    assert again == cover and again.to_json() == data and str(again) == str(cover)
    located = cover.with_locations(lambda p: f"/data/{p.storage}/{p.period.name}/{p.value}")
    assert located.partitions[0].location == "/data/f_hourly/HOURLY/2015-01-29-06"
    assert Cover.from_json(located.to_json()) == located
    by_map = cover.with_locations({("f_rollup", "MONTHLY", "2015-02"): "/m/2015-02"})
    assert [p.location for p in by_map.partitions if p.location] == ["/m/2015-02"]
    with pytest.raises(InvalidInput):
        Cover.from_json({"start": "2015-01-01T00:00:00"})
    assert isinstance(cover.partitions[0], CoverPartition)


def test_request_bounds_compare_instants_across_a_dst_fold() -> None:
    """Same wall clock, different instants: 01:45 (first) < 01:30 (second, after fall-back)."""
    tz = pendulum.timezone("America/St_Johns")
    first = pendulum.datetime(2014, 11, 2, 1, 45, tz=tz).replace(fold=0)  # UTC-02:30
    second = pendulum.datetime(2014, 11, 2, 1, 30, tz=tz).replace(fold=1)  # UTC-03:30
    assert second.timestamp() > first.timestamp()
    CoverRequest.of("events", first, second, allow_empty=False)  # a valid 45-minute range
    with pytest.raises(InvalidRange):
        CoverRequest.of("events", second, first)
