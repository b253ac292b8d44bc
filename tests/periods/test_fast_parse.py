"""The fast value parser and formatter answer exactly as the general ones, or leave
it to them."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.periods.fast_parse import (
    fast_ordinal,
    fast_ordinal_near,
    fast_ordinals,
    fast_value,
)
from airflow_partitions.periods.zones import zone
from tests.hypothesis_budget import examples

ZONES = ["UTC", "Europe/Berlin", "Asia/Kolkata", "America/New_York"]
digits = st.integers(0, 99).map(lambda n: f"{n:02d}")
years = st.sampled_from(["0000", "0001", "1970", "2015", "2016", "9999", "10000", "0999", "٢٠١٥"])
separators = st.sampled_from(["-", "-", "-", "-Q", "-W", "_", ""])


@st.composite
def values(draw: st.DrawFn) -> str:
    """Near-valid values: every format's shape, with fields in and out of range."""
    parts = [draw(years)]
    for _ in range(draw(st.integers(0, 5))):
        parts.append(draw(separators) + draw(digits | st.sampled_from(["1", "4", "5", "123"])))
    text = "".join(parts)
    return text + draw(st.sampled_from(["", "", "", "+01:00", "-05:00", "+00:00", " "]))


def strict(period: UpdatePeriod, value: str, tz: str) -> int | type[Exception]:
    try:
        return period.strict_ordinal(value, tz)
    except InvalidInput as exc:
        return type(exc)


@settings(max_examples=examples(1500), deadline=None)
@given(period=st.sampled_from(list(UpdatePeriod)), value=values(), tz=st.sampled_from(ZONES))
def test_fast_path_equals_the_strict_parser(period: UpdatePeriod, value: str, tz: str) -> None:
    expected = strict(period, value, tz)
    fast = fast_ordinal(period.value, value, zone(tz))
    if fast is not None:
        assert fast == expected
    try:
        got: int | type[Exception] = period.parse_ordinal(value, tz)
    except InvalidInput as exc:
        got = type(exc)
    assert got == expected


@pytest.mark.parametrize(("period", "value"), [
    ("HOURLY", "2015-01-29-06"), ("MINUTELY", "2016-02-29-23-59"),
    ("SECONDLY", "0001-01-01-00-00-00"),
    ("DAILY", "9999-12-31"), ("MONTHLY", "2015-12"), ("QUARTERLY", "2015-Q4"), ("YEARLY", "2015"),
])
def test_common_values_take_the_fast_path(period: str, value: str) -> None:
    p = UpdatePeriod.of(period)
    assert fast_ordinal(period, value, zone("UTC")) == p.strict_ordinal(value, "UTC")


def test_control_character_regex_is_unicode_category_cc() -> None:
    """``arguments.control_character`` uses a regex: the same set as ``Cc``."""
    import sys
    import unicodedata

    from airflow_partitions.arguments import control_character

    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (control_character(char) is not None) == (unicodedata.category(char) == "Cc")


@settings(max_examples=examples(200), deadline=None)
@given(period=st.sampled_from(list(UpdatePeriod)), batch=st.lists(values(), max_size=6),
       tz=st.sampled_from(ZONES))
def test_the_batch_parser_equals_the_per_value_one(
        period: UpdatePeriod, batch: list[str], tz: str) -> None:
    one_by_one = [fast_ordinal(period.value, value, zone(tz)) for value in batch]
    expected = None if None in one_by_one else one_by_one
    assert fast_ordinals(period.value, batch, zone(tz)) == expected


@settings(max_examples=examples(150), deadline=None)
@given(period=st.sampled_from(list(UpdatePeriod)), data=st.data())
def test_the_batch_parser_on_mostly_valid_batches(period: UpdatePeriod,
                                                  data: st.DataObject) -> None:
    """Valid values around 2015 (the fast path's common case), sometimes one near-valid."""
    base = period.ordinal(dt.datetime(2015, 1, 1, tzinfo=dt.UTC))
    span = min(10**6, base - period.ordinal(dt.datetime(1, 1, 1, tzinfo=dt.UTC)))
    batch = [period.format_ordinal(base + o, "UTC")
             for o in data.draw(st.lists(st.integers(-span, span), max_size=8))]
    if data.draw(st.booleans()):
        batch.insert(data.draw(st.integers(0, len(batch))), data.draw(values()))
    one_by_one = [period.strict_ordinal(value, "UTC") if fast_ordinal(period.value, value,
                  zone("UTC")) is not None else None for value in batch]
    expected = None if None in one_by_one else one_by_one
    assert fast_ordinals(period.value, batch, zone("UTC")) == expected


