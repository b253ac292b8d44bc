"""The type of a JSON value whose shape is open, for signatures that take or give one.

Where a JSON's shape is known it has a ``TypedDict`` next to the code that writes it
(docs/architecture.md, "Typed JSON contracts"); this alias is for the rest: a provider info
dict, a REST API's answer before it is read, a state file. ``Mapping`` and ``Sequence`` (not
``dict`` and ``list``) keep it covariant, so a ``dict[str, str]`` is a ``JsonValue``. Pure, at
the bottom of the import graph beside :mod:`airflow_partitions.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

#: Any value ``json.loads`` returns, or ``json.dumps`` takes.
JsonValue: TypeAlias = (
    "str | int | float | bool | Sequence[JsonValue] | Mapping[str, JsonValue] | None")
#: A JSON object whose keys are open.
JsonObject: TypeAlias = Mapping[str, JsonValue]
