"""Timeline properties exactly as Apache Lens writes and reads them.

The reference below restates Lens's rules (lens-cube ``MetastoreUtil.getNamedStrs`` /
``addNameStrings`` / ``getNamedStringValue``, the three ``*PartitionTimeline.toProperties`` /
``initFromProperties`` and ``TimePartitionRange.toString`` / ``parseFrom``) in a few lines of
Python, independently of the code under test:

* writing: each item but the last is followed by ``,``; an item starts a new chunk when the
  chunk so far plus the item would reach the limit (3999); ``<name>.size`` counts the chunks;
  EndsAndHoles writes ``first`` and ``latest`` (``""`` when empty), a range is ``[b, e)``;
* reading: the chunks are concatenated as they are (or, without ``.size``, the value under the
  name itself is read), split on ``\\s*,\\s*`` (Java drops trailing empty strings), and a range's
  bounds lose their brackets, ``(`` and ``]`` moving the bound to the next partition.

The vectors at the end are the facts of Lens's own tests (``TestMetastoreUtil``,
``TestTimePartition``, ``TestPartitionTimelines``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from itertools import pairwise
from typing import Any

import pendulum
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    IMPLEMENTATIONS,
    PRESENT_KEY,
    LensParameterError,
    PartitionTimeline,
    lens_properties,
    lens_table_parameters,
    new_timeline,
    read_lens_table,
    storage_class_key,
    timeline_class,
    timeline_from_properties,
)
from airflow_partitions.timelines.properties import encode_chunks, timeline_prefix
from tests.hypothesis_budget import examples

SETTINGS = settings(deadline=None, max_examples=examples(150),
                    suppress_health_check=[HealthCheck.too_slow])
KINDS = [cls.kind for cls in IMPLEMENTATIONS]
LENS_CLASS = {
    "StoreAll": "org.apache.lens.cube.metadata.timeline.StoreAllPartitionTimeline",
    "EndsAndHoles": "org.apache.lens.cube.metadata.timeline.EndsAndHolesPartitionTimeline",
    "Ranges": "org.apache.lens.cube.metadata.timeline.RangesPartitionTimeline",
}
LIST_NAME = {"StoreAll": "partitions", "EndsAndHoles": "holes", "Ranges": "ranges"}
U = UpdatePeriod
FIRST_VALUE = {U.MINUTELY: "2015-01-01-00-00", U.HOURLY: "2015-01-01-00", U.DAILY: "2015-01-01",
               U.MONTHLY: "2015-01", U.QUARTERLY: "2015-Q1", U.YEARLY: "2015"}
PERIODS = list(FIRST_VALUE)
NOW = pendulum.datetime(2015, 2, 14, 13, 7, 9, tz="UTC")  # TestTimePartition's "now"


# -- the reference: Lens's rules, restated ---------------------------------------------------------


def lens_value(period: UpdatePeriod, ordinal: int) -> str:
    """Lens's text of a partition: its QUARTERLY is the yyyy-MM of the quarter's first month."""
    text = period.format_ordinal(ordinal, "UTC")
    if period is U.QUARTERLY:
        year, quarter = text.split("-Q")
        return f"{year}-{3 * int(quarter) - 2:02d}"
    return text


def lens_parse(period: UpdatePeriod, text: str) -> int:
    if period is U.QUARTERLY:
        year, month = text.split("-")
        assert month in ("01", "04", "07", "10"), text
        return period.parse_ordinal(f"{year}-Q{(int(month) + 2) // 3}")
    return period.parse_ordinal(text)


def lens_chunks(names: list[str], limit: int = 3999) -> list[str]:
    """``getNamedStrs``: separators stay at the end of the chunk the list continues after."""
    chunks: list[str] = []
    current = ""
    for i, name in enumerate(names):
        if len(current) + len(name) >= limit:
            chunks.append(current)
            current = ""
        current += name if i == len(names) - 1 else name + ","
    return [*chunks, current] if names else []


def lens_write(timeline: PartitionTimeline, limit: int = 3999) -> dict[str, str]:
    """What Lens's ``updateTableParams`` puts in the table for this timeline."""
    period, kind = timeline.period, timeline.kind
    ranges = timeline.ordinal_ranges()
    props: dict[str, str] = {}
    if kind == "StoreAll":
        names = [lens_value(period, o) for b, e in ranges for o in range(b, e)]
    elif kind == "Ranges":
        names = [f"[{lens_value(period, b)}, {lens_value(period, e)})" for b, e in ranges]
    else:
        names = [lens_value(period, o) for (_, b), (e, _) in pairwise(ranges)
                 for o in range(b, e)]
        props = {"first": "", "latest": ""}
        if ranges:
            props = {"first": lens_value(period, ranges[0][0]),
                     "latest": lens_value(period, ranges[-1][1] - 1)}
    chunks = lens_chunks(names, limit)
    props[f"{LIST_NAME[kind]}.size"] = str(len(chunks))
    props.update({f"{LIST_NAME[kind]}{i}": c for i, c in enumerate(chunks)})
    props["storage.class"] = LENS_CLASS[kind]
    prefix = timeline_prefix(period.name, timeline.column)
    return {prefix + k: v for k, v in props.items()}