FIXED = [UpdatePeriod.HOURLY, UpdatePeriod.MINUTELY, UpdatePeriod.SECONDLY]


def general(period: UpdatePeriod, ordinal: int) -> str | type[Exception]:
    """The general formatter: 'Etc/UTC' is UTC under another name, which the fast path skips."""
    try:
        return period.format_ordinal(ordinal, "Etc/UTC")
    except InvalidInput as exc:
        return type(exc)


@settings(max_examples=examples(1000), deadline=None)
@given(period=st.sampled_from(FIXED), data=st.data())
def test_the_fast_formatter_equals_the_general_one(period: UpdatePeriod,
                                                   data: st.DataObject) -> None:
    """Ordinals across the whole calendar, its two ends and beyond."""
    end = period.end_ordinal("UTC")
    first = period.ordinal(dt.datetime(1, 1, 1, tzinfo=dt.UTC))
    ordinal = data.draw(st.integers(first - 5, end + 5) | st.sampled_from(
        [first - 1, first, end - 1, end, end + 1, 0, -1]) | st.integers(-(10**12), 10**12))
    expected = general(period, ordinal)
    fast = fast_value(period.value, ordinal, zone("UTC"))
    assert fast is None or fast == expected
    assert fast is not None or not isinstance(expected, str) or ordinal >= end
    try:
        got: str | type[Exception] = period.format_ordinal(ordinal, "UTC")
    except InvalidInput as exc:
        got = type(exc)
    assert got == expected


def test_the_fast_formatter_leaves_other_zones_and_calendar_periods_alone() -> None:
    assert fast_value("HOURLY", 24, zone("Europe/Berlin")) is None
    assert fast_value("DAILY", 1, zone("UTC")) is None
    assert fast_value("HOURLY", 24, zone("UTC")) == "1970-01-02-00"


FIXED = [UpdatePeriod.HOURLY, UpdatePeriod.MINUTELY, UpdatePeriod.SECONDLY]


@settings(max_examples=examples(1500), deadline=None)
@given(period=st.sampled_from(FIXED), ordinal=st.integers(-10**6, 10**6),
       step=st.integers(-200, 200),
       field=st.sampled_from(["23", "24", "59", "60", "99", "00", "7", "٣٣"])
       | st.text(alphabet="0123456789٣a -+:", min_size=0, max_size=3),
       how=st.sampled_from(["ordinal", "last field", "any"]), any_text=values())
def test_the_near_path_equals_the_strict_parser(period: UpdatePeriod, ordinal: int, step: int,
                                               field: str, how: str, any_text: str) -> None:
    """Property: read against a known UTC value, a value is the strict parser's ordinal or
    left to it (None): another ordinal's value, the known one with its last field replaced
    by any text, or any near-valid text."""
    base = 1_500_000_000 // period.approx_seconds
    known = period.format_ordinal(base + ordinal, "UTC")
    if how == "ordinal":
        value = period.format_ordinal(base + ordinal + step, "UTC")
    elif how == "last field":
        value = known[:-2] + field
    else:
        value = any_text
    near = fast_ordinal_near(period.value, value, known, base + ordinal)
    if near is not None:
        assert near == strict(period, value, "UTC")
    if how == "ordinal" and value[:-2] == known[:-2]:
        assert near == base + ordinal + step  # the same day (or hour): read in place


@pytest.mark.parametrize("period", FIXED)
@pytest.mark.parametrize("field", ["00", "09", "23", "24", "59", "60", "99", "7", "٣٣", "1a"])
def test_the_near_path_reads_its_last_field_in_range_only(period: UpdatePeriod,
                                                         field: str) -> None:
    """The known value with its last field replaced: read in place when the strict parser
    takes it, never a number the strict parser refuses."""
    known = period.format_ordinal(1_500_000_000 // period.approx_seconds, "UTC")
    ordinal = period.strict_ordinal(known, "UTC")
    value = known[:-2] + field
    expected = strict(period, value, "UTC")
    near = fast_ordinal_near(period.value, value, known, ordinal)
    assert near == (expected if isinstance(expected, int) else None)
