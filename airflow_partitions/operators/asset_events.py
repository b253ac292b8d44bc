"""Asset partition events in time order, with facts a consumer can find for its own key.

Airflow 3.3's task runner turns ``outlet_events[asset]`` into one event per partition key by
iterating ``accessor.partition_keys`` (a plain ``set``, so hash order) and giving every event
the same ``accessor.extra``. Two consequences this module handles:

* order: the keys are put in a :class:`KeysInOrder`, a set that iterates in insertion order,
  so events are created (and numbered) in time order;
* facts: one shared ``extra`` cannot differ per event, so it describes the batch and maps each
  key to its own facts (``by_key``); a consumer looks up its event's ``partition_key`` there.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final, NotRequired, TypedDict, cast

from airflow_partitions.interop import KeyFactsJson

if TYPE_CHECKING:
    from airflow.sdk import Asset
    from airflow.sdk.types import OutletEventAccessorsProtocol
    from pydantic import JsonValue

#: Above this many keys, ``by_key`` is left out: every event carries the whole map, so its
#: size in the metadata DB grows with the square of the batch.
BY_KEY_MAX: Final = 100
EXTRA_KEY: Final = "airflow_partitions"


class KeysInOrder(set[str]):
    """A set of partition keys that iterates in the order they were first added.

    Why a set subclass: the task runner calls ``partition_keys.update(keys)`` and iterates it;
    both must keep working, only the order changes. Removed keys are skipped, and a key added
    again keeps its first place.

    >>> keys = KeysInOrder(["b", "a"])
    >>> keys.update(["c", "a"])
    >>> list(keys), "a" in keys
    (['b', 'a', 'c'], True)
    """

    def __init__(self, keys: Iterable[str] = ()) -> None:
        super().__init__()
        self._order: dict[str, None] = {}
        self.update(keys)

    def add(self, key: str) -> None:
        super().add(key)
        self._order.setdefault(key, None)

    def update(self, *groups: Iterable[str]) -> None:
        for group in groups:
            for key in group:
                self.add(key)

    def __iter__(self) -> Iterator[str]:
        return (key for key in list(self._order) if key in self)


class BatchJson(TypedDict):
    """What a whole registration or drop did, in every event's extra."""

    keys: int
    partitions: int
    changed: int
    unchanged: int
    restated: int
    first: str | None
    last: str | None


class KeyEventJson(KeyFactsJson):
    """One key's facts in ``by_key``, and whether it stands for a restated partition."""

    restated: bool


class EventExtraJson(TypedDict):
    """``extra["airflow_partitions"]`` of an asset partition event; ``by_key`` only up to
    ``BY_KEY_MAX`` keys."""

    action: str
    storage: str
    period: str
    batch: BatchJson
    by_key: NotRequired[dict[str, KeyEventJson]]


def event_extra(action: str, storage: str, period: str, facts: Mapping[str, KeyFactsJson],
                changed: int, unchanged: int, *, restated: int = 0,
                restated_keys: Collection[str] = ()) -> EventExtraJson:
    """The ``extra["airflow_partitions"]`` every event of one registration or drop carries.

    ``restated`` counts the partitions registered again with a new version (their data
    changed); ``restated_keys`` are the keys standing for at least one of them.

    >>> extra = event_extra("register", "raw", "HOURLY", {"k1": {"partitions": 2},
    ...                     "k2": {"partitions": 2}}, changed=3, unchanged=1, restated=1,
    ...                     restated_keys={"k2"})
    >>> extra["batch"]  # doctest: +NORMALIZE_WHITESPACE
    {'keys': 2, 'partitions': 4, 'changed': 3, 'unchanged': 1, 'restated': 1,
     'first': 'k1', 'last': 'k2'}
    >>> extra["by_key"]["k2"]
    {'partitions': 2, 'restated': True}
    """
    keys = list(facts)
    batch: BatchJson = {"keys": len(keys), "partitions": changed + unchanged, "changed": changed,
             "unchanged": unchanged, "restated": restated, "first": keys[0] if keys else None,
             "last": keys[-1] if keys else None}
    extra: EventExtraJson = {"action": action, "storage": storage, "period": period,
                             "batch": batch}
    if len(keys) <= BY_KEY_MAX:
        extra["by_key"] = {key: {**value, "restated": key in restated_keys}
                           for key, value in facts.items()}
    return extra


def emit_in_time_order(outlet_events: OutletEventAccessorsProtocol, assets: Sequence[Asset],
                       keys: Sequence[str], extra: EventExtraJson) -> None:
    """Add ``keys`` (already in time order) to each asset's outlet event, in that order."""
    for asset in assets:
        accessor = outlet_events[asset]
        ordered = KeysInOrder(accessor.partition_keys)  # keys another step added stay first
        accessor.partition_keys = ordered
        accessor.add_partitions(list(keys))  # validates each key (empty, over 250 characters)
        # A TypedDict is not pydantic's JsonValue (a dict[str, JsonValue]) to mypy, but it is
        # JSON: the cast only says so.
        accessor.extra[EXTRA_KEY] = cast("JsonValue", dict(extra))