def java_split(text: str) -> list[str]:
    """``String.split("\\\\s*,\\\\s*")``: trailing empty strings are dropped."""
    parts = re.split(r"\s*,\s*", text)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def lens_read(props: Mapping[str, str], period: UpdatePeriod, column: str = "dt") -> set[int]:
    """The partitions Lens's ``initFromProperties`` finds in these table parameters."""
    prefix = timeline_prefix(period.name, column)
    mine = {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}
    kind = {v: k for k, v in LENS_CLASS.items()}.get(mine.get("storage.class", ""),
                                                     "EndsAndHoles")

    def named(name: str) -> str | None:  # getNamedStringValue
        if f"{name}.size" in mine:
            return "".join(mine[f"{name}{i}"] for i in range(int(mine[f"{name}.size"])))
        return mine.get(name)

    text = named(LIST_NAME[kind])
    if kind == "StoreAll":  # StringUtils.split: no trimming, empty tokens dropped
        return {lens_parse(period, t) for t in (text or "").split(",") if t}
    items = java_split(text) if text else []
    if kind == "Ranges":
        assert len(items) % 2 == 0, "Ranges incomplete"
        out: set[int] = set()
        for begin, end in zip(items[::2], items[1::2], strict=True):
            b = lens_parse(period, begin.lstrip("[(")) + (begin[0] == "(")
            e = lens_parse(period, end.rstrip(")]")) + (end[-1] == "]")
            out.update(range(b, e))
        return out
    first, latest = mine.get("first"), mine.get("latest")
    if not first or not latest:
        return set()
    holes = {lens_parse(period, h) for h in items}
    return set(range(lens_parse(period, first), lens_parse(period, latest) + 1)) - holes


# -- random timelines ---------------------------------------------------------------------------


@st.composite
def timelines(draw: st.DrawFn, periods: list[UpdatePeriod] = PERIODS) -> PartitionTimeline:
    """Runs of partitions with gaps: up to thousands of values, holes and ranges."""
    period = draw(st.sampled_from(periods))
    kind = draw(st.sampled_from(KINDS))
    o = period.parse_ordinal(FIRST_VALUE[period]) + draw(st.integers(0, 50))
    contents: list[tuple[int, int]] = []
    for gap, length in draw(st.lists(st.tuples(st.integers(1, 25), st.integers(1, 30)),
                                     max_size=120)):
        contents.append((o, o + length))
        o += length + gap
    timeline = new_timeline(kind, period)
    timeline.add_ordinal_ranges(contents)
    return timeline


def ordinals(timeline: PartitionTimeline) -> set[int]:
    return {o for b, e in timeline.ordinal_ranges() for o in range(b, e)}


def with_present(props: Mapping[str, str]) -> dict[str, str]:
    return {**props, PRESENT_KEY: "true"}


@SETTINGS
@given(timeline=timelines())
def test_we_write_exactly_what_lens_writes_and_lens_reads_it_back(
    timeline: PartitionTimeline,
) -> None:
    props = lens_properties(timeline)
    assert props == lens_write(timeline)
    assert lens_read(props, timeline.period) == ordinals(timeline)
    if timeline.period is not U.QUARTERLY:  # our own spelling is Lens's for every other period
        assert timeline.to_properties() == props
    # and we read it back, alone or as one table's parameters
    table = read_lens_table(with_present(props), [(timeline.period, "dt")])
    assert table.timelines[(timeline.period, "dt")] == timeline
    assert lens_table_parameters(table.timelines) == (with_present(props), [])


