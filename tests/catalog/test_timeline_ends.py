"""A timeline cell read by its ends alone (``EndsTemplate``): it says what decoding the cell's
JSON would say, or nothing.

The oracle is :func:`json.loads` of the cell's bytes: whenever the template reads two ends
from a cell, the JSON decodes to the template's kind and properties with those two ends, and
a version that is an integer. A kept answer's check of a moved timeline (``TimelineBasis``)
gives the same verdict for a cell as for the same JSON spelled otherwise, which it decodes,
and lets the answer stand only when the days in its range are the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.catalog import Catalog, TimelineCache
from airflow_partitions.catalog.covers.answer_basis import TimelineBasis
from airflow_partitions.catalog.rows.layout import TimelineCell, encode_timeline_cell
from airflow_partitions.catalog.rows.timeline_ends import EndsTemplate
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import EndsAndHolesTimeline
from tests.hypothesis_budget import examples

PREFIX = "cube.storagetable.partition.timeline.cache.DAILY.dt."
FIRST, LATEST = PREFIX + "first", PREFIX + "latest"
KIND = "EndsAndHoles"

#: Any text, quotes, backslashes, control characters and the template's own marks included.
texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["2015-01-01", "\x01", "\x02", '"', "\\", "\x7f", "é", " 2015-01-02", "\\u0001"])
plain = st.text(alphabet="0123456789-: T", min_size=1, max_size=14)
properties = st.dictionaries(
    st.sampled_from([PREFIX + s for s in ("holes.size", "holes0", "holes1", "storage.class")])
    | st.text(max_size=8), texts, max_size=5)


@settings(max_examples=examples(300), deadline=None)
@given(rest=properties, first=plain, latest=plain, version=st.integers(0, 10**12),
       kind=st.sampled_from([KIND, "Ranges", None]))
def test_a_cell_that_moved_only_its_ends_is_read_by_them(
        rest: dict[str, str], first: str, latest: str, version: int, kind: str | None) -> None:
    rest = {k: v for k, v in rest.items() if k not in (FIRST, LATEST)}
    template = EndsTemplate.of(kind, rest, FIRST, LATEST)
    raw = encode_timeline_cell(version, kind, {**rest, FIRST: first, LATEST: latest})
    if template is None:  # only when the rest's JSON already spells one of its marks
        spelled = json.dumps({**rest, "kind": kind})
        assert "\\u0001" in spelled or "\\u0002" in spelled
        return
    assert template.ends(raw) == (first, latest)


@st.composite
def damaged(draw: st.DrawFn) -> tuple[EndsTemplate, dict[str, str], str | None, bytes]:
    """A template, its properties and kind, and a cell near it: written with other ends,
    another kind, other properties or another version, then maybe cut, spliced or flipped."""
    rest = {k: v for k, v in draw(properties).items() if k not in (FIRST, LATEST)}
    kind = draw(st.sampled_from([KIND, "Ranges", None]))
    template = EndsTemplate.of(kind, rest, FIRST, LATEST)
    if template is None:
        rest, template = {}, EndsTemplate.of(kind, {}, FIRST, LATEST)
    assert template is not None
    near = draw(st.integers(0, 3)) > 0  # mostly the template's own cell, then damaged
    written = dict(rest)
    if not near and draw(st.booleans()):
        written = {k: v for k, v in draw(properties).items() if k not in (FIRST, LATEST)}
    ends = {FIRST: draw(plain if near else texts | plain),
            LATEST: draw(plain if near else texts | plain)}
    if not near:
        for key in draw(st.sets(st.sampled_from([FIRST, LATEST]))):
            ends.pop(key)
    raw = encode_timeline_cell(draw(st.integers(0 if near else -5, 10**6)),
                               kind if near else draw(st.sampled_from([KIND, "Ranges", None])),
                               {**written, **ends})
    if near or draw(st.booleans()):
        # Near the ends' texts, the version and the closing brace, where a damaged byte
        # could pass for a value; anywhere else too.
        spots = [i for text in ends.values() if (i := raw.find(json.dumps(text).encode())) >= 0]
        spots += [raw.rfind(b":") + 1, len(raw) - 1, len(raw)]
        data = bytearray(raw)
        for _ in range(draw(st.integers(1, 3))):
            at = min(len(data), draw(st.sampled_from(spots) | st.integers(0, len(data)))
                     + draw(st.integers(0, 3)))
            how = draw(st.sampled_from(["flip", "cut", "insert"]))
            if how == "flip" and at < len(data):
                data[at] = draw(st.integers(0, 255))
            elif how == "cut":
                del data[at:at + draw(st.integers(1, 4))]
            else:
                data[at:at] = draw(st.binary(min_size=1, max_size=4) | st.sampled_from(
                    [b'"', b"\\", b"\\u0031", b"0", b"-", b'"}', b"\x0c", b"\x00", b"\x7f",
                     "é".encode()]))
        raw = bytes(data)
    return template, rest, kind, raw


@settings(max_examples=examples(600), deadline=None)
@given(case=damaged())
def test_the_ends_read_are_those_the_json_holds(
        case: tuple[EndsTemplate, dict[str, str], str | None, bytes]) -> None:
    """Property: the template never reads ends from bytes whose JSON says anything else."""
    template, rest, kind, raw = case
    found = template.ends(raw)
    if found is None:
        return
    decoded = json.loads(raw)
    assert decoded["kind"] == kind
    assert decoded["properties"] == {**rest, FIRST: found[0], LATEST: found[1]}
    assert type(decoded["version"]) is int
    assert set(decoded) == {"kind", "properties", "version"}


CELL = encode_timeline_cell(12, KIND, {PREFIX + "holes.size": "0", FIRST: "2015-01-01",
                                       LATEST: "2015-01-09"})


@pytest.mark.parametrize(("what", "raw"), [
    ("a version with a leading zero", CELL.replace(b":12}", b":012}")),
    ("no version", CELL.replace(b":12}", b":}")),
    ("no closing brace", CELL[:-1]),
    ("a control character in an end", CELL.replace(b"2015-01-09", b"2015-01-09\x0c")),
    ("a byte that is not UTF-8 in an end", CELL.replace(b"2015-01-09", b"2015-01-09\xff")),
    ("an escape in an end", CELL.replace(b"2015-01-09", b"2015-01-0\\u0039")),
    ("an end that is not a string", CELL.replace(b'"2015-01-09"', b"20150109")),
])
def test_bytes_json_reads_otherwise_are_not_read_by_their_ends(what: str, raw: bytes) -> None:
    template = EndsTemplate.of(KIND, {PREFIX + "holes.size": "0"}, FIRST, LATEST)
    assert template is not None and template.ends(CELL) == ("2015-01-01", "2015-01-09")
    assert raw != CELL and template.ends(raw) is None, what


def _timeline(ranges: list[tuple[int, int]]) -> EndsAndHolesTimeline:
    timeline = EndsAndHolesTimeline("DAILY")
    timeline.replace_ranges(ranges)
    return timeline


def _basis(timeline: EndsAndHolesTimeline, first: int, last: int) -> TimelineBasis:
    cell = TimelineCell.decode(encode_timeline_cell(3, KIND, timeline.to_properties()))
    return TimelineBasis(timeline, cell.kind, timeline.properties_but_ends(cell.properties),
                         first, last, (cell.properties[FIRST], cell.properties[LATEST]))


def _respelled(raw: bytes) -> bytes:
    """The same JSON spelled otherwise (indented): no template matches it, so the check
    decodes it."""
    return json.dumps(json.loads(raw), indent=1, sort_keys=True).encode()


DAY0 = UpdatePeriod.DAILY.parse_ordinal("2015-01-01", "UTC")


@settings(max_examples=examples(1500), deadline=None)
@given(cuts=st.lists(st.integers(0, 60), min_size=2, max_size=8, unique=True),
       window=st.tuples(st.integers(-10, 70), st.integers(0, 12)),
       moved=st.tuples(st.integers(-15, 15), st.integers(-15, 15)),
       change=st.sampled_from(["ends", "a hole", "the kind", "a text", "damage"]))
def test_a_kept_answer_is_judged_the_same_with_the_template_or_without(
        cuts: list[int], window: tuple[int, int], moved: tuple[int, int], change: str) -> None:
    """Property: for a timeline whose ends move (or that changes otherwise), the check of a
    kept answer's range says the same whether it reads the cell by its ends or decodes it
    (the same JSON spelled otherwise),
    and says the answer stands only when the days present in the range are the same (the
    model: the ranges written, as sets of days)."""
    cuts = sorted(cuts)
    ranges = [(DAY0 + a, DAY0 + b) for a, b in zip(cuts[::2], cuts[1::2], strict=False)]
    first, last = DAY0 + window[0], DAY0 + window[0] + window[1]
    lo = min(ranges[0][0] + moved[0], ranges[0][1] - 1)  # the ends moved either way,
    hi = max(ranges[-1][1] + moved[1], ranges[-1][0] + 1)  # the holes between kept
    written = ([(lo, ranges[0][1]), *ranges[1:-1], (ranges[-1][0], hi)] if len(ranges) > 1
               else [(lo, max(hi, lo + 1))])
    kind = KIND
    if change == "a hole" and hi - lo > 2:
        written = [(lo, lo + 1), (lo + 2, hi)]
    props = _timeline(written).to_properties()
    if change == "the kind":
        kind = "Ranges"
    elif change == "a text":
        props[LATEST] = " " + props[LATEST]
    raw = encode_timeline_cell(4, kind, props)
    if change == "damage":
        raw = raw.replace(b"2015-", b"2015-\x0c", 1)
    basis = _basis(_timeline(ranges), first, last)
    verdict = basis.same_in_range(raw)
    if change in ("the kind", "damage"):
        assert not verdict
        return
    if change in ("ends", "a text"):  # the template reads the cell (the case under test)
        assert basis.template is not None and basis.template.ends(raw) is not None
    assert verdict == basis.same_in_range(_respelled(raw))
    if verdict:
        def days_in_range(spans: list[tuple[int, int]]) -> set[int]:
            return {d for a, b in spans for d in range(a, b) if first <= d <= last}

        assert days_in_range(written) == days_in_range(ranges)


def test_a_registration_elsewhere_is_proven_without_decoding_the_timeline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process's registration after the end: the kept answer stands, and the moved
    timeline cell is read by its ends, not decoded."""
    url = f"sqlite:///{tmp_path}/ends.db"
    catalog = Catalog(url, cache=TimelineCache())
    catalog.create_fact("f")
    catalog.create_storage("f", "f_daily", ["DAILY"])
    catalog.register("f_daily", "DAILY", [{"dt": f"2015-01-{d:02d}"} for d in range(1, 20)
                                          if d != 7])
    other = Catalog(url, cache=TimelineCache())
    decoded: list[bytes | None] = []
    real = TimelineCell.decode

    def counting(raw: bytes | None) -> TimelineCell:
        decoded.append(raw)
        return real(raw)

    def ask() -> list[tuple[str, str]]:
        cover = catalog.cover("f", "2015-01-05T00:00Z", "2015-01-10T00:00Z")
        return [(m.start.isoformat(), m.end.isoformat()) for m in cover.missing]

    try:
        assert ask() == [("2015-01-07T00:00:00+00:00", "2015-01-08T00:00:00+00:00")]
        for d in (20, 21, 22):
            other.register("f_daily", "DAILY", [{"dt": f"2015-01-{d}"}])
            catalog.stats.reset()
            with monkeypatch.context() as patched:
                patched.setattr(TimelineCell, "decode", counting)
                assert ask() == [("2015-01-07T00:00:00+00:00", "2015-01-08T00:00:00+00:00")]
            assert dict(catalog.stats.ops) == {"change_stamp": 1, "changed_rows": 1}
        assert decoded == []
    finally:
        other.close()
        catalog.close()


