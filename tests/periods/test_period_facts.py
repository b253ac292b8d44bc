"""Every update period states every fact, consistently, and every table derived from them
covers every period it should: a new period that forgets one fails here, not in a cover."""

from __future__ import annotations

import datetime as dt
import itertools
import re

import pytest

from airflow_partitions.cover import Clock, to_us
from airflow_partitions.periods import (
    STRADDLING,
    UTC,
    PeriodSpec,
    TimePartition,
    UpdatePeriod,
    fast_ordinal,
    fast_value_bytes,
    nested_chain,
    straddles,
)
from airflow_partitions.periods.specs import NESTS_IN, SPECS
from airflow_partitions.timelines import lens_properties, new_timeline, read_lens_table

PERIODS = list(UpdatePeriod)
FIXED = [p for p in PERIODS if p.spec.fixed]
#: Java pattern letters and their strftime spellings (what Lens's patterns use).
JAVA_TO_STRFTIME = {"yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}
#: Instants to sample partitions at: ordinary days, a leap day, DST changes in Berlin.
SAMPLES = [dt.datetime(2015, 2, 14, 5, 6, 7, tzinfo=dt.UTC),
           dt.datetime(2016, 2, 29, 23, 59, 59, tzinfo=dt.UTC),
           dt.datetime(2015, 3, 29, 1, 30, tzinfo=dt.UTC),
           dt.datetime(2015, 10, 25, 0, 30, 15, tzinfo=dt.UTC),
           dt.datetime(1999, 12, 31, 12, tzinfo=dt.UTC)]


def test_every_period_has_one_spec_finest_first() -> None:
    assert list(SPECS) == [p.value for p in sorted(PERIODS)] == [p.value for p in PERIODS]
    assert set(NESTS_IN) == set(SPECS)


@pytest.mark.parametrize("period", PERIODS, ids=str)
def test_every_fact_is_present(period: UpdatePeriod) -> None:
    spec = period.spec
    assert isinstance(spec, PeriodSpec)
    assert spec.seconds > 0 and spec.cycle > 0
    assert spec.pattern and spec.end_text and spec.lens_pattern
    assert spec.unit and spec.units and spec.unit != spec.units
    assert spec.unit_word(1) == spec.unit
    assert spec.unit_word(0) == spec.unit_word(2) == spec.units
    assert set(spec.within) <= set(SPECS) and period.value not in spec.within


@pytest.mark.parametrize("period", PERIODS, ids=str)
def test_a_fixed_length_exactly_when_sub_daily(period: UpdatePeriod) -> None:
    spec = period.spec
    assert spec.fixed is (spec.seconds < 86_400) is (not spec.calendar)
    assert (spec.fixed_seconds is not None) is spec.fixed
    assert (spec.clock_fields > 0) is spec.fixed and spec.clock_fields <= 3
    if spec.fixed:
        assert 86_400 % spec.seconds == 0  # a day holds whole partitions
        start = period.start_of(period.ordinal(SAMPLES[0]))
        assert period.add(start, 1) - start == dt.timedelta(seconds=spec.seconds)


@pytest.mark.parametrize("period", PERIODS, ids=str)
def test_values_follow_the_pattern_and_round_trip(period: UpdatePeriod) -> None:
    for instant in SAMPLES:
        for tz in ("UTC", "Europe/Berlin"):
            value = period.format(instant, tz)
            assert period.spec.regex.fullmatch(value), value
            if period.spec.fixed:  # hour, minute, second: as many as the pattern prints
                assert len(value.split("+")[0].split("-")) == 3 + period.spec.clock_fields
            assert period.format_ordinal(period.parse_ordinal(value, tz), tz) == value


# -- nesting --------------------------------------------------------------------------------


def _boundaries_agree(fine: UpdatePeriod, coarse: UpdatePeriod, tz: str) -> bool:
    """Whether every sampled ``coarse`` boundary is a ``fine`` one (what nesting means)."""
    starts = [coarse.start_of(coarse.ordinal(i, tz) + k, tz) for i in SAMPLES for k in range(60)]
    return all(fine.is_aligned(s, tz) for s in starts)


@pytest.mark.parametrize(("a", "b"), list(itertools.product(PERIODS, PERIODS)), ids=str)
def test_nesting_is_what_the_partitions_do(a: UpdatePeriod, b: UpdatePeriod) -> None:
    for tz in ("UTC", "Europe/Berlin"):
        assert a.nests_in(b) is _boundaries_agree(a, b, tz), (a, b, tz)


def test_nesting_is_an_order_consistent_with_lengths() -> None:
    for a in PERIODS:
        assert a.nests_in(a)
    for a, b in itertools.product(PERIODS, PERIODS):
        if a.nests_in(b):
            assert a <= b
            assert a is b or not b.nests_in(a)
            if a.spec.fixed and b.spec.fixed:
                assert b.spec.seconds % a.spec.seconds == 0
        if a.spec.fixed and b.spec.calendar:
            assert a.nests_in(b)
    for a, b, c in itertools.product(PERIODS, PERIODS, PERIODS):
        if a.nests_in(b) and b.nests_in(c):
            assert a.nests_in(c)


def test_straddling_periods_are_those_nesting_leaves_out() -> None:
    assert STRADDLING == {p for p in PERIODS if any(straddles(p, q) for q in PERIODS)}
    # the cover fills the others greedily between straddling boundaries: they nest in all
    for fine, coarse in itertools.product(set(PERIODS) - STRADDLING, STRADDLING):
        assert fine.nests_in(coarse)
    assert UpdatePeriod.WEEKLY in STRADDLING and UpdatePeriod.DAILY not in STRADDLING


def test_a_nested_chain_of_every_set_of_periods() -> None:
    for n in range(len(PERIODS) + 1):
        for chosen in itertools.combinations(PERIODS, n):
            chain = nested_chain(chosen)
            assert chain == sorted(chain, reverse=True) and set(chain) <= set(chosen)
            assert all(f.nests_in(c) for c, f in itertools.combinations(chain, 2))
            for dropped in set(chosen) - set(chain):  # only for straddling a coarser one kept
                assert any(straddles(dropped, c) and c > dropped for c in chain)


# -- Lens's spelling ----------------------------------------------------------------------------


@pytest.mark.parametrize("period", PERIODS, ids=str)
def test_lens_patterns_agree(period: UpdatePeriod) -> None:
    spec = period.spec
    strftime = re.sub("|".join(JAVA_TO_STRFTIME), lambda m: JAVA_TO_STRFTIME[m[0]],
                      spec.lens_pattern)
    if spec.lens_strftime is None:  # Lens's locale weeks: no strftime spelling
        assert "'" in spec.lens_pattern
        return
    assert strftime == spec.lens_strftime
    if spec.fixed:
        assert spec.lens_pattern == spec.pattern  # Lens spells sub-daily values as here


@pytest.mark.parametrize("period", [p for p in PERIODS if p.spec.lens_strftime], ids=str)
def test_lens_values_are_the_strftime_of_the_start(period: UpdatePeriod) -> None:
    fmt = period.spec.lens_strftime
    assert fmt is not None
    for instant in SAMPLES:
        partition = TimePartition(period, period.ordinal(instant, UTC))
        timeline = new_timeline("StoreAll", period)
        timeline.add(partition)
        written = [v for k, v in lens_properties(timeline).items() if k.endswith("partitions0")]
        start = partition.start.replace(tzinfo=None)
        assert written == [start.strftime(fmt)]
        assert dt.datetime.strptime(written[0], fmt) == start


@pytest.mark.parametrize("period", FIXED, ids=str)
def test_lens_fall_back_values_are_read_for_every_fixed_period(period: UpdatePeriod) -> None:
    """Lens writes both fall-back hours of Berlin with one text; each fixed period reads them."""
    tz = "Europe/Berlin"
    first = period.ordinal(dt.datetime(2015, 10, 25, 0, 30, 15, tzinfo=dt.UTC), tz)
    second = period.ordinal(dt.datetime(2015, 10, 25, 1, 30, 15, tzinfo=dt.UTC), tz)
    timeline = new_timeline("StoreAll", period, "dt", tz)
    timeline.add_all([TimePartition(period, first, tz), TimePartition(period, second, tz)])
    params = {k: re.sub(r"[+-]\d{2}:\d{2}", "", v)  # as Lens writes them: no offsets
              for k, v in lens_properties(timeline).items()}
    params["cube.storagetable.partition.timeline.cache.present"] = "true"
    read = read_lens_table(params, [(period, "dt")], tz)
    assert read.timelines[(period, "dt")].ordinal_ranges() == timeline.ordinal_ranges()
    assert read.ambiguous


# -- the tables other modules derive ------------------------------------------------------------


@pytest.mark.parametrize("period", PERIODS, ids=str)
def test_the_utc_clock_knows_every_period(period: UpdatePeriod) -> None:
    """The cover's UTC fast path (fixed lengths, calendar days) answers as the period does."""
    clock = Clock("UTC")
    assert clock.fast
    for instant in SAMPLES:
        ordinal = period.ordinal(instant, UTC)
        assert clock.floor(period, to_us(instant)) == ordinal
        assert clock.start(period, ordinal) == to_us(period.start_of(ordinal, UTC))
        assert clock.start(period, ordinal + 1) == to_us(period.start_of(ordinal + 1, UTC))


@pytest.mark.parametrize("period", PERIODS, ids=str)
def test_the_fast_parser_knows_every_fixed_period(period: UpdatePeriod) -> None:
    for instant in SAMPLES:
        ordinal = period.ordinal(instant, UTC)
        value = period.format_ordinal(ordinal, UTC)
        found = fast_ordinal(period.value, value, UTC)  # None: the strict parser decides
        assert found == ordinal or (found is None and period.spec.calendar)
        fast = fast_value_bytes(period.value, ordinal, ordinal + 2, UTC)
        if period.spec.fixed:
            assert fast == [period.format_ordinal(o, UTC).encode() for o in (ordinal, ordinal + 1)]
        else:
            assert fast is None