def lens_shaped(rnd: random.Random, timeline: PartitionTimeline) -> dict[str, str]:
    """What some Lens may hold for this timeline: any chunk limit, older unchunked values,
    spaces around separators, any of the four bracket forms of a range."""
    period, kind = timeline.period, timeline.kind
    props = lens_write(timeline, limit=rnd.choice([3999, rnd.randint(30, 400)]))
    prefix = timeline_prefix(period.name, "dt")
    name = prefix + LIST_NAME[kind]
    if kind == "Ranges":
        items = []
        for b, e in timeline.ordinal_ranges():
            form = rnd.randrange(4)
            left = f"[{lens_value(period, b)}" if form < 2 else f"({lens_value(period, b - 1)}"
            right = f"{lens_value(period, e)})" if form % 2 == 0 else \
                f"{lens_value(period, e - 1)}]"
            items.append(f"{left}, {right}")
        chunks = lens_chunks(items, rnd.randint(60, 3999))
        props = {k: v for k, v in props.items() if not k.startswith(name)}
        props.update({f"{name}.size": str(len(chunks))})
        props.update({f"{name}{i}": c for i, c in enumerate(chunks)})
    if rnd.random() < 0.3:  # older Lens: one value under the name, no .size
        size = int(props.pop(f"{name}.size"))
        props[name] = "".join(props.pop(f"{name}{i}") for i in range(size))
    if kind != "StoreAll" and rnd.random() < 0.5:  # Lens splits on \s*,\s*
        for key in [k for k in props if k.startswith(name)]:
            props[key] = props[key].replace(",", rnd.choice([" ,", ", ", " , "]))
    return props


@SETTINGS
@given(timeline=timelines(), seed=st.integers(0, 2**32))
def test_lens_shaped_inputs_read_as_lens_reads_them(timeline: PartitionTimeline,
                                                    seed: int) -> None:
    props = lens_shaped(random.Random(seed), timeline)
    expected = lens_read(props, timeline.period)
    assert expected == ordinals(timeline)  # the reference agrees it is the same timeline
    table = read_lens_table(with_present(props), [(timeline.period, "dt")])
    loaded = table.timelines[(timeline.period, "dt")]
    assert type(loaded) is type(timeline) and ordinals(loaded) == expected
    if timeline.period is not U.QUARTERLY:
        assert timeline_from_properties(props, timeline.period) == timeline


# -- vectors: Lens's own tests ------------------------------------------------------------------


def test_metastore_util_named_strings() -> None:
    """TestMetastoreUtil: first, second, biggggger with a limit of 10 make three chunks, each
    continued one ending with its separator; at 3999 they make one; either way the value read
    back is the three names joined."""
    names = ["first", "second", "biggggger"]
    small = encode_chunks("test.key", names, 10)
    assert small == {"test.key.size": "3", "test.key0": "first,", "test.key1": "second,",
                     "test.key2": "biggggger"}
    assert "".join(small[f"test.key{i}"] for i in range(3)) == "first,second,biggggger"
    big = encode_chunks("test.key", names)
    assert big == {"test.key.size": "1", "test.key0": "first,second,biggggger"}


RANGE_FORMS = [  # TestTimePartition.testTimeRange: (begin, end) -> shifts of the half-open range
    ("{a}", "{b}", 0, 0),
    ("[{a}", "{b})", 0, 0),
    ("[{a}", "{b}]", 0, 1),
    ("({a}", "{b}]", 1, 1),
    ("({a}", "{b})", 1, 0),
]


@pytest.mark.parametrize("period", [*PERIODS, U.SECONDLY, U.WEEKLY], ids=lambda p: p.name)
@pytest.mark.parametrize(("begin", "end", "shift_begin", "shift_end"), RANGE_FORMS)
def test_time_partition_range_forms(period: UpdatePeriod, begin: str, end: str,
                                    shift_begin: int, shift_end: int) -> None:
    """``a,b == [a,b)``; ``[a,b]``, ``(a,b]`` and ``(a,b)`` move the bounds; ten apart."""
    now = period.ordinal(NOW, "UTC")
    a, b = period.format_ordinal(now), period.format_ordinal(now + 10)
    prefix = timeline_prefix(period.name, "dt")
    props = {prefix + "ranges.size": "1",
             prefix + "ranges0": f"{begin.format(a=a)}, {end.format(b=b)}",
             prefix + "storage.class": LENS_CLASS["Ranges"]}
    loaded = timeline_from_properties(props, period)
    assert loaded.ordinal_ranges() == [(now + shift_begin, now + 10 + shift_end)]
    assert len(loaded) == 10 + shift_end - shift_begin


