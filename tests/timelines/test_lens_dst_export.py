"""The Lens export names exactly the stored partitions across DST, without offsets wherever it can.

Two readers must both see the stored set in what is exported:

* the import path (:func:`read_lens_table`), which reads a repeated wall time written without
  offset as Lens's writer meant it (by where it stands);
* Lens's parser, which reads every such value as the later (standard time) occurrence, and
  steps from a partition to the next by adding milliseconds (``SimpleDateFormat`` and
  ``Calendar.add`` in the JVM's zone; ``test_the_jvm_reads_a_repeated_wall_time_as_the_later``
  checks both facts on the machine's JDK).

"An unsuffixed exact form exists" is decided here by trying every form: StoreAll's list,
EndsAndHoles' ends and holes, and each Ranges range with both of Lens's bracket choices per
bound, all with the offsets removed, each read by both readers.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import UpdatePeriod
from airflow_partitions.timelines import (
    IMPLEMENTATIONS,
    PRESENT_KEY,
    PartitionTimeline,
    lens_table_parameters,
    new_timeline,
    read_lens_table,
    storage_class_key,
    timeline_prefix,
)
from tests.hypothesis_budget import examples

H, M = UpdatePeriod.HOURLY, UpdatePeriod.MINUTELY
KINDS = [cls.kind for cls in IMPLEMENTATIONS]
LENS_CLASS = {cls.kind: cls.lens_class for cls in IMPLEMENTATIONS}
OFFSET = re.compile(r"(?<=[0-9])[+-][0-9]{2}:[0-9]{2}(?![0-9])")
WALL = re.compile(r"[0-9]{4}(?:-[0-9]{2}){3,5}(?![0-9]|[+-][0-9]{2}:)")
SETTINGS = settings(deadline=None, max_examples=examples(300),
                    suppress_health_check=[HealthCheck.too_slow])

#: (zone, a local value shortly before each DST change): the fall-back and the spring-forward.
NEIGHBOURHOODS = {
    ("Europe/Berlin", "fall"): "2015-10-24-23", ("Europe/Berlin", "spring"): "2015-03-29-00",
    ("America/New_York", "fall"): "2015-10-31-23", ("America/New_York", "spring"): "2015-03-08-00",
}


def timeline(kind: str, period: UpdatePeriod, tz: str,
             ordinals: Iterable[int]) -> PartitionTimeline:
    out = new_timeline(kind, period, "dt", tz)
    out.add_ordinal_ranges((o, o + 1) for o in ordinals)
    return out


def start(period: UpdatePeriod, tz: str, where: str) -> int:
    hour = H.parse_ordinal(NEIGHBOURHOODS[(tz, where)], tz)
    return period.ordinal(H.start_of(hour, tz), tz)


def later_spellings(period: UpdatePeriod, tz: str, lo: int, hi: int) -> dict[str, str]:
    """Each repeated wall time in [lo, hi) and the spelling of its later occurrence."""
    out: dict[str, str] = {}
    for ordinal in range(lo, hi):
        text = period.format_ordinal(ordinal, tz)
        if OFFSET.search(text):
            out[OFFSET.sub("", text)] = text  # ordinals ascend: the later one wins
    return out


def lens_parser_reading(params: dict[str, str], period: UpdatePeriod, tz: str,
                        later: dict[str, str]) -> list[tuple[int, int]] | None:
    """What Lens's parser sees: every repeated wall time is its later occurrence; a suffixed
    value fails the whole read (``None``), as Lens's length check does."""
    if any(OFFSET.search(v) for k, v in params.items() if not k.endswith(".storage.class")):
        return None
    rewritten = {k: WALL.sub(lambda m: later.get(m[0], m[0]), v) for k, v in params.items()}
    return import_reading(rewritten, period, tz)


def import_reading(params: dict[str, str], period: UpdatePeriod,
                   tz: str) -> list[tuple[int, int]] | None:
    try:
        table = read_lens_table(params, [(period, "dt")], tz)
    except InvalidInput:
        return None
    return table.timelines[(period, "dt")].ordinal_ranges()


def exact(params: dict[str, str], stored: PartitionTimeline, later: dict[str, str]) -> bool:
    want = stored.ordinal_ranges()
    full = {PRESENT_KEY: "true", **params}
    return (import_reading(full, stored.period, stored.tz) == want
            and lens_parser_reading(full, stored.period, stored.tz, later) == want)


