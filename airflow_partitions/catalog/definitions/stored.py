"""Fact and storage definitions as the catalog row's ``m:def`` cell stores them, decoded.

Kept by their bytes (definitions are immutable values): a fact is read again after every write
to it, and its definitions nearly never change, so a reader decodes each once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Final, TypeVar

from airflow_partitions.catalog.definitions.tables import FactDef, StorageDef
from airflow_partitions.errors import CorruptDefinition, InvalidInput

_Def = TypeVar("_Def", FactDef, StorageDef)

#: Decoded definitions kept by their bytes (a few KiB each).
_DEFINITIONS_KEPT: Final = 4096


@lru_cache(maxsize=_DEFINITIONS_KEPT)
def decode_fact(name: str, raw: bytes) -> FactDef:
    """A stored fact definition; anything but this version's JSON is ``CorruptDefinition``.
    Kept by its bytes (the module docstring)."""
    return _decode_definition("fact", name, raw, FactDef.from_json)


@lru_cache(maxsize=_DEFINITIONS_KEPT)
def decode_storage(name: str, raw: bytes) -> StorageDef:
    """A stored storage definition; anything but this version's JSON is ``CorruptDefinition``.
    Kept by its bytes, as :func:`decode_fact`."""
    return _decode_definition("storage", name, raw, StorageDef.from_json)


def _decode_definition(
    what: str, name: str, raw: bytes, from_json: Callable[[Any], _Def]
) -> _Def:
    """The error names the row and, for a missing field, the field."""
    row = f"{what[0].upper()}\\x00{name}"
    where = f"the definition of {what} {name!r} (catalog row {row}, cell m:def)"
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptDefinition(f"{where} is not JSON: {exc}") from None
    try:
        if not isinstance(data, dict):
            raise TypeError(f"it holds a JSON {type(data).__name__}, not an object")
        return from_json(data)
    except KeyError as exc:
        raise CorruptDefinition(f"{where} is missing the field {exc}") from None
    except (TypeError, ValueError, AttributeError, InvalidInput) as exc:
        raise CorruptDefinition(f"{where} does not decode: {exc}") from None


def forget_definitions() -> None:
    """Forget every decoded definition (the next read decodes its bytes again)."""
    decode_fact.cache_clear()
    decode_storage.cache_clear()