def test_time_partition_range_validity_and_parse_failures() -> None:
    """A range ending before it begins, ``garbage``, an empty value and another period's
    value are all refused (Lens: LensException)."""
    prefix = timeline_prefix("HOURLY", "dt")

    def ranges(text: str) -> dict[str, str]:
        return {prefix + "ranges.size": "1", prefix + "ranges0": text,
                prefix + "storage.class": LENS_CLASS["Ranges"]}

    for text in ["[2015-01-01-10, 2015-01-01-00)", "[garbage, 2015-01-01-05)",
                 "[2015-01-01, 2015-01-02)", "[2015-01-01-00, )"]:
        with pytest.raises(CorruptTimeline) as caught:
            timeline_from_properties(ranges(text), U.HOURLY)
        assert getattr(caught.value, "key", None) == prefix + "ranges0"
    for period in PERIODS:
        for other in PERIODS:
            if other is not period:
                text = other.format_ordinal(other.parse_ordinal(FIRST_VALUE[other]))
                with pytest.raises(CorruptTimeline):
                    timeline_from_properties(
                        {timeline_prefix(period.name, "dt") + "partitions.size": "1",
                         timeline_prefix(period.name, "dt") + "partitions0": text,
                         storage_class_key(period.name, "dt"): LENS_CLASS["StoreAll"]}, period)


@pytest.mark.parametrize("period", list(U), ids=lambda p: p.name)
@pytest.mark.parametrize("kind", KINDS)
def test_partition_timelines_properties_contract(period: UpdatePeriod, kind: str) -> None:
    """TestPartitionTimelines.testPropertiesContract: an empty timeline's properties load as
    empty (and clear a loaded one); one partition round-trips; 500 partitions two apart
    round-trip."""
    cls = timeline_class(kind)
    empty = new_timeline(kind, period).to_properties()
    assert cls.from_properties(empty, period).is_empty()
    now = period.ordinal(NOW, "UTC")
    one = new_timeline(kind, period)
    one.add_ordinal(now)
    assert cls.from_properties(one.to_properties(), period) == one != cls.from_properties(
        empty, period)
    sparse = new_timeline(kind, period)
    for i in range(500):
        assert sparse.add_ordinal(now + 2 * i)
    loaded = cls.from_properties(sparse.to_properties(), period)
    assert loaded == sparse and loaded.is_consistent() and len(loaded) == 500


def test_the_three_implementations_agree_on_lens_random_adds_and_drops() -> None:
    """TestPartitionTimelines.testEquivalence: 20 random partitions within five of now, added
    to each implementation, then dropped in random order, leave them equal and then empty."""
    rnd = random.Random(14)
    for period in PERIODS:
        now = period.parse_ordinal(FIRST_VALUE[period]) + 100
        for _ in range(10):
            timelines = [new_timeline(kind, period) for kind in KINDS]
            added = [now + rnd.randrange(10) - 5 for _ in range(20)]
            for o in added:
                for timeline in timelines:
                    timeline.add_ordinal(o)
                assert [list(t) for t in timelines[1:]] == [list(timelines[0])] * 2
            rnd.shuffle(added)
            while added:
                o = added.pop()
                if o not in added:
                    for timeline in timelines:
                        timeline.drop_ordinal(o)
                        assert timeline.is_consistent()
            assert all(t.is_empty() for t in timelines)


# -- what the issue found: Lens's forms read, ours still read -------------------------------------


P = timeline_prefix("DAILY", "dt")
D = U.DAILY


def daily(**kv: str) -> dict[str, str]:
    return {P + k.replace("__", "."): v for k, v in kv.items()}


def values(timeline: PartitionTimeline) -> list[str]:
    return [p.value for p in timeline]


def test_lens_ranges_are_read_and_written_with_brackets() -> None:
    props = daily(ranges__size="1", ranges0="[2015-01-01, 2015-01-04),[2015-01-06, 2015-01-07)",
                  storage__class=LENS_CLASS["Ranges"])
    loaded = timeline_from_properties(props, D)
    assert values(loaded) == ["2015-01-01", "2015-01-02", "2015-01-03", "2015-01-06"]
    assert loaded.to_properties() == props


def test_a_chunk_ending_with_the_separator_continues_in_the_next() -> None:
    props = daily(first="2015-01-01", latest="2015-01-06", holes__size="2",
                  holes0="2015-01-02,2015-01-03,", holes1="2015-01-05",
                  storage__class=LENS_CLASS["EndsAndHoles"])
    assert values(timeline_from_properties(props, D)) == ["2015-01-01", "2015-01-04",
                                                          "2015-01-06"]


