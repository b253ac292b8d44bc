"""A timeline patched from the one decoded before equals a full decode of the new cell."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import EndsAndHolesTimeline, RangesTimeline
from airflow_partitions.timelines.base import runs

#: Ordinal 0 of each period here: its first partition of 2015 (ordinal 0 itself is year 0).
BASE = {"HOURLY": UpdatePeriod.HOURLY.parse_ordinal("2015-01-01-00", "UTC"),
        "DAILY": UpdatePeriod.DAILY.parse_ordinal("2015-01-01", "UTC"),
        "MONTHLY": UpdatePeriod.MONTHLY.parse_ordinal("2015-01", "UTC")}

ordinal_sets = st.sets(st.integers(0, 400), min_size=1, max_size=120)


def timeline(ordinals: set[int], period: str = "HOURLY",
             tz: str = "UTC") -> EndsAndHolesTimeline:
    out = EndsAndHolesTimeline(period, "dt", tz)
    out.replace_ranges(runs(sorted(o + BASE[period] for o in ordinals)))
    return out


def full(props: dict[str, str], period: str = "HOURLY",
         tz: str = "UTC") -> EndsAndHolesTimeline | None:
    try:
        return EndsAndHolesTimeline.from_properties(props, period, "dt", tz)
    except CorruptTimeline:
        return None


def same(a: EndsAndHolesTimeline, b: EndsAndHolesTimeline) -> bool:
    return a.ordinal_ranges() == b.ordinal_ranges() and len(a) == len(b) \
        and a.is_consistent() and b.is_consistent()


@given(ordinal_sets, ordinal_sets, st.sampled_from(["HOURLY", "DAILY", "MONTHLY"]),
       st.sampled_from(["UTC", "Europe/Berlin"]))
def test_any_change_patches_to_the_full_decode_or_declines(
        old: set[int], new: set[int], period: str, tz: str) -> None:
    before = timeline(old, period, tz).to_properties()
    after = timeline(new, period, tz).to_properties()
    decoded = full(before, period, tz)
    assert decoded is not None
    patched = decoded.patched(before, after)
    if patched is not None:
        expected = full(after, period, tz)
        assert expected is not None and same(patched, expected)
    assert decoded.to_properties() == before  # the decoded timeline is left as it was


@given(ordinal_sets, st.data())
def test_growth_by_registration_always_patches(old: set[int], data: st.DataObject) -> None:
    """What registrations do: ends that move outwards, holes filled, new holes inside."""
    lo, hi = min(old), max(old)
    added = data.draw(st.sets(st.integers(max(0, lo - 30), hi + 30), max_size=20))
    removed = data.draw(st.sets(st.sampled_from(sorted(old)), max_size=5))
    new = (old | added) - {o for o in removed if min(old | added) < o < max(old | added)}
    before, after = timeline(old).to_properties(), timeline(new).to_properties()
    patched = timeline(old).patched(before, after)
    assert patched is not None
    assert same(patched, timeline(new))


@given(ordinal_sets, ordinal_sets, st.data())
def test_a_damaged_new_cell_never_patches_to_something_else(
        old: set[int], new: set[int], data: st.DataObject) -> None:
    before = timeline(old).to_properties()
    after = dict(timeline(new).to_properties())
    key = data.draw(st.sampled_from(sorted(after)))
    after[key] = data.draw(st.sampled_from([
        "", "x", after[key] + ",", after[key].replace("-", "/", 1), "1970-01-01-00",
        after[key] + "," + after[key],
    ]))
    patched = timeline(old).patched(before, after)
    expected = full(after)
    if patched is not None:
        assert expected is not None and same(patched, expected)


def test_unchanged_holes_are_not_parsed_again() -> None:
    """Ten years of daily holes, the latest moved by one: the holes are compared, not read."""
    old = {o for o in range(3653) if o % 2 == 0}
    before = timeline(old, "DAILY").to_properties()
    after = timeline(old | {3654}, "DAILY").to_properties()
    decoded = full(before, "DAILY")
    assert decoded is not None
    calls = []
    original = decoded.parse

    def counting(value: str, key: str) -> int:
        calls.append(value)
        return original(value, key)

    decoded.parse = counting  # type: ignore[method-assign]
    patched = decoded.patched(before, after)
    assert patched is not None and same(patched, timeline(old | {3654}, "DAILY"))
    assert len(calls) == 2  # first and latest; the copy's parse is the class's own


def ranges_timeline(ordinals: set[int], period: str = "HOURLY") -> RangesTimeline:
    out = RangesTimeline(period, "dt", "UTC")
    out.replace_ranges(runs(sorted(o + BASE[period] for o in ordinals)))
    return out


def ranges_full(props: dict[str, str], period: str = "HOURLY") -> RangesTimeline | None:
    try:
        return RangesTimeline.from_properties(props, period, "dt", "UTC")
    except CorruptTimeline:
        return None


@given(ordinal_sets, ordinal_sets, st.sampled_from(["HOURLY", "DAILY"]))
def test_ranges_patch_to_the_full_decode_or_decline(old: set[int], new: set[int],
                                                    period: str) -> None:
    before = ranges_timeline(old, period).to_properties()
    after = ranges_timeline(new, period).to_properties()
    decoded = ranges_full(before, period)
    assert decoded is not None
    patched = decoded.patched(before, after)
    assert patched is not None  # any two well-formed lists patch
    expected = ranges_full(after, period)
    assert expected is not None
    assert patched.ordinal_ranges() == expected.ordinal_ranges()
    assert len(patched) == len(expected) and patched.is_consistent()
    assert decoded.to_properties() == before


@given(ordinal_sets, ordinal_sets, st.data())
def test_a_damaged_ranges_cell_never_patches_to_something_else(
        old: set[int], new: set[int], data: st.DataObject) -> None:
    before = ranges_timeline(old).to_properties()
    after = dict(ranges_timeline(new).to_properties())
    key = data.draw(st.sampled_from(sorted(after)))
    after[key] = data.draw(st.sampled_from([
        "", "x", after[key] + ",", after[key][::-1], "[2015-01-01-05, 2015-01-01-03)",
        after[key] + "," + after[key], "[2015-01-01-00, 2016-01-01-00)",
    ]))
    patched = ranges_timeline(old).patched(before, after)
    expected = ranges_full(after)
    if patched is not None:
        assert expected is not None
        assert patched.ordinal_ranges() == expected.ordinal_ranges()
