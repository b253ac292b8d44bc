"""Producers: which Airflow DAG run writes a partition of a storage period.

Why here: a producer is part of a storage's definition (``StorageDef.producers``), and the
planner (``airflow_partitions.planning``) needs to turn "partition p is missing" into "run DAG d
at logical date t" without importing Airflow. The rule for ``t`` is a tiny template, parsed
here and never evaluated as code: ``start`` or ``end`` of the partition (in the storage's zone),
optionally shifted by an ISO-8601 duration (``start+PT1H``, ``end-P1D``). A producer of a
storage with declared dimensions may also name the run-conf key through which its DAG takes
several slices at once (``slice_conf``; docs/backfill.md, "Slices"). See ``docs/backfill.md``
("Producers").
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, NotRequired, TypedDict

import pendulum

from airflow_partitions.arguments import shown
from airflow_partitions.errors import InvalidInput, InvalidRange
from airflow_partitions.periods import UpdatePeriod, zone

#: Airflow's own rule for a DAG id (``airflow.utils.helpers.validate_key``): word characters,
#: ``.`` and ``-``, at most 250 characters.
DAG_ID: Final = re.compile(r"[\w.-]+")
MAX_DAG_ID: Final = 250
#: A run-conf key naming the slices a run produces: a Python identifier (a DAG ``Param`` name).
CONF_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,249}")
_RULE: Final = re.compile(
    r"(?P<base>start|end)"
    r"(?:(?P<sign>[+-])P(?!$)(?:(?P<Y>\d+)Y)?(?:(?P<M>\d+)M)?(?:(?P<W>\d+)W)?(?:(?P<D>\d+)D)?"
    r"(?:T(?=\d)(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+)S)?)?)?"
)
_CALENDAR: Final = (("Y", "years"), ("M", "months"), ("W", "weeks"), ("D", "days"))
_CLOCK: Final = (("h", "hours"), ("m", "minutes"), ("s", "seconds"))
#: The longest shift a rule may make (its calendar units counted at their longest).
MAX_SHIFT_DAYS: Final = 36_525
_SECONDS: Final = {"Y": 31_557_600, "M": 31 * 86400, "W": 7 * 86400, "D": 86400,
                   "h": 3600, "m": 60, "s": 1}


class InvalidProducer(InvalidInput):
    """A producer's DAG id, logical-date rule or period is malformed."""


class ProducerJson(TypedDict):
    """A producer in a storage definition's JSON (``producers``, per period name)."""

    dag_id: str
    logical_date: NotRequired[str]
    slice_conf: NotRequired[str]


@dataclass(frozen=True)
class LogicalDateRule:
    """A parsed rule: a base (``start``/``end``), calendar units and clock units, signed."""

    base: str
    sign: int
    calendar: tuple[tuple[str, int], ...]
    clock: dt.timedelta


@lru_cache(maxsize=256)
def parse_rule(text: str) -> LogicalDateRule:
    """Parse ``start``, ``end``, ``start+PT1H``, ``end-P1D``, ... (ISO-8601 durations, whole units).

    >>> parse_rule("end-PT1H").clock
    datetime.timedelta(seconds=3600)
    >>> parse_rule("start+PT")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    airflow_partitions.catalog.definitions.producers.InvalidProducer: logical-date rule ...
    """
    match = _RULE.fullmatch(text) if isinstance(text, str) else None
    if match is None or (match["sign"] and not any(match[k] for k in "YMWDhms")):
        raise InvalidProducer(
            f"logical-date rule {shown(text)} is not 'start' or 'end', optionally followed by "
            "+ or - and an ISO-8601 duration (start+PT1H, end-P1D, start+P1M)"
        )
    sign = -1 if match["sign"] == "-" else 1
    calendar = tuple((unit, int(match[key])) for key, unit in _CALENDAR if match[key])
    seconds = sum(int(match[key]) * _SECONDS[key] for key in "YMWDhms" if match[key])
    if seconds > MAX_SHIFT_DAYS * 86400:  # start-P10000Y would break plans later
        raise InvalidProducer(
            f"logical-date rule {shown(text)} shifts the date by more than {MAX_SHIFT_DAYS:,} "
            "days (100 years): no producer runs that far from the partition it writes")
    clock = dt.timedelta(**{unit: int(match[key]) for key, unit in _CLOCK if match[key]})
    return LogicalDateRule(match["base"], sign, calendar, clock)


def check_conf_key(key: object) -> str:
    """A run-conf key as a DAG's ``params`` can declare it: an identifier, at most 250 long."""
    if not isinstance(key, str) or not CONF_KEY.fullmatch(key):
        raise InvalidProducer(
            f"slice conf key {shown(key)} is invalid: use letters, digits and '_', not starting "
            "with a digit (the name of the DAG param that takes the slices, e.g. regions)")
    return key


def check_dag_id(dag_id: object) -> str:
    """A DAG id as Airflow accepts it: letters, digits, ``_``, ``-``, ``.``; at most 250."""
    if not isinstance(dag_id, str) or not DAG_ID.fullmatch(dag_id) or len(dag_id) > MAX_DAG_ID:
        raise InvalidProducer(
            f"DAG id {shown(dag_id)} is invalid: use letters, digits, '_', '-' and '.', at most "
            f"{MAX_DAG_ID} characters"
        )
    return dag_id