def test_the_older_unchunked_value_under_the_name_itself() -> None:
    props = daily(first="2015-01-01", latest="2015-01-06", holes="2015-01-02, 2015-01-05",
                  storage__class=LENS_CLASS["EndsAndHoles"])
    assert values(timeline_from_properties(props, D)) == ["2015-01-01", "2015-01-03",
                                                          "2015-01-04", "2015-01-06"]
    assert timeline_from_properties(daily(holes=""), D).is_empty()  # older Lens, empty
    # with .size present, Lens reads the chunks and ignores the unchunked value
    props.update(daily(holes__size="1", holes0="2015-01-03"))
    assert values(timeline_from_properties(props, D))[:2] == ["2015-01-01", "2015-01-02"]


def test_lens_empty_ends_and_holes_is_first_and_latest_blank() -> None:
    empty = new_timeline("EndsAndHoles", D)
    assert empty.to_properties() == daily(first="", latest="", holes__size="0",
                                          storage__class=LENS_CLASS["EndsAndHoles"])
    assert timeline_from_properties(empty.to_properties(), D).is_empty()


def test_the_forms_this_project_wrote_before_still_read() -> None:
    """Ranges as flat ``begin,end`` pairs, and chunks cut without a trailing separator."""
    old_ranges = daily(ranges__size="2", ranges0="2015-01-01,2015-01-04",
                       ranges1="2015-01-06,2015-01-07", storage__class=LENS_CLASS["Ranges"])
    assert values(timeline_from_properties(old_ranges, D)) == [
        "2015-01-01", "2015-01-02", "2015-01-03", "2015-01-06"]
    old_holes = daily(first="2015-01-01", latest="2015-01-06", holes__size="2",
                      holes0="2015-01-02,2015-01-03", holes1="2015-01-05")
    assert len(timeline_from_properties(old_holes, D)) == 3


@pytest.mark.parametrize("kind", KINDS)
def test_storage_class_is_lens_class_name_both_ways(kind: str) -> None:
    timeline = new_timeline(kind, D)
    timeline.add_ordinal(D.parse_ordinal("2015-01-01"))
    props = timeline.to_properties()
    assert props[storage_class_key("DAILY", "dt")] == LENS_CLASS[kind]
    assert type(timeline_from_properties(props, D)) is type(timeline)
    # the implementation is chosen by Lens's class name alone
    assert timeline_class(LENS_CLASS[kind]).kind == kind


@pytest.mark.parametrize(("key", "props", "message"), [
    ("holes1", daily(first="2015-01-01", latest="2015-01-09", holes__size="2",
                     holes0="2015-01-02,", holes1="2015-01-05,"), "no chunk follows"),
    ("holes0", daily(first="2015-01-01", latest="2015-01-09", holes__size="1",
                     holes0="2015-01-02,,2015-01-04"), "empty list item"),
    ("holes1", daily(first="2015-01-01", latest="2015-01-09", holes__size="2",
                     holes0="2015-01-02,", holes1="2015-01-30"), "outside"),
    ("ranges0", daily(ranges__size="1", ranges0="[2015-01-01, 2015-01-04),[2015-01-02",
                      storage__class=LENS_CLASS["Ranges"]), "odd number"),
])
def test_corrupt_lists_name_the_key(key: str, props: dict[str, str], message: str) -> None:
    with pytest.raises(CorruptTimeline, match=message) as caught:
        timeline_from_properties(props, D)
    assert getattr(caught.value, "key", None) == P + key


# -- one table's parameters ---------------------------------------------------------------------

H = U.HOURLY
WANTED = [(H, "dt"), (D, "dt")]


def table() -> dict[str, str]:
    hourly = new_timeline("StoreAll", H)
    start = H.parse_ordinal("2015-01-01-00")
    hourly.add_ordinal_ranges([(start, start + 3)])
    day = new_timeline("Ranges", D)
    day.add_ordinal(D.parse_ordinal("2015-01-01"))
    params, skipped = lens_table_parameters({(H, "dt"): hourly, (D, "dt"): day})
    assert not skipped
    return {**params, "transient_lastDdlTime": "1420070400", "cube.storagetable.start.times": "x"}


Edit = Callable[[dict[str, str]], None]


def _set(key: str, value: object) -> Edit:
    def edit(params: dict[str, Any]) -> None:
        params[key] = value
    return edit


def _del(key: str) -> Edit:
    def edit(params: dict[str, Any]) -> None:
        del params[key]
    return edit


