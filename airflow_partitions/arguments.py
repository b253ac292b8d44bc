"""Checks on the Python types of public arguments, and how values are echoed in messages.

The public API is called from DAG files and notebooks, where a ``None`` or a number slips in
easily. A wrong type must be an :class:`~airflow_partitions.errors.InvalidInput` naming the
argument, not an ``AttributeError`` from deep inside, so the CLI and the Airflow layer report it
in one line like any other bad input. Pure and at the bottom of the import graph, beside
:mod:`airflow_partitions.errors`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final, TypeVar

from airflow_partitions.errors import WrongType

#: Characters of a value echoed in a message before it is cut.
SHOWN_CHARS: Final = 60

_V = TypeVar("_V")


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)``, cut to about ``limit`` characters with the full length said.

    A 100,000-character value must not become a 100 KB error line.

    >>> shown("2015-01-01")
    "'2015-01-01'"
    >>> shown("x" * 100_000, limit=10)
    "'xxxxxxxx… (100000 characters)"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str | bytes) else len(text)
    unit = "bytes" if isinstance(value, bytes) else "characters"
    return f"{text[:limit - 1]}… ({size} {unit})"


def _described(value: object) -> str:
    """``None``, or the type's name and the value shown, for messages: ``int 5``."""
    return "None" if value is None else f"{type(value).__name__} {shown(value)}"


def require_text(what: str, value: object) -> str:
    """``value`` if it is a string, else :class:`WrongType`.

    >>> require_text("storage", 5)
    Traceback (most recent call last):
    ...
    airflow_partitions.errors.WrongType: storage must be a string, not int 5
    """
    if isinstance(value, str):
        return value
    raise WrongType(f"{what} must be a string, not {_described(value)}")


def optional_text(what: str, value: object) -> str | None:
    """``value`` if it is a string or None (the default applies), else :class:`WrongType`."""
    return None if value is None else require_text(what, value)


def require_int(what: str, value: object) -> int:
    """``value`` if it is an ``int`` (not a bool, not a float that looks whole), else
    :class:`WrongType`.

    >>> require_int("priority", "high")
    Traceback (most recent call last):
    ...
    airflow_partitions.errors.WrongType: priority must be an integer, not str 'high'
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise WrongType(f"{what} must be an integer, not {_described(value)}")


def optional_int(what: str, value: object) -> int | None:
    """``value`` if it is an ``int`` or None (no limit), else :class:`WrongType`."""
    return None if value is None else require_int(what, value)


def require_flag(what: str, value: object) -> bool:
    """``value`` if it is a bool: ``overwrite="no"`` is truthy, so refuse it rather than guess.

    >>> require_flag("overwrite", "no")
    Traceback (most recent call last):
    ...
    airflow_partitions.errors.WrongType: overwrite must be True or False, not str 'no'
    """
    if isinstance(value, bool):
        return value
    raise WrongType(f"{what} must be True or False, not {_described(value)}")


def require_names(what: str, value: object) -> tuple[str, ...]:
    """A list of strings; one bare string is refused (``"dt"`` would be the names d, t).

    >>> require_names("time_columns", ["dt", "hour"])
    ('dt', 'hour')
    """
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise WrongType(f"{what} must be a list of strings, not {_described(value)}")
    items = tuple(value)
    for item in items:
        require_text(f"each of {what}", item)
    return items


def require_value_maps(what: str, value: Mapping[str, _V] | Iterable[Mapping[str, _V]],
                       ) -> list[Mapping[str, _V]]:
    """One ``{column: value}`` mapping or an iterable of them, as a list.

    Typed as the caller declares it; checked at run time all the same, since DAG files and
    notebooks pass what they like.

    >>> require_value_maps("values", {"dt": "2015-01-01"})
    [{'dt': '2015-01-01'}]
    """
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise WrongType(f"{what} must be a mapping of column to value, or a list of them, not "
                        f"{_described(value)}")
    items = list(value)
    for item in items:
        if not isinstance(item, Mapping):
            raise WrongType(f"each of {what} must be a mapping of column to value, not "
                            f"{_described(item)}")
    return items


#: Unicode category Cc is exactly these code points (tests hold it to ``unicodedata``).
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


def control_character(value: str) -> str | None:
    """The first control character (NUL, newline, DEL, ...) in ``value``, shown, or None.

    >>> control_character("/data/a\\nb")
    "'\\\\n'"
    """
    found = _CONTROL.search(value)  # one regex pass: bulk registrations check every value
    return None if found is None else repr(found.group())
