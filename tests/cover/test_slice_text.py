"""People-sized text of covers over many slices, and the notes every answer carries.

The per-slice entries of the missing ranges stay complete in the JSON; the status line, the
missing list and ``str(cover)`` name a few slices and count the rest."""

from __future__ import annotations

import pendulum
import pytest

from airflow_partitions.cover import Cover, MissingRange, NeededPartitions, ValueRun, status_line
from airflow_partitions.cover.missing import SLICES_SHOWN
from airflow_partitions.cover.slices.summary import lacking_text, slice_lacks
from airflow_partitions.cover.text import missing_list
from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod

T0 = pendulum.datetime(2015, 1, 1, tz="UTC")
HOURLY, DAILY = UpdatePeriod.HOURLY, UpdatePeriod.DAILY
NOTE = "region: not a dimension, any value counts"


def lacks(region: str, first: int, last: int, period: UpdatePeriod = HOURLY
          ) -> NeededPartitions:
    """``region`` lacks HOURLY ``first..last`` of T0's day (or that DAILY)."""
    if period is DAILY:
        return NeededPartitions(DAILY, (ValueRun("2015-01-01", "2015-01-01", 1),), 1,
                                (("region", region),))
    run = ValueRun(f"2015-01-01-{first:02d}", f"2015-01-01-{last:02d}", last - first + 1)
    return NeededPartitions(HOURLY, (run,), last - first + 1, (("region", region),))


def gap(first: int, end: int, *needed: NeededPartitions) -> MissingRange:
    return MissingRange(T0.add(hours=first), T0.add(hours=end), needed)


def cover(*missing: MissingRange, notes: tuple[str, ...] = ()) -> Cover:
    return Cover(T0, T0.add(days=1), (), missing, fact="ev", notes=notes)


def test_what_each_slice_lacks_is_summed_worst_first() -> None:
    missing = [gap(5, 7, lacks("eu", 5, 6), lacks("us", 5, 5), lacks("eu", 0, 0, DAILY)),
               gap(9, 24, lacks("eu", 9, 23), lacks("eu", 0, 0, DAILY))]
    got = slice_lacks(missing)
    # eu: the finest period it lacks, over both ranges (the DAILY it lacks under both: once)
    assert [(s.slice, s.period, s.count) for s in got] == [
        ((("region", "eu"),), HOURLY, 17), ((("region", "us"),), HOURLY, 1)]
    assert lacking_text(got) == "17 hours of region=eu, 1 hour of region=us"
    assert lacking_text(got, shown=1) == "17 hours of region=eu and 1 more slice"
    only_daily = slice_lacks([gap(0, 24, lacks("ap", 0, 0, DAILY))])
    assert lacking_text(only_daily) == "1 day of region=ap"
    assert slice_lacks([MissingRange(T0, T0.add(hours=1), (NeededPartitions(
        HOURLY, (ValueRun("2015-01-01-00", "2015-01-01-00", 1),), 1),))]) == []  # time only


def test_a_missing_range_names_a_few_slices_and_counts_the_rest() -> None:
    regions = [f"r{i:03d}" for i in range(1000)]
    wide = gap(5, 24, *(lacks(r, 5, 23) for r in regions))
    text = wide.describe()
    assert text == ("missing 2015-01-01T05:00/2015-01-02T00:00: "
                    "no HOURLY 2015-01-01-05..23 (19) for region=r000, "
                    "no HOURLY 2015-01-01-05..23 (19) for region=r001, "
                    "no HOURLY 2015-01-01-05..23 (19) for region=r002 and 997 more slices")
    assert len(wide.to_json()["needed"]) == 1000  # the JSON keeps every entry
    # a slice's second entry (another period) is kept with it, and counts as one slice
    two = gap(5, 24, lacks("eu", 5, 23), lacks("eu", 0, 0, DAILY))
    assert two.describe() == two.describe(slices_shown=1)
    assert two.describe().endswith("no DAILY 2015-01-01 for region=eu")
    assert two.slices == ((("region", "eu"),),)


def test_the_status_line_keeps_detail_for_a_few_slices() -> None:
    few = cover(gap(5, 24, lacks("eu", 5, 23)), gap(2, 3, lacks("us", 2, 2)))
    assert status_line(few) == (
        "ev [2015-01-01T00:00, 2015-01-02T00:00): 16.7% covered by 0 partition(s); "
        "missing 2015-01-01T05:00/2015-01-02T00:00: no HOURLY 2015-01-01-05..23 (19) for "
        "region=eu; missing 2015-01-01T02:00/03:00: no HOURLY 2015-01-01-02 for region=us")


def test_the_status_line_sums_a_long_slice_list() -> None:
    regions = [f"r{i:03d}" for i in range(1000)]
    needed = [lacks(r, 5, 23) for r in regions[1:]] + [lacks(regions[0], 2, 23)]
    many = cover(gap(2, 24, *needed), notes=(NOTE,))
    line = status_line(many)
    assert line == (
        "ev [2015-01-01T00:00, 2015-01-02T00:00): 8.3% covered by 0 partition(s); "
        "missing 22 hours of region=r000, 19 hours of region=r001, 19 hours of region=r002 "
        f"and 997 more slices, in 2015-01-01T02:00/2015-01-02T00:00; {NOTE}")
    assert len(line) < 300
    assert SLICES_SHOWN == 3  # the threshold the docs name
    # the timeout's list: each range capped the same way
    [listed] = missing_list(many)
    assert listed.endswith("and 997 more slices") and len(listed) < 300


def test_notes_end_every_line_and_travel_in_json() -> None:
    ok = Cover(T0, T0.add(hours=1), (), (), fact="ev", notes=(NOTE,))
    assert status_line(ok) == f"ev [2015-01-01T00:00, 01:00): 100.0% covered by 0 partition(s), " \
                              f"coverable; {NOTE}"
    doc = ok.to_json()
    assert doc["notes"] == [NOTE]
    back = Cover.from_json(doc)
    assert back.notes == (NOTE,) and back == ok
    assert "notes" not in Cover(T0, T0, (), ()).to_json()  # present only when there are some
    assert back.with_skipped(()).notes == (NOTE,)
    assert Cover(T0, T0, ()).with_notes([NOTE]).notes == (NOTE,)
    assert str(ok).splitlines()[-1] == f"  {NOTE}"
    with pytest.raises(InvalidInput, match="notes must be a list of strings"):
        Cover.from_json({**doc, "notes": "region"})


def test_str_of_a_cover_sums_the_slices() -> None:
    text = str(cover(gap(5, 24, lacks("eu", 5, 23), lacks("us", 20, 23))))
    assert "  slices lacking partitions: 19 hours of region=eu, 4 hours of region=us" in text