def bare(stored: PartitionTimeline, ordinal: int) -> str | None:
    try:
        return OFFSET.sub("", stored.format(ordinal))
    except InvalidInput:
        return None


def unsuffixed_exact_form_exists(stored: PartitionTimeline, later: dict[str, str]) -> bool:
    """Whether any StoreAll, EndsAndHoles or Ranges form without offsets reads exactly."""
    prefix = timeline_prefix(stored.period.name, "dt")
    cls_key = storage_class_key(stored.period.name, "dt")
    ordinals = [o for b, e in stored.ordinal_ranges() for o in range(b, e)]
    store_all = {cls_key: LENS_CLASS["StoreAll"], prefix + "partitions.size": "1",
                 prefix + "partitions0": ",".join(OFFSET.sub("", stored.format(o))
                                                  for o in ordinals)}
    present = set(ordinals)
    holes = [o for o in range(ordinals[0], ordinals[-1]) if o not in present]
    ends = {cls_key: LENS_CLASS["EndsAndHoles"], prefix + "first": bare(stored, ordinals[0]) or "",
            prefix + "latest": bare(stored, ordinals[-1]) or "",
            prefix + "holes.size": "1" if holes else "0"}
    if holes:
        ends[prefix + "holes0"] = ",".join(bare(stored, o) or "" for o in holes)
    if exact(store_all, stored, later) or exact(ends, stored, later):
        return True
    for begin, end in stored.ordinal_ranges():  # each range reads on its own
        alone = new_timeline("Ranges", stored.period, "dt", stored.tz)
        alone.add_ordinal_ranges([(begin, end)])
        firsts = [f"[{bare(stored, begin)}", f"({bare(stored, begin - 1)}"]
        lasts = [f"{bare(stored, end)})", f"{bare(stored, end - 1)}]"]
        if not any(exact({cls_key: LENS_CLASS["Ranges"], prefix + "ranges.size": "1",
                          prefix + "ranges0": f"{b}, {e}"}, alone, later)
                   for b, e in itertools.product(firsts, lasts) if "None" not in b + e):
            return False
    return True


def check(stored: PartitionTimeline, later: dict[str, str]) -> bool:
    """The export reads as the stored set; no offset when a form without exists; a warning
    exactly when an offset stays. Returns whether the export is without offsets."""
    warnings: list[str] = []
    params, skipped = lens_table_parameters({(stored.period, "dt"): stored}, warnings)
    assert skipped == []
    assert import_reading(params, stored.period, stored.tz) == stored.ordinal_ranges()
    suffixed = any(OFFSET.search(v) for v in params.values())
    if not suffixed:
        assert lens_parser_reading(params, stored.period, stored.tz, later) == \
            stored.ordinal_ranges()
    assert suffixed is (not unsuffixed_exact_form_exists(stored, later)), params
    assert bool(warnings) is suffixed, warnings
    return not suffixed


def test_the_hour_before_the_repeated_hour_exports_without_offset() -> None:
    """A Ranges timeline holding only 2015-10-25-01 in Berlin: the range's end is the first
    02:00, which Lens would read as the second; written as the closed range instead."""
    tz = "Europe/Berlin"
    stored = timeline("Ranges", H, tz, [H.parse_ordinal("2015-10-25-01", tz)])
    warnings: list[str] = []
    params, _ = lens_table_parameters({(H, "dt"): stored}, warnings)
    prefix = timeline_prefix("HOURLY", "dt")
    assert params[prefix + "ranges0"] == "[2015-10-25-01, 2015-10-25-01]"
    assert params[prefix + "storage.class"] == LENS_CLASS["Ranges"]
    assert warnings == []
    one = stored.ordinal_ranges()[0][0]
    assert check(stored, later_spellings(H, tz, one - 5, one + 5))


