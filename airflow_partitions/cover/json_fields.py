"""Reading cover JSON back: instants and required fields, with one error style.

Why apart: the cover's partitions (:mod:`.result`) and its missing ranges (:mod:`.missing`)
are read back from XCom and manifests by the same rules, and a damaged document must fail
with a message that says which field, not a ``KeyError``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

import pendulum

from airflow_partitions.errors import InvalidInput
from airflow_partitions.periods import zone


def iso(value: dt.datetime) -> str:
    """An instant as JSON text (ISO-8601 with its offset)."""
    return value.isoformat()


def parse_instant(text: object, what: str, tz: str | None) -> pendulum.DateTime:
    """An aware instant from ISO text, in ``tz`` when given (else its own offset)."""
    if not isinstance(text, str):
        raise InvalidInput(f"cover JSON: {what} must be an ISO-8601 string, not {text!r}")
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"cover JSON: {what} {text!r} is not ISO-8601") from None
    if parsed.tzinfo is None:
        raise InvalidInput(f"cover JSON: {what} {text!r} has no UTC offset")
    target = zone(tz) if tz is not None else parsed.tzinfo
    return pendulum.instance(parsed.astimezone(target), tz=target)


def json_field(d: object, key: str, what: str) -> object:
    """``d[key]``, or an :class:`InvalidInput` naming what lacks it (or is no object)."""
    if not isinstance(d, Mapping) or key not in d:
        raise InvalidInput(f"cover JSON: {what} lacks {key!r}")
    return d[key]
