"""What the period tests share: the zones they run in, hypothesis strategies for instants, and
``utc`` for comparing instants.

Instants in these tests are compared through UTC (``utc``) on purpose: Python's ``==`` between
aware datetimes of *different* zones is always False for a wall time repeated by DST (PEP 495),
so a test that compared a local instant with a UTC one would test Python, not the code.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from airflow_partitions.periods import UpdatePeriod
from tests.hypothesis_budget import examples

UTC = dt.UTC
P = UpdatePeriod
ALL_PERIODS = list(UpdatePeriod)
BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"
KOLKATA = "Asia/Kolkata"
ZONES = ["UTC", BERLIN, NEW_YORK, KOLKATA]

# Hypothesis' deadline is a wall-clock check; we assert behaviour only.
SETTINGS = settings(deadline=None, max_examples=examples(250),
                    suppress_health_check=[HealthCheck.too_slow])

# Asia/Kolkata switched from Madras time (+05:21:10) to +05:30 on 1906-01-01, which trips the
# phase check (test_zones.py pins it: instants before a zone offset became aligned are refused);
# the property range starts after it, with room for the tests that step 50 hours back from an
# instant.
LOW = dt.datetime(1906, 1, 4, tzinfo=UTC)
HIGH = dt.datetime(2200, 1, 1, tzinfo=UTC)


SUFFIX = re.compile(r"[+-]\d{2}:\d{2}$")


def utc(value: dt.datetime) -> dt.datetime:
    """The same instant as a stdlib UTC datetime (safe to compare with ==)."""
    return dt.datetime.fromtimestamp(value.timestamp(), UTC)


def wall_is_repeated(instant: dt.datetime, tz: str) -> bool:
    """Whether the local wall time of ``instant`` names a second instant too (DST fall-back)."""
    local = instant.astimezone(zoneinfo.ZoneInfo(tz))
    other = local.replace(fold=1 - local.fold)
    if other.utcoffset() == local.utcoffset():
        return False
    back = other.astimezone(UTC).astimezone(local.tzinfo)
    return back.replace(tzinfo=None) == local.replace(tzinfo=None)


def dst_transitions(tz: str, first_year: int, last_year: int) -> list[int]:
    """UTC seconds of every offset change of ``tz`` in the years given (day scan + bisection)."""
    zone_ = zoneinfo.ZoneInfo(tz)
    out: list[int] = []
    day = int(dt.datetime(first_year, 1, 1, tzinfo=UTC).timestamp())
    stop = int(dt.datetime(last_year + 1, 1, 1, tzinfo=UTC).timestamp())

    def offset(seconds: int) -> dt.timedelta | None:
        return dt.datetime.fromtimestamp(seconds, UTC).astimezone(zone_).utcoffset()

    while day < stop:
        lo, hi = day, day + 86400
        if offset(lo) != offset(hi):
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if offset(mid) == offset(lo) else (lo, mid)
            out.append(hi)
        day += 86400
    return out


TRANSITIONS = sorted(
    {t for tz in (BERLIN, NEW_YORK) for t in dst_transitions(tz, 1970, 2040)}
    | set(dst_transitions(BERLIN, 1940, 1950))
)
assert len(TRANSITIONS) > 250


def from_seconds(seconds: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, UTC)


uniform_instants = st.integers(int(LOW.timestamp()), int(HIGH.timestamp())).map(from_seconds)
# instants within two hours of a DST change (where the interesting bugs live) ...
near_dst = st.builds(
    lambda t, d: from_seconds(t + d), st.sampled_from(TRANSITIONS), st.integers(-7200, 7200)
)
# ... and a few seconds around UTC (and so, often, local) midnights, hours and year ends
near_boundary = st.builds(
    lambda day, h, d: dt.datetime.combine(day, dt.time(h), UTC) + dt.timedelta(seconds=d),
    st.dates(min_value=LOW.date() + dt.timedelta(days=1), max_value=HIGH.date()),
    st.sampled_from([0, 0, 18, 22, 23]),
    st.integers(-3, 3),
)
instants = st.one_of(uniform_instants, near_dst, near_boundary)
periods = st.sampled_from(ALL_PERIODS)
zones = st.sampled_from(ZONES)


def expected_base_value(period: UpdatePeriod, local: dt.datetime) -> str:
    """The value of the partition holding ``local``, computed without the code under test."""
    if period is P.WEEKLY:
        year, week, _ = local.isocalendar()
        return f"{year:04d}-W{week:02d}"
    if period is P.QUARTERLY:
        return f"{local.year:04d}-Q{(local.month - 1) // 3 + 1}"
    pattern = {
        P.SECONDLY: "%Y-%m-%d-%H-%M-%S",
        P.MINUTELY: "%Y-%m-%d-%H-%M",
        P.HOURLY: "%Y-%m-%d-%H",
        P.DAILY: "%Y-%m-%d",
        P.MONTHLY: "%Y-%m",
        P.YEARLY: "%Y",
    }[period]
    return local.strftime(pattern)