def test_no_form_without_offsets_is_said() -> None:
    """2015-10-25-01 and the first 02:00 only: every form needs the first 02:00 or its end,
    both repeated wall times; the offsets stay and the export says why."""
    tz = "Europe/Berlin"
    one = H.parse_ordinal("2015-10-25-01", tz)
    stored = timeline("StoreAll", H, tz, [one, one + 1])
    warnings: list[str] = []
    params, _ = lens_table_parameters({(H, "dt"): stored}, warnings)
    assert "2015-10-25-02+02:00" in params[timeline_prefix("HOURLY", "dt") + "partitions0"]
    assert warnings == [
        "HOURLY dt: kept DST offsets, which Lens cannot parse (it rebuilds this table's "
        "timelines from its partitions): the range [2015-10-25-01, 2015-10-25-02+01:00) ends "
        "between 2015-10-25-02+02:00 and 2015-10-25-02+01:00, both wall times that "
        "Europe/Berlin repeats, and no form without offsets names exactly these partitions "
        "for Lens (it reads a repeated wall time as the later one)"]


#: The fall-back cases counted in docs/timelines.md: every non-empty set of the six Berlin
#: hours 00:00 to 04:00 (both 02:00s included), in each implementation.
FALL_BACK_HOURS = 6


def test_the_fall_back_cases_and_how_many_export_without_offsets() -> None:
    tz = "Europe/Berlin"
    lo = H.parse_ordinal("2015-10-25-00", tz)
    later = later_spellings(H, tz, lo - 2, lo + FALL_BACK_HOURS + 2)
    counts = {}
    for kind in KINDS:
        clean = 0
        for size in range(1, FALL_BACK_HOURS + 1):
            for chosen in itertools.combinations(range(lo, lo + FALL_BACK_HOURS), size):
                clean += check(timeline(kind, H, tz, chosen), later)
        counts[kind] = clean
    # every set holding both 02:00s or neither: 31 of the 63 in each implementation
    assert counts == {kind: 31 for kind in KINDS}


@SETTINGS
@given(data=st.data(), kind=st.sampled_from(KINDS),
       where=st.sampled_from(sorted(NEIGHBOURHOODS)), period=st.sampled_from([H, M]))
def test_every_neighbourhood_exports_exactly(data: st.DataObject, kind: str,
                                            where: tuple[str, str], period: UpdatePeriod) -> None:
    tz = where[0]
    lo = start(period, tz, where[1])
    width = 7 if period is H else 4 * 60
    offsets = st.integers(0, width - 1)
    if period is H:
        chosen = data.draw(st.sets(offsets, min_size=1))
    else:  # a few runs of minutes, some bounds on the repeated hour
        runs = data.draw(st.lists(st.tuples(offsets, st.integers(1, 90)), min_size=1,
                                  max_size=4))
        chosen = {min(b + i, width - 1) for b, n in runs for i in range(n)}
    stored = timeline(kind, period, tz, (lo + o for o in chosen))
    check(stored, later_spellings(period, tz, lo - 180, lo + width + 180))


JAVA = """
import java.text.SimpleDateFormat;
import java.util.*;
public class LensDates {
  public static void main(String[] a) throws Exception {
    TimeZone.setDefault(TimeZone.getTimeZone(a[0]));
    SimpleDateFormat in = new SimpleDateFormat(a[1]);
    SimpleDateFormat out = new SimpleDateFormat(a[1] + "XXX");
    for (int i = 2; i < a.length; i++) {
      Calendar c = Calendar.getInstance();
      c.setTime(in.parse(a[i]));
      String parsed = out.format(c.getTime());
      c.add(Calendar.HOUR_OF_DAY, 1);
      System.out.println(parsed + " " + out.format(c.getTime()));
    }
  }
}
"""


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")
def test_the_jvm_reads_a_repeated_wall_time_as_the_later(tmp_path: Path) -> None:
    """The facts the parser reading above stands on, from the JDK Lens runs on: an unsuffixed
    repeated hour parses as the later one; the next partition is one hour of milliseconds on."""
    (tmp_path / "LensDates.java").write_text(JAVA)
    subprocess.run(["javac", "LensDates.java"], cwd=tmp_path, check=True, timeout=120)
    lines = subprocess.run(
        ["java", "-cp", str(tmp_path), "LensDates", "Europe/Berlin", "yyyy-MM-dd-HH",
         "2015-10-25-01", "2015-10-25-02"], capture_output=True, text=True, check=True,
        timeout=120).stdout.split("\n")
    assert lines[:2] == ["2015-10-25-01+02:00 2015-10-25-02+02:00",
                         "2015-10-25-02+01:00 2015-10-25-03+01:00"]