@dataclass(frozen=True)
class Producer:
    """The Airflow DAG whose run at a rule-given logical date writes a partition.

    ``logical_date`` is the rule (default ``start``: the run whose logical date is where the
    partition starts, as Airflow's interval timetables schedule a run per data interval).

    ``slice_conf``: for a storage with declared dimensions, the run-conf key through which one
    run takes every slice it must produce (``regions`` gets ``["eu", "us"]``); None (the
    default) plans one run per missing slice, the slice in ``conf["partition_slice"]``
    (:mod:`airflow_partitions.planning.slices`).

    >>> p = Producer("events_daily_rollup")
    >>> p.logical_date_of(UpdatePeriod.DAILY, UpdatePeriod.DAILY.parse_ordinal("2015-02-01"),
    ...                   "Europe/Paris").isoformat()
    '2015-01-31T23:00:00+00:00'
    """

    dag_id: str
    logical_date: str = "start"
    slice_conf: str | None = None

    def __post_init__(self) -> None:
        check_dag_id(self.dag_id)
        parse_rule(self.logical_date)
        if self.slice_conf is not None:
            check_conf_key(self.slice_conf)

    def logical_date_of(self, period: UpdatePeriod, ordinal: int, tz: str) -> pendulum.DateTime:
        """The UTC logical date of the run producing partition ``ordinal`` of ``period``.

        Calendar units (Y, M, W, D) move the wall clock in ``tz``; clock units (H, M, S) move
        the instant. O(1).
        """
        rule = parse_rule(self.logical_date)
        base = period.start_of(ordinal + (rule.base == "end"), zone(tz))
        try:
            if rule.calendar:
                units = {unit: rule.sign * n for unit, n in rule.calendar}
                base = base.add(**units)
            utc = base.in_timezone("UTC") + rule.sign * rule.clock
        except (OverflowError, ValueError):  # near the ends of the calendar
            raise InvalidRange(
                f"the producer {self.dag_id}@{self.logical_date} of {period.name} "
                f"{period.format_ordinal(ordinal, tz)} would run outside the calendar "
                "(years 0001 to 9999)") from None
        return pendulum.instance(utc, tz="UTC")

    def spec(self) -> str:
        """``DAG`` or ``DAG@RULE``: the CLI's spelling."""
        return self.dag_id if self.logical_date == "start" else f"{self.dag_id}@{self.logical_date}"

    def to_json(self) -> ProducerJson:
        # ``slice_conf`` only when set: definitions without it keep their stored bytes.
        out: ProducerJson = {"dag_id": self.dag_id, "logical_date": self.logical_date}
        if self.slice_conf is not None:
            out["slice_conf"] = self.slice_conf
        return out

    @classmethod
    def from_json(cls, data: ProducerJson) -> Producer:
        return cls(data["dag_id"], data.get("logical_date", "start"), data.get("slice_conf"))

    def with_slice_conf(self, key: str | None) -> Producer:
        """The same producer, taking its slices through run-conf ``key`` (None: one run per
        slice)."""
        return Producer(self.dag_id, self.logical_date, key)

    @classmethod
    def parse(cls, text: str) -> Producer:
        """``events_hourly_ingest`` or ``events_hourly_ingest@end-PT1H``."""
        dag_id, _, rule = text.strip().partition("@")
        return cls(dag_id.strip(), rule.strip() or "start")


def parse_producer_items(text: str, option: str = "--producer") -> dict[str, Producer]:
    """``HOURLY=events_hourly_ingest,DAILY=events_daily_rollup@end`` -> period name -> producer.

    >>> parse_producer_items("hourly=ingest,DAILY=rollup@end-PT1H")["DAILY"].logical_date
    'end-PT1H'
    """
    out: dict[str, Producer] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        period, sep, spec = item.partition("=")
        if not sep or not period.strip() or not spec.strip():
            raise InvalidProducer(f"{option} {shown(item)}: expected PERIOD=DAG[@RULE]")
        name = UpdatePeriod.of(period.strip().upper()).name
        if name in out:
            raise InvalidProducer(f"{option} names {name} twice")
        out[name] = Producer.parse(spec)
    return out


def check_producers(storage: str, periods: tuple[UpdatePeriod, ...],
                    producers: Mapping[str, Producer]) -> dict[str, Producer]:
    """Producers keyed by canonical period names, each a period of the storage."""
    out: dict[str, Producer] = {}
    for key, producer in producers.items():
        period = UpdatePeriod.of(key)
        if period not in periods:
            raise InvalidProducer(
                f"storage {storage!r} has no {period.name} period for a producer "
                f"(its periods: {', '.join(p.name for p in periods)})"
            )
        if not isinstance(producer, Producer):
            raise InvalidProducer(f"the producer of {period.name} must be a Producer, not "
                                  f"{shown(producer)}")
        out[period.name] = producer
    return dict(sorted(out.items(), key=lambda kv: UpdatePeriod.of(kv[0])))