HOUR0 = UpdatePeriod.HOURLY.parse_ordinal("2015-01-01-00", "UTC")


@settings(max_examples=examples(600), deadline=None)
@given(length=st.integers(1, 60), hole=st.integers(0, 59), window=st.integers(-5, 70),
       moved=st.integers(-30, 30))
def test_an_hourly_latest_moved_is_judged_as_decoding_it_would(
        length: int, hole: int, window: int, moved: int) -> None:
    """Property: an hourly timeline's ``latest`` moved by some hours (within its day, read
    against the latest it had, or into another day, parsed): the kept answer's check says
    what it says for the same JSON spelled otherwise (decoded and parsed in full), and lets
    the answer stand only when the hours in its range are the same."""
    ranges = ([(HOUR0, HOUR0 + hole), (HOUR0 + hole + 1, HOUR0 + length)]
              if 0 < hole < length - 1 else [(HOUR0, HOUR0 + length)])
    timeline = EndsAndHolesTimeline("HOURLY")
    timeline.replace_ranges(ranges)
    first_key, latest_key = timeline.end_keys()
    cell = TimelineCell.decode(encode_timeline_cell(3, KIND, timeline.to_properties()))
    basis = TimelineBasis(timeline, cell.kind, timeline.properties_but_ends(cell.properties),
                          HOUR0 + window, HOUR0 + window,
                          (cell.properties[first_key], cell.properties[latest_key]))
    latest = max(HOUR0 + length - 1 + moved, HOUR0)
    after = dict(cell.properties)
    after[latest_key] = UpdatePeriod.HOURLY.format_ordinal(latest, "UTC")
    raw = encode_timeline_cell(4, KIND, after)
    verdict = basis.same_in_range(raw)
    assert basis.template is not None and basis.template.ends(raw) is not None
    assert verdict == basis.same_in_range(_respelled(raw))
    if verdict:
        hours = timeline.copy()
        hours.replace_ranges([*ranges[:-1], (ranges[-1][0], latest + 1)])
        assert hours.exists_ordinal(HOUR0 + window) == timeline.exists_ordinal(HOUR0 + window)