def _del_timeline(period: str) -> Edit:
    def edit(params: dict[str, str]) -> None:
        for key in [k for k in params if k.startswith(timeline_prefix(period, "dt"))]:
            del params[key]
    return edit


HP = timeline_prefix("HOURLY", "dt")
BAD_TABLES = [
    ("present missing", _del(PRESENT_KEY), PRESENT_KEY, "missing"),
    ("present false", _set(PRESENT_KEY, "false"), PRESENT_KEY, "not 'true'"),
    ("a period it lacks", _set(timeline_prefix("MONTHLY", "dt") + "storage.class", "Ranges"),
     timeline_prefix("MONTHLY", "dt") + "storage.class", "does not have"),
    ("a column it lacks", _set(timeline_prefix("HOURLY", "it") + "first", ""),
     timeline_prefix("HOURLY", "it") + "first", "does not have"),
    ("an unknown property", _set(HP + "holes.sz", "1"), HP + "holes.sz", "not a timeline"),
    ("a number", _set(HP + "partitions.size", 1), HP + "partitions.size", "strings"),
    ("a timeline missing", _del_timeline("DAILY"), storage_class_key("DAILY", "dt"), "missing"),
    ("an unknown class", _set(HP + "storage.class", "com.example.Nope"), HP + "storage.class",
     "Nope"),
    ("a missing chunk", _del(HP + "partitions0"), HP + "partitions0", "is missing"),
    ("a bad value", _set(HP + "partitions0", "2015-01-01-00,2015-02-30-00"), HP + "partitions0",
     "2015-02-30-00"),
]


@pytest.mark.parametrize(("what", "edit", "key", "reason"), BAD_TABLES,
                         ids=[b[0] for b in BAD_TABLES])
def test_bad_table_parameters_are_refused_naming_the_key(what: str, edit: Edit, key: str,
                                                         reason: str) -> None:
    params = table()
    read_lens_table(params, WANTED)  # the untouched table reads
    edit(params)
    with pytest.raises(LensParameterError, match=re.escape(reason)) as caught:
        read_lens_table(params, WANTED)
    assert caught.value.key == key
    assert str(caught.value).startswith(key + ": ")


def test_a_table_reads_whole_and_ignores_what_lens_ignores() -> None:
    params = table()
    params[HP + "holes.size"] = "0"  # left by an earlier implementation: Lens ignores it
    read = read_lens_table(params, WANTED)
    assert read.ignored == (HP + "holes.size",) and read.others == 2 and read.skipped == ()
    assert [p.value for p in read.timelines[(H, "dt")]] == [
        "2015-01-01-00", "2015-01-01-01", "2015-01-01-02"]


def test_quarterly_values_use_lens_spelling_and_weekly_never_crosses() -> None:
    q = U.QUARTERLY
    quarterly = new_timeline("EndsAndHoles", q)
    quarterly.add_ordinal_ranges([(q.parse_ordinal("2015-Q2"), q.parse_ordinal("2015-Q3")),
                                  (q.parse_ordinal("2016-Q1"), q.parse_ordinal("2016-Q2"))])
    weekly = new_timeline("EndsAndHoles", U.WEEKLY)
    weekly.add_ordinal(U.WEEKLY.parse_ordinal("2015-W07"))
    params, skipped = lens_table_parameters({(q, "dt"): quarterly, (U.WEEKLY, "dt"): weekly})
    qp = timeline_prefix("QUARTERLY", "dt")
    assert (params[qp + "first"], params[qp + "latest"]) == ("2015-04", "2016-01")
    assert params[qp + "holes0"] == "2015-07,2015-10"
    assert skipped == [(U.WEEKLY, "dt")]
    assert PRESENT_KEY not in params  # incomplete: Lens must rebuild rather than trust it
    assert not any("WEEKLY" in k for k in params)
    with pytest.raises(LensParameterError, match="WEEKLY"):
        lens_properties(weekly)
    read = read_lens_table(with_present({**params, **weekly.to_properties()}),
                           [(q, "dt"), (U.WEEKLY, "dt")])
    assert read.timelines == {(q, "dt"): quarterly} and read.skipped == ((U.WEEKLY, "dt"),)
    params[qp + "holes0"] = "2015-07,2015-11"
    with pytest.raises(LensParameterError, match="'2015-11' is not a quarter") as caught:
        read_lens_table(with_present(params), [(q, "dt")])
    assert caught.value.key == qp + "holes0"
