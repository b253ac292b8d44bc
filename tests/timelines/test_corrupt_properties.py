"""Corrupt property sets: the pure loader reports them, never reads them silently.

A list chunk with no ``.size``, a ``.size`` that is not a canonical non-negative number, and a
``storage.class`` that contradicts the implementation asked to load them are all reported as
``CorruptTimeline``. Chunks left past ``.size`` by an in-place migration stay ignored, as Lens
reads them (the catalog, whose cells are always written whole, is stricter:
``tests/catalog/test_corruption.py``).
"""

from __future__ import annotations

import pytest

from airflow_partitions.errors import CorruptTimeline
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    IMPLEMENTATIONS,
    convert,
    new_timeline,
    storage_class_key,
    timeline_class,
    timeline_from_properties,
)
from airflow_partitions.timelines.properties import decode_chunks, timeline_prefix

HOURLY = UpdatePeriod.HOURLY
P = timeline_prefix("HOURLY", "dt")
CLASS_KEY = storage_class_key("HOURLY", "dt")
KINDS = [cls.kind for cls in IMPLEMENTATIONS]
LIST_NAME = {"StoreAll": "partitions", "EndsAndHoles": "holes", "Ranges": "ranges"}
BASE = HOURLY.parse_ordinal("2015-01-01-00")


def _props(kind: str) -> dict[str, str]:
    """A timeline of ``kind`` whose list is not empty: hours 0-9 but 3 and 4."""
    timeline = new_timeline(kind, HOURLY)
    for i in range(10):
        if i not in (3, 4):
            timeline.add_ordinal(BASE + i)
    props = timeline.to_properties()
    assert props[f"{P}{LIST_NAME[kind]}.size"] == "1"
    return props


@pytest.mark.parametrize("kind", KINDS)
def test_a_chunk_without_its_size_is_corrupt(kind: str) -> None:
    props = _props(kind)
    del props[f"{P}{LIST_NAME[kind]}.size"]
    with pytest.raises(CorruptTimeline, match=r"\.size is missing"):
        timeline_from_properties(props, HOURLY)
    with pytest.raises(CorruptTimeline, match=r"\.size is missing"):
        timeline_class(kind).from_properties(props, HOURLY)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", [" 1", "1 ", "+1", "01", "1_0", "\u0661", "1.0", "", "-0"])
def test_a_size_that_is_not_a_canonical_count_is_corrupt(kind: str, size: str) -> None:
    props = _props(kind)
    props[f"{P}{LIST_NAME[kind]}.size"] = size
    with pytest.raises(CorruptTimeline, match=r"\.size is"):
        timeline_from_properties(props, HOURLY)


def test_decode_chunks_reads_canonical_sizes() -> None:
    assert decode_chunks({"x.size": "0"}, "x") == []
    assert decode_chunks({"x.size": "2", "x0": "a,b", "x1": "c"}, "x") == ["a", "b", "c"]
    assert decode_chunks({}, "x") == []  # an absent list is empty
    with pytest.raises(CorruptTimeline, match=r"x\.size is missing"):
        decode_chunks({"x0": "a"}, "x")


@pytest.mark.parametrize("stored", KINDS)
@pytest.mark.parametrize("loaded", KINDS)
def test_loading_with_an_implementation_its_storage_class_contradicts_is_corrupt(
    stored: str, loaded: str
) -> None:
    props = _props(stored)
    if stored == loaded:
        assert timeline_class(loaded).from_properties(props, HOURLY).kind == stored
        return
    with pytest.raises(CorruptTimeline, match=r"storage\.class"):
        timeline_class(loaded).from_properties(props, HOURLY)


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_storage_class_is_corrupt_for_every_loader(kind: str) -> None:
    props = _props(kind)
    props[CLASS_KEY] = "com.example.Nope"
    with pytest.raises(CorruptTimeline, match="Nope"):
        timeline_class(kind).from_properties(props, HOURLY)


def test_chunks_left_past_size_by_an_in_place_migration_stay_ignored() -> None:
    """docs/timelines.md: ``props.update(convert(...).to_properties())``, then back again."""
    many_holes = new_timeline("EndsAndHoles", HOURLY)
    for i in range(0, 2400, 2):
        many_holes.add_ordinal(BASE + i)
    props = many_holes.to_properties()
    assert int(props[f"{P}holes.size"]) >= 2
    ranges = convert(many_holes, "Ranges")
    ranges.add_ordinal_ranges([(BASE, BASE + 2400)])  # the holes are filled meanwhile
    props.update(ranges.to_properties())
    back = convert(timeline_from_properties(props, HOURLY), "EndsAndHoles")
    props.update(back.to_properties())
    assert props[f"{P}holes.size"] == "0" and f"{P}holes1" in props  # leftovers
    assert timeline_from_properties(props, HOURLY) == back