@settings(max_examples=examples(400), deadline=None)
@given(length=st.integers(1, 40), window=st.integers(-5, 60),
       steps=st.lists(st.integers(-3, 30), min_size=1, max_size=12))
def test_a_producer_appending_hours_is_followed_one_registration_at_a_time(
        length: int, window: int, steps: list[int]) -> None:
    """Property: the cells a producer writes one after another, ``latest`` moved by each
    step (mostly forwards, across midnight too, sometimes back): each check compares with the
    ends the last one found, and lets the answer stand only when the hour asked is as it was
    first; while ``latest`` only grows and the hour lies before it, every check lets it
    stand."""
    timeline = EndsAndHolesTimeline("HOURLY")
    timeline.replace_ranges([(HOUR0, HOUR0 + length)])
    first_key, latest_key = timeline.end_keys()
    cell = TimelineCell.decode(encode_timeline_cell(3, KIND, timeline.to_properties()))
    asked = HOUR0 + window
    basis = TimelineBasis(timeline, cell.kind, timeline.properties_but_ends(cell.properties),
                          asked, asked, (cell.properties[first_key], cell.properties[latest_key]))
    latest, growing = HOUR0 + length - 1, True
    for version, step in enumerate(steps, start=4):
        latest, growing = max(latest + step, HOUR0), growing and step >= 0
        after = dict(cell.properties)
        after[latest_key] = UpdatePeriod.HOURLY.format_ordinal(latest, "UTC")
        verdict = basis.same_in_range(encode_timeline_cell(version, KIND, after))
        present_now = HOUR0 <= asked <= latest
        if verdict:
            assert present_now == timeline.exists_ordinal(asked)
        if growing and asked < HOUR0 + length:
            assert verdict
